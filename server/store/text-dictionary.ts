/**
 * A dictionary of texts with dense ids, kept in an append-only file (one JSON string per line,
 * id = line number). Two of them:
 * - **URLs** (`urls.log`): every distinct request URL of the edge logs. Real URLs carry query
 *   strings, so there are many (a fifth of the records); kept in the catalog they would make it
 *   hundreds of MB at 10M records, loaded at every start and written at every commit. The
 *   committed length is in the catalog like a record file's; an import rolled back takes its
 *   URLs back.
 * - **Paths** (`paths.log`, `'derived'`): every distinct request path of every source, so that
 *   the columns files of all partitions share path ids and the explorer counts paths in one
 *   array. Derived data like the columns files: no catalog entry; its first line is a random
 *   token (id 1) that names this file, so a columns file built against another one is rebuilt;
 *   ids are never taken back; a crash may leave a cut last line, which is dropped when loaded.
 *   Lines are made durable (`syncNow`) before a columns file that uses them is written.
 *
 * In memory: per id its offset and a 32-bit hash (12 bytes), an open-addressing table from hash
 * to id, and bounded caches of recent lookups both ways; a lookup that misses them reads the
 * candidate's line back. Loaded in two steps, neither at open (`loadInSteps` reads the offsets
 * a chunk per turn once the store is open; a use before that ends does the rest): reading a text by id
 * needs only the line offsets, found with each line checked on its bytes (about a tenth of the
 * time of decoding every line), or taken from the offsets a previous run saved once the file's
 * bytes are found unchanged (saved-lines.ts); adding texts needs the hashes, which decode every
 * line, so they are computed on the first `idOf` (an import), not for the explorer's or the API's
 * first answer.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { span } from '../activity.ts';
import { StoreFileDamaged } from './damage.ts';
import { readSavedLines, readSavedLinesAsync, type SavedLines, writeSavedLines } from './saved-lines.ts';

const NEWLINE = 0x0a;
/** Recent text -> id kept as strings (repeated texts of a batch hit here, not the file). */
const RECENT = 50_000;
/** Appended lines kept in memory until this many bytes, then written. */
const WRITE_BUFFER = 1 << 20;
/** Texts read back by id kept (a page of records asks for the same paths again and again). */
const READ_CACHE = 4096;
/** The first line of a derived dictionary: this prefix and 16 hex digits. */
const TOKEN_PREFIX = '\u0000dictionary ';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Bytes of the file read in one step while loading its lines (a few ms of work). */
const READ_CHUNK = 256 * 1024;
/** Bytes read in one step while checking a file's bytes against its saved line offsets (CRC only: about a ms of work). */
const CHECK_CHUNK = 1024 * 1024;
/** Line offsets found line by line are saved (saved-lines.ts) once they cover this many bytes. */
export const SAVE_LINES_AFTER = 4 * 1024 * 1024;
/** Bytes `tailCrc` reads: what names the part of a dictionary a derived file was made from. */
export const TAIL_BYTES = 64 * 1024;

/** FNV-1a over UTF-16 code units: cheap and good enough to spread a hash table. */
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

/** getMany reads nearby lines together: at most this many bytes between two of them, and this many in one read. */
const RUN_GAP = 64 * 1024;
const RUN_BYTES = 4 * 1024 * 1024;
/** Texts hashed per slice (read back from the file a slice at a time). */
const HASH_SLICE = 8192;

