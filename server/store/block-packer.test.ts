/**
 * Record blocks packed on the worker thread (block-packer.ts): the record file and its block
 * index are byte for byte those of packing on the importing thread, whichever thread ends up
 * packing each block; a worker that dies during an import fails it, and the store opens again
 * with every earlier commit and nothing of the failed import.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
// Provides the worker (the import's worker entry, in its `blocks` role), as the server does.
import '../ingest/parse-host.ts';
import { importStream } from '../ingest/import.ts';
import { at, edgeRecord, storeKeeper, tempDir } from '../testing/fixtures.ts';
import { seededUniform } from '../demo/random.ts';
import { activeBlockWorker, blocksPacked, blockWorkerDeaths, blockWorkerReady, setBlockPacking } from './block-packer.ts';
import { BLOCK_BYTES, RecordBlocks, type RecordAddress } from './record-blocks.ts';

const keeper = storeKeeper('le-packer-');
const dirs: string[] = [];
afterEach(async () => {
  setBlockPacking('worker');
  await keeper.cleanup();
});
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));


/**
 * Records of random lengths (a few bytes to 12 KB) and contents: upper and lower case letters
 * (the block index folds them), digits, punctuation, multi-byte UTF-8 and runs that compress
 * well; no newline inside, as the store's records.
 */
function randomRecords(seed: number, totalBytes: number): Buffer[] {
  const rnd = seededUniform(seed);
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 {}[]":,./-_|=?&%ééüß日本語😀';
  const chars = [...alphabet];
  const out: Buffer[] = [];
  for (let total = 0; total < totalBytes; ) {
    const n = rnd() < 0.05 ? Math.floor(rnd() * 12_000) : 5 + Math.floor(rnd() * 1_500);
    let text = '';
    while (text.length < n) {
      if (rnd() < 0.1) text += 'GET /rest/v1/todos?select=* '.repeat(1 + Math.floor(rnd() * 4));
      else text += chars[Math.floor(rnd() * chars.length)];
    }
    const bytes = Buffer.from(text, 'utf8');
    out.push(bytes);
    total += bytes.length + 1;
  }
  return out;
}

/** A record file of the same name (so the same CRC seed) in a folder of its own. */
function recordFile(): RecordBlocks {
  const dir = tempDir('le-packer-');
  dirs.push(dir);
  return new RecordBlocks(path.join(dir, 'edge_logs', '20261122.records'), 0);
}

describe('record blocks packed on the worker', () => {
  it('write the same record file and block index as blocks packed inline, on random records, whichever thread packs each block', async () => {
    const records = randomRecords(20261122, 14 * BLOCK_BYTES);

    setBlockPacking('inline');
    const inline = recordFile();
    const inlineAddrs = records.map((r) => inline.add(r));
    inline.flush();
    inline.close();

    setBlockPacking('worker');
    expect(await blockWorkerReady()).toBe(true);
    const before = blocksPacked();
    const viaWorker = recordFile();
    const addrs: RecordAddress[] = [];
    // As an import inserts: slices of records, each ended by a settle, which finds its blocks
    // packed by the worker (a pause before it), or takes them back and packs them itself, or
    // waits for the one the worker is packing (no pause).
    const rnd = seededUniform(7);
    for (let i = 0; i < records.length; ) {
      const slice: Array<{ i: number; placed: ReturnType<RecordBlocks['append']> }> = [];
      for (const end = Math.min(records.length, i + 20 + Math.floor(rnd() * 400)); i < end; i++) slice.push({ i, placed: viaWorker.append(records[i]!) });
      if (rnd() < 0.6) await sleep(30);
      viaWorker.settle();
      for (const { i: k, placed } of slice) addrs[k] = { blk: placed.blk >= 0 ? placed.blk : viaWorker.offsetOf(placed.block), boff: placed.boff, len: placed.len };
    }
    viaWorker.flush();
    const after = blocksPacked();

    expect(addrs).toEqual(inlineAddrs);
    expect(fs.readFileSync(viaWorker.file).equals(fs.readFileSync(inline.file))).toBe(true);
    expect(fs.readFileSync(viaWorker.gramsFile).equals(fs.readFileSync(inline.gramsFile))).toBe(true);
    // Both ways were taken: the test compares them, not one with itself.
    expect(after.worker - before.worker).toBeGreaterThan(0);
    expect(after.here - before.here).toBeGreaterThan(0);
    for (let i = 0; i < records.length; i += 7) expect(viaWorker.read(addrs[i]!).equals(records[i]!)).toBe(true);
    viaWorker.close();
  });
});

describe('a record block worker that dies during an import', () => {
  const T = at('2026-11-22T09:00:00Z');
  /** Edge records with messages long enough to fill a block every ~60 records. */
  const edges = (from: number, n: number, tag: string) =>
    Array.from({ length: n }, (_, i) => ({ ...edgeRecord(T + (from + i) * 1_000_000, { id: `${tag}-${from + i}` }), event_message: `${tag} ${from + i} `.repeat(250) }));
  const ndjson = (records: unknown[]) => Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n');

  it('fails the import with a message; the store opens again with every earlier commit and nothing of it; the next import works', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const first = edges(0, 3000, 'first');
    expect(await importStream(store, [ndjson(first)], { source: 'edge_logs' })).toMatchObject({ imported: 3000 });
    const committed = store.dump('cloudflare.logs.prod');
    expect(await blockWorkerReady()).toBe(true);

    // The second import's first half goes in; the worker is ended; then the rest arrives.
    const second = ndjson(edges(3000, 6000, 'second'));
    let go!: () => void;
    const gate = new Promise<void>((resolve) => (go = resolve));
    async function* input() {
      yield second.subarray(0, second.length / 2);
      await gate;
      yield second.subarray(second.length / 2);
    }
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    const deaths = blockWorkerDeaths().count;
    const running = importStream(store, input(), { source: 'edge_logs', onProgress: () => wrote() });
    await written;
    expect(store.partitions('cloudflare.logs.prod').some((p) => p.blocks.size > p.row.record_bytes)).toBe(true);
    await activeBlockWorker()!.terminate();
    expect(blockWorkerDeaths().count).toBe(deaths + 1);
    go();
    await expect(running).rejects.toThrow(/^the record block worker stopped \(exit code 1\) during the import; the import was rolled back and the store is as it was before it$/);
    expect(store.dump('cloudflare.logs.prod')).toEqual(committed);

    await keeper.close(store);
    const again = await keeper.open(dir);
    expect(again.dump('cloudflare.logs.prod')).toEqual(committed);
    expect(again.integrityCheck()).toBe('ok');
    // Record files were cut back to what the catalog counts: nothing of the failed import is left.
    for (const p of again.partitions('cloudflare.logs.prod')) expect(fs.statSync(p.blocks.file).size).toBe(p.row.record_bytes);
    // A new worker packs the next import.
    expect(await importStream(again, [second], { source: 'edge_logs' })).toMatchObject({ imported: 6000 });
    expect(activeBlockWorker()).not.toBeNull();
    expect(again.dump('cloudflare.logs.prod')).toHaveLength(9000);
  });
});
