/**
 * The field index: for every path the records of a partition carry (discovered from them: each
 * scalar, and each array that is not of one element, at a dotted path of objects), each row's
 * value as an id into a small per-partition dictionary, and the rows of each value counted per
 * project. It is a section of the partition version's columns file (scan-columns.ts), built from
 * the records after the columns (docs/ARCHITECTURE.md, "Explorer"), so a field condition or facet
 * reads ids instead of parsing every record of the window. A path no record of the partition
 * holds is known absent without a read, when the index saw every path (FieldIndex `all`).
 *
 * A value is what the record walk compares and counts (explorer/record-fields.ts): the metadata
 * of the record as stored, JSON-parsed, read at the path with one-element arrays looked through
 * (`valueAt`) and written as text (`fieldText`: numbers and booleans as their text, objects and
 * other arrays as JSON, null and missing alike absent). A record that is not JSON gets
 * UNREADABLE, which no condition passes (the walk drops such a record whenever a field is tested).
 *
 * A path whose values in one partition pass MAX_FIELD_TEXTS distinct texts or MAX_FIELD_TEXT_CHARS
 * characters, or an eighth of its rows (FEW_TEXTS_SHARE), is not kept for that partition
 * (`capped`): a request id or a timestamp, say. The explorer reads that partition's records for
 * it instead.
 *
 * Value bits: per record block of the partition, a Bloom filter of "path and the first
 * VALUE_CHARS characters of its value" for every value of every record in it (capped paths too;
 * value-bits.ts), so a condition on a capped path reads only the blocks that may hold its value
 * (a ray's prefix, say: the block index's trigrams hold four hex digits in nearly every block).
 *
 * Section (appended to the columns file, its length in the file's header): u32 bytes of the
 * descriptor, u32 CRC-32 of the descriptor, the descriptor (JSON: rows, whether every path was
 * discovered, the paths holding objects, and per path in path order its state, text count, id
 * width, packed bytes and CRC of each part, count entries; the value bits' block count, bytes
 * and CRC), then per kept path its dictionary (a JSON array of texts, deflated), its ids (n of
 * 1, 2 or 4 bytes, little-endian, deflated) and its counts (k projects, k ids, k counts, Int32,
 * by project then id), then the value bits (the blocks' offsets as f64, then their bits). A part
 * is read when first asked for and checked against its CRC then.
 */
import zlib from 'node:zlib';
import { metadataOfRecord } from './record.ts';
import { pathHash, ValueBits, ValueBitsBuilder } from './value-bits.ts';
import { fieldText } from '../../contract/fields.ts';

/**
 * Names how a columns file's field index was built (in the file's header): a section built
 * another way (the fixed list of paths per source before discovery) is built again.
 */
export const FIELD_SCHEME = zlib.crc32('every path of the records, discovered per partition, parts deflated, value bits per block: 4');

/**
 * Paths (leaves and objects) a partition's index discovers at most; past them, new paths are not
 * indexed (records with keys of their own, say) and a path it lacks is read from the records.
 */
export const MAX_FIELD_PATHS = 256;

/** A row without the field (missing, or JSON null). */
export const ABSENT = 0;
/** A row whose record is not JSON: no condition passes it, no facet counts it. */
export const UNREADABLE = 1;
/** The id of dictionary text k is FIRST_TEXT + k. */
export const FIRST_TEXT = 2;

/** Past these, a path is not kept for the partition (capped): its records are read instead. */
export const MAX_FIELD_TEXTS = 16_384;
export const MAX_FIELD_TEXT_CHARS = 512 * 1024;
/**
 * A path with more distinct values than a FEW_TEXTS_SHARE of the partition's rows (and more than
 * MIN_FEW_TEXTS) is not kept either: values that change with almost every record (ids, rays,
 * timestamps, URLs) made the index as large as the records' text (at 1M edge records, 160 MB of
 * the 224 MB of columns files), and nobody facets them.
 */
