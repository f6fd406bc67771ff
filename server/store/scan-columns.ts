/**
 * A partition's hot columns as typed arrays, newest first (instant, then row number, both
 * descending), and its records counted per hour: what the explorer walks and sums for its pages,
 * histograms, facets, counts and searches without asking sql.js row by row. Derived from one
 * version of the partition's database and stored beside it (`<label>-v<version>.cols`, written
 * with the version, removed with it, and rebuilt from the database when missing or not whole);
 * see docs/ARCHITECTURE.md, "Explorer".
 *
 * Method and level are ids into the file's own small dictionaries; function, URL and path ids
 * are the store's (paths in its path dictionary, `paths.log`, shared by every partition so that
 * a week of paths is counted in one array and only the top ones are read as text). An edge
 * record's path is taken from its URL when the file is built, so the explorer never reads the
 * URL dictionary to filter or count paths.
 *
 * Besides the hour counts, the partition's records are counted per (project, path): a path facet
 * over the partitions a window covers whole adds these instead of walking every row.
 *
 * After them may come the partition's field index (field-columns.ts): the values of the fields
 * inside records that the source indexes, read from the records. The columns are built from the
 * database alone (an import writes them as it stages a partition); the field index is added by
 * the background builder, which writes the file again with it (the arrays before it unchanged).
 *
 * File: `LXSC`, u32 format, u32 rows, u32 hour-count entries, u32 path-count entries, u32 bytes of
 * each dictionary's JSON (DICTS order), u32 source code, the 8 bytes of the path dictionary's
 * epoch, f64 partition start, u32 version, u32 CRC-32 of the header and dictionaries, f64 bytes
 * of the path dictionary the file may use, a u32 CRC-32 per array (SECTIONS order), u32 how
 * many texts those bytes hold, u32 bytes of the field index section (0: not built), u32 CRC-32
 * of the list of paths it was built for, zero bytes to HEAD (the header's CRC covers every byte before the arrays); the JSON arrays, zero padding to 8 bytes, then the row arrays of ROW_COLUMNS in order
 * (Float64 first, so every array is aligned to its element size), the hour counts' arrays
 * (HOUR_COLUMNS, Int32), the path counts' arrays (PATH_COLUMNS, Int32, by project then
 * path), and the field index section, if any. A reader loads the header, the dictionaries and the hour counts, and only the row
 * arrays and path counts it asks for, each checked against its CRC as it is read.
 *
 * The file is derived, so a file that fails any check (another partition's or version's, cut,
 * flipped bytes, built against another or a cut path dictionary, a row count the catalog does
 * not record) is not an error: it is built again from the database.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import type { SourceInfo } from '../sources.ts';
import { MICROS } from '../time.ts';
import type { Db, SqlValue } from './db.ts';
import { FIELD_SCHEME, FieldIndex, type SectionReader } from './field-columns.ts';
import { arraysOffThread, readArrays, type ArrayRead, type ArraysRead, type SearchJob } from './search-worker.ts';

const MAGIC = 0x4353584c; // 'LXSC' little-endian
// 8: the field index reads metadata given as JSON text (7 saw no fields in it: rebuilt).
export const COLUMNS_FORMAT = 8;
const HEAD = 136;
const DICTS_AT = 20;
const SOURCE_AT = 28;
const EPOCH_AT = 32;
const START_AT = 40;
const VERSION_AT = 48;
const HEAD_CRC_AT = 52;
const PATH_BYTES_AT = 56;
const CRCS_AT = 64;
const PATH_COUNT_AT = 120;
const FIELDS_AT = 124;
const FIELD_LIST_AT = 128;
/** A missing number (status) or text (dictionary id). */
export const NONE = -1;
const HOUR = MICROS.hour;

const F64 = ['ts', 'blk'] as const;
const I32 = ['rid', 'project', 'boff', 'len', 'status', 'method', 'path', 'level', 'fn', 'url'] as const;
export type ColumnName = (typeof F64)[number] | (typeof I32)[number];
export const ROW_COLUMNS: readonly ColumnName[] = [...F64, ...I32];
const BYTES: Record<ColumnName, 4 | 8> = Object.fromEntries(ROW_COLUMNS.map((c) => [c, (F64 as readonly string[]).includes(c) ? 8 : 4])) as Record<ColumnName, 4 | 8>;
export const BYTES_PER_ROW = ROW_COLUMNS.reduce((n, c) => n + BYTES[c], 0);

