/**
 * The partitioned layout: one partition per source and UTC day (hours once a day passes
 * SPLIT_ROWS), dedupe in the partition of each record's instant, saves that rewrite only what
 * changed, the memory budget (eviction and staging), failed imports that leave the store
 * exactly as it was, the conversion of a single-file store, and the crash states a save can
 * leave on disk. Expected values are worked out by hand from the records written here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LogRow } from '../../contract/api-types.ts';
import { filesUnder, sleep, storeProblems } from '../hardening/helpers.ts';
import { importStream } from '../ingest/import.ts';
import type { SourceName } from '../sources.ts';
import { DAY, HOUR, MIN, NOW, SEC, appOver, at, edgeRecord, rows, storeKeeper, type TestApp } from '../testing/fixtures.ts';
import { CATALOG_FILE } from './catalog.ts';
import { openDb } from './db.ts';
import type { LogStore } from './log-store.ts';
import { SPLIT_ROWS } from './partition.ts';
import { isDerivedPartFile } from './store-files.ts';

const PA = 'projaaaaaaaaaaaaaaaa';
const PB = 'projbbbbbbbbbbbbbbbb';
const KiB = 1024;

const keeper = storeKeeper('le-parts-');
const { newDir, open, close } = keeper;
const apps: TestApp[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  apps.splice(0);
  await keeper.cleanup();
});

const ndjson = (records: unknown[]) => Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n');
const importEdge = (store: LogStore, records: unknown[], opts: Parameters<typeof importStream>[2] = {}) => importStream(store, [ndjson(records)], { source: 'edge_logs', ...opts });

/** Files under the source's parts folder. */
/** Database and record files (each version's columns file follows it: scan-columns.test.ts; block indexes are derived, built in the background). */
const notColumns = (f: string) => !isDerivedPartFile(f);
const partFiles = (dir: string, alias = 'edge_logs') => filesUnder(path.join(dir, 'parts', alias)).filter(notColumns);
/** Every file under parts/ with its size. */
const partSizes = (dir: string) => filesUnder(path.join(dir, 'parts')).filter(notColumns).map((f) => `${f} ${fs.statSync(path.join(dir, 'parts', f)).size}`);
const labels = (store: LogStore, source: SourceName = 'cloudflare.logs.prod') => store.partitions(source).map((p) => p.label);
const edgeSummary = (store: LogStore) => store.summary().find((s) => s.source === 'cloudflare.logs.prod')!;

/** Every catalog table, row by row (what a rollback must restore exactly). */
const catalogTables = (store: LogStore) =>
  Object.fromEntries(
    [
      ...['projects', 'functions', 'partitions', 'partition_projects', 'source_summary', 'function_edge_hours', 'split_days', 'api_hours', 'meta'].map((t) => [
        t,
        store.catalog.rows(`SELECT * FROM ${t} ORDER BY 1, 2`),
      ]),
      ['urls', store.urls.slice(0, Number.MAX_SAFE_INTEGER)],
    ],
  );

/** The in-process app over a store (closed by the store's own cleanup). */
function appFor(store: LogStore): TestApp {
  const t = appOver(store, NOW);
  apps.push(t);
  return t;
}

/** `perDay` edge records on each day from `first` for `days` days, at 00:10, 00:20, ... of the day (or `every` apart). */
function edgeDays(first: string, days: number, perDay: number, idPrefix = '', every = 10 * MIN): Array<ReturnType<typeof edgeRecord>> {
  if (perDay * every >= DAY) throw new Error('the records would spill into the next day');
  const out: Array<ReturnType<typeof edgeRecord>> = [];
  for (let d = 0; d < days; d++) {
    const day = at(`${first}T00:00:00Z`) + d * DAY;
    const label = new Date(day / 1000).toISOString().slice(0, 10).replace(/-/g, '');
    for (let i = 0; i < perDay; i++) {
      out.push(edgeRecord(day + (i + 1) * every, { id: `${idPrefix}${label}-${i}`, path: i % 2 === 0 ? '/rest/v1/todos' : '/storage/v1/object/a.png' }));
    }
  }
  return out;
}

describe('one partition per source and day', () => {
  // Imported out of order: dump lists partitions by day, rows in the order they were stored.
  const recs = [
    edgeRecord(at('2026-11-21T13:30:00Z'), { id: 'c2', project: PB }),
    edgeRecord(at('2026-11-18T23:59:59.999999Z'), { id: 'a2' }),
    edgeRecord(at('2026-11-19T00:00:00Z'), { id: 'b1' }),
    edgeRecord(at('2026-11-18T01:00:00Z'), { id: 'a1' }),
    edgeRecord(at('2026-11-21T12:00:00Z'), { id: 'c1' }),
  ];

  it('records of several days land in one partition per day (files named by day), hours of a day share it; summary and catalog as computed by hand', async () => {
    const dir = newDir();
    const store = await open(dir);
    expect(await importEdge(store, recs)).toMatchObject({ imported: 5, duplicates: 0 });
    expect(labels(store)).toEqual(['20261118', '20261119', '20261121']);
    expect(partFiles(dir)).toEqual([
      '20261118-v1.sqlite',
      '20261118.records',
      '20261119-v1.sqlite',
      '20261119.records',
      '20261121-v1.sqlite',
      '20261121.records',
    ]);
    // The day boundary belongs to the new day: 23:59:59.999999 is the 18th, 00:00:00 the 19th.
    expect(store.dump('cloudflare.logs.prod').map((r) => [r.partition, r.id, r.project])).toEqual([
      ['20261118', 'a2', PA],
      ['20261118', 'a1', PA],
      ['20261119', 'b1', PA],
      ['20261121', 'c2', PB],
      ['20261121', 'c1', PA],
    ]);
    expect(store.catalog.query('SELECT start, width, version, rows, min_ts, max_ts FROM partitions WHERE source = 1 ORDER BY start')).toEqual([
      { start: at('2026-11-18T00:00:00Z'), width: DAY, version: 1, rows: 2, min_ts: at('2026-11-18T01:00:00Z'), max_ts: at('2026-11-18T23:59:59.999999Z') },
      { start: at('2026-11-19T00:00:00Z'), width: DAY, version: 1, rows: 1, min_ts: at('2026-11-19T00:00:00Z'), max_ts: at('2026-11-19T00:00:00Z') },
      { start: at('2026-11-21T00:00:00Z'), width: DAY, version: 1, rows: 2, min_ts: at('2026-11-21T12:00:00Z'), max_ts: at('2026-11-21T13:30:00Z') },
    ]);
    expect(
      store.catalog.query(
        `SELECT pp.start, p.ref, pp.count, pp.min_ts, pp.max_ts FROM partition_projects pp JOIN projects p ON p.id = pp.project
         WHERE pp.source = 1 ORDER BY pp.start, p.ref`,
      ),
    ).toEqual([
      { start: at('2026-11-18T00:00:00Z'), ref: PA, count: 2, min_ts: at('2026-11-18T01:00:00Z'), max_ts: at('2026-11-18T23:59:59.999999Z') },
      { start: at('2026-11-19T00:00:00Z'), ref: PA, count: 1, min_ts: at('2026-11-19T00:00:00Z'), max_ts: at('2026-11-19T00:00:00Z') },
      { start: at('2026-11-21T00:00:00Z'), ref: PA, count: 1, min_ts: at('2026-11-21T12:00:00Z'), max_ts: at('2026-11-21T12:00:00Z') },
      { start: at('2026-11-21T00:00:00Z'), ref: PB, count: 1, min_ts: at('2026-11-21T13:30:00Z'), max_ts: at('2026-11-21T13:30:00Z') },
    ]);
    expect(edgeSummary(store)).toEqual({
      source: 'cloudflare.logs.prod',
      alias: 'edge_logs',
      count: 5,
      minTimestamp: at('2026-11-18T01:00:00Z'),
      maxTimestamp: at('2026-11-21T13:30:00Z'),
      projects: [
        { ref: PA, count: 4 },
        { ref: PB, count: 1 },
      ],
      functionIds: [],
    });
  });

  it('a re-import of the same file imports 0 (each record found in the partition of its day), also after reopen; nothing is rewritten', async () => {
    const dir = newDir();
    const store = await open(dir);
    await importEdge(store, recs);
    const files = partSizes(dir);
    expect(await importEdge(store, recs)).toMatchObject({ imported: 0, duplicates: 5 });
    expect(partSizes(dir)).toEqual(files);
    await close(store);
    const again = await open(dir);
    expect(await importEdge(again, [...recs].reverse())).toMatchObject({ imported: 0, duplicates: 5 });
    expect(partSizes(dir)).toEqual(files);
    expect(edgeSummary(again).count).toBe(5);
    // A record with a known id at an instant of another day is another record (see
    // docs/ARCHITECTURE.md, "Dedupe"): it lands in that day's partition.
    expect(await importEdge(again, [edgeRecord(at('2026-11-20T08:00:00Z'), { id: 'a1' })])).toMatchObject({ imported: 1, duplicates: 0 });
    expect(labels(again)).toEqual(['20261118', '20261119', '20261120', '20261121']);
  });
});

