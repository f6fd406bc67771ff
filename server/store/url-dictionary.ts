/**
 * The URL dictionary: every distinct request URL of the edge logs, with a dense id. Real URLs
 * carry query strings, so there are many (a fifth of the records); kept in the catalog they
 * would make it hundreds of MB at 10M records, loaded at every start and written at every
 * commit. Instead they live in an append-only file, `urls.log` (one JSON string per line, id =
 * line number), whose committed length is in the catalog like a record file's. In memory: per
 * id its offset and a 32-bit hash (12 bytes), an open-addressing table from hash to id, and a
 * bounded cache of recent URLs; a lookup that misses the cache reads the candidate's line back.
 * Loaded on first use (imports, pattern matching), not at start.
 */
import fs from 'node:fs';

const NEWLINE = 0x0a;
/** Recent URL -> id kept as strings (repeated URLs of a batch hit here, not the file). */
const RECENT = 50_000;
/** Appended lines kept in memory until this many bytes, then written. */
const WRITE_BUFFER = 1 << 20;

/** FNV-1a over UTF-16 code units: cheap and good enough to spread a hash table. */
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

export class UrlDictionary {
  private loaded = false;
  private fd: number | null = null;
  /** offsets[id] = byte offset of URL id's line (ids from 1); offsets[count + 1] = end. */
  private offsets = new Float64Array(1024);
  private hashes = new Int32Array(1024);
  /** Open addressing: slot -> id (0 = empty). */
  private table = new Int32Array(2048);
  private recent = new Map<string, number>();
  private pending: Buffer[] = [];
  /** The URLs of the pending lines, in id order (the first is id `written` ids + 1). */
  private pendingUrls: string[] = [];
  private pendingBytes = 0;
  /** Bytes written to the file (pending bytes follow them). */
  private written = 0;
  count = 0;

  constructor(
    readonly file: string,
    /** Committed length and count, from the catalog. */
    private committed: { bytes: number; count: number },
  ) {}

  /** Bytes of all lines, written or pending. */
  get bytes(): number {
    return this.written + this.pendingBytes;
  }

  private open(): number {
    if (this.fd === null) {
      this.fd = fs.openSync(this.file, fs.existsSync(this.file) ? 'r+' : 'w+', 0o600);
      const actual = fs.fstatSync(this.fd).size;
      if (actual < this.committed.bytes) throw new Error(`urls.log holds ${actual} bytes but the catalog points to byte ${this.committed.bytes}`);
      // Lines past the committed end come from an import that never committed.
      if (actual > this.committed.bytes) fs.ftruncateSync(this.fd, this.committed.bytes);
    }
    return this.fd;
  }

