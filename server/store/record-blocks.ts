/**
 * Full records of one partition, in an append-only file of compressed blocks. Each block is
 * `[u32 compressed length][u32 raw length][brotli bytes]`; its raw bytes are records, each
 * followed by a newline. A hot row addresses its record as (block offset, offset in the raw
 * block, length), so logs.all decompresses only the blocks its rows live in. The block being
 * filled stays in memory and is sealed when it reaches BLOCK_BYTES or at a save; rows may
 * point into it before it is written, since its offset (the file's end) is already known.
 *
 * A sealed block is packed (compressed, checksummed, indexed) on a worker thread
 * (block-packer.ts) while records go on into the next block, whose offset is then known only
 * once the sealed one is packed: `append` says so (blk -1) and `settle` writes the packed blocks,
 * in order, after which every address is known. `add` and `flush` settle at once.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { cutBlockGrams, gramsEntry, gramsHeader } from './block-grams.ts';
import { cutBlockTexts } from './block-texts.ts';
import { cutRecordTokens } from './record-tokens.ts';
import { RECORD_DERIVED } from './store-files.ts';
import { BLOCK_CHECKED, BLOCK_CRC_BYTES, BLOCK_HEADER, blockBuffer, blockPacked, dropBlock, submitBlock, takeBlock, type PackJob } from './block-packer.ts';
import { partFileName, StoreFileDamaged } from './damage.ts';

/**
 * Raw bytes per block: about 120 edge records. Brotli (quality 1) packs 256 KiB blocks of edge
 * records about 9x and function edge records about 13x at ~700 MB/s (64 KiB: 7x and 10x);
 * one block decompresses in about 0.3 ms.
 */
export const BLOCK_BYTES = 256 * 1024;
const HEADER = BLOCK_HEADER;
/**
 * Set in a block's first word when a CRC-32 of its raw bytes follows the header (every block
 * written since blocks carried one; older ones have none). The CRC starts from the file's name
 * (`seedOf`), so a block read from another partition's file put under this name fails it.
 */
const CHECKED = BLOCK_CHECKED;
const CRC_BYTES = BLOCK_CRC_BYTES;
const NEWLINE = 0x0a;
/**
 * Decompressed blocks kept, over all record files, least recently used first: logs.all and the
 * explorer's pages read a few neighbouring blocks again and again, while a search reads each
 * block once. One budget for the store, not a few blocks per file: the explorer reads the
 * records of hundreds of partitions whose databases are never loaded (nor unloaded).
 */
const CACHE_BYTES = 32 * 1024 * 1024;
/** The budget in force (narrowed while an import runs: see narrowBlockCache). */
let cacheBudget = CACHE_BYTES;
/** The shares asked for by imports running now (one process may hold several stores). */
const narrowings = new Set<{ share: number }>();
/** Record files open at once (a week's search touches hundreds; some systems allow 256 descriptors). */
const MAX_OPEN = 64;

/** Decompressed blocks by file and offset, least recently used first. */
const cache = new Map<string, { owner: RecordBlocks; raw: Buffer }>();
let cachedBytes = 0;
/** Files with an open descriptor, least recently used first. */
const open = new Set<RecordBlocks>();
let nextId = 1;

/** Bytes of decompressed blocks held (a gauge of the activity log). */
export const cachedBlockBytes = (): number => cachedBytes;

function cachePut(owner: RecordBlocks, key: string, raw: Buffer): void {
  cache.set(key, { owner, raw });
  cachedBytes += raw.length;
  trimCache();
}

function trimCache(): void {
  for (const [k, v] of cache) {
    if (cachedBytes <= cacheBudget) break;
    cache.delete(k);
    cachedBytes -= v.raw.length;
  }
}

/**
 * Keeps `share` of the decompressed blocks' budget until the returned function is called (an
 * import runs: its partitions take the memory), dropping the oldest past it at once.
 */
export function narrowBlockCache(share: number): () => void {
  const hold = { share };
  narrowings.add(hold);
  const apply = () => {
    cacheBudget = CACHE_BYTES * Math.min(1, ...[...narrowings].map((n) => n.share));
    trimCache();
  };
  apply();
  return () => {
    narrowings.delete(hold);
    apply();
  };
}

