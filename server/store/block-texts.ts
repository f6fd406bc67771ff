/**
 * What a text search reads of each record, kept apart from the records: its message and, for
 * the sources with request URLs, its URL, packed per group of record blocks. A search reads
 * these (about a fifth of the records' bytes before packing, a thirtieth after) and finds every
 * match of a group in one pass over its text, instead of decompressing whole records and
 * testing them one by one: a common word over a busy week was a full read of the records.
 *
 * Derived data, one file per record file (`<label>.texts`), built by the background builder
 * after each commit for the blocks that lack it (whole groups of committed blocks, in block
 * order), and cut back whenever the record file is. `LXTX`, u32 format, u32 the record file's
 * seed, u32 zero; then per group: f64 the offset of its first block, f64 the end of its last,
 * u32 packed bytes, u32 CRC-32 (seeded with the file's seed) of those 20 bytes and the packed
 * bytes, then the packed bytes: deflate-raw of u32 records, u32 zero, then per record its
 * block's offset (f64), its offset in the block (i32), the end of its message and the end of
 * its URL in the text (i32 each, from the group text's start), then the text (UTF-8).
 *
 * A reader lists the groups within the committed record bytes, up to the first that is short
 * or of another block than the one it follows; a group's bytes are checked against their CRC
 * when read. Blocks without a group, and groups that fail, are searched in their records, so a
 * damaged or stale file costs time, never an answer.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { appendDerived, DERIVED_HEAD, derivedHeader, derivedHeaderOk } from './derived-header.ts';
import { parsedRecord, requestUrlOf, searchedMessageOf } from './record.ts';

const MAGIC = 0x5854584c; // 'LXTX' little-endian
const FORMAT = 1;
const HEAD = DERIVED_HEAD;
/** A group's header: first block, end, packed bytes, CRC. */
const ENTRY_HEAD = 24;
/** A group closes once its text passes this many bytes (packs well; one inflate per group). */
export const GROUP_TEXT_BYTES = 256 * 1024;
/** deflate level: the file is written once and read by every search; level 1 keeps the builder's CPU low. */
const LEVEL = 1;

/**
 * One group's records: where each is (block, offset in it), and where its message and its URL
 * lie in `text`. Record r's message is [msgStart(r), msgEnd[r]), msgStart(r) being the end of
 * record r - 1's bytes (`end`); its URL [urlStart[r], urlEnd[r]) (empty: none), which lies inside
 * its message when the message holds it (an edge request's does), else right after it.
 */
export interface TextGroup {
  readonly n: number;
  readonly blk: Float64Array;
  readonly boff: Int32Array;
  readonly msgEnd: Int32Array;
  readonly urlStart: Int32Array;
  readonly urlEnd: Int32Array;
  /** Where each record's bytes end (its message's end, or its URL's when written after it). */
  readonly end: Int32Array;
  readonly text: Buffer;
}

/** The texts of one record, as a search reads them. */
export interface RecordTexts {
  message: string;
  url: string | null;
}

/** What a search reads of a stored record's bytes: its message, and its request URL where its source has them. */
export function recordTexts(raw: string, withUrl: boolean): RecordTexts {
  const { readable, record, metadata } = parsedRecord(raw);
  if (!readable) return { message: '', url: null };
  return { message: searchedMessageOf(record), url: withUrl ? requestUrlOf(metadata) : null };
}

/** The message of record r of a group. */
export function messageOf(g: TextGroup, r: number): string {
  return g.text.toString('utf8', r ? g.end[r - 1]! : 0, g.msgEnd[r]!);
}

/** The URL of record r of a group, or null when it has none. */
export function urlOf(g: TextGroup, r: number): string | null {
  const a = g.urlStart[r]!;
  const b = g.urlEnd[r]!;
  return a === b ? null : g.text.toString('utf8', a, b);
}

/** Int32 fields per record after its block offset: offset in block, message end, URL start, URL end. */
const I32_FIELDS = 4;

