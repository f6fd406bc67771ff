/**
 * Staging in steps (import-transaction.ts): a bulk import writes out the partitions it has moved
 * past, each image in a step of its own and its columns file in steps after it, with turns for
 * other work in between; each staged version's columns file holds exactly that version's rows,
 * and what the import commits is every record, once.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { storeProblems } from '../hardening/helpers.ts';
import { importStream } from '../ingest/import.ts';
import { at, DAY, edgeRecord, importRecords, storeKeeper } from '../testing/fixtures.ts';
import { Partition } from './partition.ts';
import { ImportWriter } from './log-store.ts';
import { columnsFileOf } from './scan-columns.ts';
import { URLS_FILE } from './store-files.ts';
import { TextDictionary } from './text-dictionary.ts';

const keeper = storeKeeper('le-staging-');
afterEach(() => keeper.cleanup());

const DAYS = 16;
const PER_DAY = 1200;
const T = at('2026-10-01T00:00:00Z');

describe('staging during an import', () => {
  it('runs in steps with turns between an image and its columns; every staged version gets a columns file of exactly its rows; all records committed once', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    // In time order, sparse enough to stay day partitions: a day is left behind after about one batch.
    const records = Array.from({ length: DAYS * PER_DAY }, (_, i) => edgeRecord(T + Math.floor(i / PER_DAY) * DAY + (i % PER_DAY) * 60_000_000, { id: `s-${i}` }));
    const body = Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n');

    // A timer that looks, between the steps, for a staged version whose columns file is not written yet.
    const staged = new Map<Partition, number>();
    let between = 0;
    const timer = setInterval(() => {
      for (const p of store.partitions('cloudflare.logs.prod')) {
        if (p.staged === null) continue;
        staged.set(p, p.staged);
        if (!fs.existsSync(columnsFileOf(p.dbFile(p.staged)))) between++;
      }
    }, 1);
    let report;
    try {
      report = await importStream(store, [body], { source: 'edge_logs' });
    } finally {
      clearInterval(timer);
    }
    expect(report).toMatchObject({ imported: DAYS * PER_DAY, duplicates: 0 });
    // Right after the commit, before the background builder's first step: the files the import wrote.
    const written = [...staged].filter(([p, v]) => p.row.version === v && fs.existsSync(columnsFileOf(p.dbFile(v))));
    expect(staged.size).toBeGreaterThan(DAYS / 2);
    // The one still being written as the import ended too: staged then, its columns built before the commit.
    expect(written.length).toBe(staged.size);
    expect(store.partitions('cloudflare.logs.prod').every((p) => fs.existsSync(columnsFileOf(p.dbFile(p.row.version))))).toBe(true);
    expect(between).toBeGreaterThan(0);
    for (const [p] of written) {
      const cols = store.columns(p, ['ts', 'rid']);
      const rows = store.use(p).rows('SELECT ts, rid FROM edge_logs ORDER BY ts DESC, rid DESC');
      expect(cols.n).toBe(PER_DAY);
      expect(Array.from(cols.ts)).toEqual(rows.map((r) => r[0]));
      expect(Array.from(cols.rid)).toEqual(rows.map((r) => r[1]));
    }
    expect(store.dump('cloudflare.logs.prod').map((r) => r.id).sort()).toEqual(records.map((r) => r.id).sort());
    expect(storeProblems(store)).toEqual([]);
  });

  it('stages an image written off the thread only if no batch wrote its partition meanwhile: every record committed once', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const DAYS_ = 8;
    const HEAD = 1100;
    const LAG = 3;
    // Each day's last records come after most of the next three days': its partition is idle by
    // then (four batches), so the first one's image is being written when they come back to it.
    const day = (d: number, from: number, to: number) => Array.from({ length: to - from }, (_, k) => edgeRecord(T + d * DAY + (from + k) * 60_000_000, { id: `w-${d}-${from + k}` }));
    const records = [];
    for (let d = 0; d < DAYS_; d++) {
      records.push(...day(d, 0, HEAD));
      if (d >= LAG) records.push(...day(d - LAG, HEAD, PER_DAY));
    }
    for (let d = DAYS_ - LAG; d < DAYS_; d++) records.push(...day(d, HEAD, PER_DAY));
    // Every staged image's write takes 400 ms more; whether a batch wrote its partition meanwhile is noted.
    const realWrite = fs.promises.writeFile.bind(fs.promises);
    let writes = 0;
    let overtaken = 0;
    const spy = vi.spyOn(fs.promises, 'writeFile').mockImplementation(async (file, data, opts) => {
      const p = typeof file === 'string' && file.endsWith('.sqlite') ? store.partitions('cloudflare.logs.prod').find((x) => file.startsWith(`${x.dbFile(0).slice(0, -'0.sqlite'.length)}`)) : undefined;
      if (p) {
        writes++;
        const before = p.changes;
        await new Promise((resolve) => setTimeout(resolve, 400));
        if (p.changes !== before) overtaken++;
      }
      return realWrite(file, data, opts);
    });
    let report;
    try {
      report = await importRecords(store, 'edge_logs', records);
    } finally {
      spy.mockRestore();
    }
    expect(report).toMatchObject({ imported: DAYS_ * PER_DAY, duplicates: 0, rejected: 0 });
    expect(writes).toBeGreaterThan(0);
    expect(overtaken).toBeGreaterThan(0);
    const parts = store.partitions('cloudflare.logs.prod');
    expect(parts.map((p) => store.use(p).rows('SELECT count(*) FROM edge_logs')[0]![0])).toEqual(Array(DAYS_).fill(PER_DAY));
    expect(store.dump('cloudflare.logs.prod').map((r) => r.id).sort()).toEqual(records.map((r) => r.id).sort());
    expect(storeProblems(store)).toEqual([]);
    // And after a reopen, from the files alone.
    await keeper.close(store);
    const again = await keeper.open(dir);
    expect(again.dump('cloudflare.logs.prod').map((r) => r.id).sort()).toEqual(records.map((r) => r.id).sort());
    expect(storeProblems(again)).toEqual([]);
  });

  it('makes the path ids of a columns file durable before the file is in place, with no fsync on the answering thread', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    // A first import makes paths.log (a new file is synced once as it is created, with its token).
    await importRecords(store, 'edge_logs', [edgeRecord(T - DAY, { id: 'first' })]);
    await store.columnsSettled();
    // Paths no columns file has used yet, in partitions the import writes columns files for (and the background builder again, with their field indexes).
    const records = Array.from({ length: 600 }, (_, i) => edgeRecord(T + (i % 3) * DAY + i * 60_000_000, { id: `p-${i}`, path: `/rest/v1/table_${i}` }));
    const events: string[] = [];
    const realFsync = fs.fsync;
    const fsyncs = vi.spyOn(fs, 'fsync').mockImplementation(((fd: number, done: (err: NodeJS.ErrnoException | null) => void) =>
      realFsync(fd, (err) => {
        events.push(`fsync ${fs.readlinkSync(`/proc/self/fd/${fd}`).split('/').pop()}`);
        done(err);
      })) as typeof fs.fsync);
    const syncFsyncs = vi.spyOn(fs, 'fsyncSync');
    const realRename = fs.renameSync;
    const renames = vi.spyOn(fs, 'renameSync').mockImplementation((from, to) => {
      events.push(`rename ${String(to).split('/').pop()}`);
      return realRename(from, to);
    });
    try {
      await importRecords(store, 'edge_logs', records);
      await store.columnsSettled();
    } finally {
      fsyncs.mockRestore();
      renames.mockRestore();
    }
    const syncCalls = syncFsyncs.mock.calls.length;
    syncFsyncs.mockRestore();
    expect(syncCalls).toBe(0);
    const columnsPlaced = events.flatMap((e, i) => (/^rename .*\.cols$/.test(e) ? [i] : []));
    // Each partition's during the import, and again by the background builder with its field index.
    expect(columnsPlaced.length).toBe(6);
    const pathsSynced = events.indexOf('fsync paths.log');
    expect(pathsSynced).toBeGreaterThanOrEqual(0);
    expect(pathsSynced).toBeLessThan(columnsPlaced[0]!);
    for (const p of store.partitions('cloudflare.logs.prod').slice(1)) expect(store.columns(p, ['path']).n).toBe(200);
    expect(storeProblems(store)).toEqual([]);
  });

  it('gives the partitions an import ends on their columns files before its commit, those that held rows before too', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    await importRecords(store, 'edge_logs', Array.from({ length: 300 }, (_, i) => edgeRecord(T + i * 60_000_000, { id: `old-${i}` })));
    await store.columnsSettled();
    const [p] = store.partitions('cloudflare.logs.prod');
    const before = p!.row.version;
    // Ten more records into the same day: its new version is committed with its columns file.
    await importRecords(store, 'edge_logs', Array.from({ length: 10 }, (_, i) => edgeRecord(T + 30_000_000 + i * 60_000_000, { id: `new-${i}` })));
    expect(p!.row.version).toBeGreaterThan(before);
    expect(fs.existsSync(columnsFileOf(p!.dbFile(p!.row.version)))).toBe(true);
    expect(store.columns(p!, ['ts']).n).toBe(310);
    expect(store.columnsBuiltForRequests).toBe(0);
    expect(storeProblems(store)).toEqual([]);
  });

  it.each([
    ['the default memory budget', undefined],
    ['a budget that drops every partition as soon as it is clean', 1],
  ])("gives the source's newest partitions their columns files before the commit of an import that moves past them (%s)", async (_, memoryBudgetBytes) => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir, memoryBudgetBytes ? { memoryBudgetBytes } : {});
    await importRecords(store, 'edge_logs', Array.from({ length: 6 * 300 }, (_, i) => edgeRecord(T + Math.floor(i / 300) * DAY + (i % 300) * 60_000_000, { id: `old-${i}` })));
    await store.columnsSettled();
    const versions = new Map(store.partitions('cloudflare.logs.prod').map((p) => [p, p.row.version]));
    expect(versions.size).toBe(6);
    // Newest first, 1,200 records a day: the import moves past each day after a few batches.
    const records = Array.from({ length: 6 * 1200 }, (_, i) => edgeRecord(T + (5 - Math.floor(i / 1200)) * DAY + DAY - 1 - (i % 1200) * 60_000_000, { id: `new-${i}` }));
    await importRecords(store, 'edge_logs', records);
    const parts = store.partitions('cloudflare.logs.prod');
    for (const p of parts) expect(p.row.version).toBeGreaterThan(versions.get(p)!);
    const hasColumns = parts.map((p) => fs.existsSync(columnsFileOf(p.dbFile(p.row.version))));
    // The newest (moved past first) has its file; so does the one the import ended on (the oldest).
    expect(hasColumns[5]).toBe(true);
    expect(hasColumns[0]).toBe(true);
    expect(store.columns(parts[5]!, ['ts']).n).toBe(1500);
    expect(store.columnsBuiltForRequests).toBe(0);
    await store.columnsSettled();
    expect(storeProblems(store)).toEqual([]);
  });

  it("takes an edge record's path id as its URL is added, so columns files are built without reading URLs back from urls.log", async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    // Each URL twice (a query string apart from its path), over three day partitions.
    const url = (i: number) => `https://x.supabase.co/rest/v1/table_${i % 150}?select=*&n=${i % 300}`;
    const records = Array.from({ length: 600 }, (_, i) => edgeRecord(T + (i % 3) * DAY + i * 60_000_000, { id: `u-${i}`, url: url(i) }));
    const reads = vi.spyOn(TextDictionary.prototype, 'get');
    try {
      await importRecords(store, 'edge_logs', records);
      await store.columnsSettled();
      expect(reads.mock.contexts.filter((d) => (d as TextDictionary).file.endsWith(URLS_FILE))).toEqual([]);
    } finally {
      reads.mockRestore();
    }
    // Each record's path, as the columns hold it, is its URL's.
    const paths = new Set<string>();
    for (const p of store.partitions('cloudflare.logs.prod')) {
      const cols = store.columns(p, ['path']);
      for (let i = 0; i < cols.n; i++) paths.add(store.paths.get(cols.path[i]!));
    }
    expect([...paths].sort()).toEqual(Array.from({ length: 150 }, (_, i) => `/rest/v1/table_${i}`).sort());
    expect(storeProblems(store)).toEqual([]);
  });

  it('reads at most one partition from disk per write of an import scattered over a month (one record a day), every record committed', async () => {
    const dir = keeper.newDir();
    // A budget that drops every partition once it is clean: each day of the month is on disk only.
    const store = await keeper.open(dir, { memoryBudgetBytes: 1 });
    const DAYS_ = 30;
    await importRecords(store, 'edge_logs', Array.from({ length: DAYS_ * 20 }, (_, i) => edgeRecord(T + (i % DAYS_) * DAY + Math.floor(i / DAYS_) * 60_000_000, { id: `old-${i}` })));
    await store.columnsSettled();
    expect(store.partitions('cloudflare.logs.prod').filter((p) => p.db).length).toBeLessThanOrEqual(1);
    // One record a day, newest first, in one batch: written in slices of up to 250 records.
    const records = Array.from({ length: DAYS_ }, (_, i) => edgeRecord(T + (DAYS_ - 1 - i) * DAY + 12 * 3_600_000_000, { id: `new-${i}` }));
    const loads: number[] = [];
    let inWrite = -1;
    // Loads from disk counted per write call.
    const original = Partition.prototype.load;
    const originalWrite = ImportWriter.prototype.write;
    Partition.prototype.load = function (this: Partition) {
      if (inWrite >= 0 && !this.db) loads[inWrite]!++;
      return original.call(this);
    };
    ImportWriter.prototype.write = function (this: ImportWriter, ...args) {
      inWrite = loads.push(0) - 1;
      try {
        return originalWrite.apply(this, args);
      } finally {
        inWrite = -1;
      }
    };
    try {
      await importRecords(store, 'edge_logs', records);
    } finally {
      Partition.prototype.load = original;
      ImportWriter.prototype.write = originalWrite;
    }
    expect(loads.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(DAYS_ - 1);
    expect(Math.max(...loads)).toBe(1);
    expect(store.dump('cloudflare.logs.prod').length).toBe(DAYS_ * 21);
    expect(storeProblems(store)).toEqual([]);
  });
});