export const FEW_TEXTS_SHARE = 1 / 8;
export const MIN_FEW_TEXTS = 256;

export type FieldIds = Uint8Array | Uint16Array | Uint32Array;

/** Rows per (project, value id) of the whole partition, by project then id; text ids only. */
export interface FieldCounts {
  readonly k: number;
  readonly project: Int32Array;
  readonly id: Int32Array;
  readonly count: Int32Array;
}

/** One path's entry: what the descriptor says, and its parts once read (or built). */
interface PathEntry {
  path: string;
  capped: boolean;
  /** Dictionary texts, ids and counts; set when built or read. */
  texts?: string[];
  /** The texts' bytes in memory, once counted (the cache asks at every read: a pass over every text each time was most of a warm answer). */
  textBytes?: number;
  ids?: FieldIds;
  counts?: FieldCounts;
  /** Where its parts are in the file (null: built in memory). */
  file: { textsAt: number; textsBytes: number; textsCrc: number; textCount: number; idsAt: number; idsBytes: number; width: 1 | 2 | 4; idsCrc: number; countsAt: number; k: number; countsCrc: number } | null;
  /** A part failed its check: the path is treated as not indexed here. */
  broken?: boolean;
}

/** Reads `bytes` bytes at `at` of the columns file (throws when the file is shorter). */
export type SectionReader = (at: number, bytes: number) => Buffer;

/**
 * A partition version's field index: per indexed path, its dictionary, ids and counts (read
 * from the file when first asked for). A path is `has` when it was kept and its parts pass
 * their checks; a part that fails marks it broken and calls `damaged` (the file is rebuilt).
 */
export class FieldIndex {
  /** Called once when a part fails its check. */
  damaged: (() => void) | null = null;
  private absentIds: Uint8Array | null = null;

  constructor(
    readonly n: number,
    private readonly entries: ReadonlyMap<string, PathEntry>,
    private readonly read: SectionReader | null,
    /**
     * Every path of every record was discovered (none past MAX_FIELD_PATHS, every record JSON):
     * a path neither listed nor an object anywhere (`objects`) is absent from every row.
     */
    private readonly all = false,
    private readonly objects: ReadonlySet<string> = new Set(),
    /** The value bits: built, or where they are in the file (null: none, or found damaged). */
    private values: ValueBits | { at: number; bytes: number; crc: number; blocks: number } | null = null,
  ) {}

  /**
   * The blocks of the partition that may hold a record whose value at each need's path has its
   * bits (value-bits.ts valueNeed), or null when the value bits cannot tell: no need on a path
   * it lists (past MAX_FIELD_PATHS, say), no bits, or bits that fail their check. Every block of
   * its rows is listed in the bits, so a block left out holds no record that can pass: an empty
   * set rules out the whole partition.
   */
  blocksMayHold(needs: ReadonlyArray<{ path: string; need: Int32Array }>): Set<number> | null {
    const listed = needs.filter((n) => this.entries.has(n.path)).map((n) => n.need);
    const bits = listed.length ? this.valueBits() : null;
    return bits && bits.blocksHolding(listed);
  }

  /** The value bits, read from the file when first asked for. */
  private valueBits(): ValueBits | null {
    const v = this.values;
    if (v === null || v instanceof ValueBits) return v;
    try {
      return (this.values = ValueBits.decode(this.checked(v.at, v.bytes, v.crc), v.blocks));
    } catch {
      this.values = null;
      this.tellDamaged();
      return null;
    }
  }

  /** Calls `damaged` once. */
  private tellDamaged(): void {
    const d = this.damaged;
    this.damaged = null;
    d?.();
  }

  /** The paths it lists (kept or capped), in order. */
  get paths(): string[] {
    return [...this.entries.keys()];
  }

  /** The paths whose values it holds (listed, kept, and not found damaged). */
  get kept(): string[] {
    return this.paths.filter((p) => this.has(p));
  }