function cacheDrop(owner: RecordBlocks): void {
  for (const [k, v] of cache) {
    if (v.owner !== owner) continue;
    cache.delete(k);
    cachedBytes -= v.raw.length;
  }
}

/** Closes the least recently used descriptors past MAX_OPEN (the most recent one stays). */
function trimOpen(): void {
  if (open.size <= MAX_OPEN) return;
  let last: RecordBlocks | undefined;
  for (const f of open) last = f;
  for (const f of open) {
    if (open.size <= MAX_OPEN) break;
    if (f !== last && f.closable) f.closeFd();
  }
}

/** Blocks decompressed since the process started (tests and benches: what an index saved). */
let decompressed = 0;

/** What the shared state holds now: decompressed bytes cached, descriptors open, blocks decompressed so far (tests). */
export function recordBlocksHeld(): { cachedBytes: number; openFiles: number; decompressed: number } {
  return { cachedBytes, openFiles: open.size, decompressed };
}

export interface RecordAddress {
  blk: number;
  boff: number;
  len: number;
}

/** Where `append` put a record: `blk` is -1 while blocks before its own are being packed (see `offsetOf`). */
export interface PlacedRecord extends RecordAddress {
  /** The number of its block in this file's sequence of blocks (for `offsetOf`). */
  block: number;
}

/** Offsets of recently written blocks kept for `offsetOf` (a settle writes a few at most). */
const OFFSETS_KEPT = 64;

export class RecordBlocks {
  private fd: number | null = null;
  /** Bytes of whole blocks in the file (committed or written since). */
  size: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Blocks sealed and being packed, in file order: written by `settle`. */
  private sealed: Array<{ job: PackJob; block: number }> = [];
  /** The number of the block being filled (blocks sealed by this object so far). */
  private blockNo = 0;
  /** Offsets of the blocks written lately, by number. */
  private readonly offsets = new Map<number, number>();
  /** Blocks written and not yet fsynced, or an fsync running: the descriptor stays open. */
  private unsynced = false;
  private syncing = 0;
  private writes = 0;
  /** Names this file's blocks in the shared cache (a file of the same name may come again). */
  private readonly id = nextId++;
  /** The file's CRC seed (seedOf), computed at first use: a start makes thousands of these. */
  private seedValue: number | null = null;
  private get seed(): number {
    return (this.seedValue ??= seedOf(this.file));
  }
  /**
   * Whether the block index ends where this file does, so a written block's entry may be
   * appended (false until the index is cut to the file's end, and after an append fails: that
   * block lacks an entry until the background rebuild, and the next append cuts first).
   */
  private gramsAligned = false;

  /** @param size the committed length: bytes past it are left by an import that never committed. */
  constructor(
    readonly file: string,
    size: number,
  ) {
    this.size = size;
  }

  private handle(): number {
    if (this.fd !== null) {
      open.delete(this);
      open.add(this);
      trimOpen();
      return this.fd;
    }
    {
      const exists = fs.existsSync(this.file);
      // A committed file that is gone is damage: an empty one in its place would hide it.
      if (!exists && this.size > 0) throw new StoreFileDamaged(partFileName(this.file), 'the file is missing');
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      const fd = fs.openSync(this.file, exists ? 'r+' : 'w+', 0o600);
      const actual = fs.fstatSync(fd).size;
      if (actual < this.size) {
        fs.closeSync(fd);
        throw new StoreFileDamaged(partFileName(this.file), `it holds ${actual} bytes but the catalog counts ${this.size}`);
      }
      this.fd = fd;
      // Bytes past the committed end come from an import that never committed.
      if (actual > this.size) {
        fs.ftruncateSync(this.fd, this.size);
        this.cutGrams(this.size);
      }
    }
    open.add(this);
    trimOpen();
    return this.fd;
  }

  /** Whether its descriptor may be closed now (written blocks are fsynced through it first). */
  get closable(): boolean {
    return !this.unsynced && this.syncing === 0;
  }

  closeFd(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
    open.delete(this);
  }

