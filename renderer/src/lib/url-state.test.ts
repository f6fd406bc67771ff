import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, decodeView, encodeView, extractKeyFromHash, logsMode, type AppView } from './url-state.ts';

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
  it('logs (exact logs.all view): a custom range keeps microseconds', () => {
    const v: AppView = { ...DEFAULT_VIEW, page: 'logs', project: 'abc', logs: { ...DEFAULT_VIEW.logs, mode: 'exact', tier: 'PRO', range: 'custom', start: 1773500966535897, end: 1773504566535898 } };
    expect(encodeView(v)).toBe('/logs?project=abc&mode=exact&tier=PRO&range=custom&start=2026-03-14T15%3A09%3A26.535897Z&end=2026-03-14T16%3A09%3A26.535898Z');
    expect(roundTrip(v)).toEqual(v);
  });
  it('logs: a custom start in year 0050 is year 50 (outside what the API takes), never 1950: it is dropped', () => {
    // 2026-03-14T16:09:26.535898Z, the end, is 1773504566535898 µs (as in the round trip above).
    const l = decodeView('/logs', '?mode=exact&range=custom&start=0050-03-01T00:00:00Z&end=2026-03-14T16:09:26.535898Z');
    expect(l.logs.start).toBeUndefined();
    expect(l.logs.end).toBe(1773504566535898);
  });
  it('logs (exact): a preset range writes no bounds', () => {
    const v: AppView = { ...DEFAULT_VIEW, page: 'logs', project: 'abc', logs: { ...DEFAULT_VIEW.logs, mode: 'exact', tier: 'FREE', range: '15m' } };
    expect(encodeView(v)).toBe('/logs?project=abc&mode=exact&tier=FREE&range=15m');
    expect(roundTrip(v)).toEqual(v);
  });
  it('logs: links from before the explorer (a tier, no mode) still open the exact view', () => {
    const l = decodeView('/logs', '?project=abc&tier=PRO&range=15m');
    expect(l.logs.mode).toBe('exact');
    expect(l.logs.tier).toBe('PRO');
    // A view built without a mode (another page's jump to a range) is the exact view too.
    const jump: AppView = { ...DEFAULT_VIEW, page: 'logs', project: 'abc', logs: { tier: 'PAYG', range: 'custom', start: 10, end: 20 } };
    expect(logsMode(jump.logs)).toBe('exact');
    expect(encodeView(jump)).toMatch(/^\/logs\?project=abc&mode=exact&tier=PAYG&range=custom&/);
  });
  it('logs (explorer): source, search, regex and chips survive a round trip, readable', () => {
    const v: AppView = {
      ...DEFAULT_VIEW,
      page: 'logs',
      project: 'abc',
      logs: {
        ...DEFAULT_VIEW.logs,
        mode: 'explore',
        source: 'edge_logs',
        range: '1h',
        q: 'time out, "quoted" & 100%',
        regex: true,
        filters: [
          { field: 'status', value: '5xx', exclude: false },
          { field: 'status', value: '503', exclude: true },
          { field: 'method', value: 'POST', exclude: false },
          { field: 'path', value: '/rest/v1/', exclude: false },
          { field: 'function_id', value: 'f 1', exclude: true },
        ],
      },
    };
    const url = encodeView(v);
    expect(url).toContain('status=5xx,!503&method=POST&path=/rest/v1/&function_id=!f+1');
    expect(url).not.toContain('tier=');
    expect(roundTrip(v)).toEqual(v);
  });
  it('logs (explorer): the default view writes only what is set', () => {
    const v: AppView = { ...DEFAULT_VIEW, page: 'logs', project: 'abc' };
    expect(encodeView(v)).toBe('/logs?project=abc&range=1h');
    expect(roundTrip(v)).toEqual(v);
    expect(encodeView({ ...v, logs: { ...v.logs, source: 'postgres_logs', filters: [{ field: 'level', value: 'ERROR', exclude: false }] } })).toBe('/logs?project=abc&source=postgres_logs&range=1h&level=ERROR');
  });
  it('logs (explorer): the Functions page’s link form opens the explorer filtered by function', () => {
    const v = decodeView('/logs', '?project=abc&source=function_edge_logs&function_id=f-1&range=7d');
    expect(v.logs).toMatchObject({ mode: 'explore', source: 'function_edge_logs', range: '7d', q: '', regex: false, filters: [{ field: 'function_id', value: 'f-1', exclude: false }] });
  });
  it('logs (explorer): malformed chips are dropped, not an error; chips come back grouped by field', () => {
    const v = decodeView('/logs', '?source=edge_logs&method=get&status=5xx,abc,!,!404,99,999&level=&path=/a,!/a/b');
    expect(v.logs.filters).toEqual([
      { field: 'status', value: '5xx', exclude: false },
      { field: 'status', value: '404', exclude: true },
      // Any three digits are a code, as the server reads them; two are not.
      { field: 'status', value: '999', exclude: false },
      { field: 'method', value: 'GET', exclude: false },
      { field: 'path', value: '/a', exclude: false },
      { field: 'path', value: '/a/b', exclude: true },
    ]);
  });
  it('logs: switching to the exact view keeps the explorer’s search in memory, and back', () => {
    const explore = decodeView('/logs', '?source=auth_logs&q=token&status=4xx');
    const exact = decodeView('/logs', '?mode=exact&tier=FREE&range=1h', explore);
    expect(exact.logs.mode).toBe('exact');
    expect(exact.logs).toMatchObject({ source: 'auth_logs', q: 'token', filters: [{ field: 'status', value: '4xx', exclude: false }] });
    expect(encodeView(exact)).toBe('/logs?mode=exact&tier=FREE&range=1h');
  });
  it('usage: a regex with special characters survives; no regex means "follow the project"', () => {
    const v: AppView = { ...DEFAULT_VIEW, page: 'usage', project: 'abc', usage: { interval: 'minutely', regex: 'abc\\.supabase\\.co/(rest|auth)&x=1' } };
    expect(roundTrip(v)).toEqual(v);
    const follow: AppView = { ...v, usage: { interval: 'hourly', regex: null } };
    expect(encodeView(follow)).toBe('/usage?project=abc&interval=hourly');
    expect(roundTrip(follow)).toEqual(follow);
  });
  it('usage: an empty pattern (the field cleared) follows the project again', () => {
    expect(decodeView('/usage', '?project=abc&interval=daily&regex=').usage.regex).toBeNull();
  });
  it('the compared period survives a round trip on the explorer and on Functions; an unknown one is dropped', () => {
    const logs: AppView = { ...DEFAULT_VIEW, page: 'logs', project: 'abc', logs: { ...DEFAULT_VIEW.logs, source: 'edge_logs', compare: '7d' } };
    expect(encodeView(logs)).toBe('/logs?project=abc&source=edge_logs&range=1h&compare=7d');
    expect(roundTrip(logs)).toEqual(logs);
    const fns: AppView = { ...DEFAULT_VIEW, page: 'functions', project: 'abc', functions: { fn: '', interval: '1day', compare: 'prev' } };
    expect(encodeView(fns)).toBe('/functions?project=abc&interval=1day&compare=prev');
    expect(roundTrip(fns)).toEqual(fns);
    expect(decodeView('/logs', '?source=edge_logs&compare=fortnight').logs.compare).toBeUndefined();
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
    expect(l.logs).toEqual({ ...DEFAULT_VIEW.logs, mode: 'exact' });
    expect(decodeView('/logs', '?mode=sideways&range=2y').logs).toEqual(DEFAULT_VIEW.logs);
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