describe(`a day past SPLIT_ROWS (${SPLIT_ROWS.toLocaleString('en')}) rows`, () => {
  const D = at('2026-11-20T00:00:00Z');
  // One record every 0.8 s from 00:00 on the 20th: 4500 per hour, all on the 20th.
  const GAP = 800_000;
  const N = SPLIT_ROWS + 1;
  const rec = (i: number) => ({ id: `r${i}`, timestamp: D + i * GAP, project: PA, event_message: `row ${i}` });
  const body = (order: Iterable<number>) => {
    const lines: string[] = [];
    for (const i of order) lines.push(JSON.stringify(rec(i)));
    return Buffer.from(lines.join('\n') + '\n');
  };
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);
  // The first SPLIT_ROWS in an order where every stretch of records spans the whole range (every
  // 50th record, then the next 50th, ...): no batch looks like a dense day, so they go into one
  // day partition, which the record past the limit then splits.
  const SPARSE = range(0, SPLIT_ROWS).sort((a, b) => a % 50 - (b % 50) || a - b);
  const importPg = (store: LogStore, order: Iterable<number>) => importStream(store, [body(order)], { source: 'postgres_logs' });
  /** Labels of the hours records 0 .. count - 1 fall in. */
  const hoursOf = (count: number) => Array.from({ length: Math.floor(((count - 1) * GAP) / HOUR) + 1 }, (_, h) => `20261120T${String(h).padStart(2, '0')}`);

  /** The hour partitions of the 20th: files named by hour, 4500 rows an hour, every record where it belongs. */
  function expectHours(store: LogStore, dir: string, count: number) {
    const hours = hoursOf(count);
    expect(labels(store, 'postgres.logs')).toEqual(hours);
    expect(store.partitions('postgres.logs').map((p) => p.row.rows)).toEqual([...hours.slice(1).map(() => 4500), count - 4500 * (hours.length - 1)]);
    expect(store.partitions('postgres.logs').every((p) => p.row.width === HOUR && p.start === D + hours.indexOf(p.label) * HOUR)).toBe(true);
    const files = partFiles(dir, 'postgres_logs');
    expect(files).toEqual(store.partitions('postgres.logs').flatMap((p) => [path.basename(p.dbFile(p.row.version)), `${p.label}.records`]).sort());
    expect(files.every((f) => /^20261120T\d\d(-v\d+\.sqlite|\.records)$/.test(f))).toBe(true);
    expect(store.catalog.rows('SELECT source, day FROM split_days')).toEqual([[2, D]]);
    expect(store.summary().find((s) => s.source === 'postgres.logs')).toMatchObject({ count, minTimestamp: D, maxTimestamp: D + (count - 1) * GAP });
    const dumped = store.dump('postgres.logs');
    expect(dumped).toHaveLength(count);
    expect(new Set(dumped.map((r) => r.id)).size).toBe(count);
    // Each row sits in the hour of its instant, with its own record.
    const misplaced = dumped.filter((r) => {
      const i = Number(r.id.slice(1));
      return r.ts !== D + i * GAP || r.partition !== hours[Math.floor((i * GAP) / HOUR)] || r.raw !== JSON.stringify(rec(i));
    });
    expect(misplaced).toEqual([]);
    expect(storeProblems(store)).toEqual([]);
  }

  it('is stored as hour partitions (files named by hour), every record kept and deduped in its hour, also after reopen', async () => {
    // The records stay within the 20th.
    expect((N + 5000) * GAP).toBeLessThan(DAY - HOUR);
    const dir = newDir();
    const store = await open(dir);
    expect(await importPg(store, range(0, N))).toMatchObject({ imported: N });
    expectHours(store, dir, N);
    expect(await importPg(store, range(0, N))).toMatchObject({ imported: 0, duplicates: N });
    await close(store);
    const again = await open(dir);
    expect(labels(again, 'postgres.logs')).toEqual(hoursOf(N));
    expect(await importPg(again, range(N - 1000, N))).toMatchObject({ imported: 0, duplicates: 1000 });
    // A later record of the split day gets an hour partition of its own, not a day partition.
    expect(await importStream(again, [ndjson([{ ...rec(0), id: 'late', timestamp: D + 23 * HOUR + 30 * MIN }])], { source: 'postgres_logs' })).toMatchObject({ imported: 1 });
    expect(labels(again, 'postgres.logs')).toEqual([...hoursOf(N), '20261120T23']);
    expect(storeProblems(again)).toEqual([]);
  });

  it('records dense enough go to hour partitions, though an import inserts each batch in slices: no day partition grows past its first rows', async () => {
    const dir = newDir();
    const store = await open(dir);
    let largestDay = 0;
    let seen = 0;
    const report = await importStream(store, [body(range(0, N))], {
      source: 'postgres_logs',
      onProgress: () => {
        for (const p of store.partitions('postgres.logs')) {
          seen++;
          if (!p.label.includes('T')) largestDay = Math.max(largestDay, p.row.rows);
        }
      },
    });
    expect(report).toMatchObject({ imported: N });
    expect(seen).toBeGreaterThan(0);
    // A batch big enough to judge makes hours at once; smaller ones (a busy machine) split the day while it is young.
    expect(largestDay).toBeLessThanOrEqual(2000);
    expectHours(store, dir, N);
  });

  it('records dense enough that arrive in batches too small to judge still end in hour partitions, split while the day is young', async () => {
    const dir = newDir();
    const store = await open(dir);
    const count = 2000;
    async function* trickle() {
      // 40 records at a time, with a pause: the parser sends each as a batch of its own.
      for (let i = 0; i < count; i += 40) {
        yield body(range(i, Math.min(i + 40, count)));
        await sleep(30);
      }
    }
    let largestDay = 0;
    const report = await importStream(store, trickle(), {
      source: 'postgres_logs',
      parser: 'inline',
      onProgress: () => {
        for (const p of store.partitions('postgres.logs')) if (!p.label.includes('T')) largestDay = Math.max(largestDay, p.row.rows);
      },
    });
    expect(report).toMatchObject({ imported: count });
    expect(labels(store, 'postgres.logs')).toEqual(hoursOf(count));
    // Never a day partition past the young limit (2,000 rows): no split of a full day.
    expect(largestDay).toBeLessThanOrEqual(2000);
    expect(store.dump('postgres.logs')).toHaveLength(count);
    expect(storeProblems(store)).toEqual([]);
  });

  it('a day partition is split into hours by the import that takes it past the limit: the day files go, every record is kept and deduped', async () => {
    const dir = newDir();
    const store = await open(dir);
    // SPLIT_ROWS rows are not past the limit: still one day partition.
    expect(await importPg(store, SPARSE)).toMatchObject({ imported: SPLIT_ROWS });
    expect(labels(store, 'postgres.logs')).toEqual(['20261120']);
    expect(partFiles(dir, 'postgres_logs')).toEqual(['20261120-v1.sqlite', '20261120.records']);
    // One more is.
    expect(await importPg(store, [SPLIT_ROWS])).toMatchObject({ imported: 1 });
    expectHours(store, dir, N);
    expect(await importPg(store, range(0, N))).toMatchObject({ imported: 0, duplicates: N });
    await close(store);
    const again = await open(dir);
    expectHours(again, dir, N);
    expect(await importPg(again, range(N - 1000, N))).toMatchObject({ imported: 0, duplicates: 1000 });
  });

  it('an import that splits a day and then fails puts the day partition back, as it was, in memory and on disk', async () => {
    const dir = newDir();
    const store = await open(dir);
    await importPg(store, SPARSE);
    expect(labels(store, 'postgres.logs')).toEqual(['20261120']);
    const files = partSizes(dir);
    const catalog = catalogTables(store);
    const summary = store.summary();
    async function* input() {
      yield body(range(SPLIT_ROWS, SPLIT_ROWS + 5000));
      // Wait until the split has happened (the first batch past the limit), then fail.
      for (let i = 0; i < 2000 && store.partitions('postgres.logs').length === 1; i++) await sleep(5);
      throw new Error('connection reset');
    }
    let split = 0;
    const failing = importStream(store, input(), { source: 'postgres_logs', onProgress: () => (split = Math.max(split, store.partitions('postgres.logs').length)) });
    await expect(failing).rejects.toThrow('connection reset');
    expect(split).toBeGreaterThan(1);
    expect(labels(store, 'postgres.logs')).toEqual(['20261120']);
    expect(partSizes(dir)).toEqual(files);
    expect(catalogTables(store)).toEqual(catalog);
    expect(store.summary()).toEqual(summary);
    expect(store.dump('postgres.logs').map((r) => r.id)).toEqual(SPARSE.map((i) => `r${i}`));
    await close(store);
    const again = await open(dir);
    expect(labels(again, 'postgres.logs')).toEqual(['20261120']);
    expect(storeProblems(again)).toEqual([]);
    // The same records split the day when imported for real.
    expect(await importPg(again, range(SPLIT_ROWS, SPLIT_ROWS + 5000))).toMatchObject({ imported: 5000 });
    expectHours(again, dir, SPLIT_ROWS + 5000);
  });

  it('logs.all after a split answers the records of the hour partitions, not records cached under the day partition', async () => {
    const dir = newDir();
    const store = await open(dir);
    const t = appFor(store);
    const logs = (start: string, end: string) =>
      rows<LogRow>(t, 'logs.all', { project: PA, project_tier: 'PAYG', iso_timestamp_start: start, iso_timestamp_end: end }).then((r) => r.map((x) => [x.id, x.timestamp]));
    // Row 1 of the day partition is a record at 23:00.
    await importEdge(store, [edgeRecord(D + 23 * HOUR, { id: 'late' })]);
    expect(await logs('2026-11-20T22:59:00Z', '2026-11-20T23:01:00Z')).toEqual([['late', D + 23 * HOUR]]);
    // SPLIT_ROWS more split the day; row 1 of the new 00:00 hour partition (same start) is r0.
    const many = Array.from({ length: SPLIT_ROWS }, (_, i) => edgeRecord(D + i * GAP, { id: `r${i}` }));
    await importStream(store, [ndjson(many)], { source: 'edge_logs' });
    expect(labels(store)[0]).toBe('20261120T00');
    expect(await logs('2026-11-19T23:59:59Z', '2026-11-20T00:00:01Z')).toEqual([
      ['r1', D + GAP],
      ['r0', D],
    ]);
    expect(await logs('2026-11-20T22:59:00Z', '2026-11-20T23:01:00Z')).toEqual([['late', D + 23 * HOUR]]);
  });
});

