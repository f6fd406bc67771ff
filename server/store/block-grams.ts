/**
 * A text search's block index: per record block, a Bloom filter of the block's trigrams (three
 * consecutive bytes, ASCII letters folded to lower case), so a search decompresses only the
 * blocks that may hold its text. A block holds about 8,000 distinct trigrams (256 KiB of edge
 * records); 4 KiB and two bits per trigram make a false positive about 15% per trigram, so a
 * word of five letters (three trigrams) rules out all but about 1% of the blocks without it.
 *
 * Derived data, one file per record file (`<label>.grams`), appended as each block is written
 * (the raw block is in memory then), so a search right after an import is already indexed.
 * Blocks written before (an older store, a failed append) are indexed by a background rebuild.
 * `LXGR`, u32 format, u32 the record file's seed (its name: a file put under another name is
 * not used), u32 zero; then per block: f64 its offset, f64 its end, BLOOM_BYTES of bits, u32
 * CRC-32 of the entry (seeded with the file's seed). A reader stops at the first entry that is
 * short or fails its CRC and ignores entries past the committed record bytes; blocks without an
 * entry are searched without the index, so a damaged or stale file costs time, never an answer.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { DERIVED_HEAD, derivedHeader, derivedHeaderOk, readDerived } from './derived-header.ts';
import { unescapedText } from './json-escapes.ts';

const MAGIC = 0x5247584c; // 'LXGR' little-endian
// 3: a block's bits include the text its JSON escapes stand for (2 missed it: rebuilt).
const FORMAT = 3;
const HEAD = DERIVED_HEAD;
export const BLOOM_BYTES = 4096;
const BLOOM_BITS = BLOOM_BYTES * 8;
const MASK = BLOOM_BITS - 1;
/** An entry: offset, end, bits, CRC. */
const ENTRY = 16 + BLOOM_BYTES + 4;

/** Sets the two bits of every trigram of `raw` in `bits` (BLOOM_BITS bits). */
export function addTrigrams(bits: Int32Array, raw: Uint8Array): void {
  const n = raw.length;
  if (n < 3) return;
  let t = (fold(raw[0]!) << 8) | fold(raw[1]!);
  for (let i = 2; i < n; i++) {
    let c = raw[i]!;
    if (((c - 0x41) >>> 0) < 26) c |= 32;
    t = ((t << 8) | c) & 0xffffff;
    const h = Math.imul(t, 0x9e3779b1);
    const a = h >>> 17;
    const b = (h >>> 2) & MASK;
    bits[a >>> 5]! |= 1 << a;
    bits[b >>> 5]! |= 1 << b;
  }
}

const fold = (c: number) => (((c - 0x41) >>> 0) < 26 ? c | 32 : c);

/** The bit positions a text's trigrams need (two per trigram), or null when the text is under three bytes. */
export function trigramBits(text: Uint8Array): Int32Array | null {
  if (text.length < 3) return null;
  const out: number[] = [];
  let t = (fold(text[0]!) << 8) | fold(text[1]!);
  for (let i = 2; i < text.length; i++) {
    t = ((t << 8) | fold(text[i]!)) & 0xffffff;
    const h = Math.imul(t, 0x9e3779b1);
    out.push(h >>> 17, (h >>> 2) & MASK);
  }
  return Int32Array.from(new Set(out));
}

