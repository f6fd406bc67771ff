import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, decodeView, encodeView, extractKeyFromHash, type AppView } from './url-state.ts';

const roundTrip = (v: AppView) => {
  const url = new URL(encodeView(v), 'http://127.0.0.1:4100');
  return decodeView(url.pathname, url.search);
};

describe('encodeView / decodeView', () => {
  it('functions: project, function and interval survive a round trip', () => {
    const v: AppView = { ...DEFAULT_VIEW, page: 'functions', project: 'abc', functions: { fn: 'f-1', interval: '7day' } };
    expect(encodeView(v)).toBe('/functions?project=abc&function=f-1&interval=7day');
    expect(roundTrip(v)).toEqual(v);
  });
  it('logs: a custom range keeps microseconds', () => {
    const v: AppView = { ...DEFAULT_VIEW, page: 'logs', project: 'abc', logs: { tier: 'PRO', range: 'custom', start: 1773500966535897, end: 1773504566535898 } };
    expect(encodeView(v)).toBe('/logs?project=abc&tier=PRO&range=custom&start=2026-03-14T15%3A09%3A26.535897Z&end=2026-03-14T16%3A09%3A26.535898Z');
    expect(roundTrip(v)).toEqual(v);
  });
  it('logs: a preset range writes no bounds', () => {
    const v: AppView = { ...DEFAULT_VIEW, page: 'logs', project: 'abc', logs: { tier: 'FREE', range: '15m' } };
    expect(encodeView(v)).toBe('/logs?project=abc&tier=FREE&range=15m');
    expect(roundTrip(v)).toEqual(v);
  });
  it('usage: a regex with special characters survives; no regex means "follow the project"', () => {
    const v: AppView = { ...DEFAULT_VIEW, page: 'usage', project: 'abc', usage: { interval: 'minutely', regex: 'abc\\.supabase\\.co/(rest|auth)&x=1' } };
    expect(roundTrip(v)).toEqual(v);
    const follow: AppView = { ...v, usage: { interval: 'hourly', regex: null } };
    expect(encodeView(follow)).toBe('/usage?project=abc&interval=hourly');
    expect(roundTrip(follow)).toEqual(follow);
  });
  it('data and settings carry no parameters', () => {
    expect(encodeView({ ...DEFAULT_VIEW, page: 'data', project: 'abc' })).toBe('/data');
    expect(encodeView({ ...DEFAULT_VIEW, page: 'settings' })).toBe('/settings');
  });
  it('unknown pages and values fall back to defaults instead of failing', () => {
    const v = decodeView('/nope', '?interval=fortnight&tier=GOLD&range=2y');
    expect(v.page).toBe('functions');
    expect(v.functions.interval).toBe(DEFAULT_VIEW.functions.interval);
    const l = decodeView('/logs', '?tier=GOLD&range=2y&start=garbage');
    expect(l.logs).toEqual(DEFAULT_VIEW.logs);
  });
  it('the root path opens the default page', () => {
    expect(decodeView('/', '').page).toBe('functions');
  });
  it('keeps the other pages’ state from the base view', () => {
    const base: AppView = { ...DEFAULT_VIEW, functions: { fn: 'x', interval: '5min' } };
    expect(decodeView('/logs', '?project=p', base).functions).toEqual({ fn: 'x', interval: '5min' });
  });
  it('never writes a key', () => {
    const v: AppView = { ...DEFAULT_VIEW, page: 'usage', project: 'key' };
    expect(encodeView(v)).not.toMatch(/key=/);
  });
});

describe('extractKeyFromHash', () => {
  it('takes the key and leaves nothing behind', () => {
    expect(extractKeyFromHash('#key=abc123')).toEqual({ key: 'abc123', rest: '' });
  });
  it('keeps other fragment parts', () => {
    expect(extractKeyFromHash('#x=1&key=abc&y=2')).toEqual({ key: 'abc', rest: '#x=1&y=2' });
  });
  it('decodes percent escapes but keeps a literal plus', () => {
    expect(extractKeyFromHash('#key=a%2Fb')).toEqual({ key: 'a/b', rest: '' });
    expect(extractKeyFromHash('#key=a+b')).toEqual({ key: 'a+b', rest: '' });
  });
  it('reports no key when there is none', () => {
    expect(extractKeyFromHash('')).toEqual({ key: null, rest: '' });
    expect(extractKeyFromHash('#section')).toEqual({ key: null, rest: '#section' });
  });
});