describe('saves are proportional to the change', () => {
  it('after an import over five days, an import into one day writes only that day’s new version and the catalog', async () => {
    const dir = newDir();
    const store = await open(dir);
    expect(await importEdge(store, edgeDays('2026-11-17', 5, 50))).toMatchObject({ imported: 250 });
    const days = ['20261117', '20261118', '20261119', '20261120', '20261121'];
    expect(labels(store)).toEqual(days);
    const stat = (f: string) => fs.statSync(path.join(dir, 'parts', 'edge_logs', f));
    await store.columnsSettled();
    const before = new Map(partFiles(dir).map((f) => [f, { ino: stat(f).ino, mtimeMs: stat(f).mtimeMs, size: stat(f).size }]));
    expect([...before.keys()]).toEqual(days.flatMap((d) => [`${d}-v1.sqlite`, `${d}.records`]));
    const catalogIno = fs.statSync(path.join(dir, 'catalog.sqlite')).ino;

    // Every file the next import creates (databases, the catalog; record files are appended to).
    const written: string[] = [];
    const rel = (f: unknown) => path.relative(dir, String(f)).split(path.sep).join('/');
    const realOpen = fs.promises.open;
    vi.spyOn(fs.promises, 'open').mockImplementation(async (...args: Parameters<typeof fs.promises.open>) => {
      if (args[1] === 'w') written.push(rel(args[0]));
      return realOpen(...args);
    });
    const realWriteFile = fs.promises.writeFile.bind(fs.promises);
    vi.spyOn(fs.promises, 'writeFile').mockImplementation(async (...args: Parameters<typeof fs.promises.writeFile>) => {
      written.push(`staged ${rel(args[0])}`);
      return realWriteFile(...args);
    });
    const realOpenSync = fs.openSync;
    vi.spyOn(fs, 'openSync').mockImplementation(((...args: Parameters<typeof fs.openSync>) => {
      if (args[1] === 'w' || args[1] === 'w+') written.push(rel(args[0]));
      return realOpenSync(...args);
    }) as typeof fs.openSync);
    const three = [0, 1, 2].map((i) => edgeRecord(at('2026-11-19T18:00:00Z') + i * SEC, { id: `late-${i}` }));
    expect(await importEdge(store, three)).toMatchObject({ imported: 3 });
    vi.restoreAllMocks();

    // The day's image is staged as the import ends (off the thread) and its columns file
    // written (off the thread too, under a temporary name); the commit writes only the catalog.
    expect(written).toEqual(['staged parts/edge_logs/20261119-v2.sqlite', 'parts/edge_logs/20261119-v2.cols.bg.tmp', 'catalog.sqlite.tmp']);
    expect(store.partitions('cloudflare.logs.prod').map((p) => p.row.version)).toEqual([1, 1, 2, 1, 1]);
    const after = partFiles(dir);
    expect(after).toEqual(days.flatMap((d) => [d === '20261119' ? `${d}-v2.sqlite` : `${d}-v1.sqlite`, `${d}.records`]));
    for (const f of after) {
      if (f.startsWith('20261119')) continue;
      // Untouched: the same file (inode), not rewritten (mtime), same size.
      expect({ ino: stat(f).ino, mtimeMs: stat(f).mtimeMs, size: stat(f).size }, f).toEqual(before.get(f));
    }
    expect(stat('20261119.records').size).toBeGreaterThan(before.get('20261119.records')!.size);
    expect(fs.statSync(path.join(dir, 'catalog.sqlite')).ino).not.toBe(catalogIno);
    await close(store);
    const again = await open(dir);
    expect(again.dump('cloudflare.logs.prod').filter((r) => r.partition === '20261119').map((r) => r.id)).toEqual([
      ...Array.from({ length: 50 }, (_, i) => `20261119-${i}`),
      'late-0',
      'late-1',
      'late-2',
    ]);
    expect(storeProblems(again)).toEqual([]);
  });
});

