/**
 * What a text search reads of each record, kept apart from the records: its message and, for
 * the sources with request URLs, its URL, packed per group of record blocks. A search reads
 * these (about a fifth of the records' bytes before packing, a thirtieth after) instead of
 * decompressing whole records and testing them one by one: a common word over a busy week was a
 * full read of the records. A group's text is packed in chunks of a few dozen records, each
 * deflated with the file's dictionary (texts of its first group's records; as small as the group
 * packed whole), so a search that the record words (record-tokens.ts) narrow to a few records
 * inflates only the chunks holding them, and nothing else.
 *
 * Derived data, one file per record file (`<label>.texts`), built by the background builder
 * after each commit for the blocks that lack it (whole groups of committed blocks, in block
 * order), and cut back whenever the record file is. A record is found by its number in the
 * record file, which is its row less one (rows are numbered as records are appended; the
 * builder checks each group's first and last record against the rows). `LXTX`, u32 format, u32
 * the record file's seed, u32 zero; the dictionary: u32 its bytes, u32 packed bytes, u32 CRC-32
 * (seeded) of those 8 bytes and the packed ones, then the packed ones (deflate-raw); then per group: f64 the offset of its first block, f64 the
 * end of its last, u32 its first record's number, u32 its records, u32 packed bytes, u32 CRC-32
 * (seeded with the file's seed) of those 28 bytes and the chunk table; then the packed bytes:
 * the chunk table (u32 chunks, per chunk u32 its first record in the group, u32 packed bytes,
 * u32 CRC-32 of them), then the chunks, deflate-raw of u32 records, per record the end of its
 * message and the start and end of its URL in the chunk's text (i32 each, all the ends first,
 * then the starts, then the URL ends), then the text (UTF-8), with the file's dictionary.
 *
 * A reader checks the dictionary and lists the groups within the committed record bytes, up to
 * the first that is short or of another block or record than the one it follows; a group's chunk
 * table is checked against its CRC when read, each chunk when it is read. A file whose
 * dictionary fails is not used (and is built again); blocks without a group, and groups that
 * fail, are searched in their records, so a damaged or stale file costs time, never an answer.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { appendDerived, cutDerived, DERIVED_HEAD, derivedHeader, readDerived } from './derived-header.ts';
import { parsedRecord, requestUrlOf, searchedMessageOf } from './record.ts';

const MAGIC = 0x5854584c; // 'LXTX' little-endian
// 3: each chunk holds its records' places in its text and has its own CRC; records are found by their number.
// 4: one dictionary per file instead of each group's first chunk (which every search of the group inflated).
const FORMAT = 4;
const HEAD = DERIVED_HEAD;
/** A group's header: first block, end, first record, records, packed bytes, CRC. */
const ENTRY_HEAD = 32;
/** A group closes once its text passes this many bytes. */
export const GROUP_TEXT_BYTES = 256 * 1024;
/**
 * A chunk closes past CHUNK_TEXT_BYTES of text (about 60 edge requests). Measured on edge
 * requests, per group of 1,200: chunks of 60 records with a dictionary pack as small as the group
 * packed whole (0.97x; 1.5x without one) and inflate all together in 0.89 ms against 0.99
 * whole; chunks of 30 took 1.6 ms (each inflate has a fixed cost), which made a phrase most
 * records hold 1.5x slower than reading whole groups.
 */
const CHUNK_TEXT_BYTES = 12 * 1024;
/** deflate uses the last 32 KiB of a dictionary: the dictionary's size. */
const WINDOW = 32 * 1024;
/** The dictionary's own head: its bytes, packed bytes, CRC. */
const DICTIONARY_HEAD = 12;
/** deflate level: the file is written once and read by every search; level 1 keeps the builder's CPU low. */
const LEVEL = 1;

/** One chunk of a group: its records' places in its text (from the chunk's start) and the text. */
export interface TextChunk {
  /** Its first record's place in the group, and its records. */
  readonly first: number;
  readonly n: number;
  /**
   * Record i's message is [msgStart(i), msgEnd[i]), msgStart(i) being the end of record i - 1's
   * bytes (`end`, 0 for the first); its URL [urlStart[i], urlEnd[i]) (empty: none), inside its
   * message when the message holds it (an edge request's does), else right after it.
   */
  readonly msgEnd: Int32Array;
  readonly urlStart: Int32Array;
  readonly urlEnd: Int32Array;
  /** Where each record's bytes end (its message's end, or its URL's when written after it). */
  readonly end: Int32Array;
  readonly text: Buffer;
}

