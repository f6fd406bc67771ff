/**
 * Record files: every record reads back exactly, while descriptors and decompressed blocks stay
 * within their store-wide bounds however many files are read; a file with writes not yet
 * fsynced keeps its descriptor; a rolled-back file never serves a block from before.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../testing/fixtures.ts';
import { readBlockGrams, trigramBits } from './block-grams.ts';
import { BLOCK_BYTES, narrowBlockCache, RecordBlocks, recordBlocksHeld, verifyRecordFile, type RecordAddress } from './record-blocks.ts';

const dirs: string[] = [];
const files: RecordBlocks[] = [];
afterEach(() => {
  for (const f of files.splice(0)) f.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A record file of `blocks` whole blocks of distinct records; their texts and addresses. */
function filled(dir: string, name: string, blocks: number): { file: RecordBlocks; recs: Array<{ text: string; addr: RecordAddress }> } {
  const file = new RecordBlocks(path.join(dir, name), 0);
  files.push(file);
  const recs: Array<{ text: string; addr: RecordAddress }> = [];
  let raw = 0;
  for (let i = 0; raw < blocks * BLOCK_BYTES; i++) {
    const text = JSON.stringify({ id: `${name}-${i}`, event_message: `record ${i} of ${name} `.repeat(20) });
    recs.push({ text, addr: file.add(Buffer.from(text)) });
    raw += text.length + 1;
  }
  file.flush();
  return { file, recs };
}

const openDescriptorsOf = (file: string) =>
  fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  }).length;

describe('record files', () => {
  it('150 files read in turn: every record exact, at most 64 open and 32 MiB of blocks decompressed', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const all = Array.from({ length: 150 }, (_, i) => filled(dir, `p${i}.records`, 3));
    await Promise.all(all.map(({ file }) => file.sync()));
    let maxOpen = 0;
    let maxCached = 0;
    for (let round = 0; round < 2; round++) {
      for (const { file, recs } of all) {
        for (let i = 0; i < recs.length; i += 37) expect(file.read(recs[i]!.addr).toString()).toBe(recs[i]!.text);
        const held = recordBlocksHeld();
        maxOpen = Math.max(maxOpen, held.openFiles);
        maxCached = Math.max(maxCached, held.cachedBytes);
      }
    }
    expect(maxOpen).toBeLessThanOrEqual(64);
    expect(maxCached).toBeLessThanOrEqual(32 * 1024 * 1024);
    // The bounds were reached: 150 files of 3 blocks hold more than either.
    expect(maxOpen).toBe(64);
    expect(maxCached).toBeGreaterThan(30 * 1024 * 1024);

    // An import narrows the budget to half: the oldest blocks go at once, and reads keep to it.
    const widen = narrowBlockCache(0.5);
    try {
      expect(recordBlocksHeld().cachedBytes).toBeLessThanOrEqual(16 * 1024 * 1024);
      let narrowMax = 0;
      for (const { file, recs } of all) {
        for (let i = 0; i < recs.length; i += 37) expect(file.read(recs[i]!.addr).toString()).toBe(recs[i]!.text);
        narrowMax = Math.max(narrowMax, recordBlocksHeld().cachedBytes);
      }
      expect(narrowMax).toBeLessThanOrEqual(16 * 1024 * 1024);
      expect(narrowMax).toBeGreaterThan(14 * 1024 * 1024);
    } finally {
      widen();
    }
    // Its end gives the whole budget back.
    for (const { file, recs } of all) for (let i = 0; i < recs.length; i += 37) file.read(recs[i]!.addr);
    expect(recordBlocksHeld().cachedBytes).toBeGreaterThan(30 * 1024 * 1024);
  });

  it.skipIf(process.platform !== 'linux')('a file written and not yet fsynced keeps its descriptor while others come and go; after its sync it may close', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const { file: written } = filled(dir, 'written.records', 1);
    const others = Array.from({ length: 80 }, (_, i) => filled(dir, `o${i}.records`, 1));
    await Promise.all(others.map(({ file }) => file.sync()));
    for (const { file, recs } of others) file.read(recs[0]!.addr);
    expect(openDescriptorsOf(written.file)).toBe(1);
    await written.sync();
    // More files opened: the least recently used descriptors close, this one among them.
    for (let i = 0; i < 80; i++) filled(dir, `n${i}.records`, 1);
    expect(openDescriptorsOf(written.file)).toBe(0);
  });

  it('cut back (a rolled-back import) and written again, it serves the new blocks, not cached old ones', () => {
    const dir = tempDir();
    dirs.push(dir);
    const { file, recs } = filled(dir, 'cut.records', 1);
    expect(file.read(recs[0]!.addr).toString()).toBe(recs[0]!.text);
    file.truncate(0);
    const again = file.add(Buffer.from('{"id":"new"}'));
    file.flush();
    expect(again.blk).toBe(recs[0]!.addr.blk);
    expect(file.read(again).toString()).toBe('{"id":"new"}');
  });
});