/** The packed bytes of one group of records (in block order). */
export function packGroup(records: ReadonlyArray<{ blk: number; boff: number; texts: RecordTexts }>): Buffer {
  const n = records.length;
  const parts: string[] = [];
  const blk = new Float64Array(n);
  const ints = new Int32Array(n * I32_FIELDS);
  let at = 0;
  records.forEach((r, i) => {
    const { message, url } = r.texts;
    blk[i] = r.blk;
    ints[i] = r.boff;
    const start = at;
    at += Buffer.byteLength(message, 'utf8');
    ints[n + i] = at;
    parts.push(message);
    // A URL the message holds is not written again: its place in the message is.
    const inside = url ? message.indexOf(url) : -1;
    if (url && inside >= 0) {
      ints[2 * n + i] = start + Buffer.byteLength(message.slice(0, inside), 'utf8');
      ints[3 * n + i] = ints[2 * n + i]! + Buffer.byteLength(url, 'utf8');
    } else {
      ints[2 * n + i] = at;
      if (url) {
        at += Buffer.byteLength(url, 'utf8');
        parts.push(url);
      }
      ints[3 * n + i] = at;
    }
  });
  const head = Buffer.alloc(8);
  head.writeUInt32LE(n, 0);
  return zlib.deflateRawSync(Buffer.concat([head, Buffer.from(blk.buffer), Buffer.from(ints.buffer), Buffer.from(parts.join(''), 'utf8')]), { level: LEVEL });
}

/** A group's records from its packed bytes; throws when they are not a whole group. */
export function unpackGroup(packed: Buffer): TextGroup {
  return parseGroup(zlib.inflateRawSync(packed));
}

/** A group's records from its inflated bytes; throws when they are not a whole group. */
function parseGroup(raw: Buffer): TextGroup {
  const n = raw.length >= 8 ? raw.readUInt32LE(0) : 0;
  const textAt = 8 + n * (8 + 4 * I32_FIELDS);
  if (n === 0 || textAt > raw.length) throw new Error('not a group of record texts');
  // Copies on buffers of their own: typed arrays need aligned starts.
  const copy = (from: number, bytes: number) => raw.buffer.slice(raw.byteOffset + from, raw.byteOffset + from + bytes);
  const blk = new Float64Array(copy(8, n * 8));
  const ints = new Int32Array(copy(8 + n * 8, n * 4 * I32_FIELDS));
  const text = raw.subarray(textAt);
  const boff = ints.subarray(0, n);
  const msgEnd = ints.subarray(n, 2 * n);
  const urlStart = ints.subarray(2 * n, 3 * n);
  const urlEnd = ints.subarray(3 * n, 4 * n);
  const end = new Int32Array(n);
  let last = 0;
  for (let r = 0; r < n; r++) {
    const m = msgEnd[r]!;
    const a = urlStart[r]!;
    const b = urlEnd[r]!;
    // Each record's bytes follow the last one's; its URL inside its message or right after it.
    if (m < last || a > b || b > text.length || !(a === b || (a >= last && b <= m) || a === m)) throw new Error('a record text out of place');
    end[r] = last = Math.max(m, b);
  }
  if (last !== text.length) throw new Error('a group text longer than its records');
  return { n, blk, boff, msgEnd, urlStart, urlEnd, end, text };
}

/** Groups read from texts files by this process (tests count the reads of a search). */
let groupsRead = 0;
export const textGroupsRead = (): number => groupsRead;

/** Where a group is in the file. */
interface GroupEntry {
  blk: number;
  end: number;
  at: number;
  packed: number;
  crc: number;
}

/** A record file's texts, as listed in its file (groups read when asked for). */
export class BlockTexts {
  constructor(
    private readonly file: string,
    private readonly seed: number,
    private readonly groups: readonly GroupEntry[],
  ) {}

  /** Record bytes covered from the file's start: blocks from here on have no group yet. */
  get covered(): number {
    return this.groups.length ? this.groups[this.groups.length - 1]!.end : 0;
  }

  /** The file's length up to the end of its last listed group (where appends go). */
  get fileEnd(): number {
    return this.fileEndAfter(this.groups.length - 1);
  }

