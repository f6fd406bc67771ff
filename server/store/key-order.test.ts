/**
 * A partition's key follows the order its records came in (partitionDdl's `newestFirst`): the
 * same records imported newest first and oldest first give partitions keyed each way, files of
 * about the same size (SQLite left newest-first pages half full under an ascending key), and
 * the same answers from every endpoint and the explorer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appOver, at, edgeRecord, fnRecord, HOUR, importRecords, MIN, rows, SEC, storeKeeper, type TestApp } from '../testing/fixtures.ts';
import type { LogStore } from './log-store.ts';

const keeper = storeKeeper('le-key-order-');
const apps: TestApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
  await keeper.cleanup();
});

const NOW = at('2026-11-22T12:00:00Z');
const N = 24_000;
const FUNCTIONS = ['fn-a', 'fn-b', 'fn-c'];
const PROJECT = 'projaaaaaaaaaaaaaaaa';

/** N records of each source over the last two hours before NOW, oldest first. */
function records() {
  const step = Math.floor((2 * HOUR) / N);
  const from = NOW - 2 * HOUR;
  const fn = Array.from({ length: N }, (_, i) =>
    fnRecord(from + i * step, { id: `f-${i}`, project: PROJECT, functionId: FUNCTIONS[i % 3]!, exec: 5 + ((i * 37) % 900), status: i % 13 === 0 ? 500 : 200 }),
  );
  const edge = Array.from({ length: N }, (_, i) => edgeRecord(from + i * step, { id: `e-${i}`, project: PROJECT, status: i % 11 === 0 ? 404 : 200 }));
  return { fn, edge };
}

async function storeOf(order: 'newest' | 'oldest'): Promise<LogStore> {
  const store = await keeper.open(keeper.newDir());
  const { fn, edge } = records();
  const ordered = <T>(list: T[]) => (order === 'newest' ? [...list].reverse() : list);
  await importRecords(store, 'function_edge_logs', ordered(fn));
  await importRecords(store, 'edge_logs', ordered(edge));
  return store;
}

const ddl = (store: LogStore, source: 'deno-relay-logs' | 'cloudflare.logs.prod') =>
  store.partitions(source).map((p) => store.use(p).rows("SELECT group_concat(sql, '; ') FROM sqlite_master WHERE sql IS NOT NULL")[0]![0] as string);
const bytes = (store: LogStore, source: 'deno-relay-logs' | 'cloudflare.logs.prod') => store.partitions(source).reduce((n, p) => n + p.row.image_bytes, 0);

describe('partition keys in the order records come', () => {
  it('keys instants descending for records that came newest first, ascending otherwise; files of about one size; answers alike', async () => {
    const newest = await storeOf('newest');
    const oldest = await storeOf('oldest');
    for (const source of ['deno-relay-logs', 'cloudflare.logs.prod'] as const) {
      expect(newest.partitions(source).length).toBeGreaterThan(1);
      for (const sql of ddl(newest, source)) expect(sql).toMatch(/ts DESC/);
      for (const sql of ddl(oldest, source)) expect(sql).not.toMatch(/DESC/);
      // Within a fifth of each other (half-full pages made the newest-first files 1.3-1.7x larger).
      expect(bytes(newest, source) / bytes(oldest, source)).toBeLessThan(1.2);
    }
    const [a, b] = [appOver(newest, NOW), appOver(oldest, NOW)];
    apps.push(a, b);
    for (const interval of ['5min', '15min', '1hr', '1day']) {
      const params = { project: PROJECT, interval };
      expect(await rows(a, 'functions.invocation-stats', params), interval).toEqual(await rows(b, 'functions.invocation-stats', params));
      const one = { ...params, function_id: 'fn-b' };
      expect(await rows(a, 'functions.invocation-stats', one), `${interval}, one function`).toEqual(await rows(b, 'functions.invocation-stats', one));
    }
    for (const tier of ['FREE', 'PRO']) {
      const params = { project: PROJECT, project_tier: tier };
      expect(await rows(a, 'logs.all', params)).toEqual(await rows(b, 'logs.all', params));
    }
    const counts = { project: PROJECT, interval: 'hourly' };
    expect(await rows(a, 'usage.api-counts', counts)).toEqual(await rows(b, 'usage.api-counts', counts));
    // The explorer: a page of an hour, newest first, and its histogram.
    const window = new URLSearchParams({ source: 'edge_logs', start: new Date((NOW - 90 * MIN) / 1000).toISOString(), end: new Date((NOW - 30 * MIN + 7 * SEC) / 1000).toISOString() });
    for (const p of [`/api/logs/histogram?${window}&buckets=30`, `/api/logs/facets?${window}&fields=status`]) {
      const [ra, rb] = [await a.request(p), await b.request(p)];
      expect(ra.status, p).toBe(200);
      expect(await ra.json(), p).toEqual(await rb.json());
    }
    // Pages (two, following `next`): the same records; the cursors name row numbers, which follow the import's order.
    const page = async (t: TestApp, cursor?: string) => {
      const res = await t.request(`/api/logs?${window}&limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      return (await res.json()) as { result: unknown[]; next?: string; scanned?: unknown };
    };
    const [pa, pb] = [await page(a), await page(b)];
    expect(pa.result).toHaveLength(200);
    expect(pa.result).toEqual(pb.result);
    expect(pa.scanned).toEqual(pb.scanned);
    expect((await page(a, pa.next)).result).toEqual((await page(b, pb.next)).result);
    expect(newest.dump('deno-relay-logs').map((r) => r.id).sort()).toEqual(oldest.dump('deno-relay-logs').map((r) => r.id).sort());
  });
});