describe('record blocks carry a CRC seeded by their file name', () => {
  it('a block read under another partition’s name, or with a flipped byte that still decompresses, is named damaged', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-blocks-crc-'));
    try {
      fs.mkdirSync(path.join(dir, 'edge_logs'));
      const a = new RecordBlocks(path.join(dir, 'edge_logs', '20261121.records'), 0);
      const addr = a.add(Buffer.from('{"id":"one"}'));
      a.flush();
      const size = a.size;
      a.close();
      // The same bytes under another partition's name: same lengths, same brotli stream, another seed.
      fs.copyFileSync(a.file, path.join(dir, 'edge_logs', '20261122.records'));
      const b = new RecordBlocks(path.join(dir, 'edge_logs', '20261122.records'), size);
      expect(() => b.read(addr)).toThrow(/20261122\.records is damaged \(the block at byte 0 fails its checksum/);
      b.close();
      expect(verifyRecordFile(path.join(dir, 'edge_logs', '20261122.records'), size)).toMatch(/fails its checksum/);
      expect(verifyRecordFile(a.file, size)).toBeNull();
      const again = new RecordBlocks(a.file, size);
      expect(again.read(addr).toString()).toBe('{"id":"one"}');
      again.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the block index written with the blocks', () => {
  /** Whether every trigram of `text` may be in a block, by the index as read back. */
  const indexed = (file: RecordBlocks, size: number) => readBlockGrams(file.gramsFile, file.nameSeed, size);
  const bits = (text: string) => trigramBits(Buffer.from(text))!;

  it('has an entry for each block as it is written, cut back with the file and appended to again', () => {
    const dir = tempDir('le-grams-file-');
    dirs.push(dir);
    const { file } = filled(dir, 'a.records', 3);
    const size = file.size;
    const g = indexed(file, size)!;
    expect(g.covered).toBe(size);
    // Block starts, chained from the file's headers.
    const starts: number[] = [];
    for (let blk = 0; blk < size; blk = file.nextBlock(blk)) starts.push(blk);
    expect(starts.length).toBeGreaterThanOrEqual(3);
    for (const blk of starts) {
      expect(g.has(blk)).toBe(true);
      expect(g.mayHold(blk, bits(' of a.records'))).toBe(true);
    }
    expect(starts.filter((blk) => g.mayHold(blk, bits('quasar-nebula-pulsar'))).length).toBe(0);
    // A rolled-back import cuts the file back to its second block: the index follows.
    file.truncate(starts[1]!);
    const cut = indexed(file, starts[1]!)!;
    expect(cut.covered).toBe(starts[1]);
    expect(cut.has(starts[1]!)).toBe(false);
    expect(fs.statSync(file.gramsFile).size).toBe(16 + (16 + 4096 + 4));
    // New blocks at the same offsets get their own entries.
    for (let i = 0; i < 400; i++) file.add(Buffer.from(JSON.stringify({ id: `new-${i}`, event_message: `fresh text ${i} `.repeat(30) })));
    file.flush();
    const again = indexed(file, file.size)!;
    expect(again.covered).toBe(file.size);
    expect(again.mayHold(starts[1]!, bits('fresh text 12'))).toBe(true);
    expect(again.mayHold(0, bits('fresh text 12'))).toBe(false);
  });

  it('entries past the committed bytes are not read; a file of another name is not used', () => {
    const dir = tempDir('le-grams-file-');
    dirs.push(dir);
    const { file } = filled(dir, 'b.records', 2);
    const first = file.nextBlock(0);
    const g = indexed(file, first)!;
    expect(g.has(0)).toBe(true);
    expect(g.has(first)).toBe(false);
    expect(g.covered).toBe(first);
    const other = path.join(dir, 'c.grams');
    fs.copyFileSync(file.gramsFile, other);
    expect(readBlockGrams(other, new RecordBlocks(path.join(dir, 'c.records'), 0).nameSeed, file.size)).toBeNull();
  });
});