describe('the memory budget', () => {
  const BUDGET = 64 * KiB;
  const days = (from: string, n: number) =>
    Array.from({ length: n }, (_, d) => new Date(at(`${from}T00:00:00Z`) / 1000 + d * 86_400_000).toISOString().slice(0, 10).replace(/-/g, ''));

  /** Loaded partition databases stay within the budget, or only one (the last used) is loaded. */
  function expectWithinBudget(store: LogStore) {
    const loaded = store.partitions('cloudflare.logs.prod').filter((p) => p.db !== null);
    expect(loaded.length === 1 || store.loadedBytes() <= BUDGET, `${loaded.length} loaded, ${store.loadedBytes()} bytes`).toBe(true);
  }

  it(`with ${BUDGET / KiB} KiB, an import over 40 days stages evicted partitions and commits them; memory stays bounded; evicted partitions still answer; all of it reopens`, async () => {
    const dir = newDir();
    const store = await open(dir, { memoryBudgetBytes: BUDGET });
    const catalogFile = path.join(dir, 'catalog.sqlite');
    const empty = fs.readFileSync(catalogFile);
    // Partition databases on disk while the import runs and the catalog is still the empty one:
    // versions staged by eviction, not yet committed.
    let staged = 0;
    const recs = edgeDays('2026-10-13', 40, 100);
    const chunks = Array.from({ length: 8 }, (_, k) => ndjson(recs.slice(k * 500, (k + 1) * 500)));
    const report = await importStream(store, chunks, {
      source: 'edge_logs',
      onProgress: () => {
        if (fs.readFileSync(catalogFile).equals(empty)) staged = Math.max(staged, partFiles(dir).filter((f) => f.endsWith('.sqlite')).length);
      },
    });
    expect(report).toMatchObject({ imported: 4000, duplicates: 0 });
    expect(staged).toBeGreaterThan(0);
    expect(labels(store)).toEqual(days('2026-10-13', 40));
    expect(store.partitions('cloudflare.logs.prod').every((p) => p.row.version >= 1 && p.row.rows === 100 && !p.dirty && p.staged === null)).toBe(true);
    expectWithinBudget(store);
    expect(store.partitions('cloudflare.logs.prod').filter((p) => p.db !== null).length).toBeLessThan(40);

    // Queries over evicted partitions: logs.all in the first day, api-counts over the last 7 days.
    const t = appFor(store);
    const first = await rows<LogRow>(t, 'logs.all', { project: PA, project_tier: 'PAYG', iso_timestamp_start: '2026-10-13T00:00:00Z', iso_timestamp_end: '2026-10-13T02:00:00Z' });
    expect(first.map((r) => r.id)).toEqual(Array.from({ length: 12 }, (_, i) => `20261013-${11 - i}`));
    // From now - 7 days (2026-11-15T10:30:45.123456Z): on the 15th the records of 10:40 to 16:40
    // (i = 63..99: 18 even on /rest, 19 odd on /storage), then 50 and 50 on each later day.
    const counts = await rows(t, 'usage.api-counts', { project: PA, interval: 'daily' });
    expect(counts).toEqual([
      { timestamp: '2026-11-15T00:00:00', total_rest_requests: 18, total_storage_requests: 19, total_auth_requests: 0, total_realtime_requests: 0 },
      ...['16', '17', '18', '19', '20', '21'].map((d) => ({
        timestamp: `2026-11-${d}T00:00:00`,
        total_rest_requests: 50,
        total_storage_requests: 50,
        total_auth_requests: 0,
        total_realtime_requests: 0,
      })),
    ]);
    expectWithinBudget(store);
    await close(store);

    const again = await open(dir, { memoryBudgetBytes: BUDGET });
    const all = again.dump('cloudflare.logs.prod');
    expect(all.map((r) => r.id)).toEqual(recs.map((r) => r.id));
    expect(again.integrityCheck()).toBe('ok');
    expect(storeProblems(again)).toEqual([]);
    expectWithinBudget(again);
  });
});

describe('a failed import leaves the store exactly as before', () => {
  for (const [label, opts, saveMidway] of [
    ['default budget', {}, false],
    ['a 64 KiB budget (partitions staged)', { memoryBudgetBytes: 64 * KiB }, false],
    ['a 64 KiB budget and a save in the middle of the import', { memoryBudgetBytes: 64 * KiB }, true],
  ] as const) {
    it(`${label}: summary, catalog, every row and the files under parts/ are as before; it reopens so`, async () => {
      const dir = newDir();
      const store = await open(dir, opts);
      // 20 days committed (Oct 13 - Nov 1); the failing import writes 8 of them again and 20 new ones.
      await importEdge(store, edgeDays('2026-10-13', 20, 100, 'keep-'));
      const summary = store.summary();
      const rowsBefore = store.dump('cloudflare.logs.prod');
      const catalog = catalogTables(store);
      const files = partSizes(dir);
      const fileNames = new Set(filesUnder(path.join(dir, 'parts')));

      const lost = edgeDays('2026-10-25', 28, 200, 'lost-', 5 * MIN);
      let batches = 0;
      let stagedSeen = 0;
      async function* input() {
        for (let k = 0; k < lost.length; k += 700) yield ndjson(lost.slice(k, k + 700));
        // Several batches over several days are in before the input breaks.
        for (let i = 0; i < 24_000 && batches < 2; i++) await sleep(5);
        stagedSeen = filesUnder(path.join(dir, 'parts')).filter((f) => f.endsWith('.sqlite') && !fileNames.has(f)).length;
        if (saveMidway) await store.save();
        throw new Error('connection reset');
      }
      await expect(importStream(store, input(), { source: 'edge_logs', onProgress: () => void batches++ })).rejects.toThrow('connection reset');
      expect(batches).toBeGreaterThanOrEqual(2);
      if (opts.memoryBudgetBytes) expect(stagedSeen).toBeGreaterThan(0);

      expect(store.summary()).toEqual(summary);
      expect(catalogTables(store)).toEqual(catalog);
      expect(partSizes(dir)).toEqual(files);
      expect(store.dump('cloudflare.logs.prod')).toEqual(rowsBefore);
      expect(fs.existsSync(path.join(dir, 'catalog.sqlite.tmp'))).toBe(false);
      await close(store);

      const again = await open(dir, opts);
      expect(again.summary()).toEqual(summary);
      expect(again.dump('cloudflare.logs.prod')).toEqual(rowsBefore);
      expect(storeProblems(again)).toEqual([]);
      // And the same import succeeds afterwards, in full.
      expect(await importEdge(again, lost)).toMatchObject({ imported: lost.length, duplicates: 0 });
    });
  }
});

