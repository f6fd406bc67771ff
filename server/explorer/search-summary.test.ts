/**
 * A text search's count, histogram and facets come from one shared walk: they agree with each
 * other and with a count worked out here from the records, the three asked at once read each
 * block once, and a walk still running answers with what it has counted and how far it got.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appOver, DAY, importRecords, MIN, NOW, storeKeeper, type TestApp } from '../testing/fixtures.ts';
import { recordBlocksHeld } from '../store/record-blocks.ts';
import { textGroupsRead } from '../store/block-texts.ts';
import type { LogStore } from '../store/log-store.ts';
import { readExplorerQuery, singleParams } from './query.ts';
import { partitionsTalliedFromColumns, searchTallies, searchWalksHeld, stopSearches } from './search-summary.ts';

const keeper = storeKeeper('le-shared-');
afterEach(() => keeper.cleanup());

const REF = 'projaaaaaaaaaaaaaaaa';
const STATUSES = [200, 201, 404, 500, 503];
const METHODS = ['GET', 'POST', 'DELETE'];

/** 3 days of records every 3 minutes; every 4th message says `Zürich timeout` (a word the block index cannot take: not ASCII). */
function records() {
  return Array.from({ length: (3 * DAY) / (3 * MIN) }, (_, i) => {
    const status = STATUSES[i % STATUSES.length]!;
    const method = METHODS[i % METHODS.length]!;
    const url = `https://x.supabase.co/rest/v1/t${i % 7}?i=${i}`;
    return {
      id: `s-${i}`,
      timestamp: NOW - i * 3 * MIN,
      project: REF,
      event_message: `${method} | ${status} | ${i % 4 === 0 ? 'Zürich timeout' : 'fine'} | ${'pad '.repeat(150)}`,
      metadata: { request: { method, url, path: `/rest/v1/t${i % 7}` }, response: { status_code: status } },
    };
  });
}

const window = `start=${encodeURIComponent(new Date((NOW - 4 * DAY) / 1000).toISOString())}&end=${encodeURIComponent(new Date((NOW + MIN) / 1000).toISOString())}`;

async function json<T>(t: TestApp, url: string): Promise<T> {
  const res = await t.request(url);
  expect(res.status, url).toBe(200);
  return (await res.json()) as T;
}

const queryOf = (store: LogStore, text: string) => {
  const params = new URLSearchParams(`source=edge_logs&q=${encodeURIComponent(text)}&${window}`);
  return readExplorerQuery(store, singleParams((n) => params.getAll(n)), NOW);
};

/** A store holding records(), and the query of a search for `zürich` over the window. */
async function storeWithRecords() {
  const store = await keeper.open(keeper.newDir());
  const recs = records();
  await importRecords(store, 'edge_logs', recs);
  return { store, recs, q: queryOf(store, 'zürich') };
}