/** The hour counts: records per (hour, project, status, method, level, function); no paths. */
const HOUR_COLUMNS = ['hour', 'project', 'status', 'method', 'level', 'fn', 'count'] as const;
export type HourCounts = { readonly m: number } & { readonly [K in (typeof HOUR_COLUMNS)[number]]: Int32Array };
/** Records per (project, path) of the whole partition, ordered by project then path id. */
const PATH_COLUMNS = ['project', 'path', 'count'] as const;
export type PathCounts = { readonly k: number } & { readonly [K in (typeof PATH_COLUMNS)[number]]: Int32Array };

/** The arrays with a CRC each, in file order. */
const SECTIONS = [...ROW_COLUMNS, 'hours', 'paths'] as const;
type SectionName = (typeof SECTIONS)[number];

/** Which file a columns file must be: what its header must say to be used. */
export interface ColumnsIdentity {
  /** The source's code and the partition's start and version. */
  source: number;
  start: number;
  version: number;
  /** The path dictionary's epoch. */
  epoch: string;
  /** Rows the catalog records for this version (undefined: not known, a staged version). */
  rows?: number;
  /**
   * Whether the path dictionary is the one the file was built against: its first `count` texts
   * end at byte `bytes` (false: it was cut, or damaged so that lines merged, after the file was
   * built, and some of its path ids name nothing, or another text).
   */
  pathsOk(bytes: number, count: number): boolean;
}

/** `hour` in HourCounts is the hour's start / HOUR_MICROS. */
export const HOUR_MICROS = HOUR;

export interface ScanDictionaries {
  readonly method: string[];
  readonly level: string[];
}
export type DictName = keyof ScanDictionaries;
/** The dictionaries in file order. */
const DICTS: readonly DictName[] = ['method', 'level'];

/** The store's path ids (store-wide, see TextDictionary), as a columns file is built. */
export interface PathIds {
  /** Names the path dictionary: 16 hex digits. */
  readonly epoch: string;
  /** The id of a path. */
  ofText(path: string): number;
  /** The id of an edge URL's path. */
  ofUrl(urlId: number): number;
  /** Makes `ofUrl` of these URL ids cheap (their URLs read together), when it can. */
  prefetchUrls?(urlIds: readonly number[]): void;
}

type RowArrays = { [K in (typeof F64)[number]]: Float64Array } & { [K in (typeof I32)[number]]: Int32Array };

/** Row arrays taken in from the search worker (ScanColumns.arrived) by this process (tests). */
let arraysFromWorker = 0;
export const columnArraysFromWorker = (): number => arraysFromWorker;

/**
 * A partition's columns. Row arrays: `ts`, `blk` (byte offset of the record's block in the
 * record file), `rid`, `project`, `boff`, `len`, `status` (or NONE), `method`, `level` (indexes
 * into `dicts`, or NONE), `path` (the store's path id, or NONE), `fn` and `url` (the store's
 * dictionary ids, 0 for none).
 * Those read from a file are loaded by `load`; reading one not loaded throws.
 */
export class ScanColumns {
  private readonly arrays: Partial<RowArrays>;
  private pathCountsRead: PathCounts | null;
  /** The field index: undefined until first asked for (read from the file), null when there is none. */
  private fieldIndexRead: FieldIndex | null | undefined;
  /** Called when the field index in its file fails a check (the columns cache has it built again). */
  onFieldsDamaged: (() => void) | null = null;
  /** Row arrays asked of the search worker (readAhead) and not taken in yet, with the names each job reads. */
  private ahead: Array<{ job: SearchJob<ArraysRead>; names: ColumnName[] }> = [];

  constructor(
    readonly n: number,
    /** The method and level texts (a few each: read with the header). */
    readonly dicts: ScanDictionaries,
    readonly hours: HourCounts,
    arrays: Partial<RowArrays>,
    /** Every hot column the source has was in the database (a partition not yet migrated lacks some: not written). */
    readonly complete: boolean,
    /** The path dictionary's epoch its path ids belong to. */
    readonly epoch: string,
    /** Where the arrays not loaded yet are: the file, each one's offset and CRC, and the field index section. */
    private readonly file: { path: string; offsets: Record<ColumnName, number>; pathCounts: { at: number; k: number }; crcs: Record<SectionName, number>; fields: { at: number; bytes: number; listCrc: number } } | null,
    pathCounts: PathCounts | null = null,
  ) {
    this.pathCountsRead = pathCounts;
    this.arrays = arrays;
    // Built from the database: no field index until one is attached.
    this.fieldIndexRead = file ? undefined : null;
  }