/** A line's text, or null when the line is not one JSON string. */
function parseText(line: string): string | null {
  try {
    const v = JSON.parse(line) as unknown;
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

const isToken = (text: string) => text.length === TOKEN_PREFIX.length + 16 && text.startsWith(TOKEN_PREFIX);

/**
 * One line that JSON.parse reads as a string (JSON whitespace around it allowed), tested on its
 * bytes read as latin1: a byte of 0x80 or more never decodes to a quote, a backslash or a control
 * character, so this accepts exactly the lines `parseText` accepts. Sticky: it tests one line
 * where `lastIndex` points and ends past its newline. Runs of plain characters between escapes
 * (each escape starts with the one character a run cannot hold): one way to match a line, so
 * linear even on a line that fails.
 */
const JSON_STRING_LINE = /[ \t\r]*"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"[ \t\r]*\n/y;

/** Where reading a file's line offsets stands (TextDictionary.readStep). */
interface LineReader {
  fd: number;
  /** The bytes to read: the committed part, or a derived file's size at open. */
  bytes: number;
  /** Bytes read so far, and the part of a line carried to the next chunk. */
  pos: number;
  carry: Buffer;
  /** Lines found so far, and where the last one ends. */
  count: number;
  end: number;
  done: boolean;
  /** Saved line offsets whose bytes are being checked (their CRC computed) before they are taken. */
  saved: SavedLines | null;
  /** CRC-32 of the bytes read so far: while checking, up to `pos`; then up to `end`. */
  crc: number;
  /** Bytes of lines found line by line (not taken from saved offsets). */
  scanned: number;
}

export class TextDictionary {
  /** The line offsets are read (ids and texts can be read; `count` is right). */
  private loaded = false;
  /** The hashes and the hash table are built too (texts can be added). */
  private indexed = false;
  /** The line offsets being read a step at a time (loadInSteps), taken over by `load` if asked first. */
  private reader: LineReader | null = null;
  private fd: number | null = null;
  /**
   * offsets[id] = byte offset of text id's line (ids from 1); offsets[count + 1] = end. Four bytes
   * each while the file's end fits (urls.log is 164 MB at 10M + 10M records), eight past that.
   */
  private offsets: LineStarts = new Uint32Array(1024);
  private hashes = new Int32Array(1024);
  /** Open addressing: slot -> id (0 = empty). */
  private table = new Int32Array(2048);
  private recent = new Map<string, number>();
  private pending: Buffer[] = [];
  /** The texts of the pending lines, in id order (the first is id `written` ids + 1). */
  private pendingTexts: string[] = [];
  private pendingBytes = 0;
  /** Bytes written to the file (pending bytes follow them). */
  private written = 0;
  /** Bytes known durable (derived: lines a columns file may use). */
  private synced = 0;
  private readCache = new Map<number, string>();
  private token: string | null = null;
  count = 0;
  private committed: { bytes: number; count: number };
  private readonly derived: boolean;

  constructor(
    readonly file: string,
    /** Committed length and count, from the catalog; or 'derived': whatever whole lines the file holds. */
    committed: { bytes: number; count: number } | 'derived',
    /** The largest offset kept in four bytes (a test sets it low to see the change to eight). */
    private readonly narrowUpTo = NARROW_UP_TO,
  ) {
    this.derived = committed === 'derived';
    this.committed = committed === 'derived' ? { bytes: 0, count: 0 } : committed;
  }

  /** Bytes of all lines, written or pending. */
  get bytes(): number {
    return this.written + this.pendingBytes;
  }

  /** A committed file that is not what the catalog says (never for a derived one: that is rebuilt). */
  private damaged(problem: string): StoreFileDamaged {
    return new StoreFileDamaged(path.basename(this.file), problem);
  }

  private open(): number {
    if (this.fd === null) {
      const exists = fs.existsSync(this.file);
      // A committed dictionary that is gone is damage: an empty one in its place would hide it.
      if (!exists && !this.derived && this.committed.bytes > 0) throw this.damaged('the file is missing');
      this.fd = fs.openSync(this.file, exists ? 'r+' : 'w+', 0o600);
      if (this.derived) {
        this.committed = { bytes: fs.fstatSync(this.fd).size, count: -1 };
        return this.fd;
      }
      const actual = fs.fstatSync(this.fd).size;
      if (actual < this.committed.bytes) {
        fs.closeSync(this.fd);
        this.fd = null;
        throw this.damaged(`it holds ${actual} bytes but the catalog counts ${this.committed.bytes}`);
      }
      // Lines past the committed end come from an import that never committed.
      if (actual > this.committed.bytes) fs.ftruncateSync(this.fd, this.committed.bytes);
    }
    return this.fd;
  }

  /** Reads the committed lines' offsets, each line checked (first use only). */
  private load(): void {
    if (this.loaded) return;
    const done = span(`dictionary: read the lines of ${path.basename(this.file)}`);
    try {
      const r = (this.reader ??= this.startReading());
      while (!this.readStep(r));
      this.finishReading(r);
    } finally {
      done();
    }
  }

  /**
   * Loads the line offsets (as the first read would) a chunk at a time, with a turn for others
   * between chunks: started when the store opens, so the first request that reads a text does
   * not wait for the whole file (paths.log at 10M records: tens of MB). `turn` is the wait
   * between chunks (a pass of the event loop unless given). Never throws: a damaged file is named
   * by the first use instead.
   */
  async loadInSteps(turn: () => Promise<void> = () => new Promise<void>((resolve) => setImmediate(resolve)), crcOffThread?: CrcOffThread): Promise<void> {
    try {
      while (!this.loaded && !this.closed) {
        // Another loadInSteps asked the worker for the saved offsets' CRC: not read here meanwhile.
        if (this.checking) {
          await this.checking;
          continue;
        }
        if (!this.reader) {
          // The saved offsets read off the thread first: a start does not wait for them.
          const saved = await readSavedLinesAsync(this.file);
          // Checked (their own CRC) and taken in a turn of their own.
          await turn();
          if (this.loaded || this.checking || this.closed) continue;
          this.reader ??= this.startReading(saved);
        }
        const r = this.reader;
        if (crcOffThread && r.saved && r.pos === 0) {
          await this.checkOffThread(r, r.saved, crcOffThread);
          crcOffThread = undefined;
          continue;
        }
        const done = span(`background: read the lines of ${path.basename(this.file)}`);
        try {
          if (this.readStep(r)) return this.finishReading(r);
        } finally {
          done();
        }
        await turn();
      }
    } catch {
      this.reader = null;
    }
  }

  /** The saved offsets' CRC being computed on another thread (loadInSteps), if it is. */
  private checking: Promise<void> | null = null;

  /**
   * Saved offsets' CRC computed on another thread (the search worker: 164 MB of urls.log at 10M
   * records is a third of a second), then taken as checkStep would take it. A read that needs
   * the lines meanwhile and does not wait (whenChecked) checks them itself; the answer is then dropped.
   */
  private async checkOffThread(r: LineReader, saved: SavedLines, crcOf: CrcOffThread): Promise<void> {
    const asked = crcOf(this.file, saved.bytes);
    this.checking = asked.then(() => undefined);
    try {
      const crc = await asked;
      if (crc === null || this.reader !== r || r.saved !== saved || r.pos !== 0) return;
      r.crc = crc;
      r.pos = saved.bytes;
      if (this.readStep(r)) this.finishReading(r);
    } finally {
      this.checking = null;
    }
  }

  /** Resolves once no CRC of saved offsets is being computed on another thread (a search waits for it rather than computing it again). */
  whenChecked(): Promise<void> {
    return this.checking ?? Promise.resolve();
  }

  /** @param read the saved offsets, already read (else read now) */
  private startReading(read?: SavedLines | null): LineReader {
    const fd = this.open();
    if (!this.derived) this.reserve(this.committed.count + 1);
    const bytes = this.derived ? fs.fstatSync(fd).size : this.committed.bytes;
    // Every offset read below ends by the file's end.
    this.fit(bytes);
    const saved = read === undefined ? readSavedLines(this.file) : read;
    return { fd, bytes, pos: 0, carry: Buffer.alloc(0), count: 0, end: 0, done: false, saved: saved && saved.bytes <= bytes ? saved : null, crc: 0, scanned: 0 };
  }

  /**
   * The lines of a file read line by line are saved for the next start (saved-lines.ts) when
   * that took long enough to matter.
   */
  private saveLines(r: LineReader): void {
    if (r.scanned < SAVE_LINES_AFTER || r.count === 0) return;
    const starts = this.offsets.subarray(1, r.count + 1);
    writeSavedLines(this.file, { count: r.count, bytes: r.end, crc: r.crc, starts: starts instanceof Float64Array ? starts : Float64Array.from(starts) });
  }

  /**
   * A step of checking the file's first bytes against saved line offsets: their CRC computed a
   * chunk at a time; once all are read, the offsets are taken when the CRC is theirs (and a
   * derived file's first line is its token), or else the file is read line by line from its start.
   */
  private checkStep(r: LineReader, saved: SavedLines): boolean {
    const buf = Buffer.allocUnsafe(Math.min(CHECK_CHUNK, saved.bytes - r.pos));
    const n = buf.length ? fs.readSync(r.fd, buf, 0, buf.length, r.pos) : 0;
    // (Node 20's zlib.crc32 of an empty buffer from allocUnsafe(0) gives 0, not the CRC it is
    // given: nothing read, nothing added. The check finishes so once its CRC came from elsewhere.)
    if (n > 0) r.crc = zlib.crc32(buf.subarray(0, n), r.crc);
    r.pos += n;
    if (n > 0 && r.pos < saved.bytes) return false;
    r.saved = null;
    if (r.pos === saved.bytes && r.crc === saved.crc) {
      this.reserve(saved.count + 1);
      this.offsets.set(saved.starts, 1);
      const firstEnd = (saved.count > 1 ? saved.starts[1]! : saved.bytes) - 1;
      if (!this.derived || this.tokenLine(this.readBytes(0, firstEnd).toString('utf8'))) {
        r.count = saved.count;
        r.end = saved.bytes;
        return r.pos >= r.bytes && (r.done = true);
      }
    }
    // Not this file's offsets: every line read and checked, as without them.
    r.pos = r.crc = 0;
    return false;
  }

  private finishReading(r: LineReader): void {
    this.reader = null;
    const { count, end } = r;
    if (this.derived) {
      this.loaded = true;
      return this.finishDerived(r);
    }
    // A committed line that does not parse is damage, not a cut. Not marked loaded until the
    // file passes, so every later use fails the same way instead of seeing an empty dictionary.
    if (end < this.committed.bytes && count < this.committed.count) throw this.damaged('a line is not a JSON string');
    if (count !== this.committed.count || end !== this.committed.bytes) throw this.damaged(`it holds ${count} texts where the catalog counts ${this.committed.count}`);
    this.loaded = true;
    this.count = count;
    this.written = end;
    this.offsets[count + 1] = end;
    this.saveLines(r);
  }

  /**
   * `index` with a turn for others between slices (at 10M edge records, hashing urls.log's 1.6M
   * URLs in one go held every page for over a second at the first import after a start). Never
   * throws: a damaged file is named by the first use; if anything else reads or resets the
   * dictionary meanwhile, what is left is done by `index` when first needed.
   */
  async indexInSteps(): Promise<void> {
    if (this.indexed) return;
    await this.loadInSteps();
    if (!this.loaded) return;
    const count = this.count;
    try {
      for (let after = 0; after < count; after += HASH_SLICE) {
        const done = span(`background: hash ${path.basename(this.file)}`);
        try {
          this.hashSlice(after);
        } finally {
          done();
        }
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.indexed || !this.loaded || this.count !== count) return;
      }
    } catch {
      return;
    }
    this.indexed = true;
    this.rebuildTable();
  }

  /** Hashes every text and builds the hash table (before the first text is added or looked up). */
  private index(): void {
    if (this.indexed) return;
    this.load();
    const done = span(`dictionary: hash ${path.basename(this.file)}`);
    // Every id so far is in the file or pending: read back a slice at a time.
    for (let after = 0; after < this.count; after += HASH_SLICE) this.hashSlice(after);
    this.indexed = true;
    this.rebuildTable();
    done();
  }

  /** Hashes the texts of the HASH_SLICE ids after `after`. */
  private hashSlice(after: number): void {
    for (const { id, text } of this.slice(after, HASH_SLICE)) this.hashes[id] = hash32(text);
  }

  /**
   * A derived file: every whole line that parses, up to the first that does not (a crash cut
   * it); the rest is cut off. A file without its token line is started again.
   */
  private finishDerived(r: LineReader): void {
    const { fd, bytes: size, count, end } = r;
    if (end < size) fs.ftruncateSync(fd, end);
    this.saveLines(r);
    // What this run found whole: a columns file that may use more was built before a cut.
    this.committed = { bytes: end, count: -1 };
    this.count = count;
    this.written = this.synced = end;
    this.offsets[count + 1] = end;
    if (count === 0) {
      // New (or not one of ours): a new token, so no columns file built before matches it.
      this.token = randomBytes(8).toString('hex');
      this.idOf(TOKEN_PREFIX + this.token);
      this.syncNow();
    }
  }

  /**
   * Reads the next READ_CHUNK bytes of the file and finds the offsets of its whole lines, up to the first
   * line that is not one JSON string (JSON_STRING_LINE), or, for a derived file, whose first line
   * is not its token. True when the reading is over (every line read, or one refused).
   */
  private readStep(r: LineReader): boolean {
    if (r.saved) return this.checkStep(r, r.saved);
    if (r.done || r.pos >= r.bytes) return (r.done = true);
    const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, r.bytes - r.pos));
    const n = fs.readSync(r.fd, buf, 0, buf.length, r.pos);
    if (n === 0) return (r.done = true);
    r.pos += n;
    // The chunk starts where the last whole line ended.
    const chunk = r.carry.length ? Buffer.concat([r.carry, buf.subarray(0, n)]) : buf.subarray(0, n);
    const whole = chunk.lastIndexOf(NEWLINE) + 1;
    const text = chunk.toString('latin1', 0, whole);
    const base = r.end;
    JSON_STRING_LINE.lastIndex = 0;
    let at = 0;
    let refused = false;
    while (at < whole) {
      if (!JSON_STRING_LINE.test(text)) {
        refused = true;
        break;
      }
      const next = JSON_STRING_LINE.lastIndex;
      if (r.count === 0 && this.derived && !this.tokenLine(chunk.toString('utf8', at, next - 1))) {
        refused = true;
        break;
      }
      r.count++;
      this.reserve(r.count + 1);
      this.offsets[r.count] = base + at;
      at = next;
      r.end = base + at;
    }
    r.crc = zlib.crc32(chunk.subarray(0, at), r.crc);
    r.scanned += at;
    if (refused) return (r.done = true);
    r.carry = Buffer.from(chunk.subarray(whole));
    return r.pos >= r.bytes && (r.done = true);
  }

  /** A derived file's first line: its token (taken) or not. */
  private tokenLine(line: string): boolean {
    const text = parseText(line);
    if (text === null || !isToken(text)) return false;
    this.token = text.slice(TOKEN_PREFIX.length);
    return true;
  }

  /** How many ids there are (loads the file on first use; `count` is 0 until then). */
  size(): number {
    this.load();
    return this.count;
  }

  /**
   * A derived file's length when this process first opened it. It only grows, so a columns file
   * of an earlier run that may use more bytes than this was built before the file was cut.
   */
  get bytesAtOpen(): number {
    if (!this.derived) throw new Error(`${this.file} is not a derived dictionary`);
    // Loaded first: the load cuts a line that does not parse and everything after it.
    this.load();
    return this.committed.bytes;
  }

  /** Where the line of text `count` ends (the bytes of the first `count` texts), or null when there are fewer. */
  endOf(count: number): number | null {
    this.load();
    return count >= 0 && count <= this.count ? this.offsets[count + 1]! : null;
  }

  /** What names a derived file: columns files built against it carry it. */
  get epoch(): string {
    if (!this.derived) throw new Error(`${this.file} is not a derived dictionary`);
    if (this.token === null && !this.loaded) {
      // The first line alone, without loading every line.
      const head = Buffer.alloc(TOKEN_PREFIX.length + 24);
      const n = fs.readSync(this.open(), head, 0, head.length, 0);
      const end = head.indexOf(NEWLINE);
      if (end >= 0 && end < n) {
        try {
          const text = JSON.parse(head.toString('utf8', 0, end)) as unknown;
          if (typeof text === 'string' && isToken(text)) this.token = text.slice(TOKEN_PREFIX.length);
        } catch {
          // Loaded (and started again) below.
        }
      }
    }
    if (this.token === null) this.load();
    return this.token!;
  }

  /**
   * Room for ids up to `ids` (and the end after them). Grown by a quarter, not doubled: at 10M +
   * 10M records doubling left the two dictionaries' arrays up to half empty (60 MiB held).
   */
  private reserve(ids: number): void {
    if (ids + 2 <= this.offsets.length) return;
    const cap = Math.max(ids + 2, Math.floor(this.offsets.length * 1.25));
    const o = this.offsets instanceof Uint32Array ? new Uint32Array(cap) : new Float64Array(cap);
    o.set(this.offsets);
    this.offsets = o;
    const h = new Int32Array(cap);
    h.set(this.hashes);
    this.hashes = h;
  }

  /** Offsets up to `end` will be kept: eight bytes each from now on once four no longer hold it. */
  private fit(end: number): void {
    if (end > this.narrowUpTo && this.offsets instanceof Uint32Array) this.offsets = Float64Array.from(this.offsets);
  }

  private rebuildTable(): void {
    if (!this.indexed) return;
    let cap = this.table.length;
    while (cap < (this.count + 1) * 2) cap *= 2;
    this.table = new Int32Array(cap);
    for (let id = 1; id <= this.count; id++) this.place(id);
  }

  private place(id: number): void {
    const mask = this.table.length - 1;
    let slot = this.hashes[id]! & mask;
    while (this.table[slot] !== 0) slot = (slot + 1) & mask;
    this.table[slot] = id;
  }

  /** The text of an id. */
  get(id: number): string {
    const hit = this.readCache.get(id);
    if (hit !== undefined) return hit;
    this.load();
    if (id < 1 || id > this.count) throw new Error(`${this.file} has no text with id ${id}`);
    const start = this.offsets[id]!;
    const end = this.offsets[id + 1]! - 1;
    if (start >= this.written) return this.pendingTexts[id - (this.count - this.pendingTexts.length) - 1]!;
    const text = parseText(this.readBytes(start, end).toString('utf8'));
    if (text === null) throw this.damaged(`the line of id ${id} is not a JSON string`);
    if (this.readCache.size >= READ_CACHE) this.readCache.clear();
    this.readCache.set(id, text);
    return text;
  }

  /**
   * The texts of many ids (each once, any order), read from the file in runs of nearby lines,
   * one read each, instead of a read per text: the columns of an hour of edge records name
   * thousands of URLs, added to urls.log about together.
   */
  getMany(ids: readonly number[]): Map<number, string> {
    this.load();
    const out = new Map<number, string>();
    const sorted = [...new Set(ids)].sort((a, b) => a - b);
    for (let i = 0; i < sorted.length; ) {
      const first = sorted[i]!;
      if (first < 1 || first > this.count || this.offsets[first]! >= this.written) {
        out.set(first, this.get(first));
        i++;
        continue;
      }
      // A run: the next id's line starts within RUN_GAP bytes of this one's end, all in the file.
      let j = i + 1;
      while (j < sorted.length && sorted[j]! <= this.count && this.offsets[sorted[j]! + 1]! <= this.written && this.offsets[sorted[j]!]! - this.offsets[sorted[j - 1]! + 1]! <= RUN_GAP && this.offsets[sorted[j]! + 1]! - this.offsets[first]! <= RUN_BYTES) j++;
      const start = this.offsets[first]!;
      const bytes = this.readBytes(start, this.offsets[sorted[j - 1]! + 1]!);
      for (let k = i; k < j; k++) {
        const id = sorted[k]!;
        const text = parseText(bytes.toString('utf8', this.offsets[id]! - start, this.offsets[id + 1]! - start - 1));
        if (text === null) throw this.damaged(`the line of id ${id} is not a JSON string`);
        out.set(id, text);
      }
      i = j;
    }
    return out;
  }

  /**
   * `idOf` of many texts, the ones already there confirmed with their lines read together
   * (getMany) rather than a read each: a columns build meets thousands of known paths.
   */
  idsOf(texts: readonly string[]): number[] {
    this.index();
    const out = new Array<number>(texts.length).fill(0);
    const candidates: Array<{ at: number; ids: number[] }> = [];
    const wanted = new Set<number>();
    texts.forEach((text, at) => {
      const hit = this.recent.get(text);
      if (hit !== undefined) return void (out[at] = hit);
      const h = hash32(text);
      const mask = this.table.length - 1;
      const ids: number[] = [];
      for (let slot = h & mask, id = this.table[slot]!; id !== 0; id = this.table[(slot = (slot + 1) & mask)]!) if (this.hashes[id] === h) ids.push(id);
      for (const id of ids) wanted.add(id);
      candidates.push({ at, ids });
    });
    const read = wanted.size ? this.getMany([...wanted]) : new Map<number, string>();
    for (const { at, ids } of candidates) {
      const id = ids.find((id) => read.get(id) === texts[at]);
      // Not there yet: added (idOf, as one at a time; a text repeated in `texts` gets one id).
      out[at] = id !== undefined ? this.remember(texts[at]!, id) : this.idOf(texts[at]!);
    }
    return out;
  }

  /** The id of a text, adding it when new. */
  idOf(text: string): number {
    const hit = this.recent.get(text);
    if (hit !== undefined) return hit;
    this.index();
    const h = hash32(text);
    const mask = this.table.length - 1;
    let slot = h & mask;
    for (let id = this.table[slot]!; id !== 0; id = this.table[(slot = (slot + 1) & mask)]!) {
      if (this.hashes[id] === h && this.get(id) === text) return this.remember(text, id);
    }
    const id = ++this.count;
    this.reserve(id + 1);
    const line = Buffer.from(`${JSON.stringify(text)}\n`, 'utf8');
    this.fit(this.bytes + line.length);
    this.offsets[id] = this.bytes;
    this.hashes[id] = h;
    this.pending.push(line);
    this.pendingTexts.push(text);
    this.pendingBytes += line.length;
    this.offsets[id + 1] = this.bytes;
    if ((this.count + 1) * 2 > this.table.length) this.rebuildTable();
    else this.table[slot] = id;
    if (this.pendingBytes >= WRITE_BUFFER) this.flush();
    return this.remember(text, id);
  }

  private remember(text: string, id: number): number {
    if (this.recent.size >= RECENT) this.recent.clear();
    this.recent.set(text, id);
    return id;
  }

  /**
   * Of the texts with ids after `after` (at most `limit` of them), the ids of those containing
   * `literal`, found in the file's bytes without decoding the lines (see idsFound).
   */
  idsContaining(literal: string, after: number, limit: number): { ids: number[]; last: number } {
    if (!/^[ !#-[\]-~]*$/.test(literal)) throw new Error('idsContaining takes printable ASCII without a quote or a backslash');
    const lit = Buffer.from(literal, 'latin1');
    const find = (bytes: Buffer, visit: (at: number) => boolean) => {
      // (An empty literal is found at every byte: indexOf never gives -1 for it.)
      for (let hit = bytes.indexOf(lit); hit >= 0 && hit < bytes.length && !visit(hit); hit = bytes.indexOf(lit, hit + 1));
    };
    return this.idsFound(find, (text) => text.includes(literal), after, limit);
  }

  /**
   * Of the texts with ids after `after` (at most `limit` of them), the ids (ascending) of those
   * `find` finds a text in, looking at the file's bytes without decoding the lines: a text of
   * printable ASCII without a quote or a backslash is in a line's text exactly where it is in
   * its bytes, unless the line has an escape, which `test` then decides on the decoded text (as
   * it does for texts not written yet). `find` calls `visit` with each place it finds the text
   * at, in any order; `visit` returns true to stop. `last` is the last id looked at.
   */
  idsFound(find: TextFind, test: (text: string) => boolean, after: number, limit: number): { ids: number[]; last: number } {
    const job = this.linesJob(after, limit, false);
    return { ids: this.idsIn(job, find, test), last: job.last };
  }

  /** idsFound of a job from linesJob, searched on this thread. */
  idsIn(job: LinesJob, find: TextFind, test: (text: string) => boolean): number[] {
    const ids: number[] = [];
    if (job.lines) {
      const { start, end, starts, first } = job.lines;
      // Searched and dropped before this returns: read into the thread's scratch buffer.
      const bytes = this.readBytes(start, end, true);
      const { plain, escaped } = linesFound(bytes, starts, first, find);
      for (const id of plain) ids.push(id);
      // Decoded from the bytes read (a line that is not a JSON string holds nothing).
      for (const id of escaped) {
        const text = parseText(bytes.toString('utf8', starts[id - first]! - start, starts[id - first + 1]! - start - 1));
        if (text !== null && test(text)) ids.push(id);
      }
      // Both lists ascend, and the ids must: merged.
      if (escaped.length) ids.sort((a, b) => a - b);
    }
    this.testPending(job, test, ids);
    return ids;
  }

  /**
   * What idsFound reads for the texts after `after` (at most `limit`): the lines in the file as
   * plain data another thread can search (linesFound; `copy`: their starts copied out of the
   * dictionary's offsets, as a message to another thread would copy all of them), and the ids of
   * pending texts (tested here).
   */
  linesJob(after: number, limit: number, copy = true): LinesJob {
    this.load();
    const last = Math.max(after, Math.min(this.count, after + limit));
    const firstPending = this.count - this.pendingTexts.length + 1;
    const lastInFile = Math.min(last, firstPending - 1);
    const starts = () => (copy ? this.offsets.slice(after + 1, lastInFile + 2) : this.offsets.subarray(after + 1, lastInFile + 2));
    const lines = lastInFile > after ? { file: this.file, start: this.offsets[after + 1]!, end: this.offsets[lastInFile + 1]!, first: after + 1, starts: starts() } : null;
    return { lines, after, last, firstPending };
  }

  /** Of `escaped` (lines linesFound could not decide by their bytes, found on another thread), those whose decoded text passes `test`, added to `ids`. */
  testEscaped(escaped: Iterable<number>, test: (text: string) => boolean, ids: number[]): void {
    for (const id of escaped) {
      // (A line that is not a JSON string holds nothing.)
      const text = parseText(this.readBytes(this.offsets[id]!, this.offsets[id + 1]! - 1).toString('utf8'));
      if (text !== null && test(text)) ids.push(id);
    }
  }

  /**
   * The job's texts that were pending when it was made (not in the file) and pass `test`, added
   * to `ids`. A save may have written them since (a search waits between chunks): each is read
   * where it is now; ids a rollback took back are gone.
   */
  testPending(job: LinesJob, test: (text: string) => boolean, ids: number[]): void {
    const firstPending = this.count - this.pendingTexts.length + 1;
    const last = Math.min(job.last, this.count);
    for (let id = Math.max(job.after + 1, job.firstPending); id <= last; id++) {
      if (test(id >= firstPending ? this.pendingTexts[id - firstPending]! : this.get(id))) ids.push(id);
    }
  }

  /** Bytes `start` to `end` of the file (`reused`: in this thread's scratch buffer, valid until the next read into it). */
  private readBytes(start: number, end: number, reused = false): Buffer {
    const bytes = reused ? scratchBuffer(end - start) : Buffer.allocUnsafe(end - start);
    let got = 0;
    while (got < bytes.length) {
      const n = fs.readSync(this.open(), bytes, got, bytes.length - got, start + got);
      if (n === 0) throw this.damaged(`it ends before byte ${end}`);
      got += n;
    }
    return bytes;
  }

  /** How many texts a committed dictionary holds, without loading it. */
  get textCount(): number {
    if (this.derived) throw new Error(`${this.file} is not a committed dictionary`);
    return this.loaded ? this.count : this.committed.count;
  }

  /** What the last commit recorded (a committed dictionary; the catalog's urls state). */
  get committedState(): { bytes: number; count: number } {
    if (this.derived) throw new Error(`${this.file} is not a committed dictionary`);
    return { ...this.committed };
  }

  /**
   * CRC-32 of the TAIL_BYTES of the committed part that end at byte `end`: what a derived file
   * made from the texts up to `end` records, to tell later that the file still holds them
   * (null when `end` is past the committed part). Reads only those bytes.
   */
  tailCrc(end: number): number | null {
    if (end > this.committedState.bytes) return null;
    return zlib.crc32(this.readBytes(Math.max(0, end - TAIL_BYTES), end));
  }

  /** Texts with ids after `after`, at most `limit`, in id order (for pattern matching). */
  slice(after: number, limit: number): Array<{ id: number; text: string }> {
    this.load();
    const out: Array<{ id: number; text: string }> = [];
    const last = Math.min(this.count, after + limit);
    if (last <= after) return out;
    const firstPending = this.count - this.pendingTexts.length + 1;
    const lastInFile = Math.min(last, firstPending - 1);
    if (lastInFile > after) {
      const start = this.offsets[after + 1]!;
      const bytes = this.readBytes(start, this.offsets[lastInFile + 1]!);
      let at = 0;
      for (let id = after + 1; id <= lastInFile; id++) {
        const len = this.offsets[id + 1]! - this.offsets[id]!;
        const text = parseText(bytes.toString('utf8', at, at + len - 1));
        if (text === null) throw this.damaged(`the line of id ${id} is not a JSON string`);
        out.push({ id, text });
        at += len;
      }
    }
    for (let id = Math.max(after + 1, firstPending); id <= last; id++) out.push({ id, text: this.pendingTexts[id - firstPending]! });
    return out;
  }

  /** Writes pending lines to the file. */
  flush(): void {
    if (!this.pendingBytes) return;
    const data = Buffer.concat(this.pending);
    const fd = this.open();
    let done = 0;
    while (done < data.length) done += fs.writeSync(fd, data, done, data.length - done, this.written + done);
    this.written += data.length;
    this.pending = [];
    this.pendingTexts = [];
    this.pendingBytes = 0;
  }

  /** What a commit records: written lines (call `flush` first). */
  state(): { bytes: number; count: number } {
    return this.loaded ? { bytes: this.written, count: this.count } : this.committed;
  }

  /** Writes and makes durable every line so far, at once (a derived file, before a columns file that uses them). */
  syncNow(): void {
    this.flush();
    if (this.synced === this.written) return;
    fs.fsyncSync(this.open());
    this.synced = this.written;
  }

  /**
   * syncNow with the fsync on libuv's threads: an fsync on the answering thread while an import
   * filled the disk's queue held every request for 0.5 s at 10M records. Resolves with the bytes
   * and lines made durable (lines added meanwhile may not be).
   */
  async syncOffThread(): Promise<{ bytes: number; count: number }> {
    this.flush();
    const at = { bytes: this.written, count: this.size() };
    if (this.synced < at.bytes) {
      await this.fsync();
      this.synced = Math.max(this.synced, at.bytes);
    }
    return at;
  }

  /** Makes the written lines durable (before the catalog that counts them is renamed). */
  fsync(): Promise<void> {
    if (this.fd === null) return Promise.resolve();
    const fd = this.fd;
    return new Promise<void>((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
  }

  /** A commit named `state`. */
  committedAt(state: { bytes: number; count: number }): void {
    this.committed = state;
  }

  /**
   * Goes back to an earlier state (a rolled-back import) in memory; lines past it are
   * overwritten by the next appends. The file is cut only by `cutFile`, once a catalog naming
   * the earlier state is committed.
   */
  resetTo(state: { bytes: number; count: number }): void {
    this.recent.clear();
    this.readCache.clear();
    this.pending = [];
    this.pendingTexts = [];
    this.pendingBytes = 0;
    if (this.loaded && state.count <= this.count) {
      this.count = state.count;
      this.written = state.bytes;
      this.offsets[state.count + 1] = state.bytes;
      this.rebuildTable();
    } else this.loaded = this.indexed = false;
    this.reader = null;
    this.committed = state;
  }

  /** Cuts the file to the committed length. */
  cutFile(): void {
    if (this.fd !== null) fs.ftruncateSync(this.fd, this.committed.bytes);
    else if (fs.existsSync(this.file)) fs.truncateSync(this.file, this.committed.bytes);
  }

  /** Bytes of its arrays (offsets, hashes, table): a gauge of the activity log. */
  heldBytes(): number {
    return this.offsets.byteLength + this.hashes.byteLength + this.table.byteLength;
  }

  close(): void {
    this.closed = true;
    this.reader = null;
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  /** Closed: a loadInSteps still running stops at its next turn (it would open the file again). */
  private closed = false;
}

/**
 * Reads a committed dictionary file without changing it (`npm run check`): its first `bytes`
 * bytes must be `count` lines, each one JSON string. Returns what is wrong, or null.
 */
export function verifyTextFile(file: string, committed: { bytes: number; count: number }): string | null {
  if (!fs.existsSync(file)) return committed.bytes > 0 ? 'the file is missing' : null;
  const size = fs.statSync(file).size;
  if (size < committed.bytes) return `it holds ${size} bytes but the catalog counts ${committed.bytes}`;
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let carry = '';
    let count = 0;
    for (let pos = 0; pos < committed.bytes; ) {
      const n = fs.readSync(fd, buf, 0, Math.min(buf.length, committed.bytes - pos), pos);
      if (n === 0) break;
      pos += n;
      const lines = (carry + buf.toString('latin1', 0, n)).split('\n');
      carry = lines.pop()!;
      for (const line of lines) {
        count++;
        if (parseText(Buffer.from(line, 'latin1').toString('utf8')) === null) return `line ${count} is not a JSON string`;
      }
    }
    if (carry !== '') return 'its committed part ends inside a line';
    if (count !== committed.count) return `it holds ${count} texts where the catalog counts ${committed.count}`;
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/** A derived dictionary's token (its epoch), read without changing the file; null when it has none. */
export function readDerivedEpoch(file: string): string | null {
  let head: Buffer;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      head = Buffer.alloc(TOKEN_PREFIX.length + 24);
      head = head.subarray(0, fs.readSync(fd, head, 0, head.length, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  const end = head.indexOf(NEWLINE);
  const text = end < 0 ? null : parseText(head.toString('utf8', 0, end));
  return text !== null && isToken(text) ? text.slice(TOKEN_PREFIX.length) : null;
}

/** Byte offsets of a dictionary's lines: four bytes each while they fit, else eight. */
export type LineStarts = Uint32Array | Float64Array;

/** The largest offset a dictionary keeps in four bytes. */
const NARROW_UP_TO = 0xffffffff;

/** The CRC-32 of a file's first `bytes` bytes, computed on another thread; null when it could not be. */
export type CrcOffThread = (file: string, bytes: number) => Promise<number | null>;

/** A finder of a text in bytes: calls `visit` with each place it finds it at, in any order, until `visit` returns true. */
export type TextFind = (bytes: Buffer, visit: (at: number) => boolean) => void;

/** Lines of a dictionary file to search: bytes [start, end) of `file`, whose lines start at starts[k] (and the last ends at starts[last]), ids from `first`. */
export interface FileLines {
  file: string;
  start: number;
  end: number;
  first: number;
  starts: LineStarts;
}

export interface LinesJob {
  /** Null when no text of the range is in the file yet. */
  lines: FileLines | null;
  after: number;
  /** The last id of the range. */
  last: number;
  firstPending: number;
}

export interface LinesFound {
  plain: Int32Array;
  escaped: number[];
}

/** A thread's buffer for a read searched and dropped at once (a chunk of urls.log's lines, about 5 MB at 10M records). */
let scratch = Buffer.alloc(0);
/** Larger reads get a buffer of their own, not kept. */
const SCRATCH_MAX = 32 * 1024 * 1024;

/**
 * `n` bytes of this thread's scratch buffer, valid until its next use: a URL search reads
 * urls.log a chunk at a time, and a fresh buffer per chunk cost its pages' first touch (about
 * three times the read itself) and collections for external memory.
 */
export function scratchBuffer(n: number): Buffer {
  if (n > SCRATCH_MAX) return Buffer.allocUnsafe(n);
  if (scratch.length < n) scratch = Buffer.allocUnsafe(Math.max(n, Math.min(SCRATCH_MAX, scratch.length * 2)));
  return scratch.subarray(0, n);
}

/**
 * The lines of `bytes` (the FileLines' bytes, line k from starts[k] to starts[k + 1]) in which
 * `find` finds its text: `plain` the ids of lines written plainly (the text between two quotes,
 * nothing escaped: the text is where its bytes are), `escaped` those with an escape, which the
 * caller decides on the decoded text. Both ascending. A text of printable ASCII without a quote or
 * a backslash is in a line's text exactly where it is in its bytes, unless the line has an escape.
 */
export function linesFound(bytes: Buffer, starts: LineStarts, first: number, find: TextFind): LinesFound {
  const lines = starts.length - 1;
  const start = starts[0]!;
  // The lines holding a place found, marked (places come in any order, several to a line).
  const holds = new Uint8Array(lines);
  let next = 0;
  find(bytes, (at) => {
    let k = next;
    if (!(starts[k]! - start <= at && at < starts[k + 1]! - start)) {
      let lo = 0;
      let hi = lines - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! - start <= at) lo = mid;
        else hi = mid - 1;
      }
      k = lo;
    }
    holds[k] = 1;
    next = Math.min(k + 1, lines - 1);
    return false;
  });
  let count = 0;
  for (let k = 0; k < lines; k++) count += holds[k]!;
  const plain = new Int32Array(count);
  const escaped: number[] = [];
  let n = 0;
  // Where the next backslash is (the end when none is left): lines before it have no escape.
  let escape = -1;
  for (let k = 0; k < lines; k++) {
    if (!holds[k]) continue;
    const from = starts[k]! - start;
    const to = starts[k + 1]! - start - 1;
    if (escape < from) {
      escape = bytes.indexOf(BACKSLASH, from);
      if (escape < 0) escape = bytes.length;
    }
    if (bytes[from] === QUOTE && bytes[to - 1] === QUOTE && escape >= to) plain[n++] = first + k;
    else escaped.push(first + k);
  }
  return { plain: plain.subarray(0, n), escaped };
}