describe('queries while a failed import is rolled back', () => {
  it('read the committed rows of the partitions the import wrote, under a budget that evicts them', async () => {
    const dir = newDir();
    // Room for about one partition database: each read below evicts the one before.
    const store = await open(dir, { memoryBudgetBytes: 20 * KiB });
    await importEdge(store, edgeDays('2026-11-19', 2, 20));
    const before = store.dump('cloudflare.logs.prod');
    // While the rollback commits the restored catalog (at its rename), a reader goes through
    // both days: the 19th, which the failed import wrote, then the 20th.
    const seen: string[][] = [];
    const realRename = fs.promises.rename;
    vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
      // The catalog's rename only (the background builder renames the columns files it writes).
      if (!String(to).endsWith(CATALOG_FILE)) return realRename(from, to);
      try {
        seen.push(store.dump('cloudflare.logs.prod').map((r) => r.id));
      } catch (err) {
        seen.push([`failed: ${(err as Error).message}`]);
      }
      return realRename(from, to);
    });
    async function* input() {
      // More than a batch (2000 records), all on the 19th: inserted before the input breaks.
      yield ndjson(Array.from({ length: 2100 }, (_, i) => edgeRecord(at('2026-11-19T20:00:00Z') + i * SEC, { id: `lost-${i}` })));
      for (let i = 0; i < 400 && store.partitions('cloudflare.logs.prod')[0]!.row.rows === 20; i++) await sleep(5);
      expect(store.partitions('cloudflare.logs.prod')[0]!.row.rows).toBeGreaterThan(20);
      throw new Error('connection reset');
    }
    await expect(importStream(store, input(), { source: 'edge_logs' })).rejects.toThrow('connection reset');
    vi.restoreAllMocks();
    expect(seen).toEqual([before.map((r) => r.id)]);
    expect(store.dump('cloudflare.logs.prod')).toEqual(before);
    expect(storeProblems(store)).toEqual([]);
  });
});

describe('a save that fails while an import goes on', () => {
  it('loses none of the rows the import wrote meanwhile (partitions it staged in between); the import commits them all', async () => {
    const dir = newDir();
    const store = await open(dir, { memoryBudgetBytes: 48 * KiB });
    const recs = edgeDays('2026-11-01', 12, 300, '', 4 * MIN);
    // The first time the catalog's temp file is opened, the disk is full, but only after a
    // while: the import goes on meanwhile, filling the day it was in and moving past it.
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' });
    const realOpen = fs.promises.open;
    let failed = false;
    vi.spyOn(fs.promises, 'open').mockImplementation(async (...args: Parameters<typeof fs.promises.open>) => {
      if (!failed && String(args[0]).endsWith('catalog.sqlite.tmp')) {
        failed = true;
        await sleep(300);
        throw enospc;
      }
      return realOpen(...args);
    });
    let saveError: unknown;
    async function* input() {
      for (let k = 0; k < recs.length; k += 150) {
        yield ndjson(recs.slice(k, k + 150));
        await sleep(25);
        // Mid-way through the fourth day, a save (as at shutdown, or from another caller).
        if (k === 3 * 300 + 150) void store.save().catch((err: unknown) => (saveError = err));
      }
    }
    const report = await importStream(store, input(), { source: 'edge_logs' });
    vi.restoreAllMocks();
    expect(failed).toBe(true);
    expect(saveError).toMatchObject({ code: 'ENOSPC' });
    expect(report).toMatchObject({ imported: recs.length, duplicates: 0 });
    expect(store.dump('cloudflare.logs.prod').map((r) => r.id)).toEqual(recs.map((r) => r.id));
    await close(store);
    const again = await open(dir, { memoryBudgetBytes: 48 * KiB });
    expect(again.dump('cloudflare.logs.prod').map((r) => r.id)).toEqual(recs.map((r) => r.id));
    expect(storeProblems(again)).toEqual([]);
  });
});