  /**
   * The field index of the version (field-columns.ts): read from the file's section (its
   * descriptor now, its parts when asked for), or attached once built; an empty one when the
   * source indexes no path. Null when it is not built yet, was built for another list of paths,
   * or its descriptor fails a check: the fields are then read from the records.
   */
  fieldIndex(): FieldIndex | null {
    if (this.fieldIndexRead !== undefined) return this.fieldIndexRead;
    let fx: FieldIndex | null = null;
    const f = this.file!;
    if (f.fields.bytes > 0 && f.fields.listCrc === FIELD_SCHEME) {
      fx = FieldIndex.open(sectionReader(f.path), f.fields.at, f.fields.bytes, this.n);
      if (!fx) this.onFieldsDamaged?.();
    }
    if (fx) fx.damaged = () => this.onFieldsDamaged?.();
    return (this.fieldIndexRead = fx);
  }

  /** Whether the field index is here (built, of the source's paths, its descriptor whole). */
  get fieldsBuilt(): boolean {
    return this.fieldIndex() !== null;
  }

  /** Attaches a field index built for these rows (written with them by encodeScanColumns). */
  attachFields(fx: FieldIndex): this {
    if (fx.n !== this.n) throw new Error('a field index of other rows');
    this.fieldIndexRead = fx;
    return this;
  }

  /**
   * Asks the search worker to read (and check) the row arrays named that are not in memory, for
   * `arrived` to take in: a walk asks this of the partitions ahead of it, so that it does not
   * read them itself (a week at 10M records is about 300 MB of arrays).
   */
  readAhead(names: readonly ColumnName[]): void {
    // Asked again with more names (a walk that found it reads records): only those not asked yet.
    const asked = new Set(this.ahead.flatMap((a) => a.names));
    const reads = this.arrayReads(names.filter((c) => !asked.has(c)));
    if (reads.length) this.ahead.push({ job: arraysOffThread(this.file!.path, reads), names: reads.map((r) => r.name as ColumnName) });
  }

  /** Where the named arrays not in memory are in the file (none for columns built in memory or without rows). */
  arrayReads(names: readonly ColumnName[]): ArrayRead[] {
    const f = this.file;
    if (!f || this.n === 0) return [];
    return names.filter((c) => !this.arrays[c]).map((c) => ({ name: c, at: f.offsets[c], bytes: this.n * BYTES[c], crc: f.crcs[c] }));
  }

  /**
   * Takes in the arrays asked by readAhead: at once when the worker has not started on them (it
   * never will: `load` reads them here), else when it has read them. An array it could not read
   * whole or that failed its CRC is left to `load`, which reads it here and reports it.
   */
  async arrived(): Promise<void> {
    const jobs = this.ahead;
    this.ahead = [];
    for (const { job } of jobs) {
      if (job.takeBack()) continue;
      const arrays = await job.answer;
      for (const { name, buffer } of arrays ?? []) {
        const c = name as ColumnName;
        if (this.arrays[c] || buffer.byteLength !== this.n * BYTES[c]) continue;
        this.take(c, buffer);
        arraysFromWorker++;
      }
    }
  }

  /** Whether arrays asked by readAhead are still to be taken in: a walk is coming to them (the columns cache keeps these columns). */
  get readingAhead(): boolean {
    return this.ahead.length > 0;
  }

  /** Forgets the arrays asked by readAhead (a walk that stopped): those the worker has not started are taken back. */
  dropAhead(): void {
    for (const { job } of this.ahead) job.takeBack();
    this.ahead = [];
  }

  /** Loads the row arrays asked for that are not in memory yet; throws when the file does not hold them whole. */
  load(names: readonly ColumnName[]): this {
    const missing = names.filter((c) => !this.arrays[c]);
    if (!missing.length) return this;
    if (!this.file) throw new Error('columns built in memory hold every array');
    // Read here now: the worker need not (if it has started, what it reads is not used for these).
    this.ahead = this.ahead.filter(({ job }) => !job.takeBack());
    for (const { name, buffer } of readArrays(this.file.path, this.arrayReads(missing))) this.take(name as ColumnName, buffer);
    for (const c of missing) {
      if (this.arrays[c]) continue;
      if (this.n > 0) throw new Error(`${this.file.path}: its ${c} column is cut short or fails its checksum`);
      this.take(c, new ArrayBuffer(0));
    }
    return this;
  }