  private key(blk: number): string {
    return `${this.id}:${blk}`;
  }

  /** Adds one record (no newline inside) to the block being filled; returns its address. */
  add(bytes: Buffer): RecordAddress {
    const { blk, boff, len, block } = this.append(bytes);
    if (blk >= 0) return { blk, boff, len };
    this.settle();
    return { blk: this.offsetOf(block), boff, len };
  }

  /**
   * Adds one record without waiting for the blocks being packed: its address has `blk` -1 when
   * its block's offset is not known yet (ask `offsetOf` after `settle`).
   */
  append(bytes: Buffer): PlacedRecord {
    const addr = { blk: this.sealed.length ? -1 : this.size, boff: this.pendingBytes, len: bytes.length, block: this.blockNo };
    this.pending.push(bytes);
    this.pendingBytes += bytes.length + 1;
    if (this.pendingBytes >= BLOCK_BYTES) this.seal();
    return addr;
  }

  /** Every sealed block is packed (by the worker): a settle now waits for nothing. */
  get packed(): boolean {
    return this.sealed.every(({ job }) => blockPacked(job));
  }

  /** The offset of block number `block` (the one being filled, or one written lately), once the blocks before it are written. */
  offsetOf(block: number): number {
    const at = block === this.blockNo ? (this.sealed.length ? undefined : this.size) : this.offsets.get(block);
    if (at === undefined) throw new Error(`${path.basename(this.file)}: the offset of block ${block} is not known (blocks before it are being packed)`);
    return at;
  }