/** A group's records, numbered from 0, read a chunk at a time (each checked against its CRC when first read). */
export class TextGroup {
  private readonly read: Array<TextChunk | undefined> = [];
  private readonly packed: Array<Buffer | undefined> = [];

  constructor(
    readonly n: number,
    /** Each chunk's first record (ascending from 0) and CRC-32. */
    private readonly chunkFirst: Int32Array,
    private readonly crcs: Uint32Array,
    /** The file's dictionary (inflated). */
    private readonly dictionary: Buffer,
    /** The packed bytes of the chunks asked for, in that order. */
    private readonly bytesOf: (ks: readonly number[]) => Buffer[],
  ) {}

  /** Reads the packed bytes of chunks `ks` at once, for chunk() to inflate. */
  prefetch(ks: readonly number[]): void {
    const want = [...new Set(ks)].filter((k) => !this.packed[k] && !this.read[k]);
    if (!want.length) return;
    this.bytesOf(want).forEach((b, i) => (this.packed[want[i]!] = b));
  }

  /** Reads every chunk's packed bytes (prefetch of them all): a reader that goes through the whole group. */
  prefetchAll(): void {
    this.prefetch(Array.from({ length: this.chunks }, (_, k) => k));
  }

  get chunks(): number {
    return this.chunkFirst.length;
  }

  /** The chunk holding record r. */
  chunkOf(r: number): number {
    let lo = 0;
    let hi = this.chunkFirst.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.chunkFirst[mid]! <= r) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Chunk k's records [first, end). */
  recordsOf(k: number): [number, number] {
    return [this.chunkFirst[k]!, k + 1 < this.chunks ? this.chunkFirst[k + 1]! : this.n];
  }

  /** Chunk k, inflated and checked; throws when its bytes fail their CRC or are not its records' texts. */
  chunk(k: number): TextChunk {
    const had = this.read[k];
    if (had) return had;
    const packed = this.packed[k] ?? this.bytesOf([k])[0]!;
    this.packed[k] = undefined;
    if (zlib.crc32(packed) !== this.crcs[k]) throw new Error('a chunk of record texts fails its check');
    chunksRead++;
    const raw = zlib.inflateRawSync(packed, this.dictionary.length ? { dictionary: this.dictionary } : {});
    const [first, last] = this.recordsOf(k);
    const c = parseChunk(raw, first, last - first);
    this.read[k] = c;
    return c;
  }
}

/** Int32 fields per record at a chunk's start: message end, URL start, URL end. */
const I32_FIELDS = 3;

/** A chunk's records from its inflated bytes (u32 records, the I32_FIELDS arrays, the text); throws when they are not `n` records. */
function parseChunk(raw: Buffer, first: number, n: number): TextChunk {
  const textAt = 4 + 4 * I32_FIELDS * n;
  if (raw.length < textAt || raw.readUInt32LE(0) !== n) throw new Error('a chunk of record texts of another count');
  const ints = new Int32Array(raw.buffer.slice(raw.byteOffset + 4, raw.byteOffset + textAt));
  const text = raw.subarray(textAt);
  const msgEnd = ints.subarray(0, n);
  const urlStart = ints.subarray(n, 2 * n);
  const urlEnd = ints.subarray(2 * n, 3 * n);
  const end = new Int32Array(n);
  let last = 0;
  for (let i = 0; i < n; i++) {
    const m = msgEnd[i]!;
    const a = urlStart[i]!;
    const b = urlEnd[i]!;
    // Each record's bytes follow the last one's; its URL inside its message or right after it.
    if (m < last || a > b || b > text.length || !(a === b || (a >= last && b <= m) || a === m)) throw new Error('a record text out of place');
    end[i] = last = Math.max(m, b);
  }
  if (last !== text.length) throw new Error('a chunk text longer than its records');
  return { first, n, msgEnd, urlStart, urlEnd, end, text };
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
  const c = g.chunk(g.chunkOf(r));
  const i = r - c.first;
  return c.text.toString('utf8', i ? c.end[i - 1]! : 0, c.msgEnd[i]!);
}

