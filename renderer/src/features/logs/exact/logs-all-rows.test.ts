import { describe, expect, it } from 'vitest';
import type { LogRow } from '../../../../../contract/api-types.ts';
import { fetchOlder, hiddenMatch, mergePages, olderCursor, requestFields, rowMatches } from './logs-all-rows.ts';

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

describe('fetchOlder (“Load older (100 more)” added 99)', () => {
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

describe('hiddenMatch (the filter box matched where the row does not show it)', () => {
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