  /** Whether the path's values are here for every row (kept, and not found damaged; or absent from every record). */
  has(path: string): boolean {
    const e = this.entries.get(path);
    return e !== undefined ? !e.capped && !e.broken : this.absent(path);
  }

  /** Whether no record of the partition has a value at the path (not listed, not an object in any record). */
  private absent(path: string): boolean {
    return this.all && !this.entries.has(path) && !this.objects.has(path);
  }

  /** Whether the path was left out of this partition for its many values. */
  capped(path: string): boolean {
    return this.entries.get(path)?.capped === true;
  }

  private part<T>(path: string, get: (e: PathEntry) => T | undefined, load: (e: PathEntry, f: NonNullable<PathEntry['file']>) => T): T | null {
    const e = this.entries.get(path);
    if (!e || e.capped || e.broken) return null;
    const have = get(e);
    if (have !== undefined) return have;
    if (!e.file || !this.read) return null;
    try {
      return load(e, e.file);
    } catch {
      e.broken = true;
      this.tellDamaged();
      return null;
    }
  }

  private checked(at: number, bytes: number, crc: number): Buffer {
    const buf = this.read!(at, bytes);
    if (buf.length !== bytes || zlib.crc32(buf) !== crc) throw new Error('a field index part fails its check');
    return buf;
  }

  /** The path's dictionary (id FIRST_TEXT + k is texts[k]); null when the path is not here. */
  texts(path: string): readonly string[] | null {
    if (this.absent(path)) return [];
    return this.part(
      path,
      (e) => e.texts,
      (e, f) => {
        const list = JSON.parse(zlib.inflateRawSync(this.checked(f.textsAt, f.textsBytes, f.textsCrc)).toString('utf8')) as unknown;
        if (!Array.isArray(list) || list.length !== f.textCount || !list.every((t) => typeof t === 'string')) throw new Error('not a dictionary');
        return (e.texts = list as string[]);
      },
    );
  }

  /** The path's id of every row (ABSENT, UNREADABLE or FIRST_TEXT + k); null when the path is not here. */
  ids(path: string): FieldIds | null {
    if (this.absent(path)) return (this.absentIds ??= new Uint8Array(this.n));
    return this.part(
      path,
      (e) => e.ids,
      (e, f) => {
        const buf = zlib.inflateRawSync(this.checked(f.idsAt, f.idsBytes, f.idsCrc));
        if (buf.length !== this.n * f.width) throw new Error('ids of another count');
        // A copy on its own buffer: typed arrays wider than a byte need an aligned start.
        const own = new Uint8Array(buf).buffer;
        const ids = f.width === 1 ? new Uint8Array(own) : f.width === 2 ? new Uint16Array(own) : new Uint32Array(own);
        for (let i = 0; i < ids.length; i++) if (ids[i]! >= FIRST_TEXT + f.textCount) throw new Error('an id past the dictionary');
        return (e.ids = ids);
      },
    );
  }

  /** The path's rows per (project, id) over the whole partition; null when the path is not here. */
  counts(path: string): FieldCounts | null {
    if (this.absent(path)) return { k: 0, project: new Int32Array(0), id: new Int32Array(0), count: new Int32Array(0) };
    return this.part(
      path,
      (e) => e.counts,
      (e, f) => {
        const own = new Uint8Array(this.checked(f.countsAt, f.k * 12, f.countsCrc)).buffer;
        const counts = { k: f.k, project: new Int32Array(own, 0, f.k), id: new Int32Array(own, f.k * 4, f.k), count: new Int32Array(own, f.k * 8, f.k) };
        for (let j = 0; j < f.k; j++) if (counts.id[j]! < FIRST_TEXT || counts.id[j]! >= FIRST_TEXT + f.textCount) throw new Error('a count of no text');
        return (e.counts = counts);
      },
    );
  }