  /** The group holding the block at `blk`, or -1 when none does. */
  groupOf(blk: number): number {
    let lo = 0;
    let hi = this.groups.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const g = this.groups[mid]!;
      if (blk < g.blk) hi = mid - 1;
      else if (blk >= g.end) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  /** Where group j's blocks start (to cut the file there when it fails). */
  startOf(j: number): number {
    return this.groups[j]!.blk;
  }

  /** Group j's records, read and checked; null when its bytes fail their check. */
  group(j: number): TextGroup | null {
    const g = this.groups[j]!;
    groupsRead++;
    try {
      const buf = Buffer.alloc(ENTRY_HEAD + g.packed);
      const fd = fs.openSync(this.file, 'r');
      try {
        for (let got = 0; got < buf.length; ) {
          const k = fs.readSync(fd, buf, got, buf.length - got, g.at - ENTRY_HEAD + got);
          if (k === 0) return null;
          got += k;
        }
      } finally {
        fs.closeSync(fd);
      }
      const packed = buf.subarray(ENTRY_HEAD);
      if (zlib.crc32(packed, zlib.crc32(buf.subarray(0, ENTRY_HEAD - 4), this.seed)) !== g.crc) return null;
      return unpackGroup(packed);
    } catch {
      return null;
    }
  }

  /** Where group j's blocks end. */
  endOf(j: number): number {
    return this.groups[j]!.end;
  }

  /** The file's length up to the end of group j (-1: its header alone). */
  fileEndAfter(j: number): number {
    if (j < 0) return HEAD;
    const g = this.groups[j]!;
    return g.at + g.packed;
  }

  /** How many groups it lists. */
  get size(): number {
    return this.groups.length;
  }
}

/**
 * The texts of a record file as far as they are whole and within `recordBytes` (the committed
 * length): null when the file is missing or of another record file (seed) or format.
 */
export function readBlockTexts(file: string, seed: number, recordBytes: number): BlockTexts | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const head = Buffer.alloc(HEAD);
    if (fs.readSync(fd, head, 0, HEAD, 0) !== HEAD || !headerOk(head, seed)) return null;
    const groups: GroupEntry[] = [];
    const e = Buffer.alloc(ENTRY_HEAD);
    let covered = 0;
    for (let at = HEAD; at + ENTRY_HEAD <= size; ) {
      if (fs.readSync(fd, e, 0, ENTRY_HEAD, at) !== ENTRY_HEAD) break;
      const blk = e.readDoubleLE(0);
      const end = e.readDoubleLE(8);
      const packed = e.readUInt32LE(16);
      // Groups follow each other from the file's first block; one that does not ends the list.
      if (blk !== covered || !(end > blk) || end > recordBytes || at + ENTRY_HEAD + packed > size) break;
      groups.push({ blk, end, at: at + ENTRY_HEAD, packed, crc: e.readUInt32LE(20) });
      covered = end;
      at += ENTRY_HEAD + packed;
    }
    return new BlockTexts(file, seed, groups);
  } finally {
    fs.closeSync(fd);
  }
}

const headerOk = (head: Buffer, seed: number): boolean => derivedHeaderOk(head, MAGIC, FORMAT, seed);

/** The first bytes of the texts file of the record file whose seed is `seed`. */
function textsHeader(seed: number): Buffer {
  return derivedHeader(MAGIC, FORMAT, seed);
}

/** One group's bytes in the file: its blocks [blk, end), packed bytes and CRC. */
export function textsEntry(seed: number, blk: number, end: number, packed: Buffer): Buffer {
  const head = Buffer.alloc(ENTRY_HEAD);
  head.writeDoubleLE(blk, 0);
  head.writeDoubleLE(end, 8);
  head.writeUInt32LE(packed.length, 16);
  head.writeUInt32LE(zlib.crc32(packed, zlib.crc32(head.subarray(0, ENTRY_HEAD - 4), seed)), ENTRY_HEAD - 4);
  return Buffer.concat([head, packed]);
}

/**
 * Makes a texts file end with the last group within the first `size` record bytes (the record
 * file was cut there, or a group from there on failed): later groups are cut off, and a file
 * of another format or record file is removed. A missing file stays missing.
 */
export function cutBlockTexts(file: string, seed: number, size: number): void {
  const t = readBlockTexts(file, seed, Infinity);
  if (!t) {
    fs.rmSync(file, { force: true });
    return;
  }
  let j = t.size;
  while (j > 0 && t.endOf(j - 1) > size) j--;
  const keep = t.fileEndAfter(j - 1);
  if (fs.statSync(file).size !== keep) fs.truncateSync(file, keep);
}

/** Appends groups to a texts file that ends at `fileEnd` (HEAD or less: a new file); the file's new end. */
export function appendBlockTexts(file: string, seed: number, fileEnd: number, entries: readonly Buffer[]): number {
  return appendDerived(file, textsHeader(seed), fileEnd, entries);
}

/** The records of a raw block (records separated by newlines), each with its offset in the block. */
export function* recordsOfBlock(raw: Buffer): Generator<{ boff: number; bytes: Buffer }> {
  let at = 0;
  while (at < raw.length) {
    let end = raw.indexOf(0x0a, at);
    if (end < 0) end = raw.length;
    if (end > at) yield { boff: at, bytes: raw.subarray(at, end) };
    at = end + 1;
  }
}