  /** Makes `buffer` (read whole and checked) the row array `c`. */
  private take(c: ColumnName, buffer: ArrayBuffer): void {
    (this.arrays as Record<ColumnName, Float64Array | Int32Array>)[c] = BYTES[c] === 8 ? new Float64Array(buffer) : new Int32Array(buffer);
  }

  private get<K extends ColumnName>(c: K): RowArrays[K] {
    const a = this.arrays[c];
    if (!a) throw new Error(`the ${c} column is not loaded`);
    return a as RowArrays[K];
  }

  get ts(): Float64Array { return this.get('ts'); }
  get blk(): Float64Array { return this.get('blk'); }
  get rid(): Int32Array { return this.get('rid'); }
  get project(): Int32Array { return this.get('project'); }
  get boff(): Int32Array { return this.get('boff'); }
  get len(): Int32Array { return this.get('len'); }
  get status(): Int32Array { return this.get('status'); }
  get method(): Int32Array { return this.get('method'); }
  get path(): Int32Array { return this.get('path'); }
  get level(): Int32Array { return this.get('level'); }
  get fn(): Int32Array { return this.get('fn'); }
  get url(): Int32Array { return this.get('url'); }

  /** The partition's records per (project, path), read from the file on first use. */
  get pathCounts(): PathCounts {
    if (this.pathCountsRead) return this.pathCountsRead;
    if (!this.file) throw new Error('columns built in memory hold their path counts');
    const { at, k } = this.file.pathCounts;
    const buf = new ArrayBuffer(k * PATH_COLUMNS.length * 4);
    const fd = fs.openSync(this.file.path, 'r');
    try {
      if (fs.readSync(fd, new Uint8Array(buf), 0, buf.byteLength, at) !== buf.byteLength) throw new Error(`${this.file.path} ends inside its path counts`);
      if (zlib.crc32(new Uint8Array(buf)) !== this.file.crcs.paths) throw new Error(`${this.file.path}: its path counts fail their checksum`);
    } finally {
      fs.closeSync(fd);
    }
    return (this.pathCountsRead = allocateCounts(PATH_COLUMNS, 'k', k, { buf, at: 0 }));
  }

  /** Bytes held in memory now (arrays loaded, hour counts, path counts, the field index's parts read). */
  get bytes(): number {
    let total = this.hours.m * HOUR_COLUMNS.length * 4 + (this.pathCountsRead?.k ?? 0) * PATH_COLUMNS.length * 4 + (this.fieldIndexRead?.bytes ?? 0);
    for (const a of Object.values(this.arrays)) total += a.byteLength;
    return total;
  }

  /** Every row array (to write the file). */
  all(): RowArrays {
    return this.load(ROW_COLUMNS).arrays as RowArrays;
  }
}

/**
 * The partition's hot columns a source has, in the order buildScanColumns reads them (NULL for
 * those the table lacks: a partition written before they existed, until it is migrated).
 */
function selectOf(db: Db, source: SourceInfo): { sql: string; complete: boolean } {
  const hot = source.hot;
  const present = new Set(db.rows(`PRAGMA table_info(${source.alias})`).map((r) => r[1] as string));
  const has: Record<string, boolean> = {
    status: hot !== 'function_event',
    method: hot !== 'function_event',
    path: hot === 'function_edge' || hot === 'plain',
    level: hot === 'function_event' || hot === 'plain',
    function: hot === 'function_edge' || hot === 'function_event',
    url: hot === 'edge',
  };
  const names = ['status', 'method', 'path', 'level', 'function', 'url'];
  return { sql: names.map((c) => (has[c] && present.has(c) ? c : 'NULL')).join(', '), complete: names.every((c) => !has[c] || present.has(c)) };
}

/**
 * Reads every row of a partition's database into columns, newest first, and counts them per hour.
 * @param paths the store's path ids (edge records keep their path in the URL)
 */
export function buildScanColumns(db: Db, source: SourceInfo, paths: PathIds): ScanColumns {
  const b = new ColumnsBuilder(db, source, paths);
  while (!b.step(db)) {
    // Every step in one go.
  }
  return b.finish();
}

/**
 * buildScanColumns in steps of STEP_ROWS rows, calling `between` after each (a turn for other
 * work); null when `between` says to give up (the partition changed meanwhile), or when `db`
 * gives none. `db` is asked for again right before each step, in the same synchronous run as the
 * step: the partition may have been dropped from memory (and loaded again) in between, even
 * after `between` resolved (other work runs before an await resumes).
 */