  /** Bytes held in memory now (parts read or built). */
  get bytes(): number {
    let total = this.values instanceof ValueBits ? this.values.byteLength : 0;
    for (const e of this.entries.values()) {
      total += (e.ids?.byteLength ?? 0) + (e.counts ? e.counts.k * 12 : 0);
      if (e.texts && e.textBytes === undefined) e.textBytes = e.texts.reduce((n, t) => n + 2 * t.length + 16, 0);
      total += e.textBytes ?? 0;
    }
    return total;
  }

  /** The section's bytes (every part is read first: a rewrite of the file carries it over). */
  encode(): Buffer {
    const parts: Buffer[] = [];
    const described: unknown[] = [];
    for (const [path, e] of this.entries) {
      const texts = e.capped ? null : this.texts(path);
      const ids = e.capped ? null : this.ids(path);
      const counts = e.capped ? null : this.counts(path);
      if (e.capped || !texts || !ids || !counts) {
        if (!e.capped) throw new Error(`the field index of ${path} cannot be read whole`);
        described.push({ path, capped: true });
        continue;
      }
      // Deflated (level 1): most paths hold a few values, whose ids pack to almost nothing.
      const t = zlib.deflateRawSync(Buffer.from(JSON.stringify(texts), 'utf8'), { level: 1 });
      const i = zlib.deflateRawSync(Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength), { level: 1 });
      const c = Buffer.concat([counts.project, counts.id, counts.count].map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)));
      parts.push(t, i, c);
      described.push({ path, capped: false, texts: t.length, textsCrc: zlib.crc32(t), count: texts.length, width: ids.BYTES_PER_ELEMENT, ids: i.length, idsCrc: zlib.crc32(i), k: counts.k, countsCrc: zlib.crc32(c) });
    }
    const bits = this.valueBits();
    const v = bits?.encode();
    if (v) parts.push(v);
    const values = bits && v ? { blocks: bits.blocks.length, bytes: v.length, crc: zlib.crc32(v) } : null;
    const descriptor = Buffer.from(JSON.stringify({ n: this.n, all: this.all, objects: [...this.objects], paths: described, values }), 'utf8');
    const head = Buffer.alloc(8);
    head.writeUInt32LE(descriptor.length, 0);
    head.writeUInt32LE(zlib.crc32(descriptor), 4);
    return Buffer.concat([head, descriptor, ...parts]);
  }

  /**
   * Reads a section's descriptor (`sectionAt`, `bytes` long, in a file of `n` rows): null when it
   * fails its CRC, is not of these rows, or its parts do not fill the section exactly. The parts
   * themselves are read when asked for.
   */
  static open(read: SectionReader, sectionAt: number, bytes: number, n: number): FieldIndex | null {
    try {
      if (bytes < 8) return null;
      const head = read(sectionAt, 8);
      const d = head.readUInt32LE(0);
      if (8 + d > bytes) return null;
      const json = read(sectionAt + 8, d);
      if (zlib.crc32(json) !== head.readUInt32LE(4)) return null;
      const desc = JSON.parse(json.toString('utf8')) as { n?: unknown; all?: unknown; objects?: unknown; paths?: unknown; values?: unknown };
      if (desc.n !== n || !Array.isArray(desc.paths) || typeof desc.all !== 'boolean' || !Array.isArray(desc.objects) || !desc.objects.every((o) => typeof o === 'string')) return null;
      const paths = (desc.paths as Array<{ path?: unknown } | null>).map((p) => p?.path);
      if (!paths.every((p): p is string => typeof p === 'string') || new Set(paths).size !== paths.length) return null;
      const entries = new Map<string, PathEntry>();
      let at = sectionAt + 8 + d;
      const u32 = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0xffffffff;
      for (let j = 0; j < paths.length; j++) {
        const p = desc.paths[j] as Record<string, unknown>;
        if (p === null || typeof p !== 'object' || p.path !== paths[j]) return null;
        if (p.capped === true) {
          entries.set(paths[j]!, { path: paths[j]!, capped: true, file: null });
          continue;
        }
        const { texts, textsCrc, count, width, ids, idsCrc, k, countsCrc } = p;
        if (!u32(texts) || !u32(textsCrc) || !u32(count) || (width !== 1 && width !== 2 && width !== 4) || !u32(ids) || !u32(idsCrc) || !u32(k) || !u32(countsCrc)) return null;
        const file = { textsAt: at, textsBytes: texts, textsCrc, textCount: count, idsAt: at + texts, idsBytes: ids, width: width as 1 | 2 | 4, idsCrc, countsAt: at + texts + ids, k, countsCrc };
        at = file.countsAt + k * 12;
        entries.set(paths[j]!, { path: paths[j]!, capped: false, file });
      }
      let values: { at: number; bytes: number; crc: number; blocks: number } | null = null;
      if (desc.values !== null && desc.values !== undefined) {
        const v = desc.values as Record<string, unknown>;
        if (typeof v !== 'object' || !u32(v.blocks) || !u32(v.bytes) || !u32(v.crc)) return null;
        values = { at, bytes: v.bytes, crc: v.crc, blocks: v.blocks };
        at += v.bytes;
      }
      if (at !== sectionAt + bytes) return null;
      return new FieldIndex(n, entries, read, desc.all, new Set(desc.objects as string[]), values);
    } catch {
      return null;
    }
  }
}