  /**
   * Hands the block being filled to the packer; the next records start a new block. (Done ahead
   * of a flush, the worker packs it meanwhile: the same bytes as the flush alone would write.)
   */
  seal(): void {
    if (this.pendingBytes === 0) return;
    const raw = blockBuffer(this.pendingBytes);
    let at = 0;
    for (const b of this.pending) {
      b.copy(raw, at);
      at += b.length;
      raw[at++] = NEWLINE;
    }
    this.sealed.push({ job: submitBlock(raw, this.seed), block: this.blockNo++ });
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Writes every sealed block (taking each from the packer, which may pack it here): every address is known after. */
  settle(): void {
    while (this.sealed.length) this.writeSealed();
  }

  /** Writes the first sealed block at the file's end, with its block index entry. */
  private writeSealed(): void {
    const { job, block: no } = this.sealed[0]!;
    const { block, bits } = takeBlock(job);
    const fd = this.handle();
    let written = 0;
    while (written < block.length) written += fs.writeSync(fd, block, written, block.length - written, this.size + written);
    // Written: from here on it is the file's (a failed write above leaves it sealed, to be written again).
    this.sealed.shift();
    this.unsynced = true;
    this.writes++;
    cachePut(this, this.key(this.size), job.raw);
    this.appendGrams(this.size, this.size + block.length, bits);
    this.offsets.set(no, this.size);
    if (this.offsets.size > OFFSETS_KEPT) this.offsets.delete(this.offsets.keys().next().value!);
    this.size += block.length;
  }

  /** Writes the block being filled, if any, and every block being packed. */
  flush(): void {
    this.seal();
    this.settle();
  }

  /** Forgets the blocks being filled and packed (their rows were rolled back). */
  private dropUnwritten(): void {
    this.pending = [];
    this.pendingBytes = 0;
    for (const { job } of this.sealed) dropBlock(job);
    this.sealed = [];
  }

  private block(blk: number): Buffer {
    const key = this.key(blk);
    const hit = cache.get(key);
    if (hit) {
      cache.delete(key);
      cache.set(key, hit);
      return hit.raw;
    }
    const raw = decodeBlock(this.handle(), this.file, blk, this.size, this.seed);
    decompressed++;
    if (typeof raw === 'string') throw new StoreFileDamaged(partFileName(this.file), raw);
    cachePut(this, key, raw);
    return raw;
  }

  /** The CRC seed of this file (its name): what a derived file of it records to be its own. */
  get nameSeed(): number {
    return this.seed;
  }

  /** The file's block index (block-grams.ts), derived: cut back whenever the record file is. */
  get gramsFile(): string {
    return this.file.replace(/\.records$/, '.grams');
  }

  /** The file's record texts (block-texts.ts), derived: cut back whenever the record file is. */
  get textsFile(): string {
    return this.file.replace(/\.records$/, '.texts');
  }

  /** The names of the file and of those derived from it (store-files.ts, RECORD_DERIVED). */
  get fileNames(): string[] {
    const name = path.basename(this.file);
    const stem = name.endsWith('.records') ? name.slice(0, -'.records'.length) : null;
    return [name, ...RECORD_DERIVED.map((ext) => (stem === null ? name : stem + ext))];
  }

  /** The file's record words (record-tokens.ts), derived: cut back whenever the record file is. */
  get tokensFile(): string {
    return this.file.replace(/\.records$/, '.tokens');
  }

  /** Cuts the block index back to `size` (the record file is cut there, or about to be appended to), and the record texts and words. */
  private cutGrams(size: number): void {
    try {
      cutBlockGrams(this.gramsFile, this.seed, size);
      this.gramsAligned = true;
    } catch {
      // Derived: without a usable index the blocks are searched in full.
      this.gramsAligned = false;
    }
    try {
      cutBlockTexts(this.textsFile, this.seed, size);
    } catch {
      // Texts of blocks past the cut would stand for the blocks written there next: none at all instead.
      fs.rmSync(this.textsFile, { force: true });
    }
    try {
      cutRecordTokens(this.tokensFile, this.seed, size);
    } catch {
      fs.rmSync(this.tokensFile, { force: true });
    }
  }

  /** Appends the entry of the block just written at `blk` (its bits were computed with its packing). */
  private appendGrams(blk: number, end: number, bits: Int32Array): void {
    if (!this.gramsAligned) this.cutGrams(blk);
    if (!this.gramsAligned) return;
    try {
      const entry = gramsEntry(this.seed, blk, end, bits);
      fs.appendFileSync(this.gramsFile, fs.existsSync(this.gramsFile) ? entry : Buffer.concat([gramsHeader(this.seed), entry]), { mode: 0o600 });
    } catch {
      // A torn entry is cut off before the next append; until then it ends what readers use.
      this.gramsAligned = false;
    }
  }

  /** Called after the block index was written again whole, ending at this file's end: appends follow it. */
  gramsRewritten(): void {
    this.gramsAligned = true;
  }

  /** The offset of the block after the one at `blk` (its header read from the file). */
  nextBlock(blk: number): number {
    return blk + blockLength(this.handle(), blk);
  }

  /** A whole block's raw bytes (records and newlines), or null for the block still being filled. */
  rawBlock(blk: number): Buffer | null {
    this.settle();
    return blk === this.size && this.pendingBytes > 0 ? null : this.block(blk);
  }

  /** One record's bytes, as it was added. */
  read(addr: RecordAddress): Buffer {
    // Readers run between inserts, which settle: this is a guard (the block being filled must be at the end).
    this.settle();
    if (addr.blk === this.size && this.pendingBytes > 0) {
      // Still in the block being filled.
      let at = 0;
      for (const b of this.pending) {
        if (at === addr.boff) return b;
        at += b.length + 1;
      }
      throw new Error(`${path.basename(this.file)}: no pending record at ${addr.boff}`);
    }
    return this.block(addr.blk).subarray(addr.boff, addr.boff + addr.len);
  }

  /** Flushes to disk on the thread pool (after `flush`). */
  sync(): Promise<void> {
    if (this.fd === null) return Promise.resolve();
    const fd = this.fd;
    const writes = this.writes;
    this.syncing++;
    return new Promise((resolve, reject) =>
      fs.fsync(fd, (err) => {
        this.syncing--;
        if (err) return reject(err);
        if (this.writes === writes) this.unsynced = false;
        trimOpen();
        resolve();
      }),
    );
  }

  /** Cuts the file back to `size` (a rolled-back import), dropping the pending block. */
  truncate(size: number): void {
    this.dropUnwritten();
    cacheDrop(this);
    this.size = size;
    this.cutGrams(size);
    if (this.fd !== null) fs.ftruncateSync(this.fd, size);
    else if (fs.existsSync(this.file)) fs.truncateSync(this.file, size);
  }

  /** Forgets the block being filled and those being packed (their rows were rolled back); the file stays as it is. */
  dropPending(): void {
    this.dropUnwritten();
  }

  /** Closes the file and forgets its cached blocks (the partition is removed, or the store closed). */
  close(): void {
    if (this.pendingBytes > 0 || this.sealed.length) throw new Error(`${path.basename(this.file)}: closing with an unwritten block`);
    this.closeFd();
    this.unsynced = false;
    cacheDrop(this);
  }
}

function readFully(fd: number, buf: Buffer, pos: number, file: string): void {
  let got = 0;
  while (got < buf.length) {
    const n = fs.readSync(fd, buf, got, buf.length - got, pos + got);
    if (n === 0) throw new StoreFileDamaged(partFileName(file), `it ends before byte ${pos + buf.length}`);
    got += n;
  }
}

/** The CRC seed of a record file: its folder's name and its own (`edge_logs/20261121.records`). */
export function seedOf(file: string): number {
  return zlib.crc32(`${path.basename(path.dirname(file))}/${path.basename(file)}`);
}

/**
 * The raw bytes of the block at `at` of a file whose committed length is `size`, or what is
 * wrong with it: every length is checked before it is used (a damaged one would read past the
 * block or allocate gigabytes), then the decompression and, for blocks that carry one, the CRC.
 */
function decodeBlock(fd: number, file: string, at: number, size: number, seed: number): Buffer | string {
  const head = Buffer.allocUnsafe(HEADER + CRC_BYTES);
  if (at < 0 || at + HEADER > size) return `the block at byte ${at} lies past the committed end`;
  try {
    readFully(fd, head.subarray(0, HEADER), at, file);
    const word = head.readUInt32LE(0);
    const checked = (word & CHECKED) !== 0;
    const packedBytes = word & ~CHECKED;
    const start = at + HEADER + (checked ? CRC_BYTES : 0);
    if (start + packedBytes > size) return `the block at byte ${at} has a length that runs past the committed end`;
    if (checked) readFully(fd, head.subarray(HEADER), at + HEADER, file);
    const packed = Buffer.allocUnsafe(packedBytes);
    readFully(fd, packed, start, file);
    const rawBytes = head.readUInt32LE(4);
    let raw: Buffer;
    try {
      raw = zlib.brotliDecompressSync(packed, { maxOutputLength: Math.max(rawBytes, 1) });
    } catch {
      return `the block at byte ${at} does not decompress`;
    }
    if (raw.length !== rawBytes) return `the block at byte ${at} does not decompress to its recorded length`;
    if (checked && zlib.crc32(raw, seed) !== head.readUInt32LE(HEADER)) return `the block at byte ${at} fails its checksum (damaged, or another partition's file under this name)`;
    return raw;
  } catch (err) {
    if (err instanceof StoreFileDamaged) return err.problem;
    throw err;
  }
}

/** The length of the block at `at` (header included), read from its header. */
function blockLength(fd: number, at: number): number {
  const head = Buffer.allocUnsafe(4);
  fs.readSync(fd, head, 0, 4, at);
  const word = head.readUInt32LE(0);
  return HEADER + ((word & CHECKED) !== 0 ? CRC_BYTES : 0) + (word & ~CHECKED);
}

/**
 * Reads a record file's committed blocks without changing it (`npm run check`): each block's
 * lengths must chain to exactly `size`, and each must decompress to its recorded length and
 * match its CRC. Returns what is wrong, or null.
 */
export function verifyRecordFile(file: string, size: number): string | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return size > 0 ? 'the file is missing' : null;
  }
  try {
    const actual = fs.fstatSync(fd).size;
    if (actual < size) return `it holds ${actual} bytes but the catalog counts ${size}`;
    const seed = seedOf(file);
    for (let at = 0; at < size; at += blockLength(fd, at)) {
      const raw = decodeBlock(fd, file, at, size, seed);
      if (typeof raw === 'string') return raw;
    }
    return null;
  } finally {
    fs.closeSync(fd);
  }
}
