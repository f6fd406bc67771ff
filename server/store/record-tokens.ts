/**
 * The words of each record's message and URL, and for each word the records holding it: what
 * turns a text search into look-ups instead of a read of every record's text. A word is a run
 * of ASCII letters, digits and `_`, lower-cased (ASCII letters fold as every search folds them).
 * A plain search made only of such characters matches exactly the records holding a word that
 * contains it; a search with other characters, or a pattern, is narrowed to the records holding
 * the words its parts need and tests those alone (server/explorer/token-hits.ts).
 *
 * Records are numbered by their place in their record file, as the record texts number them:
 * the partition's row n + 1 is its record file's n-th record (rows are numbered as their records
 * are appended; the texts' builder checks it).
 *
 * Derived data, one file per record file (`<label>.tokens`), built by the background builder
 * from the record texts (block-texts.ts), in segments of whole text groups of at least
 * SEGMENT_RECORDS records (the last may be shorter: it is built again with the next blocks).
 * Cut back whenever the record file is, like the texts.
 *
 * File: the derived header (`LXTK`), then per segment: f64 the offset of its first block, f64
 * the end of its last, u32 its first record, u32 records, u32 packed bytes of each class's word
 * list (CLASSES), u32 their CRC-32s, u32 bytes of its postings, u32 CRC-32 (seeded with the
 * record file's seed) of the 52 bytes before it; then each class's packed list, deflate-raw of:
 * u32 words, u32 bytes of the words' text, u32 where the class's first postings start in the
 * segment's postings; the text (`\n`, then each word followed by `\n`, in the order the records
 * first hold them); then per word, as LEB128: its length, then 2 × (its first record − the
 * previous word's first record) + 1 when it has postings (else + 0: a word of that record alone),
 * and for a word with postings their bytes and their CRC-32 (a word's postings follow the
 * previous word's). Then the postings, raw (read a word at a time): 0 and the word's records as
 * LEB128 deltas, or 1 and a bitmap of the segment's records, whichever is shorter. A search reads
 * the lists of the classes that can hold it, finds its places in their text, walks the words up
 * to the last place (lengths tell where each word is: no pass over the text's bytes), and reads
 * the postings of the words it matched.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import type { TextGroup } from './block-texts.ts';
import { appendDerived, cutDerived, DERIVED_HEAD, derivedHeader, readDerived } from './derived-header.ts';
import { VarintReader, VarintWriter } from './varint.ts';

const MAGIC = 0x4b54584c; // 'LXTK' little-endian
// 3: per word its length and first record as varints (2 had 12 bytes a word, and a search found
// each word's place by a pass over the text: most of a digits search's time at 10M).
const FORMAT = 3;
const HEAD = DERIVED_HEAD;
/** A segment's header: first block, end, first record, records, each class's packed bytes and CRC, postings bytes, the header's CRC. */
const SECTIONS_AT = 24;
const POST_AT = 48;
const ENTRY_HEAD = 56;
/** A class's inflated list starts with its words, its text's bytes and where its postings start. */
const LIST_HEAD = 12;
/** A segment closes once it holds this many records (about a busy hour of edge requests at 10M). */
export const SEGMENT_RECORDS = 65_536;
/** deflate level of the dictionaries: written once, read by every search. */
const LEVEL = 1;
/** Past this many words of one segment matched, its postings are read whole rather than word by word. */
const WHOLE_POSTINGS_WORDS = 64;

/**
 * Word classes, so that a search reads only the word lists that can hold it: a word of digits
 * alone, a hexadecimal word with a letter (request ids), and the others. A word contains a
 * search only if it has every character the search has: a search with a letter past `f` is
 * looked for among the others alone.
 */
const CLASSES = 3;

/** Byte → 1 for word characters (ASCII letters, digits, `_`). */
const WORD = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  const c = String.fromCharCode(b);
  if (/[A-Za-z0-9_]/.test(c)) WORD[b] = 1;
}