/** The rows a field index is built for, in the columns' order: where each record is, and its project. */
export interface FieldRows {
  readonly n: number;
  readonly blk: Float64Array;
  readonly boff: Int32Array;
  readonly len: Int32Array;
  readonly project: Int32Array;
}

/** Records parsed per step at most. */
const STEP_RECORDS = 2_000;
/**
 * How long a step of the background builder runs before its turn (ms): a request that comes
 * meanwhile waits for the rest of it. 2,000 edge records (3.4 MB of JSON to parse and walk)
 * took 30-120 ms; steps of 8 ms, ending only between blocks (about 9 ms of records each), put
 * the p99 of endpoints asked while a fresh import's field index was built near 20 ms.
 */
const STEP_MS = 3;

/**
 * Builds a field index from the records: each block decompressed once (rows grouped by block),
 * each record parsed once and walked once, its paths discovered as it goes. A path first met as
 * a value after being met as an object (whose JSON is its value in the records before) is listed
 * capped; a path first met later than the first row is absent from the rows before it.
 */
class FieldIndexBuilder {
  private readonly index = new Map<string, number>();
  private readonly paths: string[] = [];
  private readonly maps: Array<Map<string, number> | null> = [];
  private readonly texts: string[][] = [];
  private readonly chars: number[] = [];
  private readonly ids: Uint32Array[] = [];
  private readonly objects = new Set<string>();
  /** Rows whose record is not JSON (UNREADABLE in every path, those discovered later too). */
  private readonly unreadable: number[] = [];
  private all = true;
  private readonly blocks: number[];
  private readonly rowsOf = new Map<number, number[]>();
  private next = 0;
  /** The block being read (a step may end inside it): its bytes, its rows, how many are read. */
  private current: { raw: Buffer; rows: number[]; k: number } | null = null;
  /** The paths in the order the index lists them, and their entries so far (finishStep). */
  private order: Array<readonly [string, number]> | null = null;
  private readonly entries = new Map<string, PathEntry>();
  /** pathHash of each listed path, by index. */
  private readonly pathHashes: number[] = [];
  private readonly values = new ValueBitsBuilder();

  constructor(
    private readonly rows: FieldRows,
    private readonly block: (blk: number) => Buffer | null,
  ) {
    for (let i = 0; i < rows.n; i++) {
      const b = rows.blk[i]!;
      let list = this.rowsOf.get(b);
      if (!list) this.rowsOf.set(b, (list = []));
      list.push(i);
    }
    this.blocks = [...this.rowsOf.keys()].sort((a, b) => a - b);
  }