export async function buildScanColumnsInSteps(db: () => Db | null, source: SourceInfo, paths: PathIds, between: () => Promise<boolean>): Promise<ScanColumns | null> {
  const first = db();
  if (!first) return null;
  const b = new ColumnsBuilder(first, source, paths);
  let at: Db | null = first;
  while (!b.step(at)) {
    if (!(await between())) return null;
    if (!(at = db())) return null;
  }
  return b.finish();
}

/** Rows read per step (about ten milliseconds of sql.js). */
const STEP_ROWS = 5_000;

/**
 * Reads a partition's rows in its table's key order, STEP_ROWS at a time, straight into typed
 * arrays (no array per row is kept: a busy hour is 200,000 rows), then orders them newest first.
 */
class ColumnsBuilder {
  private readonly select: { sql: string; complete: boolean };
  private readonly clustered: boolean;
  /** Function edge rows keyed with instants descending (partitionDdl's newestFirst). */
  private readonly descending: boolean;
  private readonly key: string[];
  private readonly n: number;
  private readonly cols: RowArrays;
  private at = 0;
  private after: SqlValue[] | null = null;
  private readonly dicts: Record<DictName, string[]> = { method: [], level: [] };
  private readonly ids = { method: new Map<string, number>(), level: new Map<string, number>() };
  /** Path ids met so far, by text and by URL id (the dictionary is asked once for each). */
  private readonly pathOfText = new Map<string, number>();
  private readonly pathOfUrl = new Map<number, number>();
  private readonly counts = new Map<string, number>();
  /** Records per project * 2^31 + path id. */
  private readonly perPath = new Map<number, number>();

  constructor(
    db: Db,
    private readonly source: SourceInfo,
    private readonly paths: PathIds,
  ) {
    this.select = selectOf(db, source);
    // The table's own key: rid, or the clustered key of function edge rows.
    this.clustered = source.hot === 'function_edge';
    this.key = this.clustered ? ['project', 'function', 'ts', 'rid'] : ['rid'];
    this.descending = this.clustered && /\bts DESC\b/.test((db.rows('SELECT sql FROM sqlite_master WHERE name = ?', [source.alias])[0]?.[0] as string | undefined) ?? '');
    this.n = db.rows(`SELECT count(*) FROM ${source.alias}`)[0]![0] as number;
    this.cols = allocate(this.n);
  }

  private idOf(field: DictName, text: string | null): number {
    if (text === null) return NONE;
    let id = this.ids[field].get(text);
    if (id === undefined) {
      id = this.dicts[field].length;
      this.dicts[field].push(text);
      this.ids[field].set(text, id);
    }
    return id;
  }

  private pathIdOf(text: string): number {
    let id = this.pathOfText.get(text);
    if (id === undefined) this.pathOfText.set(text, (id = this.paths.ofText(text)));
    return id;
  }

  private pathIdOfUrl(url: number): number {
    let id = this.pathOfUrl.get(url);
    if (id === undefined) this.pathOfUrl.set(url, (id = this.paths.ofUrl(url)));
    return id;
  }

  /** Reads the next rows; true when all are read. */
  step(db: Db): boolean {
    const { cols } = this;
    const rows = this.nextRows(db);
    if (this.at + rows.length > this.n) throw new Error(`${this.source.alias}: rows were added while its columns were built`);
    if (this.paths.prefetchUrls) {
      const unknown: number[] = [];
      for (const r of rows) {
        const url = r[11];
        if (typeof url === 'number' && url !== 0 && !this.pathOfUrl.has(url)) unknown.push(url);
      }
      if (unknown.length) this.paths.prefetchUrls(unknown);
    }
    for (const [ts, blk, rid, project, boff, len, status, method, path, level, fn, url] of rows) {
      const i = this.at++;
      cols.ts[i] = ts as number;
      cols.blk[i] = blk as number;
      cols.rid[i] = rid as number;
      cols.project[i] = project as number;
      cols.boff[i] = boff as number;
      cols.len[i] = len as number;
      cols.status[i] = typeof status === 'number' && Number.isInteger(status) && status >= 0 && status <= 0x7fffffff ? status : NONE;
      cols.method[i] = this.idOf('method', method as string | null);
      cols.path[i] = url !== null && url !== 0 ? this.pathIdOfUrl(url as number) : path === null ? NONE : this.pathIdOf(path as string);
      cols.level[i] = this.idOf('level', level as string | null);
      cols.fn[i] = (fn as number | null) ?? 0;
      cols.url[i] = (url as number | null) ?? 0;
      const k = `${Math.floor((ts as number) / HOUR)},${cols.project[i]},${cols.status[i]},${cols.method[i]},${cols.level[i]},${cols.fn[i]}`;
      this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
      if (cols.path[i] !== NONE) {
        const pk = cols.project[i]! * PROJECT_STRIDE + cols.path[i]!;
        this.perPath.set(pk, (this.perPath.get(pk) ?? 0) + 1);
      }
    }
    if (rows.length < STEP_ROWS) return true;
    const i = this.at - 1;
    this.after = this.clustered ? [cols.project[i]!, cols.fn[i]!, cols.ts[i]!, cols.rid[i]!] : [cols.rid[i]!];
    return false;
  }

