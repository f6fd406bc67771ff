import { describe, expect, it } from 'vitest';
import type { LogRow } from '../../../contract/api-types.ts';
import {
  addFilter,
  explorerParams,
  fetchOlder,
  filterLabel,
  filtersFromParams,
  filtersToParams,
  logsParams,
  longestTier,
  mergePages,
  olderCursor,
  removeFilter,
  requestFields,
  resolveRange,
  retentionCut,
  hiddenMatch,
  rowMatches,
  statusClass,
  tierCovering,
  usageBucketLogs,
  type LogFilter,
  type RetentionRules,
} from './logs.ts';
import { DEFAULT_VIEW } from './url-state.ts';
import { MICROS } from '../../../contract/instants.ts';

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
    expect(resolveRange('1h', NOW)).toEqual({ start: NOW - MICROS.hour, end: NOW });
  });
  it('params carry µs-precision ISO bounds', () => {
    expect(logsParams('p', 'PRO', { start: NOW - MICROS.hour, end: NOW })).toEqual({
      project: 'p',
      project_tier: 'PRO',
      iso_timestamp_start: '2026-03-14T14:09:26.535897Z',
      iso_timestamp_end: '2026-03-14T15:09:26.535897Z',
    });
  });
  // The registry's listing as GET /api/endpoints gives it (logs.all: FREE 1 day, PRO 7, PAYG/ENTERPRISE 90).
  const RULES: RetentionRules = { retentionUs: { FREE: 86_400_000_000, PRO: 604_800_000_000, PAYG: 7_776_000_000_000, ENTERPRISE: 7_776_000_000_000 }, fallback: 'FREE' };
  const DAY = 86_400_000_000;
  it('a 1-day retention cuts a 7-day range, a 7-day one does not', () => {
    const r = resolveRange('7d', NOW);
    expect(retentionCut(DAY, NOW, r)).toEqual({ kind: 'partial', cutoff: NOW - DAY });
    expect(retentionCut(7 * DAY, NOW, r)).toEqual({ kind: 'none' });
  });
  it('a range wholly before the cutoff is cut entirely', () => {
    expect(retentionCut(DAY, NOW, { start: NOW - 3 * DAY, end: NOW - 2 * DAY })).toEqual({ kind: 'all', cutoff: NOW - DAY });
  });
  it('an open start is always cut by retention', () => {
    expect(retentionCut(90 * DAY, NOW, {}).kind).toBe('partial');
  });
  it('tierCovering keeps the preferred tier when it covers, else the listed tier with the shortest retention that does', () => {
    expect(tierCovering(RULES, NOW - MICROS.hour, NOW, 'FREE')).toBe('FREE');
    expect(tierCovering(RULES, NOW - 3 * DAY, NOW, 'FREE')).toBe('PRO');
    expect(tierCovering(RULES, NOW - 30 * DAY, NOW, 'PRO')).toBe('PAYG');
    // Issue 13: FREE, custom range 12 days back: PRO keeps 7 days, so PAYG is the one that covers.
    expect(tierCovering(RULES, NOW - 12 * DAY, NOW, 'FREE')).toBe('PAYG');
    expect(tierCovering(RULES, NOW - 91 * DAY, NOW, 'FREE')).toBeNull();
    expect(longestTier(RULES)).toEqual({ tier: 'PAYG', retentionUs: 90 * DAY });
  });
  it('the rules decide, not the names: a listing with other retentions gives other answers', () => {
    const other: RetentionRules = { retentionUs: { FREE: 2 * DAY, PRO: 30 * DAY }, fallback: 'FREE' };
    expect(tierCovering(other, NOW - 3 * DAY, NOW, 'FREE')).toBe('PRO');
    expect(tierCovering(other, NOW - 31 * DAY, NOW, 'FREE')).toBeNull();
    // An unlisted tier behaves as the fallback.
    expect(tierCovering(other, NOW - DAY, NOW, 'PAYG')).toBe('PAYG');
  });
});

/**
 * logs.all over an in-memory list, written from its rules: records with timestamp ≤ end, newest
 * first, ties by id ascending, the first `size`.
 */
function logsAll(data: readonly LogRow[], size: number) {
  const calls: number[] = [];
  const fetchEnd = async (end: number) => {
    calls.push(end);
    return data
      .filter((r) => r.timestamp <= end)
      .sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, size);
  };
  return { fetchEnd, calls };
}

