import { describe, expect, it } from 'vitest';
import type { LogRow } from '../../../server/api-types.ts';
import {
  addFilter,
  checkFilterValue,
  explorerParams,
  filterLabel,
  filtersFromParams,
  filtersToParams,
  logsParams,
  mergePages,
  removeFilter,
  requestFields,
  resolveRange,
  retentionCut,
  rowMatches,
  statusClass,
  tierCovering,
  type LogFilter,
} from './logs.ts';
import { US } from './time.ts';

const NOW = 1773500966535897;
const row = (id: string, timestamp = NOW, metadata: unknown[] = []): LogRow => ({ id, timestamp, event_message: `msg ${id}`, metadata });

describe('requestFields', () => {
  it('reads method/path from metadata[0].request[0] and status from metadata[0].response[0]', () => {
    const r = row('a', NOW, [{ request: [{ method: 'GET', path: '/rest/v1/t' }], response: [{ status_code: 404 }] }]);
    expect(requestFields(r)).toEqual({ method: 'GET', path: '/rest/v1/t', status: 404 });
  });
  it('is null-safe for records without a request', () => {
    expect(requestFields(row('b', NOW, []))).toEqual({ method: null, path: null, status: null });
    expect(requestFields(row('c', NOW, [{ request: [] }]))).toEqual({ method: null, path: null, status: null });
  });
});

describe('statusClass', () => {
  it('colours by class', () => {
    expect([200, 304, 404, 503, 101, null].map(statusClass)).toEqual(['success', 'redirect', 'client', 'server', 'info', 'unknown']);
  });
});

describe('ranges and retention', () => {
  it('a preset ends at the server now', () => {
    expect(resolveRange('1h', NOW)).toEqual({ start: NOW - US.hour, end: NOW });
  });
  it('params carry µs-precision ISO bounds', () => {
    expect(logsParams('p', 'PRO', { start: NOW - US.hour, end: NOW })).toEqual({
      project: 'p',
      project_tier: 'PRO',
      iso_timestamp_start: '2026-03-14T14:09:26.535897Z',
      iso_timestamp_end: '2026-03-14T15:09:26.535897Z',
    });
  });
  it('FREE cuts a 7-day range, PRO does not', () => {
    const r = resolveRange('7d', NOW);
    expect(retentionCut('FREE', NOW, r)).toEqual({ kind: 'partial', cutoff: NOW - US.day });
    expect(retentionCut('PRO', NOW, r)).toEqual({ kind: 'none' });
  });
  it('a range wholly before the cutoff is cut entirely', () => {
    expect(retentionCut('FREE', NOW, { start: NOW - 3 * US.day, end: NOW - 2 * US.day })).toEqual({ kind: 'all', cutoff: NOW - US.day });
  });
  it('an open start is always cut by retention', () => {
    expect(retentionCut('ENTERPRISE', NOW, {}).kind).toBe('partial');
  });
  it('tierCovering keeps the preferred tier when it covers, else the smallest that does', () => {
    expect(tierCovering(NOW - US.hour, NOW, 'FREE')).toBe('FREE');
    expect(tierCovering(NOW - 3 * US.day, NOW, 'FREE')).toBe('PRO');
    expect(tierCovering(NOW - 30 * US.day, NOW, 'PRO')).toBe('PAYG');
  });
});

describe('mergePages', () => {
  it('appends older pages and drops ids already shown (the end bound is inclusive)', () => {
    const p1 = [row('c', 30), row('b', 20), row('a', 10)];
    const p2 = [row('a', 10), row('z', 10), row('y', 5)];
    expect(mergePages([p1, p2]).map((r) => r.id)).toEqual(['c', 'b', 'a', 'z', 'y']);
  });
});

describe('rowMatches', () => {
  const r = row('id-1', NOW, [{ request: [{ method: 'POST', path: '/auth/v1/token' }], response: [{ status_code: 500 }] }]);
  const f = requestFields(r);
  it('matches message, path, exact method or status, case-insensitively', () => {
    expect(rowMatches(r, f, 'MSG')).toBe(true);
    expect(rowMatches(r, f, '/auth')).toBe(true);
    expect(rowMatches(r, f, 'post')).toBe(true);
    expect(rowMatches(r, f, '500')).toBe(true);
    expect(rowMatches(r, f, '404')).toBe(false);
    expect(rowMatches(r, f, '  ')).toBe(true);
  });
});

describe('explorer filters', () => {
  it('checkFilterValue normalizes codes, classes and methods and refuses what the wire form cannot carry', () => {
    expect(checkFilterValue('status', ' 5XX ')).toEqual({ ok: true, value: '5xx' });
    expect(checkFilterValue('status', '503')).toEqual({ ok: true, value: '503' });
    expect(checkFilterValue('status', '6xx').ok).toBe(false);
    expect(checkFilterValue('status', '99').ok).toBe(false);
    expect(checkFilterValue('method', 'post')).toEqual({ ok: true, value: 'POST' });
    expect(checkFilterValue('path', '/a,b').ok).toBe(false);
    expect(checkFilterValue('level', '!error').ok).toBe(false);
    expect(checkFilterValue('level', '   ').ok).toBe(false);
    expect(checkFilterValue('function_id', 'f-1')).toEqual({ ok: true, value: 'f-1' });
  });

  it('addFilter groups chips by field, and the same value flips instead of doubling', () => {
    let f: LogFilter[] = [];
    f = addFilter(f, { field: 'path', value: '/rest', exclude: false });
    f = addFilter(f, { field: 'status', value: '5xx', exclude: false });
    f = addFilter(f, { field: 'status', value: '503', exclude: true });
    expect(f.map(filterLabel)).toEqual(['status 5xx', 'not status 503', 'path /rest*']);
    f = addFilter(f, { field: 'status', value: '503', exclude: false });
    expect(f.map(filterLabel)).toEqual(['status 5xx', 'status 503', 'path /rest*']);
    expect(removeFilter(f, { field: 'status', value: '5xx' }).map(filterLabel)).toEqual(['status 503', 'path /rest*']);
  });

  it('filters go to one comma-separated parameter per field, `!` for excluded, and come back the same', () => {
    const chips: LogFilter[] = [
      { field: 'status', value: '5xx', exclude: false },
      { field: 'status', value: '404', exclude: true },
      { field: 'method', value: 'GET', exclude: true },
      { field: 'level', value: 'error', exclude: false },
    ];
    const params = filtersToParams(chips);
    expect(params).toEqual({ status: '5xx,!404', method: '!GET', level: 'error' });
    expect(filtersFromParams((name) => params[name] ?? null)).toEqual(chips);
  });

  it('explorerParams: source first, µs bounds, regex only with text, chips by field', () => {
    const p = explorerParams({
      source: 'cloudflare.logs.prod',
      project: 'abc',
      range: { start: NOW - US.hour, end: NOW },
      q: 'timeout',
      regex: true,
      filters: [
        { field: 'path', value: '/auth', exclude: false },
        { field: 'status', value: '5xx', exclude: false },
      ],
    });
    expect(p).toEqual({ source: 'cloudflare.logs.prod', project: 'abc', start: '2026-03-14T14:09:26.535897Z', end: '2026-03-14T15:09:26.535897Z', q: 'timeout', regex: '1', status: '5xx', path: '/auth' });
    expect(Object.keys(p)).toEqual(['source', 'project', 'start', 'end', 'q', 'regex', 'status', 'path']);
    expect(explorerParams({ source: 'edge_logs', project: null, range: {}, q: '', regex: true, filters: [] })).toEqual({ source: 'edge_logs' });
  });
});