/** The URL of record r of a group, or null when it has none. */
export function urlOf(g: TextGroup, r: number): string | null {
  const c = g.chunk(g.chunkOf(r));
  const i = r - c.first;
  return c.urlStart[i] === c.urlEnd[i] ? null : c.text.toString('utf8', c.urlStart[i]!, c.urlEnd[i]!);
}

/** The bytes of a record's texts as a chunk holds them (a URL its message holds is not written again). */
function textBytesOf({ message, url }: RecordTexts): number {
  return Buffer.byteLength(message, 'utf8') + (url && !message.includes(url) ? Buffer.byteLength(url, 'utf8') : 0);
}

/**
 * A texts file's dictionary, from the records of its first group: the texts of records spread
 * evenly over them, up to WINDOW bytes (deflate finds in it what the records of a partition
 * repeat: hosts, paths, user agents).
 */
export function textsDictionary(records: ReadonlyArray<{ texts: RecordTexts }>): Buffer {
  const total = records.reduce((n, r) => n + textBytesOf(r.texts), 0);
  const step = Math.max(1, Math.ceil(total / WINDOW));
  const parts: string[] = [];
  for (let i = 0; i < records.length; i += step) {
    const { message, url } = records[i]!.texts;
    parts.push(message, url && !message.includes(url) ? url : '');
  }
  const text = Buffer.from(parts.join(''), 'utf8');
  return text.length > WINDOW ? text.subarray(text.length - WINDOW) : text;
}

/** The packed bytes of one group of records (in block order), each chunk deflated with the file's `dictionary`. */
export function packGroup(records: ReadonlyArray<{ texts: RecordTexts }>, dictionary: Buffer): Buffer {
  const { chunkFirst, raw } = groupChunks(records);
  return groupBytes(chunkFirst, raw.map((c) => zlib.deflateRawSync(c, deflateOptions(dictionary))));
}

/**
 * packGroup with the chunks deflated on libuv's threads: the background builder's group of
 * 256 KiB of text took 10-20 ms to deflate on the thread that answers requests.
 */
export async function packGroupOffThread(records: ReadonlyArray<{ texts: RecordTexts }>, dictionary: Buffer): Promise<Buffer> {
  const { chunkFirst, raw } = groupChunks(records);
  // One chunk at a time: in parallel they took every libuv thread, and on two cores the
  // requests this is meant to leave the answering thread to.
  const packed: Buffer[] = [];
  for (const c of raw) packed.push(await new Promise<Buffer>((resolve, reject) => zlib.deflateRaw(c, deflateOptions(dictionary), (err, out) => (err ? reject(err) : resolve(out)))));
  return groupBytes(chunkFirst, packed);
}

const deflateOptions = (dictionary: Buffer): zlib.ZlibOptions => (dictionary.length ? { level: LEVEL, dictionary } : { level: LEVEL });

/** A group's records in chunks of about CHUNK_TEXT_BYTES of text: each chunk's first record and its bytes before packing. */
function groupChunks(records: ReadonlyArray<{ texts: RecordTexts }>): { chunkFirst: number[]; raw: Buffer[] } {
  const chunkFirst: number[] = [];
  const chunks: Array<Array<{ texts: RecordTexts }>> = [];
  let chunkBytes = Infinity;
  records.forEach((r, i) => {
    if (chunkBytes >= CHUNK_TEXT_BYTES) {
      chunkFirst.push(i);
      chunks.push([]);
      chunkBytes = 0;
    }
    chunks[chunks.length - 1]!.push(r);
    chunkBytes += textBytesOf(r.texts);
  });
  return { chunkFirst, raw: chunks.map(chunkBytesOf) };
}

/** The group's table (chunk count; per chunk its first record, length and CRC) and its packed chunks. */
function groupBytes(chunkFirst: readonly number[], packed: readonly Buffer[]): Buffer {
  const table = Buffer.alloc(4 + 12 * packed.length);
  table.writeUInt32LE(packed.length, 0);
  packed.forEach((c, k) => {
    table.writeUInt32LE(chunkFirst[k]!, 4 + 12 * k);
    table.writeUInt32LE(c.length, 8 + 12 * k);
    table.writeUInt32LE(zlib.crc32(c), 12 + 12 * k);
  });
  return Buffer.concat([table, ...packed]);
}