/** Whether a text is made only of word characters (and is not empty). */
export const isWord = (text: string): boolean => /^[A-Za-z0-9_]+$/.test(text);

/** The class of a lower-case word: 0 digits alone, 1 hexadecimal with a letter, 2 any other. */
export function wordClass(word: string): number {
  let hexLetter = false;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) continue;
    if (c >= 0x61 && c <= 0x66) hexLetter = true;
    else return 2;
  }
  return hexLetter ? 1 : 0;
}

/** Calls `visit` with each word of text[from, to), lower-cased. */
export function wordsOf(text: Buffer, from: number, to: number, visit: (word: string) => void): void {
  for (let i = from; i < to; ) {
    if (!WORD[text[i]!]) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < to && WORD[text[j]!]) j++;
    visit(text.toString('latin1', i, j).toLowerCase());
    i = j;
  }
}

/** How a search's part must sit in a word: inside it, at its start, at its end, or be all of it. */
export type WordMode = 'contains' | 'prefix' | 'suffix' | 'exact';

export interface WordPart {
  /** Lower-case word characters. */
  word: string;
  mode: WordMode;
}

/** Words per record and per word its records, as the builder collects them for one segment. */
class SegmentWords {
  readonly ids = new Map<string, number>();
  readonly lists: number[][] = [];
  n = 0;

  /** Adds record `r`'s words of text[from, to). */
  add(r: number, text: Buffer, from: number, to: number): void {
    wordsOf(text, from, to, (w) => {
      const id = this.ids.get(w);
      if (id === undefined) {
        this.ids.set(w, this.lists.length);
        this.lists.push([r]);
      } else {
        const list = this.lists[id]!;
        if (list[list.length - 1] !== r) list.push(r);
      }
    });
  }
}

