/** The columns cache keeps to its budget, counting what its users load after it handed the columns out. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { importStream } from '../ingest/import.ts';
import { at, DAY, edgeRecord, importRecords, storeKeeper } from '../testing/fixtures.ts';
import fs from 'node:fs';
import path from 'node:path';
import { IMPORT_CACHE_SHARE } from './columns-cache.ts';
import { columnArraysFromWorker, ROW_COLUMNS, type ColumnName } from './scan-columns.ts';
import { arraysOffThread, searchWorkerUnavailable } from './search-worker.ts';

/** When set, each record's texts taken by the builder and each turn of the event loop, in order ('r', 't'). */
const events: { log: string[] | null } = vi.hoisted(() => ({ log: null }));
vi.mock('./block-texts.ts', async (original) => {
  const m = await original<typeof import('./block-texts.ts')>();
  return { ...m, recordTexts: (...args: Parameters<typeof m.recordTexts>) => (events.log?.push('r'), m.recordTexts(...args)) };
});

const keeper = storeKeeper('le-columns-cache-');
afterEach(() => keeper.cleanup());

const DAYS = 12;
const PER_DAY = 3000;
const T = at('2026-10-01T00:00:00Z');

/** A data folder of sparse records in time order (one day partition each), their columns files written; the store closed. */
async function writtenStore(idPrefix: string): Promise<string> {
  const dir = keeper.newDir();
  const records = Array.from({ length: DAYS * PER_DAY }, (_, i) => edgeRecord(T + Math.floor(i / PER_DAY) * DAY + (i % PER_DAY) * 20_000_000, { id: `${idPrefix}-${i}` }));
  const first = await keeper.open(dir);
  await importRecords(first, 'edge_logs', records);
  await first.columnsSettled();
  await keeper.close(first);
  return dir;
}