/** A chunk's bytes before packing: u32 records, per record its message end, URL start and URL end in the text, then the text. */
function chunkBytesOf(records: ReadonlyArray<{ texts: RecordTexts }>): Buffer {
  const n = records.length;
  const ints = new Int32Array(n * I32_FIELDS);
  const parts: string[] = [];
  let at = 0;
  records.forEach((r, i) => {
    const { message, url } = r.texts;
    const start = at;
    at += Buffer.byteLength(message, 'utf8');
    ints[i] = at;
    parts.push(message);
    // A URL the message holds is not written again: its place in the message is.
    const inside = url ? message.indexOf(url) : -1;
    if (url && inside >= 0) {
      ints[n + i] = start + Buffer.byteLength(message.slice(0, inside), 'utf8');
      ints[2 * n + i] = ints[n + i]! + Buffer.byteLength(url, 'utf8');
    } else {
      ints[n + i] = at;
      if (url) {
        at += Buffer.byteLength(url, 'utf8');
        parts.push(url);
      }
      ints[2 * n + i] = at;
    }
  });
  const head = Buffer.alloc(4);
  head.writeUInt32LE(n, 0);
  return Buffer.concat([head, Buffer.from(ints.buffer), Buffer.from(parts.join(''), 'utf8')]);
}

/** Bytes of a group's chunk table (before its chunks), from the packed bytes' first u32; -1 when they cannot hold it. */
export function chunkTableBytes(packed: Buffer): number {
  if (packed.length < 4) return -1;
  const bytes = 4 + 12 * packed.readUInt32LE(0);
  return bytes <= packed.length ? bytes : -1;
}

/** A group's records from its packed bytes (chunks checked and inflated when read); throws when they are not a whole group of `n` records. */
export function unpackGroup(packed: Buffer, n: number, dictionary: Buffer): TextGroup {
  const table = packed.subarray(0, Math.max(0, chunkTableBytes(packed)));
  return groupOfTable(table, n, packed.length, dictionary, (ranges) => ranges.map(([at, bytes]) => packed.subarray(at, at + bytes)));
}

/** Ranges of a group's packed bytes: [offset from their start, length]. */
type ByteRanges = ReadonlyArray<readonly [number, number]>;

/**
 * A group from its chunk table (`table`, whose group is `packedBytes` long) and a reader of its
 * bytes (offsets from the packed bytes' start); throws when the table is not a whole group's.
 */
function groupOfTable(table: Buffer, n: number, packedBytes: number, dictionary: Buffer, read: (ranges: ByteRanges) => Buffer[]): TextGroup {
  const m = table.length > 4 ? (table.length - 4) / 12 : 0;
  if (m === 0 || m !== table.readUInt32LE(0)) throw new Error('not a group of record texts');
  const chunkFirst = new Int32Array(m);
  const crcs = new Uint32Array(m);
  const offsets = new Float64Array(m + 1);
  offsets[0] = table.length;
  for (let k = 0; k < m; k++) {
    chunkFirst[k] = table.readUInt32LE(4 + 12 * k);
    offsets[k + 1] = offsets[k]! + table.readUInt32LE(8 + 12 * k);
    crcs[k] = table.readUInt32LE(12 + 12 * k);
    if ((k === 0 ? chunkFirst[k] !== 0 : chunkFirst[k]! <= chunkFirst[k - 1]!) || chunkFirst[k]! >= n) throw new Error('a chunk of record texts out of place');
  }
  if (offsets[m] !== packedBytes) throw new Error('a group of another length than its chunks');
  return new TextGroup(n, chunkFirst, crcs, dictionary, (ks) => read(ks.map((k) => [offsets[k]!, offsets[k + 1]! - offsets[k]!] as const)));
}

/** The bytes of a file at each range [position, length], read in one open; throws when the file ends before one. */
function readAt(file: string, ranges: ByteRanges): Buffer[] {
  const fd = fs.openSync(file, 'r');
  try {
    return ranges.map(([at, bytes]) => {
      const buf = Buffer.allocUnsafe(bytes);
      for (let got = 0; got < bytes; ) {
        const k = fs.readSync(fd, buf, got, bytes - got, at + got);
        if (k === 0) throw new Error('a texts file ends inside a group');
        got += k;
      }
      return buf;
    });
  } finally {
    fs.closeSync(fd);
  }
}

/** Groups read from texts files by this process, and chunks of their text inflated (tests count the reads of a search). */
let groupsRead = 0;
let chunksRead = 0;
export const textGroupsRead = (): number => groupsRead;
export const textChunksRead = (): number => chunksRead;