  /**
   * The next STEP_ROWS rows in the table's key order, after the last ones read: one range of the
   * key each (a key with instants descending is walked as two: the rest of the last (project,
   * function), then the ones after it; one comparison of all four columns would sort the table).
   */
  private nextRows(db: Db): SqlValue[][] {
    const select = `SELECT ts, blk, rid, project, boff, len, ${this.select.sql} FROM ${this.source.alias}`;
    if (!this.descending) {
      const { key } = this;
      const where = this.after ? `WHERE (${key.join(', ')}) > (${key.map(() => '?').join(', ')})` : '';
      return db.rows(`${select} ${where} ORDER BY ${key.join(', ')} LIMIT ${STEP_ROWS}`, this.after ?? []);
    }
    const order = 'ORDER BY project, function, ts DESC, rid DESC';
    if (!this.after) return db.rows(`${select} ${order} LIMIT ${STEP_ROWS}`);
    const [project, fn, ts, rid] = this.after;
    const rows = db.rows(`${select} WHERE project = ? AND function = ? AND (ts, rid) < (?, ?) ORDER BY ts DESC, rid DESC LIMIT ${STEP_ROWS}`, [project!, fn!, ts!, rid!]);
    if (rows.length === STEP_ROWS) return rows;
    return rows.concat(db.rows(`${select} WHERE (project, function) > (?, ?) ${order} LIMIT ${STEP_ROWS - rows.length}`, [project!, fn!]));
  }

  /** The columns, newest first (instant, then row number, descending). */
  finish(): ScanColumns {
    const { cols } = this;
    const n = this.at;
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((x, y) => cols.ts[y]! - cols.ts[x]! || cols.rid[y]! - cols.rid[x]!);
    const sorted = allocate(n);
    for (const k of ROW_COLUMNS) {
      const from = cols[k];
      const to = sorted[k];
      for (let i = 0; i < n; i++) to[i] = from[order[i]!]!;
    }
    const hours = allocateCounts(HOUR_COLUMNS, 'm', this.counts.size);
    let j = 0;
    for (const [k, count] of this.counts) {
      const parts = k.split(',').map(Number);
      for (let c = 0; c < 6; c++) hours[HOUR_COLUMNS[c]!][j] = parts[c]!;
      hours.count[j++] = count;
    }
    const keys = Float64Array.from(this.perPath.keys()).sort();
    const byPath = allocateCounts(PATH_COLUMNS, 'k', keys.length);
    keys.forEach((key, j) => {
      byPath.project[j] = Math.floor(key / PROJECT_STRIDE);
      byPath.path[j] = key % PROJECT_STRIDE;
      byPath.count[j] = this.perPath.get(key)!;
    });
    return new ScanColumns(n, this.dicts, hours, sorted, this.select.complete, this.paths.epoch, null, byPath);
  }
}

function allocate(n: number): RowArrays {
  const out = {} as RowArrays;
  for (const k of F64) out[k] = new Float64Array(n);
  for (const k of I32) out[k] = new Int32Array(n);
  return out;
}

/** Path ids are below 2^31: project * PROJECT_STRIDE + path is an exact double. */
const PROJECT_STRIDE = 2 ** 31;

/** Count arrays of `m` entries (new, or over a buffer read from a file). */
function allocateCounts<C extends string, N extends string>(columns: readonly C[], size: N, m: number, from?: { buf: ArrayBuffer; at: number }): { readonly [K in N]: number } & { readonly [K in C]: Int32Array } {
  const out: Record<string, Int32Array | number> = { [size]: m };
  let at = from?.at ?? 0;
  for (const k of columns) {
    out[k] = from ? new Int32Array(from.buf, at, m) : new Int32Array(m);
    at += m * 4;
  }
  return out as { readonly [K in N]: number } & { readonly [K in C]: Int32Array };
}

const pad8 = (n: number) => (n + 7) & ~7;