/** Whether a block's bits (at `at` in `buf`) hold every bit of `need`. */
export function mayHold(buf: Buffer, at: number, need: Int32Array): boolean {
  for (let i = 0; i < need.length; i++) {
    const bit = need[i]!;
    if ((buf[at + (bit >>> 3)]! & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}

/** A record file's block index, as read from its file. */
export class BlockGrams {
  constructor(
    /** The file's bytes. */
    private readonly buf: Buffer,
    /** Where each indexed block's bits start in `buf`, by block offset. */
    private readonly at: ReadonlyMap<number, number>,
    /** Record bytes indexed without a gap from the file's start: the blocks past it may lack an entry. */
    readonly covered: number,
    /** The committed record bytes it was read against (a later commit reads it again). */
    readonly limit: number,
  ) {}

  /** Whether the block at `blk` may hold a text whose trigram bits are `need` (true when the block is not indexed). */
  mayHold(blk: number, need: Int32Array): boolean {
    const at = this.at.get(blk);
    return at === undefined || mayHold(this.buf, at, need);
  }

  /** Whether the block at `blk` has an entry. */
  has(blk: number): boolean {
    return this.at.has(blk);
  }

  /** The bits of an indexed block (to write the index again). */
  bitsOf(blk: number): Int32Array | null {
    const at = this.at.get(blk);
    if (at === undefined) return null;
    return new Int32Array(this.buf.buffer.slice(this.buf.byteOffset + at, this.buf.byteOffset + at + BLOOM_BYTES));
  }

  /** Bytes held in memory. */
  get bytes(): number {
    return this.buf.length;
  }
}

/**
 * The index of a record file, as far as it is whole and within `recordBytes` (the committed
 * length), or null when it is missing or of another file (seed) or format: it is then built again.
 */
export function readBlockGrams(file: string, seed: number, recordBytes: number): BlockGrams | null {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return null;
  }
  if (!headerOk(buf, seed)) return null;
  const at = new Map<number, number>();
  let covered = 0;
  for (let e = HEAD; e + ENTRY <= buf.length; e += ENTRY) {
    const blk = buf.readDoubleLE(e);
    const end = buf.readDoubleLE(e + 8);
    if (end > recordBytes || zlib.crc32(buf.subarray(e, e + ENTRY - 4), seed) !== buf.readUInt32LE(e + ENTRY - 4)) break;
    at.set(blk, e + 16);
    if (blk === covered) covered = end;
  }
  return new BlockGrams(buf, at, covered, recordBytes);
}

const headerOk = (head: Buffer, seed: number): boolean => derivedHeaderOk(head, MAGIC, FORMAT, seed);

/** The first bytes of an index of the record file whose seed is `seed`. */
export function gramsHeader(seed: number): Buffer {
  return derivedHeader(MAGIC, FORMAT, seed);
}

/** One entry's bytes: the block at `blk` ending at `end`, its bits, their CRC. */
export function gramsEntry(seed: number, blk: number, end: number, bits: Int32Array): Buffer {
  const out = Buffer.allocUnsafe(ENTRY);
  out.writeDoubleLE(blk, 0);
  out.writeDoubleLE(end, 8);
  Buffer.from(bits.buffer, bits.byteOffset, bits.byteLength).copy(out, 16);
  out.writeUInt32LE(zlib.crc32(out.subarray(0, ENTRY - 4), seed), ENTRY - 4);
  return out;
}

/** The bytes of a whole index of `entries` (each a block's offset, end and bits), in block order. */
export function encodeBlockGrams(seed: number, entries: ReadonlyArray<{ blk: number; end: number; bits: Int32Array }>): Buffer {
  return Buffer.concat([gramsHeader(seed), ...entries.map((e) => gramsEntry(seed, e.blk, e.end, e.bits))]);
}

/**
 * Whether a record file's index ends with a whole entry for the block ending at `size`: read
 * from its header and last entry alone (the background builder asks this of every partition at
 * each start; reading whole files held the first requests). Entries are appended in block
 * order, so a file whose last entry ends there covers the file, unless damaged in between,
 * which a reader finds (it stops there) and the next commit's rebuild mends.
 */
export function gramsReachEnd(file: string, seed: number, size: number): boolean {
  return readDerived(file, MAGIC, FORMAT, seed, false, (fd, length) => {
    if (length < HEAD + ENTRY || (length - HEAD) % ENTRY !== 0) return false;
    const last = Buffer.alloc(ENTRY);
    if (fs.readSync(fd, last, 0, ENTRY, length - ENTRY) !== ENTRY) return false;
    return last.readDoubleLE(8) === size && zlib.crc32(last.subarray(0, ENTRY - 4), seed) === last.readUInt32LE(ENTRY - 4);
  });
}

/**
 * Makes a record file's index end where the record file now ends (`size`): entries of blocks
 * past it (an import rolled back, a crash before its commit) and a torn last entry are cut off,
 * and a file of another format or record file starts again empty. Appends may follow; a
 * missing file is left missing (the first append writes its header).
 */
export function cutBlockGrams(file: string, seed: number, size: number): void {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // the first append writes the header
    throw err;
  }
  try {
    const head = Buffer.alloc(HEAD);
    const length = fs.fstatSync(fd).size;
    if (fs.readSync(fd, head, 0, HEAD, 0) !== HEAD || !headerOk(head, seed)) {
      fs.ftruncateSync(fd, 0);
      fs.writeSync(fd, gramsHeader(seed), 0, HEAD, 0);
      return;
    }
    // Entries are in block order: keep those that end within `size`.
    let keep = Math.floor((length - HEAD) / ENTRY);
    const end = Buffer.alloc(8);
    while (keep > 0) {
      fs.readSync(fd, end, 0, 8, HEAD + (keep - 1) * ENTRY + 8);
      if (end.readDoubleLE(0) <= size) break;
      keep--;
    }
    if (HEAD + keep * ENTRY !== length) fs.ftruncateSync(fd, HEAD + keep * ENTRY);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The bits of one block's raw bytes, and of the text their JSON escapes stand for (`\/`,
 * `\u0026`), which a search for that text must not rule out.
 */
export function blockBits(raw: Buffer): Int32Array {
  const bits = new Int32Array(BLOOM_BITS / 32);
  addTrigrams(bits, raw);
  const text = unescapedText(raw);
  if (text) addTrigrams(bits, text);
  return bits;
}