describe('the columns cache', () => {
  it('stays within its budget when the columns it handed out have more loaded into them', async () => {
    const dir = await writtenStore('c');

    // A budget of three partitions' ts columns (8 bytes a row), on a store opened afresh.
    const budget = 3 * PER_DAY * 8;
    const store = await keeper.open(dir, { columnsBudgetBytes: budget });
    const parts = store.partitions('cloudflare.logs.prod');
    expect(parts.length).toBe(DAYS);
    const more: ColumnName[] = ['rid', 'status', 'method', 'path', 'url', 'len'];
    let largest = 0;
    for (const p of parts) {
      // As a walk does: the columns it asked for, then more of them once it has them.
      const cols = store.columns(p, ['ts']);
      cols.load(more);
      largest = Math.max(largest, cols.bytes);
    }
    // ts, rid, status, method, path, url, len: 8 + 6 * 4 bytes a row at least.
    expect(largest).toBeGreaterThanOrEqual(PER_DAY * 32);
    // Over the budget by at most the partition used last (it is never dropped).
    expect(store.heldBytes().columnsCache).toBeLessThanOrEqual(budget + largest);
  });

  it('keeps half its budget while an import runs, and the whole again once it ends', async () => {
    const dir = await writtenStore('h');

    // A budget of six partitions' ts columns; each is read with its ts column only.
    const each = PER_DAY * 8;
    const budget = 6 * each;
    const store = await keeper.open(dir, { columnsBudgetBytes: budget });
    const parts = store.partitions('cloudflare.logs.prod');
    const readAll = () => {
      let most = 0;
      for (const p of parts) {
        store.columns(p, ['ts']);
        most = Math.max(most, store.heldBytes().columnsCache);
      }
      return most;
    };
    expect(readAll()).toBeGreaterThan(budget * IMPORT_CACHE_SHARE + each);

    // An import whose records come slowly: while it runs, the columns read keep to half.
    let during = { atStart: -1, most: -1 };
    async function* slowly(): AsyncGenerator<Buffer> {
      yield Buffer.from(`${JSON.stringify(edgeRecord(T + DAYS * DAY + 1_000_000, { id: 'during-1' }))}\n`);
      await new Promise((r) => setTimeout(r, 50));
      during = { atStart: store.heldBytes().columnsCache, most: readAll() };
      yield Buffer.from(`${JSON.stringify(edgeRecord(T + DAYS * DAY + 2_000_000, { id: 'during-2' }))}\n`);
    }
    const report = await importStream(store, slowly(), { source: 'edge_logs' });
    expect(report.imported).toBe(2);
    // Its start dropped the oldest columns past half; each later read keeps within half plus the one read.
    expect(during.atStart).toBeLessThanOrEqual(budget * IMPORT_CACHE_SHARE);
    expect(during.most).toBeLessThanOrEqual(budget * IMPORT_CACHE_SHARE + each);
    // Ended: the whole budget again.
    expect(readAll()).toBeGreaterThan(budget * IMPORT_CACHE_SHARE + each);
    expect(store.heldBytes().columnsCache).toBeLessThanOrEqual(budget + each);
  });

  it('has the search worker read the arrays a walk asks ahead as this thread reads them, leaving out a damaged one', async () => {
    const dir = await writtenStore('w');
    const names: ColumnName[] = ['ts', 'rid', 'status', 'method', 'path', 'url', 'len'];
    // This thread's reading of every array, from a store opened afresh.
    const plain = await keeper.open(dir);
    const expected = plain.partitions('cloudflare.logs.prod').map((p) => {
      const c = plain.columns(p, ROW_COLUMNS);
      return Object.fromEntries(names.map((n) => [n, Array.from(c[n])]));
    });
    await keeper.close(plain);

    const store = await keeper.open(dir);
    const parts = store.partitions('cloudflare.logs.prod');
    // The worker's answers, awaited (never taken back), are the arrays read here.
    for (const [k, p] of parts.entries()) {
      const reads = store.columns(p).arrayReads(names);
      expect(reads.map((r) => r.name)).toEqual(names);
      const file = path.join(dir, 'parts', 'edge_logs', fs.readdirSync(path.join(dir, 'parts', 'edge_logs')).find((f) => f.startsWith(`${p.label}-v`) && f.endsWith('.cols'))!);
      const got = await arraysOffThread(file, reads).answer;
      expect(searchWorkerUnavailable()).toBeUndefined();
      expect(got!.map((a) => a.name)).toEqual(names);
      for (const a of got!) expect(Array.from(a.name === 'ts' ? new Float64Array(a.buffer) : new Int32Array(a.buffer)), `${p.label} ${a.name}`).toEqual(expected[k]![a.name]);
    }
    // A walk's way: asked ahead, taken in (from the worker, or read here when it had not started).
    const before = columnArraysFromWorker();
    for (const p of parts) store.readColumnsAhead(p, names);
    for (const [k, p] of parts.entries()) {
      await store.columnsArrived(p);
      const c = store.committedColumns(p, names)!;
      for (const n of names) expect(Array.from(c[n]), `${p.label} ${n}`).toEqual(expected[k]![n]);
    }
    expect(columnArraysFromWorker() - before).toBeLessThanOrEqual(parts.length * names.length);
    await keeper.close(store);

    // One byte flipped in a partition's status array: the worker leaves that array out (its CRC
    // fails); this thread then reads it, finds the damage, and builds the columns again.
    const folder = path.join(dir, 'parts', 'edge_logs');
    const first = fs.readdirSync(folder).filter((f) => f.endsWith('.cols')).sort()[0]!;
    const k = parts.findIndex((q) => first.startsWith(`${q.label}-v`));
    const bytes = fs.readFileSync(path.join(folder, first));
    const at = bytes.indexOf(Buffer.from(Int32Array.from(expected[k]!.status!).buffer));
    expect(at).toBeGreaterThan(0);
    bytes[at + 5] = bytes[at + 5]! ^ 0x01;
    fs.writeFileSync(path.join(folder, first), bytes);
    const again = await keeper.open(dir);
    const p = again.partitions('cloudflare.logs.prod')[k]!;
    const got = await arraysOffThread(path.join(folder, first), again.columns(p).arrayReads(names)).answer;
    expect(got!.map((a) => a.name)).toEqual(names.filter((n) => n !== 'status'));
    again.readColumnsAhead(p, names);
    await again.columnsArrived(p);
    const c = again.committedColumns(p, names)!;
    for (const n of names) expect(Array.from(c[n]), n).toEqual(expected[k]![n]);
  });

  it('keeps the columns whose arrays the worker reads ahead of a walk until the walk takes them in', async () => {
    const dir = await writtenStore('k');
    const names: ColumnName[] = ['ts', 'rid', 'status', 'method', 'path', 'url', 'len'];
    // A budget of one partition's arrays: every partition the walk uses pushes the others out.
    const store = await keeper.open(dir, { columnsBudgetBytes: PER_DAY * 32 });
    const parts = store.partitions('cloudflare.logs.prod').slice(0, 5);
    for (const p of parts) store.readColumnsAhead(p, names);
    // The worker answers in order: once a later job is answered, every one asked before it is.
    const last = store.columns(parts[0]!).arrayReads(['ts']);
    const file = path.join(dir, 'parts', 'edge_logs', fs.readdirSync(path.join(dir, 'parts', 'edge_logs')).find((f) => f.startsWith(`${parts[0]!.label}-v`) && f.endsWith('.cols'))!);
    expect(await arraysOffThread(file, last).answer).not.toBeNull();
    const before = columnArraysFromWorker();
    for (const p of parts) {
      await store.columnsArrived(p);
      store.committedColumns(p, names);
    }
    // Each partition's arrays came from the worker: none was dropped before the walk came to it
    // and read again here.
    expect(columnArraysFromWorker() - before).toBe(parts.length * names.length);
    expect(store.heldBytes().columnsCache).toBeLessThanOrEqual(2 * PER_DAY * 32);
  });
});