  /**
   * Reads the next records (until STEP_RECORDS records or `budgetMs` have passed, one record at
   * least); true when every row is read. A step may end inside a block: a block of edge records
   * took about 9 ms to parse and walk, longer than a step may hold requests.
   */
  step(budgetMs = Infinity): boolean {
    const until = performance.now() + budgetMs;
    for (let done = 0; ; ) {
      if (!this.current) {
        if (this.next >= this.blocks.length) return true;
        const blk = this.blocks[this.next++]!;
        const raw = this.block(blk);
        if (!raw) throw new Error('a block of the partition is not written yet');
        this.values.startBlock(blk);
        this.current = { raw, rows: this.rowsOf.get(blk)!, k: 0 };
      }
      const c = this.current;
      while (c.k < c.rows.length) {
        this.readRow(c.raw, c.rows[c.k++]!);
        if (++done >= STEP_RECORDS || performance.now() >= until) {
          if (c.k >= c.rows.length) this.current = null;
          return this.current === null && this.next >= this.blocks.length;
        }
      }
      this.current = null;
    }
  }

  /** Row i's record, from its block's bytes: its values given to every path it holds. */
  private readRow(raw: Buffer, i: number): void {
    const at = this.rows.boff[i]!;
    const { readable, metadata } = metadataOfRecord(raw.toString('utf8', at, at + this.rows.len[i]!));
    if (readable) this.visit(metadata, '', i);
    else {
      this.unreadable.push(i);
      // A path absent from the index would be said absent from this record, which no condition may pass.
      this.all = false;
      for (const ids of this.ids) ids[i] = UNREADABLE;
    }
  }

  /** Gives row i its value at `path` (the record's `v` there) and at every path below it, as valueAt reads them. */
  private visit(v: unknown, path: string, i: number): void {
    while (Array.isArray(v) && v.length === 1) v = v[0];
    if (v === null || v === undefined) return;
    const isObject = typeof v === 'object' && !Array.isArray(v);
    if (path) {
      const j = this.index.get(path) ?? (isObject ? undefined : this.discover(path));
      if (j !== undefined) {
        const text = fieldText(v);
        // Every value has its gram, capped paths' too: the value bits are for them.
        if (text !== null) this.values.add(this.pathHashes[j]!, text);
        if (this.maps[j]) this.ids[j]![i] = this.idOf(j, text);
      }
      if (isObject && !this.objects.has(path)) {
        if (this.objects.size >= MAX_FIELD_PATHS) this.all = false;
        else this.objects.add(path);
      }
    }
    if (!isObject) return;
    const o = v as Record<string, unknown>;
    // A key holding a dot cannot be named by a dotted path (valueAt splits it).
    for (const k in o) if (Object.hasOwn(o, k) && !k.includes('.')) this.visit(o[k], path ? `${path}.${k}` : k, i);
  }

  /** Lists a path met as a value for the first time: its index, or undefined past MAX_FIELD_PATHS. */
  private discover(path: string): number | undefined {
    if (this.paths.length >= MAX_FIELD_PATHS) {
      this.all = false;
      return undefined;
    }
    const j = this.paths.length;
    this.index.set(path, j);
    this.paths.push(path);
    this.pathHashes.push(pathHash(path));
    this.texts.push([]);
    this.chars.push(0);
    if (this.objects.has(path)) {
      // An object in an earlier record: its value there was not kept.
      this.maps.push(null);
      this.ids.push(new Uint32Array(0));
    } else {
      this.maps.push(new Map());
      const ids = new Uint32Array(this.rows.n);
      for (const r of this.unreadable) ids[r] = UNREADABLE;
      this.ids.push(ids);
    }
    return j;
  }