/** The LEB128 deltas of a sorted list (the first from 0). */
function deltas(list: readonly number[]): Buffer {
  const out = new VarintWriter(1 + list.length * 2).bytes([0]);
  let last = 0;
  for (const v of list) {
    out.put(v - last);
    last = v;
  }
  const bytes = out.done();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function bitmap(list: readonly number[], n: number): Buffer {
  const out = Buffer.alloc(1 + Math.ceil(n / 8));
  out[0] = 1;
  for (const v of list) out[1 + (v >> 3)]! |= 1 << (v & 7);
  return out;
}

/** One segment's words, added a group of record texts at a time (the builder pauses between groups). */
export class TokenSegmentBuilder {
  private readonly words = new SegmentWords();

  /** Records added. */
  get n(): number {
    return this.words.n;
  }

  /** Adds a group's records, numbered on from those added before. */
  addGroup(g: TextGroup): void {
    g.prefetchAll();
    for (let k = 0; k < g.chunks; k++) this.addChunk(g, k);
  }

  /** Adds the records of a group's chunk k, numbered on from those added before (a group's chunks in order). */
  addChunk(g: TextGroup, k: number): void {
    const words = this.words;
    const c = g.chunk(k);
    for (let i = 0; i < c.n; i++) {
      const at = words.n++;
      words.add(at, c.text, i ? c.end[i - 1]! : 0, c.msgEnd[i]!);
      // A URL the message holds is searched within the message; one after it on its own.
      if (c.urlStart[i]! >= c.msgEnd[i]! && c.urlEnd[i]! > c.urlStart[i]!) words.add(at, c.text, c.urlStart[i]!, c.urlEnd[i]!);
    }
  }

  /** The segment's bytes in the file: its blocks [blk, end), its first record's number in the file. */
  entry(seed: number, blk: number, end: number, first: number): Buffer {
    const e = new SegmentEncoder(this.words);
    e.step(Infinity);
    return e.bytes(seed, blk, end, first, e.lists.map(deflateList));
  }

  /**
   * entry() in steps of about `sliceMs`, calling `between` after each (null when it says to give
   * up), each class's list deflated by `deflate` (off the thread, for the background builder): a
   * segment of 20,908 records held the thread 95 ms at once.
   */
  async entryInSteps(seed: number, blk: number, end: number, first: number, sliceMs: number, between: () => Promise<boolean>, deflate: (list: Buffer) => Promise<Buffer>): Promise<Buffer | null> {
    const e = new SegmentEncoder(this.words);
    while (!e.step(performance.now() + sliceMs)) if (!(await between())) return null;
    const lists: Buffer[] = [];
    for (const list of e.lists) lists.push(await deflate(list));
    return e.bytes(seed, blk, end, first, lists);
  }
}

/** A class's list as stored (deflated). */
const deflateList = (list: Buffer): Buffer => zlib.deflateRawSync(list, { level: LEVEL });

/** deflateList on libuv's threads. */
export const deflateListOffThread = (list: Buffer): Promise<Buffer> =>
  new Promise((resolve, reject) => zlib.deflateRaw(list, { level: LEVEL }, (err, out) => (err ? reject(err) : resolve(out))));

/** One segment's words from groups of record texts (numbered from `first` in the file, from 0 here). */
export function tokenSegmentEntry(seed: number, blk: number, end: number, first: number, groups: readonly TextGroup[]): Buffer {
  const b = new TokenSegmentBuilder();
  for (const g of groups) b.addGroup(g);
  return b.entry(seed, blk, end, first);
}

/** Words looked at between two looks at the clock. */
const WORDS_PER_CHECK = 256;

/**
 * Encodes a segment's words, class by class, a word at a time (it may stop between any two
 * words): each class's list before deflating, and every postings list, in the file's layout.
 */
class SegmentEncoder {
  /** Each class's list before deflating (complete once step says so). */
  readonly lists: Buffer[] = [];
  private readonly byClass: string[][] = Array.from({ length: CLASSES }, () => []);
  private readonly unsorted: IterableIterator<string>;
  private classed = false;
  private c = 0;
  private i = 0;
  private previous = 0;
  private index = new VarintWriter(16);
  private text: string[] = ['\n'];
  private readonly postings: Buffer[] = [];
  private postBytes = 0;
  private classPostBase = 0;

  constructor(private readonly words: SegmentWords) {
    this.unsorted = words.ids.keys();
  }

  /** Encodes until `until` (performance.now()) passes; true when every class's list is done. */
  step(until: number): boolean {
    const { words } = this;
    for (let k = 1; ; k++) {
      if (k % WORDS_PER_CHECK === 0 && performance.now() >= until) return false;
      if (!this.classed) {
        const next = this.unsorted.next();
        if (next.done) {
          this.classed = true;
          this.startClass();
        } else this.byClass[wordClass(next.value)]!.push(next.value);
        continue;
      }
      if (this.c >= CLASSES) return true;
      const ws = this.byClass[this.c]!;
      if (this.i >= ws.length) {
        this.endClass();
        this.c++;
        if (this.c < CLASSES) this.startClass();
        continue;
      }
      const w = ws[this.i++]!;
      this.text.push(`${w}\n`);
      const list = words.lists[words.ids.get(w)!]!;
      // Words come in the order records first hold them (SegmentWords adds records in order).
      if (list[0]! < this.previous) throw new Error('record words out of order');
      this.index.put(w.length).put(2 * (list[0]! - this.previous) + (list.length > 1 ? 1 : 0));
      this.previous = list[0]!;
      if (list.length === 1) continue;
      const d = deltas(list);
      const bytes = d.length <= 1 + Math.ceil(words.n / 8) ? d : bitmap(list, words.n);
      this.index.put(bytes.length).put(zlib.crc32(bytes));
      this.postings.push(bytes);
      this.postBytes += bytes.length;
    }
  }

  private startClass(): void {
    this.i = 0;
    this.previous = 0;
    this.index = new VarintWriter(this.byClass[this.c]!.length * 3 + 16);
    this.text = ['\n'];
    this.classPostBase = this.postBytes;
  }

  private endClass(): void {
    const ws = this.byClass[this.c]!;
    const head = Buffer.alloc(LIST_HEAD);
    const text = Buffer.from(this.text.join(''), 'latin1');
    head.writeUInt32LE(ws.length, 0);
    head.writeUInt32LE(text.length, 4);
    head.writeUInt32LE(this.classPostBase, 8);
    this.lists.push(Buffer.concat([head, text, this.index.done()]));
  }

  /** The segment's bytes in the file, given each class's list deflated. */
  bytes(seed: number, blk: number, end: number, first: number, lists: readonly Buffer[]): Buffer {
    const head = Buffer.alloc(ENTRY_HEAD);
    head.writeDoubleLE(blk, 0);
    head.writeDoubleLE(end, 8);
    head.writeUInt32LE(first, 16);
    head.writeUInt32LE(this.words.n, 20);
    lists.forEach((sec, c) => {
      head.writeUInt32LE(sec.length, SECTIONS_AT + 4 * c);
      head.writeUInt32LE(zlib.crc32(sec), SECTIONS_AT + 4 * (CLASSES + c));
    });
    head.writeUInt32LE(this.postBytes, POST_AT);
    head.writeUInt32LE(zlib.crc32(head.subarray(0, ENTRY_HEAD - 4), seed), ENTRY_HEAD - 4);
    return Buffer.concat([head, ...lists, ...this.postings]);
  }
}

/** One class's words: their text, and per word its length, first record and postings (see the file's layout). */
interface WordList {
  text: Buffer;
  count: number;
  index: Buffer;
  /** Where the class's first postings start in the segment's postings. */
  postBase: number;
}

/** Postings read from the file: [offset in the postings, bytes] → their bytes, or null when they fail their check. */
type PostingsReader = (at: number, bytes: number, crc: number) => Buffer | null;

/** A word a search matched: its first record, and its postings' place, bytes (-1: that record alone) and CRC-32. */
type Matched = [first: number, at: number, bytes: number, crc: number];

const NL = 0x0a;

/** One segment of a record file's words: each class's list read and checked when a search first needs it, postings as words match. */
export class TokenSegment {
  private readonly lists: Array<WordList | null | undefined> = [];

  constructor(
    /** Its records. */
    readonly n: number,
    private readonly list: (c: number) => WordList | null,
    private readonly postings: PostingsReader,
    private readonly whole: () => Buffer | null,
  ) {}

  private listOf(c: number): WordList | null {
    if (this.lists[c] === undefined) this.lists[c] = this.list(c);
    return this.lists[c]!;
  }

  /**
   * Sets out[r] to 1 for each record r holding a word that `part` matches; false when a list or
   * postings it needed fail their check (`out` is then not to be used).
   */
  mark(part: WordPart, out: Uint8Array): boolean {
    const matched: Matched[] = [];
    const needle = Buffer.from(part.mode === 'exact' ? `\n${part.word}\n` : part.mode === 'prefix' ? `\n${part.word}` : part.mode === 'suffix' ? `${part.word}\n` : part.word, 'latin1');
    // A `\n` the needle starts with is the one before the word.
    const lead = part.mode === 'exact' || part.mode === 'prefix' ? 1 : 0;
    for (let c = wordClass(part.word); c < CLASSES; c++) {
      const list = this.listOf(c);
      if (!list) return false;
      const { text } = list;
      // A place in each word matched, ascending.
      const places: number[] = [];
      for (let at = text.indexOf(needle); at >= 0; ) {
        places.push(at + lead);
        if (part.mode === 'exact') break;
        // On from the `\n` that ends this word: a word is counted once.
        at = text.indexOf(needle, text.indexOf(NL, at + lead));
      }
      if (places.length && !wordsAt(list, places, matched)) return false;
    }
    let whole: Buffer | null | undefined;
    let listed = 0;
    for (const m of matched) if (m[2] >= 0) listed++;
    if (listed > WHOLE_POSTINGS_WORDS) {
      whole = this.whole();
      if (!whole) return false;
    }
    for (const [first, at, bytes, crc] of matched) {
      if (bytes < 0) {
        if (first < this.n) out[first] = 1;
        continue;
      }
      const p = whole ? whole.subarray(at, at + bytes) : this.postings(at, bytes, crc);
      if (!p || (whole && zlib.crc32(p) !== crc)) return false;
      markPostings(p, this.n, out);
    }
    return true;
  }

  /** Whether every list and every word's postings pass their check (`npm run check`). */
  postingsWhole(): boolean {
    const whole = this.whole();
    if (!whole) return false;
    for (let c = 0; c < CLASSES; c++) {
      const list = this.listOf(c);
      if (!list) return false;
      // Every word: a place at each word's start.
      const places: number[] = [];
      for (let i = 0; i < list.text.length - 1; i++) if (list.text[i] === NL) places.push(i + 1);
      const words: Matched[] = [];
      if (places.length !== list.count || (places.length && !wordsAt(list, places, words))) return false;
      for (const [, at, bytes, crc] of words) if (bytes >= 0 && (at + bytes > whole.length || zlib.crc32(whole.subarray(at, at + bytes)) !== crc)) return false;
    }
    return true;
  }
}

/**
 * Adds to `into` the words of `list` holding `places` (ascending, each within a word): their
 * lengths are walked from the first word up to the last place, never the text's bytes. False
 * when the index does not describe the text (then nothing is to be used).
 */
function wordsAt(list: WordList, places: readonly number[], into: Matched[]): boolean {
  const idx = new VarintReader(list.index);
  let pos = 1;
  let first = 0;
  let post = list.postBase;
  let k = 0;
  try {
    for (let w = 0; w < list.count && k < places.length; w++) {
      // A word's numbers: its length, its first record's step and flag, and for a word with postings their bytes and CRC.
      const after = pos + idx.take();
      const code = idx.take();
      first += Math.floor(code / 2);
      const bytes = code % 2 === 1 ? idx.take() : -1;
      const crc = bytes >= 0 ? idx.take() : 0;
      if (places[k]! < pos) return false;
      if (places[k]! < after) {
        into.push([first, post, bytes, crc]);
        while (k < places.length && places[k]! <= after) k++;
      }
      if (bytes >= 0) post += bytes;
      pos = after + 1;
    }
  } catch {
    // The index ends within a number.
    return false;
  }
  return k === places.length && pos <= list.text.length;
}

function markPostings(p: Buffer, n: number, out: Uint8Array): void {
  if (p[0] === 1) {
    for (let r = 0; r < n; r++) if (p[1 + (r >> 3)]! & (1 << (r & 7))) out[r] = 1;
    return;
  }
  let v = 0;
  for (let i = 1; i < p.length; ) {
    let d = 0;
    let shift = 0;
    let b: number;
    do {
      b = p[i++]!;
      d += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80 && i < p.length);
    v += d;
    if (v < n) out[v] = 1;
  }
}

/** A class's words, from its inflated section; throws when they are not whole. */
function parseWordList(raw: Buffer): WordList {
  if (raw.length < LIST_HEAD) throw new Error('not a word list');
  const count = raw.readUInt32LE(0);
  const textBytes = raw.readUInt32LE(4);
  const postBase = raw.readUInt32LE(8);
  if (LIST_HEAD + textBytes > raw.length || textBytes < 1) throw new Error('not a word list');
  const text = raw.subarray(LIST_HEAD, LIST_HEAD + textBytes);
  if (text[0] !== NL || text[textBytes - 1] !== NL) throw new Error('a word list of another count');
  return { text, count, index: raw.subarray(LIST_HEAD + textBytes), postBase };
}

/** Segments read by this process and for it on the search worker (tests count the reads of a search). */
let segmentsRead = 0;
export const tokenSegmentsRead = (): number => segmentsRead;
/** Segments the search worker read for this process (search-worker.ts). */
export const countSegmentsRead = (n: number): void => void (segmentsRead += n);

export interface SegmentEntry {
  blk: number;
  end: number;
  first: number;
  n: number;
  /** Where its first class's packed list starts in the file. */
  at: number;
  /** Each class's packed bytes and their CRC-32. */
  lists: number[];
  crcs: number[];
  /** Where its postings start, and their bytes. */
  postAt: number;
  post: number;
}

/** A record file's words, as listed in its file (segments read when asked for). */
export class RecordTokens {
  constructor(
    private readonly file: string,
    private readonly seed: number,
    private readonly segments: readonly SegmentEntry[],
  ) {}

  /** What another thread needs to read the same segments (search-worker.ts): plain data. */
  listing(): TokensListing {
    return { file: this.file, seed: this.seed, segments: this.segments };
  }

  /** Records covered from the file's first: records from here on have no segment yet. */
  get records(): number {
    const s = this.segments[this.segments.length - 1];
    return s ? s.first + s.n : 0;
  }

  /** Record bytes covered from the file's start. */
  get covered(): number {
    return this.segments.length ? this.segments[this.segments.length - 1]!.end : 0;
  }

  get size(): number {
    return this.segments.length;
  }

  /** Segment j's first block, first record and records. */
  startOf(j: number): number {
    return this.segments[j]!.blk;
  }

  firstOf(j: number): number {
    return this.segments[j]!.first;
  }

  recordsOf(j: number): number {
    return this.segments[j]!.n;
  }

  endOf(j: number): number {
    return this.segments[j]!.end;
  }

  /** The file's length up to the end of segment j (-1: its header alone). */
  fileEndAfter(j: number): number {
    if (j < 0) return HEAD;
    const s = this.segments[j]!;
    return s.postAt + s.post;
  }

  /** Segment j (its lists and postings read when a search needs them, each checked then). */
  segment(j: number): TokenSegment {
    const s = this.segments[j]!;
    segmentsRead++;
    const listAt = s.lists.map((_, c) => s.at + s.lists.slice(0, c).reduce((a, b) => a + b, 0));
    return new TokenSegment(
      s.n,
      (c) => {
        try {
          const packed = this.read(listAt[c]!, s.lists[c]!);
          return packed && zlib.crc32(packed) === s.crcs[c] ? parseWordList(zlib.inflateRawSync(packed)) : null;
        } catch {
          return null;
        }
      },
      (at, bytes, crc) => {
        const p = at + bytes <= s.post ? this.read(s.postAt + at, bytes) : null;
        return p && zlib.crc32(p) === crc ? p : null;
      },
      () => this.read(s.postAt, s.post),
    );
  }

  private read(at: number, bytes: number): Buffer | null {
    const buf = Buffer.alloc(bytes);
    const fd = fs.openSync(this.file, 'r');
    try {
      for (let got = 0; got < bytes; ) {
        const k = fs.readSync(fd, buf, got, bytes - got, at + got);
        if (k === 0) return null;
        got += k;
      }
    } finally {
      fs.closeSync(fd);
    }
    return buf;
  }
}

/** A record file's words as listed by RecordTokens, sent to another thread. */
export interface TokensListing {
  file: string;
  seed: number;
  segments: readonly SegmentEntry[];
}

export const tokensOfListing = (l: TokensListing): RecordTokens => new RecordTokens(l.file, l.seed, l.segments);

/** Per record, by its number in the record file: not a match, a match of every part (or a candidate), or not known from the words. */
export const NO_MATCH = 0;
export const MATCH = 1;
export const UNKNOWN = 2;

/** The records marked by markWords, and the first block of the first segment that failed its check (null: none). */
export interface WordMarks {
  /** Records the words cover: records past this many are not known from them. */
  records: number;
  of: Uint8Array;
  damagedAt: number | null;
}

/**
 * Marks each record of `tokens` holding a word matching every part (the lists of the classes
 * the parts can be in, and the postings of the words they match, read now). A segment that
 * fails its check leaves its records UNKNOWN.
 */
export function markWords(tokens: RecordTokens, parts: readonly WordPart[]): WordMarks {
  const of = new Uint8Array(tokens.records);
  let damagedAt: number | null = null;
  for (let j = 0; j < tokens.size; j++) {
    const first = tokens.firstOf(j);
    const n = tokens.recordsOf(j);
    const seg = tokens.segment(j);
    let acc: Uint8Array | null = null;
    for (const part of parts) {
      const one = new Uint8Array(n);
      if (!seg.mark(part, one)) {
        acc = null;
        break;
      }
      if (acc) for (let r = 0; r < n; r++) acc[r]! &= one[r]!;
      else acc = one;
    }
    if (acc) {
      of.set(acc, first);
      continue;
    }
    of.fill(UNKNOWN, first, first + n);
    damagedAt ??= tokens.startOf(j);
  }
  return { records: tokens.records, of, damagedAt };
}

/**
 * The words of a record file as far as they are whole and within `recordBytes` (the committed
 * length): null when the file is missing or of another record file (seed) or format.
 */
export function readRecordTokens(file: string, seed: number, recordBytes: number): RecordTokens | null {
  return readDerived(file, MAGIC, FORMAT, seed, null, (fd, size) => {
    const segments: SegmentEntry[] = [];
    const e = Buffer.alloc(ENTRY_HEAD);
    let covered = 0;
    let records = 0;
    for (let at = HEAD; at + ENTRY_HEAD <= size; ) {
      if (fs.readSync(fd, e, 0, ENTRY_HEAD, at) !== ENTRY_HEAD) break;
      if (zlib.crc32(e.subarray(0, ENTRY_HEAD - 4), seed) !== e.readUInt32LE(ENTRY_HEAD - 4)) break;
      const lists = Array.from({ length: CLASSES }, (_, c) => e.readUInt32LE(SECTIONS_AT + 4 * c));
      const crcs = Array.from({ length: CLASSES }, (_, c) => e.readUInt32LE(SECTIONS_AT + 4 * (CLASSES + c)));
      const postAt = at + ENTRY_HEAD + lists.reduce((a, b) => a + b, 0);
      const s: SegmentEntry = { blk: e.readDoubleLE(0), end: e.readDoubleLE(8), first: e.readUInt32LE(16), n: e.readUInt32LE(20), at: at + ENTRY_HEAD, lists, crcs, postAt, post: e.readUInt32LE(POST_AT) };
      // Segments follow each other from the file's first block and record; one that does not ends the list.
      if (s.blk !== covered || s.first !== records || s.n === 0 || !(s.end > s.blk) || s.end > recordBytes || postAt + s.post > size) break;
      segments.push(s);
      covered = s.end;
      records += s.n;
      at = postAt + s.post;
    }
    return new RecordTokens(file, seed, segments);
  });
}

/**
 * Makes a tokens file end with the last segment within the first `size` record bytes (the
 * record file was cut there, or a segment from there on failed): later segments are cut off,
 * and a file of another format or record file is removed. A missing file stays missing.
 */
export function cutRecordTokens(file: string, seed: number, size: number): void {
  cutDerived(file, readRecordTokens(file, seed, Infinity), size);
}

/** Appends segments to a tokens file cut at `fileEnd` (HEAD or less: a new file); the file's new end. */
export function appendRecordTokens(file: string, seed: number, fileEnd: number, entries: readonly Buffer[]): number {
  return appendDerived(file, derivedHeader(MAGIC, FORMAT, seed), fileEnd, entries);
}