/** The file's bytes (of complete columns only), naming the partition version it is of and the path dictionary bytes it may use. */
export function encodeScanColumns(c: ScanColumns, id: { source: number; start: number; version: number; pathBytes: number; pathCount: number }): Buffer {
  if (!c.complete) throw new Error('columns of a partition not yet migrated are not written');
  const arrays = c.all();
  const jsons = DICTS.map((d) => Buffer.from(JSON.stringify(c.dicts[d]), 'utf8'));
  const jsonBytes = jsons.reduce((a, b) => a + b.length, 0);
  const start = pad8(HEAD + jsonBytes);
  const pc = c.pathCounts;
  // The field index when built.
  const fx = c.fieldIndex();
  const fields = fx ? fx.encode() : Buffer.alloc(0);
  const out = Buffer.alloc(start + c.n * BYTES_PER_ROW + c.hours.m * HOUR_COLUMNS.length * 4 + pc.k * PATH_COLUMNS.length * 4 + fields.length);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(COLUMNS_FORMAT, 4);
  out.writeUInt32LE(c.n, 8);
  out.writeUInt32LE(c.hours.m, 12);
  out.writeUInt32LE(pc.k, 16);
  out.writeUInt32LE(id.source, SOURCE_AT);
  Buffer.from(c.epoch, 'hex').copy(out, EPOCH_AT);
  out.writeDoubleLE(id.start, START_AT);
  out.writeUInt32LE(id.version, VERSION_AT);
  out.writeDoubleLE(id.pathBytes, PATH_BYTES_AT);
  out.writeUInt32LE(id.pathCount, PATH_COUNT_AT);
  out.writeUInt32LE(fields.length, FIELDS_AT);
  out.writeUInt32LE(FIELD_SCHEME, FIELD_LIST_AT);
  let at = HEAD;
  jsons.forEach((j, i) => {
    out.writeUInt32LE(j.length, DICTS_AT + 4 * i);
    j.copy(out, at);
    at += j.length;
  });
  at = start;
  const sections: Array<readonly (Float64Array | Int32Array)[]> = [...ROW_COLUMNS.map((k) => [arrays[k]]), HOUR_COLUMNS.map((k) => c.hours[k]), PATH_COLUMNS.map((k) => pc[k])];
  sections.forEach((arrs, i) => {
    const from = at;
    for (const arr of arrs) {
      Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength).copy(out, at);
      at += arr.byteLength;
    }
    out.writeUInt32LE(zlib.crc32(out.subarray(from, at)), CRCS_AT + 4 * i);
  });
  fields.copy(out, at);
  out.writeUInt32LE(headCrc(out.subarray(0, start)), HEAD_CRC_AT);
  return out;
}

/** CRC-32 of the header (its own CRC field read as zero) and the dictionaries. */
function headCrc(head: Buffer): number {
  const copy = Buffer.from(head);
  copy.writeUInt32LE(0, HEAD_CRC_AT);
  return zlib.crc32(copy);
}

/** The columns file of a version's database file. */
export function columnsFileOf(dbFile: string): string {
  return dbFile.replace(/\.sqlite$/, '.cols');
}

/**
 * Opens a columns file: its dictionaries and hour counts are read, its row arrays when asked
 * (`load`). Null when it is missing, not a whole file of this format (or its dictionaries are
 * not lists of texts), fails a checksum, or is not the file `id` describes.
 */
export function readScanColumns(file: string, id: ColumnsIdentity): ScanColumns | null {
  return withFile(file, (fd) => {
    const head = readHead(fd, id);
    if (!head) return null;
    const { n, m, k, dicts: where, start, hoursAt, crcs, fields } = head;
    const dicts = {} as Record<DictName, string[]>;
    for (const d of DICTS) {
      const buf = where[d].json;
      let list: unknown;
      try {
        list = JSON.parse(buf.toString('utf8'));
      } catch {
        return null;
      }
      if (!Array.isArray(list) || !list.every((t) => typeof t === 'string')) return null;
      dicts[d] = list;
    }
    const hourBuf = new ArrayBuffer(m * HOUR_COLUMNS.length * 4);
    if (fs.readSync(fd, new Uint8Array(hourBuf), 0, hourBuf.byteLength, hoursAt) !== hourBuf.byteLength) return null;
    if (zlib.crc32(new Uint8Array(hourBuf)) !== crcs.hours) return null;
    const offsets = {} as Record<ColumnName, number>;
    let at = start;
    for (const c of ROW_COLUMNS) {
      offsets[c] = at;
      at += n * BYTES[c];
    }
    const pathCounts = { at: hoursAt + m * HOUR_COLUMNS.length * 4, k };
    return new ScanColumns(n, dicts, allocateCounts(HOUR_COLUMNS, 'm', m, { buf: hourBuf, at: 0 }), {}, true, id.epoch, { path: file, offsets, pathCounts, crcs, fields }, null);
  });
}