  private idOf(j: number, text: string | null): number {
    if (text === null) return ABSENT;
    const map = this.maps[j];
    // Capped: the ids of this path are not kept.
    if (!map) return ABSENT;
    let id = map.get(text);
    if (id === undefined) {
      id = FIRST_TEXT + this.texts[j]!.length;
      this.texts[j]!.push(text);
      map.set(text, id);
      this.chars[j]! += text.length;
      if (this.texts[j]!.length > MAX_FIELD_TEXTS || this.chars[j]! > MAX_FIELD_TEXT_CHARS) {
        this.maps[j] = null;
        this.texts[j] = [];
        this.ids[j] = new Uint32Array(0);
        return ABSENT;
      }
    }
    return id;
  }

  /**
   * Gives the next paths their entries (until `budgetMs` has passed, one path at least: each
   * reads every row, a few ms for a busy hour); the index once every path has one.
   */
  finishStep(budgetMs = Infinity): FieldIndex | null {
    // Listed in path order: the same records give the same section whatever order their keys came in.
    this.order ??= this.paths.map((path, j) => [path, j] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const until = performance.now() + budgetMs;
    for (let done = 0; this.entries.size < this.order.length && (done === 0 || performance.now() < until); done++) {
      const [path, j] = this.order[this.entries.size]!;
      this.entries.set(path, this.entryOf(path, j));
    }
    if (this.entries.size < this.order.length) return null;
    return new FieldIndex(this.rows.n, this.entries, null, this.all, new Set([...this.objects].sort()), this.values.finish());
  }

  /** Path `j`'s entry: its ids narrowed and its rows counted per (project, value), or capped. */
  private entryOf(path: string, j: number): PathEntry {
    const most = Math.max(MIN_FEW_TEXTS, this.rows.n * FEW_TEXTS_SHARE);
    if (!this.maps[j] || this.texts[j]!.length > most) return { path, capped: true, file: null };
    const wide = this.ids[j]!;
    const top = FIRST_TEXT + this.texts[j]!.length;
    const ids = top <= 0x100 ? new Uint8Array(this.rows.n) : top <= 0x10000 ? new Uint16Array(this.rows.n) : new Uint32Array(this.rows.n);
    ids.set(wide);
    // Rows per (project, id): a key project * 2^17 + id is exact (ids stay below 2^17).
    const perKey = new Map<number, number>();
    for (let i = 0; i < this.rows.n; i++) {
      const id = ids[i]!;
      if (id < FIRST_TEXT) continue;
      const key = this.rows.project[i]! * 131072 + id;
      perKey.set(key, (perKey.get(key) ?? 0) + 1);
    }
    const keys = Float64Array.from(perKey.keys()).sort();
    const counts = { k: keys.length, project: new Int32Array(keys.length), id: new Int32Array(keys.length), count: new Int32Array(keys.length) };
    keys.forEach((key, x) => {
      counts.project[x] = Math.floor(key / 131072);
      counts.id[x] = key % 131072;
      counts.count[x] = perKey.get(key)!;
    });
    return { path, capped: false, texts: this.texts[j]!, ids, counts, file: null };
  }
}

/** Builds a partition's field index from its records at once. */
export function buildFieldIndex(rows: FieldRows, block: (blk: number) => Buffer | null): FieldIndex {
  const b = new FieldIndexBuilder(rows, block);
  while (!b.step()) {
    // Every step in one go.
  }
  return b.finishStep()!;
}

/**
 * buildFieldIndex in steps of at most STEP_MS (or STEP_RECORDS records), calling `between`
 * after each (a turn for other work); null when `between` says to give up (the partition
 * changed meanwhile).
 */
export async function buildFieldIndexInSteps(rows: FieldRows, block: (blk: number) => Buffer | null, between: () => Promise<boolean>, stepMs = STEP_MS): Promise<FieldIndex | null> {
  const b = new FieldIndexBuilder(rows, block);
  while (!b.step(stepMs)) if (!(await between())) return null;
  for (;;) {
    const index = b.finishStep(stepMs);
    if (index) return index;
    if (!(await between())) return null;
  }
}