describe('converting a single-file store (formats 1-3)', () => {
  // The old layout, as server/store/schema.ts (format 3) created it before the partitioned store.
  const OLD_DDL = [
    'CREATE TABLE projects (id INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE)',
    'CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE)',
    'CREATE TABLE functions (id INTEGER PRIMARY KEY, function_id TEXT NOT NULL UNIQUE)',
    `CREATE TABLE source_summary (source INTEGER NOT NULL, project INTEGER NOT NULL, function INTEGER NOT NULL,
       count INTEGER NOT NULL, min_ts INTEGER NOT NULL, max_ts INTEGER NOT NULL, PRIMARY KEY (source, project, function)) WITHOUT ROWID`,
    'CREATE TABLE edge_logs (rid INTEGER PRIMARY KEY, project INTEGER NOT NULL, ts INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL, url INTEGER NOT NULL, families INTEGER NOT NULL, status INTEGER)',
    'CREATE INDEX edge_logs_project_ts ON edge_logs(project, ts)',
    'CREATE TABLE edge_logs_ids (id TEXT PRIMARY KEY, rid INTEGER NOT NULL) WITHOUT ROWID',
    'CREATE TABLE function_edge_logs (rid INTEGER PRIMARY KEY, project INTEGER NOT NULL, ts INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL, function INTEGER, exec REAL, status INTEGER)',
    'CREATE INDEX function_edge_logs_project_ts ON function_edge_logs(project, ts, function, exec, status)',
    'CREATE TABLE function_edge_logs_ids (id TEXT PRIMARY KEY, rid INTEGER NOT NULL) WITHOUT ROWID',
    'CREATE TABLE function_logs (rid INTEGER PRIMARY KEY, project INTEGER NOT NULL, ts INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL, function INTEGER)',
    'CREATE INDEX function_logs_project_ts ON function_logs(project, ts, function)',
    'CREATE TABLE function_logs_ids (id TEXT PRIMARY KEY, rid INTEGER NOT NULL) WITHOUT ROWID',
    ...['postgres_logs', 'auth_logs', 'realtime_logs', 'storage_logs', 'postgrest_logs', 'pgbouncer_logs'].flatMap((t) => [
      `CREATE TABLE ${t} (rid INTEGER PRIMARY KEY, project INTEGER NOT NULL, ts INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL)`,
      `CREATE INDEX ${t}_project_ts ON ${t}(project, ts)`,
      `CREATE TABLE ${t}_ids (id TEXT PRIMARY KEY, rid INTEGER NOT NULL) WITHOUT ROWID`,
    ]),
    `CREATE TABLE function_edge_hours (project INTEGER NOT NULL, hour INTEGER NOT NULL, function INTEGER NOT NULL,
       count INTEGER NOT NULL, errors INTEGER NOT NULL, exec_n INTEGER NOT NULL, exec_sum REAL, exec_min REAL, exec_max REAL, sketch BLOB,
       PRIMARY KEY (project, hour, function)) WITHOUT ROWID`,
    'PRAGMA user_version = 3',
  ];
  const U1 = `https://${PA}.supabase.co/rest/v1/todos?select=*`;
  const U2 = `https://${PB}.supabase.co/storage/v1/object/a.png`;
  const UUID = '0f8fad5b-d9cb-469f-a165-70867728950e';
  const ts = {
    e1: at('2026-11-21T09:15:00.000001Z'),
    e2: at('2026-11-22T08:00:00Z'),
    e3: at('2026-11-22T10:00:00.5Z'),
    f1: at('2026-11-22T10:10:00Z'),
    f2: at('2026-11-22T10:20:00Z'),
    f3: at('2026-11-22T09:00:00Z'),
    a1: at('2026-11-20T12:00:00Z'),
    a2: at('2026-11-20T12:00:01Z'),
  };
  // Each line as the old store kept it: the record as it came, in either shape.
  const lines = {
    e1: `{"id":"e1","timestamp":"2026-11-21T09:15:00.000001Z","project":"${PA}","event_message":"GET | 200 | café","metadata":{"request":{"url":"${U1}","path":"/rest/v1/todos"},"response":{"status_code":200}}}`,
    e2: `{"id":"e2","timestamp":${ts.e2},"project":"${PB}","event_message":"GET | 404","metadata":[{"request":[{"url":"${U2}","path":"/storage/v1/object/a.png"}],"response":[{"status_code":404}]}]}`,
    e3: `{"id":"e3","timestamp":${ts.e3},"project":"${PA}","event_message":"GET | 500","metadata":{"request":{"url":"${U1}","path":"/rest/v1/todos"},"response":{"status_code":500}}}`,
    f1: `{"id":"f1","timestamp":${ts.f1},"event_message":"POST | 200","metadata":{"project_ref":"${PA}","function_id":"fn-a","execution_time_ms":10,"response":{"status_code":200}}}`,
    f2: `{"id":"f2","timestamp":${ts.f2},"event_message":"POST | 500","metadata":{"project_ref":"${PA}","function_id":"fn-a","execution_time_ms":30,"response":{"status_code":500}}}`,
    f3: `{"id":"f3","timestamp":${ts.f3},"event_message":"boot","metadata":{"project_ref":"${PB}","function_id":"fn-b"}}`,
    a1: `{"id":"${UUID}","timestamp":${ts.a1},"project":"${PA}","event_message":"login","metadata":{"auth_event":{"action":"login"}}}`,
    a2: `{"id":"auth-2","timestamp":${ts.a2},"project":"${PA}","event_message":"logout","metadata":{"auth_event":{"action":"logout"}}}`,
  };
  const len = (k: keyof typeof lines) => Buffer.byteLength(lines[k]);

  /** Writes the old folder: store.sqlite (format 3) and one segment per source, rows at (off, len). */
  async function writeLegacyFolder(dir: string): Promise<void> {
    const db = await openDb();
    for (const stmt of OLD_DDL) db.exec(stmt);
    db.exec(`INSERT INTO projects VALUES (1, '${PA}'), (2, '${PB}')`);
    db.exec(`INSERT INTO urls VALUES (1, '${U1}'), (2, '${U2}')`);
    db.exec(`INSERT INTO functions VALUES (1, 'fn-a'), (2, 'fn-b')`);
    // edge_logs.ndjson: e1 at 0, e2 after e1's newline, e3 after e2's; then the half line of
    // an import that crashed (no row points at it).
    const eOff = [0, len('e1') + 1, len('e1') + 1 + len('e2') + 1];
    db.run('INSERT INTO edge_logs VALUES (1, 1, ?, ?, ?, 1, 1, 200), (2, 2, ?, ?, ?, 2, 2, 404), (3, 1, ?, ?, ?, 1, 1, 500)', [
      ts.e1, eOff[0]!, len('e1'), ts.e2, eOff[1]!, len('e2'), ts.e3, eOff[2]!, len('e3'),
    ]);
    db.exec("INSERT INTO edge_logs_ids VALUES ('e1', 1), ('e2', 2), ('e3', 3)");
    const fOff = [0, len('f1') + 1, len('f1') + 1 + len('f2') + 1];
    db.run('INSERT INTO function_edge_logs VALUES (1, 1, ?, ?, ?, 1, 10, 200), (2, 1, ?, ?, ?, 1, 30, 500), (3, 2, ?, ?, ?, 2, NULL, NULL)', [
      ts.f1, fOff[0]!, len('f1'), ts.f2, fOff[1]!, len('f2'), ts.f3, fOff[2]!, len('f3'),
    ]);
    db.exec("INSERT INTO function_edge_logs_ids VALUES ('f1', 1), ('f2', 2), ('f3', 3)");
    db.run('INSERT INTO auth_logs VALUES (1, 1, ?, 0, ?), (2, 1, ?, ?, ?)', [ts.a1, len('a1'), ts.a2, len('a1') + 1, len('a2')]);
    db.run("INSERT INTO auth_logs_ids VALUES (?, 1), ('auth-2', 2)", [UUID]);
    db.run('INSERT INTO source_summary VALUES (1, 1, 0, 2, ?, ?), (1, 2, 0, 1, ?, ?), (3, 1, 1, 2, ?, ?), (3, 2, 2, 1, ?, ?), (5, 1, 0, 2, ?, ?)', [
      ts.e1, ts.e3, ts.e2, ts.e2, ts.f1, ts.f2, ts.f3, ts.f3, ts.a1, ts.a2,
    ]);
    db.run('INSERT INTO function_edge_hours VALUES (1, ?, 1, 2, 1, 2, 40, 10, 30, NULL), (2, ?, 2, 1, 0, 0, NULL, NULL, NULL, NULL)', [
      at('2026-11-22T10:00:00Z'),
      at('2026-11-22T09:00:00Z'),
    ]);
    fs.writeFileSync(path.join(dir, 'store.sqlite'), db.exportImage(), { mode: 0o600 });
    db.close();
    const records = path.join(dir, 'records');
    fs.mkdirSync(records, { mode: 0o700 });
    const segments: Record<string, string> = {
      edge_logs: `${lines.e1}\n${lines.e2}\n${lines.e3}\n{"id":"e4","timest`,
      function_edge_logs: `${lines.f1}\n${lines.f2}\n${lines.f3}\n`,
      auth_logs: `${lines.a1}\n${lines.a2}\n`,
    };
    for (const alias of ['edge_logs', 'postgres_logs', 'function_edge_logs', 'function_logs', 'auth_logs', 'realtime_logs', 'storage_logs', 'postgrest_logs', 'pgbouncer_logs']) {
      fs.writeFileSync(path.join(records, `${alias}.ndjson`), segments[alias] ?? '', { mode: 0o600 });
    }
  }

  it('every record keeps its id, instant, project, bytes and hot fields; the old files go; summary and endpoints as computed by hand; a second open does nothing more', async () => {
    const dir = newDir();
    await writeLegacyFolder(dir);
    const store = await open(dir);
    await store.columnsSettled();
    expect(fs.readdirSync(dir).sort()).toEqual(['LOCK', 'catalog.sqlite', 'parts', 'paths.log', 'urls.log']);
    expect(filesUnder(dir).filter((f) => f !== 'LOCK' && f !== 'catalog.sqlite' && f !== 'urls.log' && f !== 'paths.log')).toEqual([
      'parts/auth_logs/20261120-v1.cols',
      'parts/auth_logs/20261120-v1.sqlite',
      'parts/auth_logs/20261120.grams',
      'parts/auth_logs/20261120.records',
      'parts/auth_logs/20261120.texts',
      'parts/auth_logs/20261120.tokens',
      'parts/edge_logs/20261121-v1.cols',
      'parts/edge_logs/20261121-v1.sqlite',
      'parts/edge_logs/20261121.grams',
      'parts/edge_logs/20261121.records',
      'parts/edge_logs/20261121.texts',
      'parts/edge_logs/20261121.tokens',
      'parts/edge_logs/20261122-v1.cols',
      'parts/edge_logs/20261122-v1.sqlite',
      'parts/edge_logs/20261122.grams',
      'parts/edge_logs/20261122.records',
      'parts/edge_logs/20261122.texts',
      'parts/edge_logs/20261122.tokens',
      'parts/function_edge_logs/20261122-v1.cols',
      'parts/function_edge_logs/20261122-v1.sqlite',
      'parts/function_edge_logs/20261122.grams',
      'parts/function_edge_logs/20261122.records',
      'parts/function_edge_logs/20261122.texts',
      'parts/function_edge_logs/20261122.tokens',
    ]);

    expect(store.dump('cloudflare.logs.prod')).toEqual([
      { partition: '20261121', rid: 1, id: 'e1', ts: ts.e1, project: PA, raw: lines.e1, url: U1, families: 1, status: 200, method: null },
      { partition: '20261122', rid: 1, id: 'e2', ts: ts.e2, project: PB, raw: lines.e2, url: U2, families: 2, status: 404, method: null },
      { partition: '20261122', rid: 2, id: 'e3', ts: ts.e3, project: PA, raw: lines.e3, url: U1, families: 1, status: 500, method: null },
    ]);
    expect(store.dump('deno-relay-logs')).toEqual([
      { partition: '20261122', rid: 1, id: 'f1', ts: ts.f1, project: PA, raw: lines.f1, functionId: 'fn-a', exec: 10, status: 200, method: null, path: null },
      { partition: '20261122', rid: 2, id: 'f2', ts: ts.f2, project: PA, raw: lines.f2, functionId: 'fn-a', exec: 30, status: 500, method: null, path: null },
      { partition: '20261122', rid: 3, id: 'f3', ts: ts.f3, project: PB, raw: lines.f3, functionId: 'fn-b', exec: null, status: null, method: null, path: null },
    ]);
    expect(store.dump('gotrue.logs.prod')).toEqual([
      { partition: '20261120', rid: 1, id: UUID, ts: ts.a1, project: PA, raw: lines.a1, status: null, method: null, path: null, level: null },
      { partition: '20261120', rid: 2, id: 'auth-2', ts: ts.a2, project: PA, raw: lines.a2, status: null, method: null, path: null, level: null },
    ]);
    const summary = store.summary();
    expect(summary.find((s) => s.source === 'cloudflare.logs.prod')).toMatchObject({
      count: 3,
      minTimestamp: ts.e1,
      maxTimestamp: ts.e3,
      projects: [
        { ref: PA, count: 2 },
        { ref: PB, count: 1 },
      ],
    });
    expect(summary.find((s) => s.source === 'deno-relay-logs')).toMatchObject({
      count: 3,
      minTimestamp: ts.f3,
      maxTimestamp: ts.f2,
      functionIds: [
        { functionId: 'fn-a', project: PA, count: 2 },
        { functionId: 'fn-b', project: PB, count: 1 },
      ],
    });
    expect(summary.find((s) => s.source === 'gotrue.logs.prod')).toMatchObject({ count: 2, minTimestamp: ts.a1, maxTimestamp: ts.a2, projects: [{ ref: PA, count: 2 }] });
    expect(summary.filter((s) => s.count > 0).map((s) => s.alias)).toEqual(['edge_logs', 'function_edge_logs', 'auth_logs']);
    // Dedupe carries over: the converted ids are known.
    expect(await importStream(store, [Buffer.from(`${lines.e1}\n${lines.e2}\n`)], { source: 'edge_logs' })).toMatchObject({ imported: 0, duplicates: 2 });
    expect(await importStream(store, [Buffer.from(`${lines.a1}\n`)], { source: 'auth_logs' })).toMatchObject({ imported: 0, duplicates: 1 });

    const t = appFor(store);
    // logs.all, PRO (7 days): e3 then e1, rebuilt in the query shape.
    expect(await rows(t, 'logs.all', { project: PA, project_tier: 'PRO' })).toEqual([
      { id: 'e3', timestamp: ts.e3, event_message: 'GET | 500', metadata: [{ request: [{ url: U1, path: '/rest/v1/todos' }], response: [{ status_code: 500 }] }] },
      { id: 'e1', timestamp: ts.e1, event_message: 'GET | 200 | café', metadata: [{ request: [{ url: U1, path: '/rest/v1/todos' }], response: [{ status_code: 200 }] }] },
    ]);
    // invocation-stats, 1day: hour buckets from the rollups the conversion rebuilt. PA's 10:00
    // bucket holds f1 (10 ms, 200) and f2 (30 ms, 500).
    const stats = (project: string) =>
      rows<Record<string, number | null>>(t, 'functions.invocation-stats', { project, interval: '1day' }).then((r) => r.filter((b) => b.count! > 0));
    expect(await stats(PA)).toEqual([
      { timestamp: at('2026-11-22T10:00:00Z'), min_execution_time: 10, max_execution_time: 30, avg_execution_time: 20, p95_execution_time: 30, p99_execution_time: 30, count: 2, error_count: 1 },
    ]);
    expect(await stats(PB)).toEqual([
      { timestamp: at('2026-11-22T09:00:00Z'), min_execution_time: null, max_execution_time: null, avg_execution_time: null, p95_execution_time: null, p99_execution_time: null, count: 1, error_count: 0 },
    ]);
    // api-counts, daily (from 2026-11-15T10:30:45Z): PA's URL is e1 (21st) and e3 (22nd), on /rest.
    expect(await rows(t, 'usage.api-counts', { project: PA, interval: 'daily' })).toEqual([
      { timestamp: '2026-11-21T00:00:00', total_rest_requests: 1, total_storage_requests: 0, total_auth_requests: 0, total_realtime_requests: 0 },
      { timestamp: '2026-11-22T00:00:00', total_rest_requests: 1, total_storage_requests: 0, total_auth_requests: 0, total_realtime_requests: 0 },
    ]);
    expect(await rows(t, 'usage.api-counts', { project: PB, interval: 'daily' })).toEqual([
      { timestamp: '2026-11-22T00:00:00', total_rest_requests: 0, total_storage_requests: 1, total_auth_requests: 0, total_realtime_requests: 0 },
    ]);
    expect(storeProblems(store)).toEqual([]);
    const dumps = (s: LogStore) => (['cloudflare.logs.prod', 'deno-relay-logs', 'gotrue.logs.prod'] as const).map((x) => s.dump(x));
    const before = dumps(store);
    await close(store);

    // A second open converts nothing again and changes no file.
    const mtimes = () => filesUnder(dir).filter((f) => f !== 'LOCK').map((f) => `${f} ${fs.statSync(path.join(dir, f)).mtimeMs}`);
    const files = mtimes();
    const again = await open(dir);
    expect(mtimes()).toEqual(files);
    expect(fs.existsSync(path.join(dir, 'store.sqlite'))).toBe(false);
    expect(dumps(again)).toEqual(before);
    expect(again.summary()).toEqual(summary);
  });

  it('a crash during the conversion (partition files written, no catalog) converts again from the old files at the next start', async () => {
    const dir = newDir();
    await writeLegacyFolder(dir);
    // What a crashed conversion leaves: partition files of its own, no catalog.sqlite.
    fs.mkdirSync(path.join(dir, 'parts', 'edge_logs'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'parts', 'edge_logs', '20261121-v1.sqlite'), 'half an image');
    fs.writeFileSync(path.join(dir, 'parts', 'edge_logs', '20261121.records'), 'some blocks');
    fs.writeFileSync(path.join(dir, 'catalog.sqlite.tmp'), 'half a catalog');
    const store = await open(dir);
    expect(store.dump('cloudflare.logs.prod').map((r) => [r.id, r.raw])).toEqual([
      ['e1', lines.e1],
      ['e2', lines.e2],
      ['e3', lines.e3],
    ]);
    expect(fs.existsSync(path.join(dir, 'store.sqlite'))).toBe(false);
    expect(storeProblems(store)).toEqual([]);
  });
  it('a crash after the conversion committed but before the old files went: the next start removes them and keeps the converted data', async () => {
    const dir = newDir();
    await writeLegacyFolder(dir);
    const converted = await open(dir);
    const rows = converted.dump('cloudflare.logs.prod').map((r) => [r.id, r.raw]);
    await converted.close();
    // Put the old files back, as a crash between the commit and their removal leaves them.
    fs.mkdirSync(path.join(dir, 'old'));
    await writeLegacyFolder(path.join(dir, 'old'));
    fs.renameSync(path.join(dir, 'old', 'store.sqlite'), path.join(dir, 'store.sqlite'));
    fs.renameSync(path.join(dir, 'old', 'records'), path.join(dir, 'records'));
    const store = await open(dir);
    expect(fs.existsSync(path.join(dir, 'store.sqlite'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'records'))).toBe(false);
    expect(store.dump('cloudflare.logs.prod').map((r) => [r.id, r.raw])).toEqual(rows);
    expect(storeProblems(store)).toEqual([]);
  });
});