/**
 * A columns file with the bytes that name its store blanked: each store's path dictionary has an
 * epoch of its own, which the header carries (bytes 32-39) and its CRC covers (bytes 52-55).
 */
function withoutEpoch(name: string, file: Buffer): Buffer {
  if (!name.endsWith('.cols')) return file;
  file.fill(0, 32, 40);
  file.fill(0, 52, 56);
  return file;
}

describe('the background builder', () => {
  it('takes turns between the records of a block: with a turn after every unit, its files are the same bytes as with its slices', async () => {
    const records = Array.from({ length: 4000 }, (_, i) => edgeRecord(T + i * 20_000_000, { id: `turns-${i}`, path: `/rest/v1/items/${i}` }));
    const built: Record<string, Buffer>[] = [];
    let longestRun = 0;
    let blockRun = 0;
    for (const builderSliceMs of [undefined, 0]) {
      const dir = keeper.newDir();
      const store = await keeper.open(dir, builderSliceMs === undefined ? {} : { builderSliceMs });
      await importRecords(store, 'edge_logs', records);
      // The records whose texts are taken, and the event loop's turns, in order.
      const log: string[] = [];
      events.log = log;
      let counting = true;
      const count = () => {
        log.push('t');
        if (counting) setImmediate(count);
      };
      setImmediate(count);
      await store.columnsSettled();
      counting = false;
      events.log = null;
      const runs = log.join('').split('t').map((r) => r.length);
      if (builderSliceMs === 0) longestRun = Math.max(...runs);
      else blockRun = Math.max(...runs);
      await keeper.close(store);
      const parts = path.join(dir, 'parts', 'edge_logs');
      const files: Record<string, Buffer> = {};
      for (const f of fs.readdirSync(parts).sort()) if (/\.(texts|tokens|grams|cols)$/.test(f)) files[f] = withoutEpoch(f, fs.readFileSync(path.join(parts, f)));
      built.push(files);
    }
    expect(Object.keys(built[0]!).some((f) => f.endsWith('.texts'))).toBe(true);
    expect(Object.keys(built[0]!).some((f) => f.endsWith('.cols'))).toBe(true);
    expect(Object.keys(built[1]!)).toEqual(Object.keys(built[0]!));
    for (const f of Object.keys(built[0]!)) expect(Buffer.compare(built[1]![f]!, built[0]![f]!), f).toBe(0);
    // With its slices, a block's records are taken in one go; with a turn after every unit, one at a time.
    expect(blockRun).toBeGreaterThan(20);
    expect(longestRun).toBe(1);
  });
});