  /** Reads the committed lines to build the in-memory index (first use only). */
  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    const fd = this.open();
    this.reserve(this.committed.count + 1);
    const buf = Buffer.allocUnsafe(1 << 20);
    let pos = 0;
    let carry = Buffer.alloc(0);
    let id = 0;
    while (pos < this.committed.bytes) {
      const n = fs.readSync(fd, buf, 0, Math.min(buf.length, this.committed.bytes - pos), pos);
      if (n === 0) break;
      let chunk = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      let start = 0;
      const base = pos - carry.length;
      for (let i = chunk.indexOf(NEWLINE); i >= 0; i = chunk.indexOf(NEWLINE, start)) {
        id++;
        this.offsets[id] = base + start;
        this.hashes[id] = hash32(JSON.parse(chunk.toString('utf8', start, i)) as string);
        start = i + 1;
      }
      carry = Buffer.from(chunk.subarray(start));
      chunk = Buffer.alloc(0);
      pos += n;
    }
    if (id !== this.committed.count) throw new Error(`urls.log holds ${id} URLs but the catalog counts ${this.committed.count}`);
    this.count = id;
    this.written = this.committed.bytes;
    this.offsets[id + 1] = this.written;
    this.rebuildTable();
  }

  private reserve(ids: number): void {
    if (ids + 2 <= this.offsets.length) return;
    let cap = this.offsets.length;
    while (cap < ids + 2) cap *= 2;
    const o = new Float64Array(cap);
    o.set(this.offsets);
    this.offsets = o;
    const h = new Int32Array(cap);
    h.set(this.hashes);
    this.hashes = h;
  }

  private rebuildTable(): void {
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

  /** The URL of an id. */
  get(id: number): string {
    this.load();
    if (id < 1 || id > this.count) throw new Error(`no URL with id ${id}`);
    const start = this.offsets[id]!;
    const end = this.offsets[id + 1]! - 1;
    if (start >= this.written) return this.pendingUrls[id - (this.count - this.pendingUrls.length) - 1]!;
    const bytes = Buffer.allocUnsafe(end - start);
    let got = 0;
    while (got < bytes.length) got += fs.readSync(this.open(), bytes, got, bytes.length - got, start + got);
    return JSON.parse(bytes.toString('utf8')) as string;
  }

  /** The id of a URL, adding it when new. */
  idOf(url: string): number {
    const hit = this.recent.get(url);
    if (hit !== undefined) return hit;
    this.load();
    const h = hash32(url);
    const mask = this.table.length - 1;
    let slot = h & mask;
    for (let id = this.table[slot]!; id !== 0; id = this.table[(slot = (slot + 1) & mask)]!) {
      if (this.hashes[id] === h && this.get(id) === url) return this.remember(url, id);
    }
    const id = ++this.count;
    this.reserve(id + 1);
    const line = Buffer.from(`${JSON.stringify(url)}\n`, 'utf8');
    this.offsets[id] = this.bytes;
    this.hashes[id] = h;
    this.pending.push(line);
    this.pendingUrls.push(url);
    this.pendingBytes += line.length;
    this.offsets[id + 1] = this.bytes;
    if ((this.count + 1) * 2 > this.table.length) this.rebuildTable();
    else this.table[slot] = id;
    if (this.pendingBytes >= WRITE_BUFFER) this.flush();
    return this.remember(url, id);
  }

  private remember(url: string, id: number): number {
    if (this.recent.size >= RECENT) this.recent.clear();
    this.recent.set(url, id);
    return id;
  }

  /** URLs with ids after `after`, at most `limit`, in id order (for pattern matching). */
  slice(after: number, limit: number): Array<{ id: number; url: string }> {
    this.load();
    const out: Array<{ id: number; url: string }> = [];
    const last = Math.min(this.count, after + limit);
    if (last <= after) return out;
    const firstPending = this.count - this.pendingUrls.length + 1;
    const lastInFile = Math.min(last, firstPending - 1);
    if (lastInFile > after) {
      const start = this.offsets[after + 1]!;
      const bytes = Buffer.allocUnsafe(this.offsets[lastInFile + 1]! - start);
      let got = 0;
      while (got < bytes.length) got += fs.readSync(this.open(), bytes, got, bytes.length - got, start + got);
      let at = 0;
      for (let id = after + 1; id <= lastInFile; id++) {
        const len = this.offsets[id + 1]! - this.offsets[id]!;
        out.push({ id, url: JSON.parse(bytes.toString('utf8', at, at + len - 1)) as string });
        at += len;
      }
    }
    for (let id = Math.max(after + 1, firstPending); id <= last; id++) out.push({ id, url: this.pendingUrls[id - firstPending]! });
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
    this.pendingUrls = [];
    this.pendingBytes = 0;
  }

  /** What a commit records: written lines (call `flush` first). */
  state(): { bytes: number; count: number } {
    return this.loaded ? { bytes: this.written, count: this.count } : this.committed;
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
    this.pending = [];
    this.pendingUrls = [];
    this.pendingBytes = 0;
    if (this.loaded && state.count <= this.count) {
      this.count = state.count;
      this.written = state.bytes;
      this.offsets[state.count + 1] = state.bytes;
      this.rebuildTable();
    } else this.loaded = false;
    this.committed = state;
  }

  /** Cuts the file to the committed length. */
  cutFile(): void {
    if (this.fd !== null) fs.ftruncateSync(this.fd, this.committed.bytes);
    else if (fs.existsSync(this.file)) fs.truncateSync(this.file, this.committed.bytes);
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}