describe('crash states at the file level', () => {
  async function seeded(dir: string): Promise<LogStore> {
    const store = await open(dir);
    await importEdge(store, edgeDays('2026-11-19', 3, 20));
    await importStream(store, [ndjson([{ id: 'p1', timestamp: at('2026-11-20T05:00:00Z'), project: PB, event_message: 'checkpoint' }])], { source: 'postgres_logs' });
    return store;
  }

  it('partition files written but no catalog renamed (stray versions, unknown partitions, record tails, a temp catalog): reopen deletes and cuts them; the data is the last commit', async () => {
    const dir = newDir();
    const store = await seeded(dir);
    const rows = store.dump('cloudflare.logs.prod');
    const summary = store.summary();
    const files = partSizes(dir);
    await close(store);
    const edge = path.join(dir, 'parts', 'edge_logs');
    // A newer version of a known partition, and a partition the catalog never named.
    fs.copyFileSync(path.join(edge, '20261120-v1.sqlite'), path.join(edge, '20261120-v99.sqlite'));
    fs.writeFileSync(path.join(edge, '20261201-v1.sqlite'), 'a database image');
    fs.writeFileSync(path.join(edge, '20261201.records'), 'compressed blocks');
    fs.mkdirSync(path.join(dir, 'parts', 'auth_logs'));
    fs.writeFileSync(path.join(dir, 'parts', 'auth_logs', '20261122-v1.sqlite'), 'a database image');
    // Blocks appended after the committed length, and a temp catalog naming all of that.
    fs.appendFileSync(path.join(edge, '20261121.records'), Buffer.alloc(1000, 7));
    fs.copyFileSync(path.join(dir, 'catalog.sqlite'), path.join(dir, 'catalog.sqlite.tmp'));
    fs.appendFileSync(path.join(dir, 'catalog.sqlite.tmp'), 'more pages');

    const again = await open(dir);
    // At open: every file the committed catalog does not name is gone, and the temp catalog.
    expect(filesUnder(path.join(dir, 'parts')).filter(notColumns)).toEqual(files.map((f) => f.split(' ')[0]));
    expect(fs.existsSync(path.join(dir, 'catalog.sqlite.tmp'))).toBe(false);
    // The record tail is cut before the file is read or written again.
    expect(again.dump('cloudflare.logs.prod')).toEqual(rows);
    expect(partSizes(dir)).toEqual(files);
    expect(again.summary()).toEqual(summary);
    expect(storeProblems(again)).toEqual([]);
    // And the next import appends after the committed bytes.
    expect(await importEdge(again, [edgeRecord(at('2026-11-21T23:00:00Z'), { id: 'next' })])).toMatchObject({ imported: 1 });
    await close(again);
    const third = await open(dir);
    expect(third.dump('cloudflare.logs.prod').map((r) => r.id)).toEqual([...rows.map((r) => r.id), 'next']);
    expect(storeProblems(third)).toEqual([]);
  });

  it('a copy of the folder taken at the commit point of an import (new versions and the temp catalog written, not renamed) opens as the last commit', async () => {
    const dir = newDir();
    const store = await seeded(dir);
    const rows = store.dump('cloudflare.logs.prod');
    const files = partSizes(dir);
    const crash = newDir();
    let copied: string[] = [];
    const realRename = fs.promises.rename;
    vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
      if (String(from).endsWith('catalog.sqlite.tmp') && !copied.length) {
        // The process dies here: everything is written and synced but the rename.
        fs.cpSync(dir, crash, { recursive: true });
        copied = filesUnder(crash);
      }
      return realRename(from, to);
    });
    // Two days written again (a new version each) and one new day.
    const more = [...edgeDays('2026-11-20', 2, 5, 'more-'), ...edgeDays('2026-11-22', 1, 5, 'more-')];
    expect(await importEdge(store, more)).toMatchObject({ imported: 15 });
    vi.restoreAllMocks();
    expect(copied).toEqual(
      expect.arrayContaining(['catalog.sqlite.tmp', 'parts/edge_logs/20261120-v2.sqlite', 'parts/edge_logs/20261121-v2.sqlite', 'parts/edge_logs/20261122-v1.sqlite']),
    );
    const crashed = await open(crash, { lockKind: false });
    expect(crashed.dump('cloudflare.logs.prod')).toEqual(rows);
    expect(partSizes(crash)).toEqual(files);
    expect(storeProblems(crashed)).toEqual([]);
    // The store that did not crash has it all.
    expect(store.dump('cloudflare.logs.prod').map((r) => r.id).sort()).toEqual([...rows, ...more].map((r) => r.id).sort());
  });
});
