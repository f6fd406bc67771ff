/**
 * A text search's block index: per record block, a Bloom filter of the block's trigrams (three
 * consecutive bytes, ASCII letters folded to lower case), so a search decompresses only the
 * blocks that may hold its text. A block holds about 8,000 distinct trigrams (256 KiB of edge
 * records); 4 KiB and two bits per trigram make a false positive about 15% per trigram, so a
 * word of five letters (three trigrams) rules out all but about 1% of the blocks without it.
 *
 * Derived data, one file per record file (`<label>.grams`), built in the background from the
 * record blocks after a commit and rewritten whole (temp file, rename): `LXGR`, u32 format,
 * u32 the record file's seed (its name: a file put under another name is not used), u32
 * blocks, f64 record bytes covered, u32 CRC-32 of the entries, then per block its f64 offset
 * and BLOOM_BYTES of bits. Blocks past the covered bytes (an import since) are searched without it.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';

const MAGIC = 0x5247584c; // 'LXGR' little-endian
const FORMAT = 1;
const CRC_AT = 24;
const HEAD = 28;
export const BLOOM_BYTES = 4096;
const BLOOM_BITS = BLOOM_BYTES * 8;
const MASK = BLOOM_BITS - 1;
const ENTRY = 8 + BLOOM_BYTES;

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
  private readonly at = new Map<number, number>();

  constructor(
    /** The file's bytes. */
    private readonly buf: Buffer,
    /** Record bytes the index covers: blocks at or past this are not in it. */
    readonly covered: number,
  ) {
    const blocks = (buf.length - HEAD) / ENTRY;
    for (let i = 0; i < blocks; i++) this.at.set(buf.readDoubleLE(HEAD + i * ENTRY), HEAD + i * ENTRY + 8);
  }

  /** Whether the block at `blk` may hold a text whose trigram bits are `need` (true when the block is not indexed). */
  mayHold(blk: number, need: Int32Array): boolean {
    const at = this.at.get(blk);
    return at === undefined || mayHold(this.buf, at, need);
  }

  /** Every block's offset and bits (to extend the index with new blocks). */
  entries(): Array<{ blk: number; bits: Int32Array }> {
    return [...this.at].map(([blk, at]) => ({ blk, bits: new Int32Array(this.buf.buffer.slice(this.buf.byteOffset + at, this.buf.byteOffset + at + BLOOM_BYTES)) }));
  }

  /** Bytes held in memory. */
  get bytes(): number {
    return this.buf.length;
  }
}

/**
 * The index of a record file, or null when it is missing, of another file (seed), covers more
 * than the record file now holds (cut back by a rolled-back import), or fails its CRC: it is
 * then built again.
 */
export function readBlockGrams(file: string, seed: number, recordBytes: number): BlockGrams | null {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return null;
  }
  if (buf.length < HEAD || buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== FORMAT || buf.readUInt32LE(8) !== seed) return null;
  const blocks = buf.readUInt32LE(12);
  const covered = buf.readDoubleLE(16);
  if (buf.length !== HEAD + blocks * ENTRY || covered > recordBytes) return null;
  if (zlib.crc32(buf.subarray(HEAD)) !== buf.readUInt32LE(CRC_AT)) return null;
  return new BlockGrams(buf, covered);
}

/** The bytes of an index of `entries` (each a block's offset and bits) covering `covered` record bytes. */
export function encodeBlockGrams(seed: number, covered: number, entries: ReadonlyArray<{ blk: number; bits: Int32Array }>): Buffer {
  const out = Buffer.alloc(HEAD + entries.length * ENTRY);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(FORMAT, 4);
  out.writeUInt32LE(seed, 8);
  out.writeUInt32LE(entries.length, 12);
  out.writeDoubleLE(covered, 16);
  let at = HEAD;
  for (const e of entries) {
    out.writeDoubleLE(e.blk, at);
    Buffer.from(e.bits.buffer, e.bits.byteOffset, e.bits.byteLength).copy(out, at + 8);
    at += ENTRY;
  }
  out.writeUInt32LE(zlib.crc32(out.subarray(HEAD)), CRC_AT);
  return out;
}

/** The bits of one block's raw bytes. */
export function blockBits(raw: Uint8Array): Int32Array {
  const bits = new Int32Array(BLOOM_BITS / 32);
  addTrigrams(bits, raw);
  return bits;
}