describe('the shared walk of a text search', () => {
  it('count, histogram (two widths) and facets agree with each other and with the records', async () => {
    const store = await keeper.open(keeper.newDir());
    const recs = records();
    await importRecords(store, 'edge_logs', recs);
    const t = appOver(store);
    const q = `source=edge_logs&q=${encodeURIComponent('zürich')}&${window}`;
    const [count, hist, hist2, facets] = await Promise.all([
      json<{ result: { count: number }; scanned?: { complete: boolean } }>(t, `/api/logs/count?${q}`),
      json<{ result: Array<{ timestamp: number; count: number; by: Record<string, number> }>; width: number }>(t, `/api/logs/histogram?${q}`),
      json<{ result: Array<{ count: number }> }>(t, `/api/logs/histogram?${q}&buckets=400`),
      json<{ result: Record<string, Array<{ value: string | number; count: number }>>; others: Record<string, number> }>(t, `/api/logs/facets?${q}&fields=status,method,path`),
    ]);
    const matching = recs.filter((r) => r.event_message.toLowerCase().includes('zürich'));
    expect(count.result.count).toBe(matching.length);
    expect(hist.result.reduce((a, b) => a + b.count, 0)).toBe(matching.length);
    expect(hist2.result.reduce((a, b) => a + b.count, 0)).toBe(matching.length);
    // Each bucket holds exactly the matching records of its range.
    for (const b of hist.result) expect(b.count).toBe(matching.filter((r) => r.timestamp >= b.timestamp && r.timestamp < b.timestamp + hist.width).length);
    const byStatus = new Map<number, number>();
    for (const r of matching) byStatus.set(r.metadata.response.status_code, (byStatus.get(r.metadata.response.status_code) ?? 0) + 1);
    expect(new Map(facets.result.status!.map((v) => [v.value, v.count]))).toEqual(byStatus);
    expect(facets.result.method!.reduce((a, b) => a + b.count, 0)).toBe(matching.length);
    expect(facets.result.path!.reduce((a, b) => a + b.count, 0)).toBe(matching.length);
  });

  it('a search on a settled store is counted from the columns (decided by the words, or the words and texts): count, histogram and facets, with filters, as the records say', async () => {
    const store = await keeper.open(keeper.newDir());
    const recs = records();
    await importRecords(store, 'edge_logs', recs);
    await store.columnsSettled();
    const t = appOver(store);
    // Each finds the messages holding `timeout`: a word (the words decide), a phrase of words and
    // separators and a pattern (the words narrow, the texts decide), a phrase not ASCII (the texts alone).
    for (const search of ['q=TimeOut', `q=${encodeURIComponent('h timeout |')}`, `q=${encodeURIComponent('time(out|x)')}&regex=1`, `q=${encodeURIComponent('ZÜRICH timeout')}`])
    for (const [filter, keep] of [
      ['', () => true],
      ['&status=5xx', (r: (typeof recs)[number]) => r.metadata.response.status_code >= 500],
      ['&method=!GET', (r: (typeof recs)[number]) => r.metadata.request.method !== 'GET'],
    ] as const) {
      const before = partitionsTalliedFromColumns();
      const q = `source=edge_logs&${search}${filter}&${window}`;
      const [count, hist, facets] = await Promise.all([
        json<{ result: { count: number } }>(t, `/api/logs/count?${q}`),
        json<{ result: Array<{ timestamp: number; count: number; by: Record<string, number> }>; width: number }>(t, `/api/logs/histogram?${q}&buckets=100`),
        json<{ result: Record<string, Array<{ value: string | number; count: number }>> }>(t, `/api/logs/facets?${q}&fields=status,method,path`),
      ]);
      const matching = recs.filter((r) => r.event_message.toLowerCase().includes('timeout') && keep(r));
      expect(matching.length, filter).toBeGreaterThan(10);
      expect(count.result.count, `${search}${filter}`).toBe(matching.length);
      const cls = (s: number) => `${Math.floor(s / 100)}xx`;
      for (const b of hist.result) {
        const inside = matching.filter((r) => r.timestamp >= b.timestamp && r.timestamp < b.timestamp + hist.width);
        expect(b.count, `${filter} ${b.timestamp}`).toBe(inside.length);
        for (const k of ['2xx', '4xx', '5xx']) expect(b.by[k] ?? 0, `${filter} ${b.timestamp} ${k}`).toBe(inside.filter((r) => cls(r.metadata.response.status_code) === k).length);
      }
      const tally = (of: (r: (typeof recs)[number]) => string | number) => {
        const m = new Map<string | number, number>();
        for (const r of matching) m.set(of(r), (m.get(of(r)) ?? 0) + 1);
        return m;
      };
      const asMap = (vs: Array<{ value: string | number; count: number }>) => new Map(vs.map((v) => [v.value, v.count]));
      expect(asMap(facets.result.status!), filter).toEqual(tally((r) => r.metadata.response.status_code));
      expect(asMap(facets.result.method!), filter).toEqual(tally((r) => r.metadata.request.method));
      expect(asMap(facets.result.path!), filter).toEqual(tally((r) => r.metadata.request.path));
      expect(partitionsTalliedFromColumns() - before, `${search}${filter}`).toBeGreaterThan(0);
    }
    // Words every GET record holds, but never in this order: the texts rule each candidate out.
    const before = partitionsTalliedFromColumns();
    const none = await json<{ result: { count: number } }>(t, `/api/logs/count?source=edge_logs&q=${encodeURIComponent('GET | fine')}&${window}`);
    expect(recs.filter((r) => r.event_message.toLowerCase().includes('get | fine')).length).toBe(0);
    expect(none.result.count).toBe(0);
    expect(partitionsTalliedFromColumns() - before).toBeGreaterThan(0);
  });

  it('asked at once, the three read each block once (one walk), not three times', async () => {
    const dir = keeper.newDir();
    const first = await keeper.open(dir);
    await importRecords(first, 'edge_logs', records());
    await first.columnsSettled();
    // Reopened: the blocks the import left in the cache are gone.
    await keeper.close(first);
    const store = await keeper.open(dir);
    await store.columnsSettled();
    const t = appOver(store);
    const q = `source=edge_logs&q=${encodeURIComponent('zürich')}&${window}`;
    // One walk alone, to know how many blocks a walk reads.
    // Reads: record blocks decompressed and groups of record texts read (the search reads the texts once they are built).
    const reads = () => recordBlocksHeld().decompressed + textGroupsRead();
    const one = reads();
    await json(t, `/api/logs/count?${q}`);
    const perWalk = reads() - one;
    expect(perWalk).toBeGreaterThan(3);
    stopSearches(store);
    await keeper.close(store);
    const again = await keeper.open(dir);
    await again.columnsSettled();
    const t2 = appOver(again);
    const before = reads();
    await Promise.all([json(t2, `/api/logs/count?${q}`), json(t2, `/api/logs/histogram?${q}`), json(t2, `/api/logs/facets?${q}`)]);
    expect(reads() - before).toBe(perWalk);
  });

  it('while the walk runs, an answer says how far back it has counted; the walk goes on to the same total', async () => {
    const { store, recs, q } = await storeWithRecords();
    const first = await searchTallies(store, q, 0);
    expect(first.complete).toBe(false);
    expect(first.through).toBeLessThan(q.end);
    // Counted so far: exactly the matching records at or after `through`.
    expect(first.count).toBe(recs.filter((r) => r.event_message.includes('Zürich') && r.timestamp >= first.through).length);
    let last = first;
    while (!last.complete) last = await searchTallies(store, q, 50);
    expect(last.through).toBe(q.start);
    expect(last.count).toBe(recs.filter((r) => r.event_message.includes('Zürich')).length);
  });

  it('a finished walk is dropped when the stored data changes, and one running then as soon as it finishes', async () => {
    const { store, recs, q } = await storeWithRecords();
    let t = await searchTallies(store, q, 0);
    while (!t.complete) t = await searchTallies(store, q, 50);
    expect(searchWalksHeld(store)).toEqual({ running: 0, finished: 1 });
    // Another search, left running (asked without waiting).
    const other = queryOf(store, 'fine');
    expect((await searchTallies(store, other, 0)).complete).toBe(false);
    expect(searchWalksHeld(store)).toEqual({ running: 1, finished: 1 });
    // An import changes the data: the finished walk goes at once; the running one once it ends.
    await importRecords(store, 'edge_logs', [{ ...recs[0]!, id: 'changed-1', timestamp: NOW - 3.5 * DAY }]);
    expect(searchWalksHeld(store).finished).toBe(0);
    for (let i = 0; i < 200 && searchWalksHeld(store).running > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(searchWalksHeld(store)).toEqual({ running: 0, finished: 0 });
    // A walk of the data as it is now is kept once finished.
    let now = await searchTallies(store, q, 0);
    while (!now.complete) now = await searchTallies(store, q, 50);
    expect(now.count).toBe(t.count + 1);
    expect(searchWalksHeld(store)).toEqual({ running: 0, finished: 1 });
    stopSearches(store);
  });
});