/** Where a group is in the file. */
interface GroupEntry {
  blk: number;
  end: number;
  /** Its first record's number in the record file, and its records. */
  first: number;
  n: number;
  at: number;
  packed: number;
  crc: number;
}

/** A record file's texts, as listed in its file (groups read when asked for). */
export class BlockTexts {
  constructor(
    private readonly file: string,
    private readonly seed: number,
    /** The file's dictionary (inflated), and where the groups start (after it). */
    readonly dictionary: Buffer,
    private readonly groupsAt: number,
    private readonly groups: readonly GroupEntry[],
  ) {}

  /** Record bytes covered from the file's start: blocks from here on have no group yet. */
  get covered(): number {
    return this.groups.length ? this.groups[this.groups.length - 1]!.end : 0;
  }

  /** Records covered from the record file's first: records from here on have no group yet. */
  get records(): number {
    const g = this.groups[this.groups.length - 1];
    return g ? g.first + g.n : 0;
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

  /** Group j's first record's number in the record file, and its records. */
  firstOf(j: number): number {
    return this.groups[j]!.first;
  }

  recordsOf(j: number): number {
    return this.groups[j]!.n;
  }

  /** The group holding record `record` (its number in the record file), or -1 when none does. */
  groupOfRecord(record: number): number {
    let lo = 0;
    let hi = this.groups.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const g = this.groups[mid]!;
      if (record < g.first) hi = mid - 1;
      else if (record >= g.first + g.n) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  /** Group j's records, read and checked; null when its bytes fail their check. */
  group(j: number): TextGroup | null {
    const g = this.groups[j]!;
    groupsRead++;
    // The header and the chunk table now (checked); the chunks when a search asks for them,
    // those of one ask in one open of the file (most searches need a few chunks of a group).
    try {
      // Most tables are a few hundred bytes: read with the header at once, unless longer.
      let head = readAt(this.file, [[g.at - ENTRY_HEAD, ENTRY_HEAD + Math.min(g.packed, 1024)]])[0]!;
      const tableBytes = 4 + 12 * head.readUInt32LE(ENTRY_HEAD);
      if (tableBytes > g.packed) return null;
      if (ENTRY_HEAD + tableBytes > head.length) head = readAt(this.file, [[g.at - ENTRY_HEAD, ENTRY_HEAD + tableBytes]])[0]!;
      const table = head.subarray(ENTRY_HEAD, ENTRY_HEAD + tableBytes);
      if (zlib.crc32(table, zlib.crc32(head.subarray(0, ENTRY_HEAD - 4), this.seed)) !== g.crc) return null;
      const file = this.file;
      return groupOfTable(table, g.n, g.packed, this.dictionary, (ranges) => readAt(file, ranges.map(([at, bytes]) => [g.at + at, bytes] as const)));
    } catch {
      return null;
    }
  }

  /** Where group j's blocks end. */
  endOf(j: number): number {
    return this.groups[j]!.end;
  }

  /** The file's length up to the end of group j (-1: its header and dictionary alone). */
  fileEndAfter(j: number): number {
    if (j < 0) return this.groupsAt;
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
 * length): null when the file is missing, of another record file (seed) or format, or its
 * dictionary fails its check.
 */
export function readBlockTexts(file: string, seed: number, recordBytes: number): BlockTexts | null {
  return readDerived(file, MAGIC, FORMAT, seed, null, (fd, size) => {
    const dictionary = readDictionary(fd, size, seed);
    if (!dictionary) return null;
    const groupsAt = HEAD + DICTIONARY_HEAD + dictionary.packed;
    const groups: GroupEntry[] = [];
    const e = Buffer.alloc(ENTRY_HEAD);
    let covered = 0;
    let records = 0;
    for (let at = groupsAt; at + ENTRY_HEAD <= size; ) {
      if (fs.readSync(fd, e, 0, ENTRY_HEAD, at) !== ENTRY_HEAD) break;
      const blk = e.readDoubleLE(0);
      const end = e.readDoubleLE(8);
      const first = e.readUInt32LE(16);
      const n = e.readUInt32LE(20);
      const packed = e.readUInt32LE(24);
      // Groups follow each other from the file's first block and record; one that does not ends the list.
      if (blk !== covered || first !== records || n === 0 || !(end > blk) || end > recordBytes || at + ENTRY_HEAD + packed > size) break;
      groups.push({ blk, end, first, n, at: at + ENTRY_HEAD, packed, crc: e.readUInt32LE(28) });
      covered = end;
      records += n;
      at += ENTRY_HEAD + packed;
    }
    return new BlockTexts(file, seed, dictionary.raw, groupsAt, groups);
  });
}

/** Whether a texts file of this format and record file has a dictionary that fails its check (readBlockTexts: null). */
export function textsDictionaryFails(file: string, seed: number): boolean {
  return readDerived(file, MAGIC, FORMAT, seed, false, (fd, size) => !readDictionary(fd, size, seed));
}

/** The dictionary after a texts file's header, checked and inflated, and its packed bytes; null when it is short or fails. */
function readDictionary(fd: number, size: number, seed: number): { raw: Buffer; packed: number } | null {
  const head = Buffer.alloc(DICTIONARY_HEAD);
  if (fs.readSync(fd, head, 0, DICTIONARY_HEAD, HEAD) !== DICTIONARY_HEAD) return null;
  const rawBytes = head.readUInt32LE(0);
  const packedBytes = head.readUInt32LE(4);
  if (rawBytes > WINDOW || HEAD + DICTIONARY_HEAD + packedBytes > size) return null;
  const packed = Buffer.alloc(packedBytes);
  if (fs.readSync(fd, packed, 0, packedBytes, HEAD + DICTIONARY_HEAD) !== packedBytes) return null;
  if (zlib.crc32(packed, zlib.crc32(head.subarray(0, 8), seed)) !== head.readUInt32LE(8)) return null;
  try {
    const raw = zlib.inflateRawSync(packed);
    return raw.length === rawBytes ? { raw, packed: packedBytes } : null;
  } catch {
    return null;
  }
}

/** A texts file's dictionary as written after its header. */
function dictionaryEntry(seed: number, dictionary: Buffer): Buffer {
  const packed = zlib.deflateRawSync(dictionary, { level: 9 });
  const head = Buffer.alloc(DICTIONARY_HEAD);
  head.writeUInt32LE(dictionary.length, 0);
  head.writeUInt32LE(packed.length, 4);
  head.writeUInt32LE(zlib.crc32(packed, zlib.crc32(head.subarray(0, 8), seed)), 8);
  return Buffer.concat([head, packed]);
}

/** The first bytes of the texts file of the record file whose seed is `seed`: its header and dictionary. */
function textsHeader(seed: number, dictionary: Buffer): Buffer {
  return Buffer.concat([derivedHeader(MAGIC, FORMAT, seed), dictionaryEntry(seed, dictionary)]);
}

/** One group's bytes in the file: its blocks [blk, end), its first record's number and records, packed bytes and CRC. */
export function textsEntry(seed: number, blk: number, end: number, first: number, n: number, packed: Buffer): Buffer {
  const head = Buffer.alloc(ENTRY_HEAD);
  head.writeDoubleLE(blk, 0);
  head.writeDoubleLE(end, 8);
  head.writeUInt32LE(first, 16);
  head.writeUInt32LE(n, 20);
  head.writeUInt32LE(packed.length, 24);
  // The header's CRC covers the chunk table; each chunk has its own there, checked when the chunk is read.
  head.writeUInt32LE(zlib.crc32(packed.subarray(0, chunkTableBytes(packed)), zlib.crc32(head.subarray(0, ENTRY_HEAD - 4), seed)), ENTRY_HEAD - 4);
  return Buffer.concat([head, packed]);
}

/**
 * Makes a texts file end with the last group within the first `size` record bytes (the record
 * file was cut there, or a group from there on failed): later groups are cut off, and a file
 * of another format or record file is removed. A missing file stays missing.
 */
export function cutBlockTexts(file: string, seed: number, size: number): void {
  cutDerived(file, readBlockTexts(file, seed, Infinity), size);
}

/**
 * Appends groups to a texts file that ends at `fileEnd` (HEAD or less: a new file, written with
 * `dictionary`, which the groups were packed with); the file's new end.
 */
export function appendBlockTexts(file: string, seed: number, fileEnd: number, dictionary: Buffer, entries: readonly Buffer[]): number {
  return appendDerived(file, textsHeader(seed, dictionary), fileEnd, entries);
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