/** `read` over the open file; null when there is no file. */
function withFile<T>(file: string, read: (fd: number) => T): T | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    return read(fd);
  } finally {
    fs.closeSync(fd);
  }
}

interface Head {
  n: number;
  m: number;
  k: number;
  dicts: Record<DictName, { json: Buffer }>;
  start: number;
  hoursAt: number;
  crcs: Record<SectionName, number>;
  /** The field index section: where it starts, its bytes (0: none) and the CRC of the paths it is of. */
  fields: { at: number; bytes: number; listCrc: number };
}

/** The header's counts and where each part is; null unless the file is whole, of this format and the file `id` describes. */
function readHead(fd: number, id: ColumnsIdentity): Head | null {
  const size = fs.fstatSync(fd).size;
  const head = Buffer.alloc(HEAD);
  if (size < HEAD || fs.readSync(fd, head, 0, HEAD, 0) !== HEAD) return null;
  if (head.readUInt32LE(0) !== MAGIC || head.readUInt32LE(4) !== COLUMNS_FORMAT) return null;
  if (head.toString('hex', EPOCH_AT, EPOCH_AT + 8) !== id.epoch) return null;
  if (head.readUInt32LE(SOURCE_AT) !== id.source || head.readDoubleLE(START_AT) !== id.start || head.readUInt32LE(VERSION_AT) !== id.version) return null;
  const n = head.readUInt32LE(8);
  if (id.rows !== undefined && n !== id.rows) return null;
  if (!id.pathsOk(head.readDoubleLE(PATH_BYTES_AT), head.readUInt32LE(PATH_COUNT_AT))) return null;
  const m = head.readUInt32LE(12);
  const k = head.readUInt32LE(16);
  let jsonBytes = 0;
  DICTS.forEach((_, i) => (jsonBytes += head.readUInt32LE(DICTS_AT + 4 * i)));
  const start = pad8(HEAD + jsonBytes);
  const hoursAt = start + n * BYTES_PER_ROW;
  const fields = { at: hoursAt + m * HOUR_COLUMNS.length * 4 + k * PATH_COLUMNS.length * 4, bytes: head.readUInt32LE(FIELDS_AT), listCrc: head.readUInt32LE(FIELD_LIST_AT) };
  if (size !== fields.at + fields.bytes) return null;
  // The dictionaries and their padding: the header's CRC covers every byte before the arrays.
  const json = Buffer.alloc(start - HEAD);
  if (fs.readSync(fd, json, 0, json.length, HEAD) !== json.length) return null;
  if (headCrc(Buffer.concat([head, json])) !== head.readUInt32LE(HEAD_CRC_AT)) return null;
  const dicts = {} as Record<DictName, { json: Buffer }>;
  let at = 0;
  DICTS.forEach((d, i) => {
    const bytes = head.readUInt32LE(DICTS_AT + 4 * i);
    dicts[d] = { json: json.subarray(at, at + bytes) };
    at += bytes;
  });
  const crcs = {} as Record<SectionName, number>;
  SECTIONS.forEach((name, i) => (crcs[name] = head.readUInt32LE(CRCS_AT + 4 * i)));
  return { n, m, k, dicts, start, hoursAt, crcs, fields };
}

/** Reads parts of a columns file by offset (the field index's, when first asked for). */
function sectionReader(file: string): SectionReader {
  return (at, bytes) =>
    withFile(file, (fd) => {
      const buf = Buffer.alloc(bytes);
      let got = 0;
      while (got < bytes) {
        const k = fs.readSync(fd, buf, got, bytes - got, at + got);
        if (k === 0) throw new Error(`${file} ends inside its field index`);
        got += k;
      }
      return buf;
    }) ?? Buffer.alloc(0);
}

/**
 * What a columns file holds for the version `id` describes: nothing usable (missing, damaged,
 * another version's), the columns without the field index (not built yet, of another list of
 * paths, or its descriptor damaged), or both.
 */
export function columnsFileState(file: string, id: ColumnsIdentity): 'unusable' | 'no-fields' | 'whole' {
  const c = readScanColumns(file, id);
  return c === null ? 'unusable' : c.fieldsBuilt ? 'whole' : 'no-fields';
}