describe('fetchOlder (issue 13: “Load older (100 more)” added 99)', () => {
  // 25 records, one per instant 1000..1024, except three that share instant 1010 (ids b, a, c).
  const data: LogRow[] = [];
  for (let t = 1000; t < 1025; t++) if (t !== 1010) data.push(row(`r${t}`, t));
  data.push(row('b', 1010), row('a', 1010), row('c', 1010));
  // Newest first, ties by id, written out: r1024 … r1011, a, b, c, r1009 … r1000.
  const order = [...Array.from({ length: 14 }, (_, i) => `r${1024 - i}`), 'a', 'b', 'c', ...Array.from({ length: 10 }, (_, i) => `r${1009 - i}`)];

  it('each page adds exactly `size` new rows, also when the page boundary splits a microsecond', async () => {
    const { fetchEnd } = logsAll(data, 5);
    // The first page as the view asks it (no end).
    const shown = (await fetchEnd(Number.MAX_SAFE_INTEGER)).slice();
    expect(shown.map((r) => r.id)).toEqual(order.slice(0, 5));
    const sizes: number[] = [];
    for (;;) {
      const page = await fetchOlder(fetchEnd, olderCursor(shown)!, 5);
      sizes.push(page.rows.length);
      shown.push(...page.rows);
      if (!page.more) break;
    }
    expect(shown.map((r) => r.id)).toEqual(order);
    // 27 rows: 5 first, then 5, 5, 5, 5 and the last 2.
    expect(sizes).toEqual([5, 5, 5, 5, 2]);
  });

  it('the first older page of 100 is exactly rows 101–200, where the old paging added 99', async () => {
    const many: LogRow[] = Array.from({ length: 250 }, (_, i) => row(`m${String(i).padStart(3, '0')}`, 5000 + i));
    const { fetchEnd, calls } = logsAll(many, 100);
    const first = await fetchEnd(Number.MAX_SAFE_INTEGER);
    const page = await fetchOlder(fetchEnd, olderCursor(first)!, 100);
    // Newest first: m249 … m150 on the first page, then m149 … m050.
    expect(page.rows.map((r) => r.id)).toEqual(Array.from({ length: 100 }, (_, i) => `m${String(149 - i).padStart(3, '0')}`));
    expect(page.more).toBe(true);
    // It asked first with the oldest shown row's instant, as before, then once more.
    expect(calls.slice(1)).toEqual([5150, 5051]);
  });

  it('ties at the boundary: the shown ones are not repeated and the others are not lost', async () => {
    const { fetchEnd } = logsAll(data, 15);
    const shown = await fetchEnd(Number.MAX_SAFE_INTEGER); // r1024 … r1011, then a
    expect(olderCursor(shown)).toEqual({ end: 1010, idsAtEnd: ['a'] });
    const page = await fetchOlder(fetchEnd, olderCursor(shown)!, 15);
    expect(page.rows.map((r) => r.id)).toEqual(order.slice(15, 27));
    expect(page).toMatchObject({ more: false, crowded: [] });
  });

  it('more records in one microsecond than an answer holds: paging steps past them and says where', async () => {
    const crowdedData = [...Array.from({ length: 7 }, (_, i) => row(`t${i}`, 2000)), row('older-1', 1999), row('older-2', 1998), row('newest', 2001)];
    const { fetchEnd } = logsAll(crowdedData, 4);
    const shown = await fetchEnd(Number.MAX_SAFE_INTEGER); // newest, t0, t1, t2
    const page = await fetchOlder(fetchEnd, olderCursor(shown)!, 4);
    // t3 is the last of instant 2000 logs.all can answer (ties by id, 4 per answer); t4–t6 cannot be reached.
    expect(page.rows.map((r) => r.id)).toEqual(['t3', 'older-1', 'older-2']);
    expect(page.crowded).toEqual([2000]);
    expect(page.more).toBe(false);
  });
});

describe('usageBucketLogs (issue 13: a usage bar opened Logs without its URL pattern)', () => {
  const HOUR = 3_600_000_000;
  it('opens the explorer on edge requests in the bucket’s range, searching the pattern as RE2, without other chips', () => {
    const logs = { ...DEFAULT_VIEW.logs, mode: 'exact' as const, filters: [{ field: 'status' as const, value: '5xx', exclude: false }] };
    const v = usageBucketLogs(logs, { start: 10 * HOUR, end: 11 * HOUR }, 9 * HOUR, 'abc.*/storage/', 'edge_logs');
    expect(v).toMatchObject({ mode: 'explore', source: 'edge_logs', range: 'custom', start: 10 * HOUR - 1, end: 11 * HOUR - 1, q: 'abc.*/storage/', regex: true, filters: [] });
  });
  it('a partial first bucket starts where the window starts', () => {
    const v = usageBucketLogs(DEFAULT_VIEW.logs, { start: 10 * HOUR, end: 11 * HOUR }, 10 * HOUR + 1234, 'x', 'edge_logs');
    expect([v.start, v.end]).toEqual([10 * HOUR + 1233, 11 * HOUR - 1]);
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

describe('hiddenMatch (issue 13, item 7: the filter box matched where the row does not show it)', () => {
  // The reported cases: "503" matching a 200 row through its request id, "500" inside `offset=3500` far into the message.
  const long = { ...row('req-503-x', NOW, [{ request: [{ method: 'GET', path: '/rest/v1/t' }], response: [{ status_code: 200 }] }]), event_message: `GET | 200 | ${'x'.repeat(70)}?offset=3500` };
  const f = requestFields(long);
  it('names the id, or where in the message, and nothing when the match is in sight', () => {
    expect(hiddenMatch(long, f, '503')).toBe('match in id');
    // "GET | 200 | " is 12 characters, then 70 x's, "?offset=" (8) and "3": "500" starts after 91, at character 92.
    expect(hiddenMatch(long, f, '500')).toBe(`match at character ${12 + 70 + 8 + 1 + 1} of the message`);
    expect(hiddenMatch(long, f, '200')).toBe(null);
    expect(hiddenMatch(long, f, '/rest')).toBe(null);
    expect(hiddenMatch(long, f, 'get')).toBe(null);
    expect(hiddenMatch(long, f, 'nothing')).toBe(null);
  });
});

describe('explorer filters', () => {
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

  it('a link with status=600 keeps its chip, as the server takes that code', () => {
    const params: Record<string, string> = { status: '600,!6xx' };
    // 6xx is no class, so only the code survives the reading.
    expect(filtersFromParams((name) => params[name] ?? null)).toEqual([{ field: 'status', value: '600', exclude: false }]);
  });

  it('explorerParams: source first, µs bounds, regex only with text, chips by field', () => {
    const p = explorerParams({
      source: 'cloudflare.logs.prod',
      project: 'abc',
      range: { start: NOW - MICROS.hour, end: NOW },
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
