/**
 * The log store: a small catalog that is always loaded, and per source one partition per UTC
 * day, or per hour once the day holds more than SPLIT_ROWS records (a sql.js database file plus
 * a file of compressed record blocks), loaded on demand under a memory budget. Imports append
 * to the partitions their records fall in; a save writes only the partitions that changed, then
 * the catalog, whose atomic rename commits. The layout and the commit protocol are described in
 * docs/ARCHITECTURE.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { SOURCES, type SourceInfo, type SourceName, sourceInfo } from '../sources.ts';
import { ApiHours, addToApiBatch, type ApiHourBatch } from './api-hours.ts';
import { CATALOG_FILE, metaValue, partitionRows, prepareCatalog, putPartitionRow, setMeta, type PartitionRow } from './catalog.ts';
import { TextDictionary } from './text-dictionary.ts';
import { EngineTrapped, loadEngine, onEngineTrapped, openDbSync, replaceTrappedEngine, type Db } from './db.ts';
import { DamageRegistry, StoreFileDamaged, StoreRefused } from './damage.ts';
import { blockBits, encodeBlockGrams, readBlockGrams, type BlockGrams } from './block-grams.ts';
import { HOT_COLUMNS } from './hot-columns.ts';
import { CONVERTED_KEY, convertLegacyStore, LEGACY_STORE_FILE, removeLegacyFiles } from './legacy-store.ts';
import { DAY_MICROS, dayStart, HOUR_MICROS, hourStart, hotInsertSql, idKey, Partition, SPLIT_ROWS } from './partition.ts';
import type { RecordAddress } from './record-blocks.ts';
import { DAY_GRAIN, FunctionRollupBatch, HOUR_GRAIN, MINUTE_GRAIN } from './rollups.ts';
import type { SqlValue } from './db.ts';
import { acquireDataLock, type DataLock, type DataLockKind } from './data-lock.ts';
import { makeOwnerOnly, walkFiles } from './data-dir.ts';
import { writeSynced, syncDir, syncFile } from './durable.ts';
import { buildScanColumns, buildScanColumnsInSteps, columnsFileOf, columnsFileUsable, encodeScanColumns, readScanColumns, type ColumnName, type ColumnsIdentity, type PathIds, type ScanColumns } from './scan-columns.ts';
import { pathOfUrl, type StoredRecord } from './record.ts';

export type { StoredRecord };

/** One stored row as `dump` returns it. */
export interface StoredRow {
  partition: string;
  rid: number;
  id: string;
  ts: number;
  project: string;
  raw: string;
  url?: string;
  families?: number | null;
  status?: number | null;
  functionId?: string | null;
  exec?: number | null;
  method?: string | null;
  path?: string | null;
  level?: string | null;
}

function uuidText(bytes: Uint8Array): string {
  const h = Buffer.from(bytes).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export interface BatchResult {
  imported: number;
  duplicates: number;
}

export interface SourceSummary {
  source: SourceName;
  alias: string;
  count: number;
  /** Microseconds; null when the source is empty. */
  minTimestamp: number | null;
  maxTimestamp: number | null;
  projects: Array<{ ref: string; count: number }>;
  functionIds: Array<{ functionId: string; project: string; count: number }>;
}

export interface StoreOptions {
  /** Bytes of partition databases kept in memory (least recently used ones are dropped). */
  memoryBudgetBytes?: number;
  /** Who holds the data folder's lock; `false` skips the lock (tests of the lock itself). */
  lockKind?: DataLockKind | false;
}

export const DEFAULT_MEMORY_BUDGET = 128 * 1024 * 1024;
export const PARTS_DIR = 'parts';

/** Runs async work one piece at a time, in call order. */
class Queue {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/**
 * String -> id for a catalog dictionary. While the table is small enough the whole mapping is
 * held in memory, so a miss means a new string and costs one insert, no lookup; past
 * `maxCached` entries it falls back to a bounded cache in front of the table's unique index.
 */
class Dictionary {
  private cache = new Map<string, number>();
  private loaded = false;
  private complete = false;
  private nextId = 1;
  constructor(
    private db: () => Db,
    private table: string,
    private column: string,
    private maxCached: number,
  ) {}

  /** The id of a string, adding it; runs inside the catalog transaction. */
  idOf(value: string): number {
    if (!this.loaded) this.reload();
    const hit = this.cache.get(value);
    if (hit !== undefined) return hit;
    const row = this.complete ? undefined : this.db().query<{ id: number }>(`SELECT id FROM ${this.table} WHERE ${this.column} = ?`, [value])[0];
    let id: number;
    if (row) id = row.id;
    else {
      id = this.nextId++;
      this.db().run(`INSERT INTO ${this.table} (id, ${this.column}) VALUES (?, ?)`, [id, value]);
    }
    if (this.cache.size >= this.maxCached) {
      this.cache.clear();
      this.complete = false;
    }
    this.cache.set(value, id);
    return id;
  }

  /** The id of a string if known, without adding it. */
  find(value: string): number | undefined {
    if (!this.loaded) this.reload();
    const hit = this.cache.get(value);
    if (hit !== undefined || this.complete) return hit;
    return this.db().query<{ id: number }>(`SELECT id FROM ${this.table} WHERE ${this.column} = ?`, [value])[0]?.id;
  }

  /** Forgets the cache; the next use reloads from the table. */
  reset(): void {
    this.loaded = false;
    this.cache.clear();
  }

  private reload(): void {
    this.loaded = true;
    this.cache.clear();
    const count = this.db().rows(`SELECT count(*) FROM ${this.table}`)[0]?.[0] as number;
    this.complete = count < this.maxCached;
    if (this.complete) for (const [id, v] of this.db().rows(`SELECT id, ${this.column} FROM ${this.table}`)) this.cache.set(v as string, id as number);
    this.nextId = ((this.db().rows(`SELECT max(id) FROM ${this.table}`)[0]?.[0] as number | null) ?? 0) + 1;
  }
}

/** What an import changed, so that a failure can put everything back. */
interface ImportState {
  /**
   * Where the catalog as the import found it is, to go back to: on disk, not in memory (at 10M
   * records the catalog is tens of MB, held for the whole import otherwise). Usually the
   * committed catalog file itself; a save during the import links it to ROLLBACK_FILE before
   * replacing it, and an import that starts with unsaved catalog changes writes its image
   * there. Not synced: after a crash the committed catalog is the truth, and ROLLBACK_FILE is
   * deleted at the next open.
   */
  catalogBefore: string;
  /** Partitions the import wrote, with their committed row when it began (null: new). */
  touched: Map<Partition, PartitionRow | null>;
  /** Day partitions the import split into hours: their files go once the import commits. */
  removed: Partition[];
  /** Import batches so far, to find partitions the import has moved past. */
  batches: number;
  /** A save committed while the import ran (as at shutdown): the disk holds part of it. */
  committedDuring: boolean;
  /** The store had unsaved changes when the import began (a conversion's bulk load). */
  unsavedBefore: boolean;
}

/** Partitions held in memory at most, whatever their size (each costs sql.js some memory). */
const MAX_LOADED = 48;
/**
 * Bytes of partition columns (scan-columns.ts) kept in memory: a week of a 10M-record store
 * (about 40 MB) stays, older ones are read again from their files.
 */
const COLUMN_CACHE_BYTES = 64 * 1024 * 1024;
/** Bytes of block indexes kept in memory (4 KiB per 256 KiB block: a week at 10M is about 280 MB, read again as needed). */
const GRAMS_CACHE_BYTES = 32 * 1024 * 1024;
/** The background columns builder's least pause between steps, and how recent a request makes it pause longer (ms). */
const COLUMN_PAUSE_MS = 5;
const COLUMN_IDLE_MS = 100;

/** A partition the import has not written for this many batches is written out (staged). */
const STAGE_AFTER_BATCHES = 4;
/** Records of one day in one batch needed to judge the day's density. */
const DENSE_SAMPLE = 200;

const partKey = (code: number, start: number) => `${code}:${start}`;

export const URLS_FILE = 'urls.log';
/** The catalog as a running import found it (see ImportState). */
const ROLLBACK_FILE = 'catalog.sqlite.before-import';
const URLS_META = 'urls';
/** The store-wide path dictionary (derived, like the columns files; see TextDictionary). */
export const PATHS_FILE = 'paths.log';

/**
 * Refuses a folder whose catalog is gone but whose partitions or URL dictionary are there (a
 * partial restore, a file deleted by hand): opening it would start an empty store and delete
 * those files as leftovers of an unfinished save.
 */
function refuseOrphanedFiles(dataDir: string): void {
  let files = 0;
  let bytes = 0;
  walkFiles(path.join(dataDir, PARTS_DIR), (file) => {
    files++;
    bytes += fs.statSync(file).size;
  });
  const urls = path.join(dataDir, URLS_FILE);
  const urlBytes = fs.existsSync(urls) ? fs.statSync(urls).size : 0;
  if (files === 0 && urlBytes === 0) return;
  const held = [files ? `${files} partition files (${bytes} bytes) under ${PARTS_DIR}/` : '', urlBytes ? `${URLS_FILE} (${urlBytes} bytes)` : ''].filter(Boolean).join(' and ');
  throw new StoreRefused(
    `the data folder ${dataDir} holds ${held} but no ${CATALOG_FILE}, which says what they hold; nothing was changed. ` +
      `Restore ${CATALOG_FILE} from the backup these files came from, or move the folder aside (or choose another with --data-dir) to start an empty store.`,
  );
}

/** Opens the committed catalog; a file that is not a catalog is refused, not replaced. */
function openCatalog(file: string, exists: boolean): Db {
  let catalog: Db | undefined;
  try {
    catalog = openDbSync(exists ? new Uint8Array(fs.readFileSync(file)) : undefined);
    prepareCatalog(catalog);
  } catch (err) {
    catalog?.close();
    if (err instanceof EngineTrapped) throw err;
    throw new StoreRefused(
      `${file} cannot be read as this store's catalog (${(err as Error).message}); nothing was changed. Restore it from a backup, or move the folder aside to start an empty store.`,
    );
  }
  return catalog;
}

/** The URL dictionary's committed length and count, as the catalog records them. */
export function urlsState(catalog: Db): { bytes: number; count: number } {
  const v = metaValue(catalog, URLS_META);
  return v ? (JSON.parse(v) as { bytes: number; count: number }) : { bytes: 0, count: 0 };
}

type PerProject = Map<number, { count: number; min: number; max: number }>;

export class LogStore {
  private catalogDb: Db;
  private readonly parts = new Map<string, Partition>();
  /** Per source code, its partitions by start, ascending (kept sorted). */
  private readonly bySource = new Map<number, Partition[]>();
  private readonly writes = new Queue();
  private readonly saves = new Queue();
  private readonly listeners = new Set<() => void>();
  readonly projects: Dictionary;
  readonly urls: TextDictionary;
  /** Every distinct request path, for the columns files' shared path ids. */
  readonly paths: TextDictionary;
  /** Path id of each URL id met so far (0: not yet); cleared when URL ids go back. */
  private urlPathIds = new Int32Array(0);
  /** The path ids columns are built with. */
  private readonly pathIds: PathIds;
  readonly functions: Dictionary;
  readonly apiHours: ApiHours;
  private importState: ImportState | null = null;
  /** Days (per source) stored as hour partitions: `${code}:${dayStart}`. */
  private splitDays = new Set<string>();
  private readonly loaded = new Set<Partition>();
  /** The in-memory catalog has changes no saved catalog holds. */
  private catalogDirty = false;
  /** Files no committed catalog refers to any more, deleted once no rollback may need them. */
  private obsolete: string[] = [];
  private useClock = 0;
  /** Partitions a running save is writing: kept in memory until it ends (if it fails, their rows are only there). */
  private saving = new Set<Partition>();
  /** Bumps whenever stored data changes; caches key on it. */
  dataVersion = 0;
  /** Bumps when dictionary ids may have been reused (a rolled-back import). */
  urlEpoch = 0;
  readonly memoryBudgetBytes: number;
  lock: DataLock | undefined;
  private stopTrapWatch: () => void = () => undefined;
  private recovering: Promise<void> | null = null;
  /** Columns of clean partitions by the version they were read from, least recently used first. */
  private readonly columnCache = new Map<Partition, { version: number; cols: ScanColumns }>();
  /** Committed versions whose columns file is to be built, and the task building them. */
  private readonly columnQueue = new Map<Partition, number>();
  /** Deletions per source code, and the sources being deleted now (see `deletions`). */
  private readonly deleted = new Map<number, number>();
  private readonly deletingSources = new Set<number>();
  /** Block indexes read (null: none usable), least recently used first. */
  private readonly gramsCache = new Map<Partition, { limit: number; g: BlockGrams | null }>();
  /** Columns files this process wrote (their path ids are of this run's path dictionary). */
  private readonly columnsWritten = new Set<string>();
  /** Committed files found damaged: named at start-up and in the 503s of requests that need them. */
  readonly damage: DamageRegistry;
  private columnPump: Promise<void> | null = null;
  /** When a request last used a partition (the background builder waits for a quiet moment). */
  private lastForeground = 0;
  private inBackground = false;
  private closing = false;

  private constructor(
    readonly dataDir: string,
    catalog: Db,
    opts: StoreOptions,
  ) {
    this.catalogDb = catalog;
    this.memoryBudgetBytes = opts.memoryBudgetBytes ?? DEFAULT_MEMORY_BUDGET;
    this.damage = new DamageRegistry(dataDir);
    const db = () => this.catalogDb;
    this.projects = new Dictionary(db, 'projects', 'ref', 10_000);
    this.urls = new TextDictionary(path.join(dataDir, URLS_FILE), urlsState(catalog));
    this.paths = new TextDictionary(path.join(dataDir, PATHS_FILE), 'derived');
    const paths = this.paths;
    this.pathIds = {
      get epoch() {
        return paths.epoch;
      },
      ofText: (text) => paths.idOf(text),
      ofUrl: (url) => this.pathIdOfUrl(url),
    };
    this.functions = new Dictionary(db, 'functions', 'function_id', 10_000);
    this.apiHours = new ApiHours(db);
  }

  /** The catalog database (dictionaries, partitions, summary, rollups). */
  get catalog(): Db {
    return this.catalogDb;
  }

  /** Opens (or creates) the store in a data folder, repairing what a crash could leave. */
  static async open(dataDir: string, opts: StoreOptions = {}): Promise<LogStore> {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const lock = opts.lockKind === false ? undefined : acquireDataLock(dataDir, { kind: opts.lockKind ?? 'store' });
    try {
      const loose = makeOwnerOnly(dataDir);
      if (loose.length) console.warn(`cannot make ${loose.length} entries of ${dataDir} owner-only (not owned by this user), e.g. ${loose[0]}`);
      await loadEngine();
      const file = path.join(dataDir, CATALOG_FILE);
      const exists = fs.existsSync(file);
      // Without its catalog a folder's files are unreadable and would be deleted as leftovers: refused, untouched.
      if (!exists && !fs.existsSync(path.join(dataDir, LEGACY_STORE_FILE))) refuseOrphanedFiles(dataDir);
      fs.rmSync(`${file}.tmp`, { force: true });
      const catalog = openCatalog(file, exists);
      const store = new LogStore(dataDir, catalog, opts);
      store.lock = lock;
      store.loadPartitions();
      store.stopTrapWatch = onEngineTrapped(() => {
        store.recoverEngine().catch((err: unknown) => console.error('could not reopen the store after an engine failure:', err));
      });
      if (exists && catalog.rows('SELECT 1 FROM meta WHERE key = ?', [CONVERTED_KEY]).length && fs.existsSync(path.join(dataDir, LEGACY_STORE_FILE))) {
        // A conversion committed, then stopped before removing the old files.
        removeLegacyFiles(dataDir);
      }
      if (!exists) {
        // A folder of the single-file store: convert it, then commit the first catalog.
        if (fs.existsSync(path.join(dataDir, LEGACY_STORE_FILE))) await convertLegacyStore(store, dataDir);
        store.catalogDirty = true;
        await store.save();
      }
      // Columns files missing, or of an earlier format or path dictionary (after an upgrade),
      // are built in the background, not by the first request that needs a week of them.
      for (const p of store.parts.values()) store.queueColumns(p);
      return store;
    } catch (err) {
      lock?.release();
      throw err;
    }
  }

  /** The partitions the catalog names, split days, and no file the catalog does not name. */
  private loadPartitions(): void {
    for (const row of partitionRows(this.catalogDb)) this.addPartition(new Partition(this.sourceByCode(row.source), this.partsDir(row.source), row));
    this.loadSplitDays();
    this.collectGarbage();
    this.checkFiles();
  }

  /**
   * What start-up can check without reading the files: every committed database is there with
   * its recorded length, every record file and urls.log hold their committed bytes. Each damaged
   * file is named now (stderr) and in the 503 of every request that needs it; nothing is deleted.
   * (`checkStore` reads every byte.)
   */
  private checkFiles(): void {
    this.damage.clear();
    for (const p of this.parts.values()) for (const d of p.quickCheck()) this.damage.note(new StoreFileDamaged(d.file, d.problem));
    const committed = urlsState(this.catalogDb);
    if (committed.bytes > 0) {
      const file = path.join(this.dataDir, URLS_FILE);
      const size = fs.existsSync(file) ? fs.statSync(file).size : -1;
      if (size < 0) this.damage.note(new StoreFileDamaged(URLS_FILE, 'the file is missing'));
      else if (size < committed.bytes) this.damage.note(new StoreFileDamaged(URLS_FILE, `it holds ${size} bytes but the catalog counts ${committed.bytes}`));
    }
  }

  /**
   * After the engine trapped (docs/ARCHITECTURE.md, "Engine failures"): waits for the running
   * import (which fails) and save, replaces the engine, and reopens the store from its last
   * commit, as a restart would: every database is read again from its file, bytes and files
   * no commit names are cut. Requests in between fail with EngineTrapped (a 503).
   */
  recoverEngine(): Promise<void> {
    this.recovering ??= this.writes
      .run(() =>
        this.saves.run(async () => {
          await replaceTrappedEngine();
          for (const p of new Set([...this.parts.values(), ...this.loaded])) p.close();
          this.parts.clear();
          this.bySource.clear();
          this.loaded.clear();
          this.columnCache.clear();
          this.columnQueue.clear();
          this.saving.clear();
          this.obsolete = [];
          this.catalogDb.close();
          this.catalogDb = openDbSync(new Uint8Array(fs.readFileSync(path.join(this.dataDir, CATALOG_FILE))));
          this.catalogDirty = false;
          this.resetCaches();
          this.urls.close();
          this.resetUrls(urlsState(this.catalogDb));
          this.urls.cutFile();
          this.loadPartitions();
          this.changed();
        }),
      )
      .finally(() => {
        this.recovering = null;
      });
    return this.recovering;
  }

  private loadSplitDays(): void {
    this.splitDays = new Set(this.catalogDb.rows('SELECT source, day FROM split_days').map(([code, day]) => `${code as number}:${day as number}`));
  }

  private sourceByCode(code: number): SourceInfo {
    const s = SOURCES.find((x) => x.code === code);
    if (!s) throw new Error(`the catalog names an unknown source code ${code}`);
    return s;
  }

  private partsDir(code: number): string {
    return path.join(this.dataDir, PARTS_DIR, this.sourceByCode(code).alias);
  }

  private addPartition(p: Partition): void {
    this.parts.set(partKey(p.source.code, p.start), p);
    let list = this.bySource.get(p.source.code);
    if (!list) this.bySource.set(p.source.code, (list = []));
    list.push(p);
    if (list.length > 1 && list[list.length - 2]!.start > p.start) list.sort((a, b) => a.start - b.start);
  }

  /** Takes a partition out of the maps (it stays open: a split still reads it). */
  private detachPartition(p: Partition): void {
    if (this.parts.get(partKey(p.source.code, p.start)) === p) this.parts.delete(partKey(p.source.code, p.start));
    const list = this.bySource.get(p.source.code);
    const i = list ? list.indexOf(p) : -1;
    if (i >= 0) list!.splice(i, 1);
    this.loaded.delete(p);
    this.forgetColumns(p);
  }

  private removePartition(p: Partition): void {
    this.detachPartition(p);
    p.close();
  }

  /** Deletes partition files that no committed catalog row refers to, and an import's catalog snapshot (left by a crash). */
  private collectGarbage(): void {
    if (!this.importState) fs.rmSync(path.join(this.dataDir, ROLLBACK_FILE), { force: true });
    for (const s of SOURCES) {
      const dir = this.partsDir(s.code);
      if (!fs.existsSync(dir)) continue;
      const keep = new Set<string>();
      for (const p of this.bySource.get(s.code) ?? []) {
        if (p.row.version > 0) keep.add(path.basename(p.dbFile(p.row.version))).add(path.basename(columnsFileOf(p.dbFile(p.row.version))));
        keep.add(path.basename(p.blocks.file)).add(path.basename(p.blocks.gramsFile));
      }
      for (const f of fs.readdirSync(dir)) if (!keep.has(f)) fs.rmSync(path.join(dir, f), { force: true });
    }
  }

  /** Called after every change of stored data. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.dataVersion++;
    for (const l of this.listeners) l();
  }

  /** Partitions of a source, ascending by start. */
  partitions(source: SourceName): readonly Partition[] {
    return this.bySource.get(sourceInfo(source).code) ?? [];
  }

  /**
   * Starts of the partitions of a source that hold records of a project within [lower, upper],
   * newest first (from the catalog: no partition is loaded to find them).
   */
  partitionsWithProject(source: SourceName, project: number, lower: number, upper: number): Partition[] {
    const code = sourceInfo(source).code;
    const rows = this.catalogDb.rows(
      'SELECT start FROM partition_projects WHERE source = ? AND project = ? AND max_ts >= ? AND min_ts <= ? ORDER BY start DESC',
      [code, project, lower, upper],
    );
    return rows.map(([start]) => this.parts.get(partKey(code, start as number))!).filter(Boolean);
  }

  /** The function ids (0: none) a project's records of a source carry, from the catalog. */
  functionsOf(source: SourceName, project: number): number[] {
    return this.catalogDb.rows('SELECT function FROM source_summary WHERE source = ? AND project = ?', [sourceInfo(source).code, project]).map(([f]) => f as number);
  }

  /** The partition's database, loaded if needed; clean partitions past the budget are dropped. */
  use(p: Partition): Db {
    if (!this.inBackground) this.lastForeground = performance.now();
    p.lastUsed = ++this.useClock;
    let db: Db;
    try {
      db = p.load();
    } catch (err) {
      if (err instanceof StoreFileDamaged) this.damage.note(err);
      throw err;
    }
    this.loaded.add(p);
    if (p.migrated) {
      p.migrated = false;
      // Written soon, so that a migrated partition does not wait in memory for the next import.
      setImmediate(() => void this.save().catch((err: unknown) => console.error('could not save migrated partitions:', err)));
    }
    this.enforceBudget(p);
    return db;
  }

  /**
   * The partition's hot columns, newest first, with the row arrays `needed` loaded. A clean
   * partition's come from its version's columns file (built from the database and written when
   * missing or not whole); a partition with unsaved rows is read from its database each time.
   */
  columns(p: Partition, needed: readonly ColumnName[] = []): ScanColumns {
    this.lastForeground = performance.now();
    if (p.dirty) return buildScanColumns(this.use(p), p.source, this.pathIds);
    const version = p.fileVersion;
    const hit = this.columnCache.get(p);
    let cols: ScanColumns | null = null;
    if (hit && hit.version === version) {
      this.columnCache.delete(p);
      this.columnCache.set(p, hit);
      cols = hit.cols;
    } else {
      this.forgetColumns(p);
      cols = version > 0 ? readScanColumns(columnsFileOf(p.dbFile(version)), this.columnsIdentity(p, version)) : null;
      if (cols) this.columnCache.set(p, { version, cols });
    }
    try {
      cols?.load(needed);
    } catch {
      // Not whole after all (cut short, say): built again below.
      cols = null;
    }
    if (!cols) {
      this.forgetColumns(p);
      cols = buildScanColumns(this.use(p), p.source, this.pathIds);
      if (p.dirty) return cols; // migrated as it loaded: its next save writes the file
      if (version > 0 && cols.complete) this.writeColumns(p, version, cols);
      this.columnCache.set(p, { version, cols });
    }
    this.trimColumnCache(p);
    return cols;
  }

  /**
   * The partitions of a source as the last commit has them, ascending: during an import, the
   * partitions it created are left out and the days it split into hours are kept, so that the
   * explorer never shows records an import may still roll back (nor loses committed ones).
   */
  committedPartitions(source: SourceName): Partition[] {
    const state = this.importState;
    const all = this.bySource.get(sourceInfo(source).code) ?? [];
    if (!state) return [...all];
    const code = sourceInfo(source).code;
    const split = state.removed.filter((p) => p.source.code === code && state.touched.get(p) !== null);
    const kept = all.filter((p) => !state.touched.has(p) || state.touched.get(p) !== null);
    return split.length ? [...kept, ...split].sort((a, b) => a.start - b.start) : kept;
  }

  /** An import is running (its records are not committed yet). */
  get importing(): boolean {
    return this.importState !== null;
  }

  /** The committed row of a partition: during an import, as it was when the import began (null: the import created it). */
  committedRow(p: Partition): PartitionRow | null {
    const state = this.importState;
    if (state?.touched.has(p)) return state.touched.get(p)!;
    return p.row;
  }

  /**
   * A partition's columns as its last commit has them (see committedPartitions); null when it
   * holds no committed rows. Outside an import, `columns`. During one, a partition it wrote is
   * read from its committed version's columns file (built from that version's file when missing).
   */
  committedColumns(p: Partition, needed: readonly ColumnName[] = []): ScanColumns | null {
    const state = this.importState;
    if (!state?.touched.has(p)) return this.columns(p, needed);
    const row = state.touched.get(p)!;
    if (row === null || row.version === 0 || row.rows === 0) return null;
    const file = columnsFileOf(p.dbFile(row.version));
    const id = { ...this.columnsIdentity(p, row.version), rows: row.rows };
    let cols = readScanColumns(file, id);
    try {
      cols?.load(needed);
    } catch {
      cols = null;
    }
    if (cols) return cols;
    // Built from the committed file, apart from the partition's database (which holds the import's rows).
    const committed = new Partition(p.source, p.dir, row);
    try {
      cols = buildScanColumns(committed.load(), p.source, this.pathIds);
    } finally {
      committed.close();
    }
    if (cols.complete) this.writeColumns(p, row.version, cols);
    return cols;
  }

  /**
   * Counts the deletions of a source's records begun so far, or null while one runs: a read
   * that began before one sees the count change.
   */
  deletions(source: SourceName): number | null {
    const code = sourceInfo(source).code;
    return this.deletingSources.has(code) ? null : (this.deleted.get(code) ?? 0);
  }

  /** Resolves once the columns files queued so far are built (tests; shutdown does not wait for them). */
  async columnsSettled(): Promise<void> {
    while (this.columnPump) await this.columnPump;
  }

  /** Has a committed version's columns file built soon (in the background), unless it exists. */
  private queueColumns(p: Partition): void {
    if (p.row.version === 0 || p.row.rows === 0) return;
    this.columnQueue.set(p, p.row.version);
    this.columnPump ??= this.buildQueuedColumns().finally(() => (this.columnPump = null));
  }

  /**
   * Builds the queued columns files one partition at a time, each in steps with a turn for
   * requests in between, newest partitions first (the explorer asks for recent hours most).
   * A partition that changed meanwhile is skipped: its next commit queues it again.
   */
  private async buildQueuedColumns(): Promise<void> {
    // Background work: a step of a few thousand rows (scan-columns.ts), then a pause.
    const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
    let stepStarted = performance.now();
    const pause = async () => {
      // Half the time when no request came lately, a fifth while requests are being answered;
      // never starved (a steady stream of requests must not keep a week of columns unbuilt).
      const busy = performance.now() - this.lastForeground < COLUMN_IDLE_MS;
      await sleep(Math.max(COLUMN_PAUSE_MS, (busy ? 4 : 1) * (performance.now() - stepStarted)));
      // Not during an import: loading partitions would push the import's own out of memory.
      while (this.importState && !this.closing) await sleep(50);
      stepStarted = performance.now();
    };
    const use = (p: Partition) => {
      this.inBackground = true;
      try {
        return this.use(p);
      } finally {
        this.inBackground = false;
      }
    };
    let looked = 0;
    while (this.columnQueue.size && !this.closing) {
      // Files found whole cost a header read each: a turn for others every hundred (a store
      // opened after an upgrade checks thousands).
      if (looked++ % 100 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      let next: [Partition, number] | null = null;
      for (const entry of this.columnQueue) if (!next || entry[0].start > next[0].start) next = entry;
      // The queue may have been emptied meanwhile (the engine reopened).
      if (!next) break;
      const [p, version] = next;
      this.columnQueue.delete(p);
      const unchanged = () => !this.closing && p.row.version === version && p.staged === null && !p.dirty && this.parts.get(partKey(p.source.code, p.start)) === p;
      const file = columnsFileOf(p.dbFile(version));
      if (!unchanged()) continue;
      if (!columnsFileUsable(file, this.columnsIdentity(p, version))) {
        await pause();
        if (!unchanged()) continue;
        try {
          const cols = await buildScanColumnsInSteps(() => use(p), p.source, this.pathIds, async () => {
            await pause();
            return unchanged();
          });
          if (!cols || !unchanged() || !cols.complete) continue;
          // Written, not kept: memory is for what requests read.
          this.writeColumns(p, version, cols);
        } catch (err) {
          // Built again when next asked for (columns()); an engine trap is handled there too.
          if (!this.closing) console.error(`cannot build the columns of ${this.describe(p)}: ${(err as Error).message}`);
          continue;
        }
      }
      try {
        await this.buildGrams(p, pause, unchanged);
      } catch (err) {
        // A damaged record file is named by the requests that read it; its index waits for the next commit.
        if (!this.closing) console.error(`cannot index the records of ${this.describe(p)}: ${(err as Error).message}`);
      }
    }
  }

  /**
   * Completes a partition's block index (block-grams.ts) up to its committed record bytes.
   * Blocks get their entry as they are written; this indexes the ones that lack it (a store
   * written before the index, an append that failed): their blocks are decompressed, a few
   * between pauses, and the file is written again whole.
   */
  private async buildGrams(p: Partition, pause: () => Promise<void>, unchanged: () => boolean): Promise<void> {
    const size = p.row.record_bytes;
    const have = this.blockGrams(p);
    if ((have?.covered ?? 0) >= size) return;
    const entries: Array<{ blk: number; end: number; bits: Int32Array }> = [];
    let since = performance.now();
    for (let blk = 0; blk < size; ) {
      if (performance.now() - since > 10) {
        await pause();
        if (!unchanged() || p.row.record_bytes !== size) return;
        since = performance.now();
      }
      const end = p.blocks.nextBlock(blk);
      entries.push({ blk, end, bits: have?.bitsOf(blk) ?? blockBits(p.blocks.rawBlock(blk)!) });
      blk = end;
    }
    // Blocks written meanwhile (an import) appended entries this rewrite would lose.
    if (p.blocks.size !== size) return;
    const file = p.blocks.gramsFile;
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, encodeBlockGrams(p.blocks.nameSeed, entries), { mode: 0o600 });
    fs.renameSync(tmp, file);
    p.blocks.gramsRewritten();
    this.gramsCache.delete(p);
  }

  /**
   * A partition's block index as far as it covers its committed record bytes, or null (then
   * every block is searched). Kept in memory under GRAMS_CACHE_BYTES, least recently used first.
   */
  blockGrams(p: Partition): BlockGrams | null {
    const row = this.committedRow(p);
    const limit = row ? Math.min(row.record_bytes, p.blocks.size) : 0;
    const hit = this.gramsCache.get(p);
    // Read again after a commit: the blocks it added have entries now.
    if (hit !== undefined && hit.limit === limit) {
      this.gramsCache.delete(p);
      this.gramsCache.set(p, hit);
      return hit.g;
    }
    const g = row ? readBlockGrams(p.blocks.gramsFile, p.blocks.nameSeed, limit) : null;
    this.gramsCache.set(p, { limit, g });
    let total = 0;
    for (const v of this.gramsCache.values()) total += v.g?.bytes ?? 0;
    for (const [q, v] of this.gramsCache) {
      if (total <= GRAMS_CACHE_BYTES) break;
      if (q === p) continue;
      total -= v.g?.bytes ?? 0;
      this.gramsCache.delete(q);
    }
    return g;
  }

  /**
   * What a version's columns file must say of itself to be used: its partition and version, the
   * path dictionary it was built against, and the rows the catalog records for the version.
   */
  private columnsIdentity(p: Partition, version: number): ColumnsIdentity {
    const file = columnsFileOf(p.dbFile(version));
    return {
      source: p.source.code,
      start: p.start,
      version,
      epoch: this.paths.epoch,
      rows: version === p.row.version && !p.dirty ? p.row.rows : undefined,
      // A file of an earlier run that may use path bytes past what paths.log held when this run
      // opened it was built before paths.log was cut: some of its path ids name nothing.
      pathsOk: (bytes, count) => (bytes <= this.paths.bytesAtOpen || this.columnsWritten.has(file)) && this.paths.endOf(count) === bytes,
    };
  }

  /** Writes a version's columns file (see writeColumnsFile). */
  private writeColumns(p: Partition, version: number, cols: ScanColumns, bestEffort = true): void {
    const file = columnsFileOf(p.dbFile(version));
    if (writeColumnsFile(file, cols, this.paths, { source: p.source.code, start: p.start, version }, bestEffort)) this.columnsWritten.add(file);
  }

  /** Drops the least recently used columns past COLUMN_CACHE_BYTES (never `keep`'s). */
  private trimColumnCache(keep: Partition): void {
    let total = 0;
    for (const { cols } of this.columnCache.values()) total += cols.bytes;
    for (const [q, { cols }] of this.columnCache) {
      if (total <= COLUMN_CACHE_BYTES) break;
      if (q === keep) continue;
      total -= cols.bytes;
      this.columnCache.delete(q);
    }
  }

  private forgetColumns(p: Partition): void {
    this.columnCache.delete(p);
    this.gramsCache.delete(p);
  }

  /** URL ids may be given again (a rolled-back import, a cleared source): their paths are forgotten. */
  private resetUrls(state: { bytes: number; count: number }): void {
    this.urls.resetTo(state);
    this.urlPathIds = new Int32Array(0);
  }

  /** The path id of an edge URL's path, for the columns of edge partitions. */
  private pathIdOfUrl(url: number): number {
    if (url >= this.urlPathIds.length) {
      const grown = new Int32Array(Math.max(url + 1, this.urlPathIds.length * 2, 1024));
      grown.set(this.urlPathIds);
      this.urlPathIds = grown;
    }
    return (this.urlPathIds[url] ||= this.paths.idOf(pathOfUrl(this.urls.get(url))));
  }

  /** One record's bytes back from its partition's blocks. */
  readRecord(p: Partition, addr: RecordAddress): Buffer {
    return p.blocks.read(addr);
  }

  /** Bytes of partition databases held in memory now. */
  loadedBytes(): number {
    let total = 0;
    for (const p of this.loaded) if (p.db) total += p.loadedBytes;
    return total;
  }

  private enforceBudget(keep: Partition): void {
    keep.loadedBytes = keep.imageBytes();
    for (const p of this.loaded) if (!p.db) this.loaded.delete(p);
    let total = this.loadedBytes();
    let count = this.loaded.size;
    if (total <= this.memoryBudgetBytes && count <= MAX_LOADED) return;
    const byAge = [...this.loaded].filter((p) => p !== keep).sort((a, b) => a.lastUsed - b.lastUsed);
    for (const p of byAge) {
      if (total <= this.memoryBudgetBytes && count <= MAX_LOADED) break;
      // Only an import's own partitions can be dirty here: outside an import they wait.
      if (this.saving.has(p)) continue;
      if (p.dirty && !this.importState) continue;
      if (p.dirty) this.stage(p);
      total -= p.loadedBytes;
      count--;
      p.unload();
      this.loaded.delete(p);
    }
  }

  /**
   * Parks a dirty partition's rows in a staged version file (not committed): the import's
   * commit names it in the catalog, its rollback deletes it.
   */
  private stage(p: Partition): void {
    p.blocks.flush();
    const { version, bytes, crc } = p.writeVersion(this.nextVersion(p));
    p.stagedCheck = { bytes, crc };
    // A partition this import created gets its columns now, while its rows are in memory: a bulk
    // import stages most of its partitions, and building them later would load each again. One
    // that held rows before (a small import touching many hours) is left to the background
    // builder after the commit, so the import does not stall on rebuilding them. (A file left
    // under this name by a crash is replaced.) writeColumnsFile syncs it.
    const cols = this.importState?.touched.get(p) === null ? buildScanColumns(p.db!, p.source, this.pathIds) : null;
    if (cols?.complete) this.writeColumns(p, version, cols, false);
    else fs.rmSync(columnsFileOf(p.dbFile(version)), { force: true });
    if (p.staged !== null) removeVersionFiles(p.dbFile(p.staged));
    p.staged = version;
    p.dirty = false;
  }

  private nextVersion(p: Partition): number {
    p.maxVersion = Math.max(p.maxVersion, p.row.version, p.staged ?? 0) + 1;
    return p.maxVersion;
  }

  /**
   * Runs one import exclusively (imports and deletes never interleave), handing it a writer;
   * commits when `work` returns. If `work` throws, the store goes back to what it was before
   * the import, in memory and on disk, and the error is rethrown.
   */
  withWriter<T>(source: SourceName, work: (writer: ImportWriter) => Promise<T>): Promise<T> {
    return this.writes.run(async () => {
      // Changes a failed save left unsaved would be undone by a rollback of this import.
      if (this.hasUnsaved()) await this.save();
      return this.inImport(() => work(new ImportWriter(this, sourceInfo(source))));
    });
  }

  /**
   * Loads many sources in one transaction of the store (a conversion): nothing is committed
   * until `work` has finished, then everything is, at once.
   */
  bulkLoad(work: (insert: (info: SourceInfo, records: StoredRecord[]) => BatchResult) => Promise<void>): Promise<void> {
    return this.writes.run(() => this.inImport(() => work((info, records) => this.insertBatch(info, records))));
  }

  /** Runs `work` as one import: committed when it returns, rolled back when it throws. */
  private async inImport<T>(work: () => Promise<T>): Promise<T> {
    const catalogBefore = path.join(this.dataDir, ROLLBACK_FILE);
    fs.rmSync(catalogBefore, { force: true });
    // The committed file is what the import starts from, unless the catalog has unsaved changes or was never committed (a conversion).
    if (this.catalogDirty || !fs.existsSync(path.join(this.dataDir, CATALOG_FILE))) fs.writeFileSync(catalogBefore, this.catalogDb.exportImage(), { mode: 0o600 });
    this.importState = { catalogBefore, touched: new Map(), removed: [], batches: 0, committedDuring: false, unsavedBefore: this.hasUnsaved() };
    try {
      const result = await work();
      await this.save();
      this.dropRemoved();
      return result;
    } catch (err) {
      await this.rollbackImport();
      throw err;
    } finally {
      this.importState = null;
      fs.rmSync(catalogBefore, { force: true });
      this.deleteObsolete();
    }
  }

  /** After a commit: the files of day partitions this import split are no longer the store. */
  private dropRemoved(): void {
    for (const p of this.importState?.removed ?? []) {
      for (let v = 1; v <= Math.max(p.maxVersion, p.row.version); v++) this.obsolete.push(p.dbFile(v));
      this.obsolete.push(p.blocks.file);
      p.close();
    }
  }

  private hasUnsaved(): boolean {
    if (this.catalogDirty) return true;
    for (const p of this.parts.values()) if (p.dirty || p.staged !== null) return true;
    return false;
  }

  /** The partition a record of this instant belongs to (created when missing). */
  private partitionFor(info: SourceInfo, ts: number): Partition {
    const day = dayStart(ts);
    const split = this.splitDays.has(`${info.code}:${day}`);
    const start = split ? hourStart(ts) : day;
    const width = split ? HOUR_MICROS : DAY_MICROS;
    let p = this.parts.get(partKey(info.code, start));
    if (p && p.row.width !== width) throw new Error(`${this.describe(p)} does not have the width the catalog's split days say`);
    if (!p) {
      const row: PartitionRow = { source: info.code, start, width, version: 0, rows: 0, next_rid: 1, record_bytes: 0, image_bytes: 0, min_ts: null, max_ts: null, db_crc: null };
      p = new Partition(info, this.partsDir(info.code), row);
      this.addPartition(p);
    }
    const state = this.importState;
    if (state && !state.touched.has(p)) state.touched.set(p, p.row.version === 0 && p.row.rows === 0 && !p.db ? null : { ...p.row });
    if (state) p.lastBatch = state.batches;
    return p;
  }

  /** @internal used by ImportWriter: a meta value that commits (or rolls back) with the running import. */
  setImportMeta(key: string, value: string | null): void {
    if (!this.importState) throw new Error('meta values are set within an import (withWriter)');
    if (!/^[a-z][a-z0-9_-]*:/.test(key)) throw new Error(`meta key ${key} is not namespaced (<name>:...)`);
    if (value === null) this.catalogDb.run('DELETE FROM meta WHERE key = ?', [key]);
    else setMeta(this.catalogDb, key, value);
    this.catalogDirty = true;
  }

  /** @internal used by ImportWriter: stores one batch, routed to the partitions of its instants. */
  insertBatch(info: SourceInfo, records: StoredRecord[]): BatchResult {
    const columns = HOT_COLUMNS[info.hot];
    const insertSql = hotInsertSql(info);
    const summary = new Map<string, { project: number; fn: number; count: number; min: number; max: number }>();
    const hours = info.hot === 'function_edge' ? new FunctionRollupBatch(HOUR_GRAIN) : undefined;
    const days = info.hot === 'function_edge' ? new FunctionRollupBatch(DAY_GRAIN) : undefined;
    const api: ApiHourBatch | undefined = info.hot === 'edge' ? new Map() : undefined;
    let imported = 0;
    let duplicates = 0;
    const catalog = this.catalogDb;
    if (this.importState) this.importState.batches++;
    catalog.transaction(() => {
      this.splitDenseDays(info, records);
      const groups = new Map<Partition, StoredRecord[]>();
      let last: Partition | undefined;
      for (const r of records) {
        // Records mostly come in time order: the previous record's partition usually fits.
        const p = last && r.ts >= last.start && r.ts < last.end ? last : (last = this.partitionFor(info, r.ts));
        let g = groups.get(p);
        if (!g) groups.set(p, (g = []));
        g.push(r);
      }
      for (const [p, group] of groups) {
        const db = this.use(p);
        // Per-minute rollups count all functions only: one function's minutes are read raw.
        const minutes = info.hot === 'function_edge' ? new FunctionRollupBatch(MINUTE_GRAIN, false) : undefined;
        const perProject: PerProject = new Map();
        const before = imported;
        db.transaction(() => {
          for (const r of group) {
            const rid = p.row.next_rid;
            // The id row goes first: when it already exists the record is a duplicate.
            if (db.run('INSERT OR IGNORE INTO ids (id, rid) VALUES (?, ?)', [idKey(r.id), rid]) === 0) {
              duplicates++;
              continue;
            }
            const addr = p.blocks.add(typeof r.raw === 'string' ? Buffer.from(r.raw, 'utf8') : r.raw);
            const project = this.projects.idOf(r.project);
            const fn = r.functionId ? this.functions.idOf(r.functionId) : null;
            const values: SqlValue[] = [rid, project, r.ts, addr.blk, addr.boff, addr.len];
            let url = 0;
            for (const c of columns) {
              if (c.field === 'url') values.push((url = this.urls.idOf(r.url ?? '')));
              else if (c.field === 'functionId') values.push(fn ?? (c.notNull ? 0 : null));
              else if (c.field === 'families') values.push(r.families ?? 0);
              else values.push(r[c.field] ?? null);
            }
            this.appendRow(p, db, insertSql, values, project, r.ts, perProject);
            minutes?.add(project, fn, r.ts, r.exec, r.status);
            hours?.add(project, fn, r.ts, r.exec, r.status);
            days?.add(project, fn, r.ts, r.exec, r.status);
            if (api) addToApiBatch(api, hourStart(r.ts), url, r.families ?? 0);
            const key = `${project}:${fn ?? 0}`;
            const s = summary.get(key);
            if (s) {
              s.count++;
              s.min = Math.min(s.min, r.ts);
              s.max = Math.max(s.max, r.ts);
            } else summary.set(key, { project, fn: fn ?? 0, count: 1, min: r.ts, max: r.ts });
            imported++;
          }
          minutes?.flush(db);
        });
        if (imported === before) continue;
        this.finishPartition(p, perProject);
        if (p.row.width === DAY_MICROS && p.row.rows > SPLIT_ROWS) this.splitDay(p);
      }
      for (const s of summary.values()) {
        catalog.run(
          `INSERT INTO source_summary (source, project, function, count, min_ts, max_ts) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (source, project, function) DO UPDATE SET count = count + excluded.count,
             min_ts = min(min_ts, excluded.min_ts), max_ts = max(max_ts, excluded.max_ts)`,
          [info.code, s.project, s.fn, s.count, s.min, s.max],
        );
      }
      hours?.flush(catalog);
      days?.flush(catalog);
      if (api?.size) this.apiHours.merge(api);
    });
    this.stageIdle();
    if (imported > 0) {
      this.catalogDirty = true;
      this.changed();
    }
    return { imported, duplicates };
  }

  /**
   * A day with no partition yet whose records in this batch are dense enough to exceed
   * SPLIT_ROWS over a whole day is stored as hours from the start: a bulk import never has to
   * move rows out of a day partition (a pause of a second or more at 100k rows).
   */
  private splitDenseDays(info: SourceInfo, records: StoredRecord[]): void {
    const days = new Map<number, { n: number; min: number; max: number }>();
    for (const r of records) {
      const day = dayStart(r.ts);
      const d = days.get(day);
      if (d) {
        d.n++;
        if (r.ts < d.min) d.min = r.ts;
        if (r.ts > d.max) d.max = r.ts;
      } else days.set(day, { n: 1, min: r.ts, max: r.ts });
    }
    for (const [day, d] of days) {
      if (d.n < DENSE_SAMPLE || this.splitDays.has(`${info.code}:${day}`) || this.parts.has(partKey(info.code, day))) continue;
      // A margin: density varies within a day, and a split that happens after all moves rows.
      if ((d.n / Math.max(d.max - d.min, 1)) * DAY_MICROS <= SPLIT_ROWS / 4) continue;
      this.splitDays.add(`${info.code}:${day}`);
      this.catalogDb.run('INSERT OR IGNORE INTO split_days (source, day) VALUES (?, ?)', [info.code, day]);
    }
  }

  /** One hot row into a partition, with the partition's counters. */
  private appendRow(p: Partition, db: Db, sql: string, values: SqlValue[], project: number, ts: number, perProject: PerProject): void {
    db.run(sql, values);
    p.row.next_rid++;
    p.row.rows++;
    if (p.row.min_ts === null || ts < p.row.min_ts) p.row.min_ts = ts;
    if (p.row.max_ts === null || ts > p.row.max_ts) p.row.max_ts = ts;
    const pp = perProject.get(project);
    if (pp) {
      pp.count++;
      pp.min = Math.min(pp.min, ts);
      pp.max = Math.max(pp.max, ts);
    } else perProject.set(project, { count: 1, min: ts, max: ts });
  }

  /** After rows went into a partition: its catalog rows (runs in the catalog transaction). */
  private finishPartition(p: Partition, perProject: PerProject): void {
    p.dirty = true;
    for (const [project, s] of perProject) {
      this.catalogDb.run(
        `INSERT INTO partition_projects (source, start, project, count, min_ts, max_ts) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (source, project, start) DO UPDATE SET count = count + excluded.count,
           min_ts = min(min_ts, excluded.min_ts), max_ts = max(max_ts, excluded.max_ts)`,
        [p.source.code, p.start, project, s.count, s.min, s.max],
      );
    }
    putPartitionRow(this.catalogDb, p.row);
  }

  /**
   * Rewrites a day partition that grew past SPLIT_ROWS as hour partitions: rows, ids, record
   * bytes and minute rollups move as they are; catalog-wide rollups and the summary stay.
   */
  private splitDay(day: Partition): void {
    const info = day.source;
    const db = day.db!;
    this.splitDays.add(`${info.code}:${day.start}`);
    this.catalogDb.run('INSERT OR IGNORE INTO split_days (source, day) VALUES (?, ?)', [info.code, day.start]);
    this.catalogDb.run('DELETE FROM partitions WHERE source = ? AND start = ?', [info.code, day.start]);
    this.catalogDb.run('DELETE FROM partition_projects WHERE source = ? AND start = ?', [info.code, day.start]);
    this.detachPartition(day);
    const cols = HOT_COLUMNS[info.hot].map((c) => c.column);
    const ids = new Map(db.rows('SELECT rid, id FROM ids').map(([rid, id]) => [rid as number, id]));
    const byHour = new Map<number, SqlValue[][]>();
    for (const row of db.rows(`SELECT rid, project, ts, blk, boff, len${cols.map((c) => `, ${c}`).join('')} FROM ${info.alias} ORDER BY rid`)) {
      const h = hourStart(row[2] as number);
      let list = byHour.get(h);
      if (!list) byHour.set(h, (list = []));
      list.push(row);
    }
    const minutes = info.hot === 'function_edge' ? db.rows(`SELECT * FROM ${MINUTE_GRAIN.table}`) : [];
    const insertSql = hotInsertSql(info);
    for (const [h, rows] of byHour) {
      const p = this.partitionFor(info, h);
      const hdb = this.use(p);
      const perProject: PerProject = new Map();
      hdb.transaction(() => {
        for (const [oldRid, project, ts, blk, boff, len, ...hot] of rows) {
          const rid = p.row.next_rid;
          hdb.run('INSERT INTO ids (id, rid) VALUES (?, ?)', [ids.get(oldRid as number)!, rid]);
          const addr = p.blocks.add(day.blocks.read({ blk: blk as number, boff: boff as number, len: len as number }));
          this.appendRow(p, hdb, insertSql, [rid, project!, ts!, addr.blk, addr.boff, addr.len, ...hot], project as number, ts as number, perProject);
        }
        for (const m of minutes) if (hourStart(m[1] as number) === h) hdb.run(`INSERT INTO ${MINUTE_GRAIN.table} VALUES (${m.map(() => '?').join(', ')})`, m);
      });
      this.finishPartition(p, perProject);
    }
    day.db?.close();
    day.db = null;
    day.dirty = false;
    day.blocks.dropPending();
    this.importState?.removed.push(day);
  }

  /** Writes out partitions the import has moved past, so few stay dirty in memory. */
  private stageIdle(): void {
    const state = this.importState;
    if (!state) return;
    // Only loaded partitions can hold unsaved rows: a few dozen, not every partition touched.
    for (const p of this.loaded) {
      if (p.dirty && p.db && state.touched.has(p) && this.parts.get(partKey(p.source.code, p.start)) === p && state.batches - p.lastBatch >= STAGE_AFTER_BATCHES) this.stage(p);
    }
  }

  /** Puts the store back to the state before the running import, and commits that. */
  private async rollbackImport(): Promise<void> {
    const state = this.importState;
    if (!state) return;
    const before = new Uint8Array(fs.readFileSync(fs.existsSync(state.catalogBefore) ? state.catalogBefore : path.join(this.dataDir, CATALOG_FILE)));
    this.catalogDb.close();
    this.catalogDb = openDbSync(before);
    this.resetCaches();
    this.resetUrls(urlsState(this.catalogDb));
    this.loadSplitDays();
    // A save during the import listed the versions it replaced as obsolete; the restored
    // catalog names them again, so they must stay.
    const named = new Set<string>();
    for (const [p, before] of state.touched) if (before && before.version > 0) named.add(p.dbFile(before.version));
    this.obsolete = this.obsolete.filter((f) => !named.has(f));
    const cuts: Array<{ p: Partition; size: number }> = [];
    const drop: string[] = [];
    for (const [p, before] of state.touched) {
      p.dirty = false;
      p.db?.close();
      p.db = null;
      // Its unwritten block holds rolled-back records only; a reader may load and evict the
      // partition again before the restored catalog is committed.
      p.blocks.dropPending();
      this.loaded.delete(p);
      for (let v = (before?.version ?? 0) + 1; v <= Math.max(p.maxVersion, p.row.version, p.staged ?? 0); v++) drop.push(p.dbFile(v));
      p.staged = null;
      if (before === null) {
        drop.push(p.blocks.file);
        this.removePartition(p);
      } else {
        p.row = { ...before };
        // A day partition this import split comes back.
        if (this.parts.get(partKey(p.source.code, p.start)) !== p) this.addPartition(p);
        cuts.push({ p, size: before.record_bytes });
      }
    }
    this.catalogDirty = true;
    this.changed();
    try {
      // A save may have committed part of this import meanwhile: only once the restored
      // catalog is committed may the files it no longer refers to be cut or deleted.
      await this.save();
    } catch {
      // The import's own error is the one to report (a full disk, often).
      for (const { p } of cuts) p.blocks.dropPending();
      if (state.committedDuring) return; // the extra bytes stay, unreferenced, until the next open
      // The committed catalog is the one from before the import: what the import appended or
      // wrote is no one's, so it goes now, not at the next start (a full disk needs the space),
      // and memory matches the disk again: nothing is left to save (at shutdown, say).
      this.catalogDirty = state.unsavedBefore;
    }
    for (const { p, size } of cuts) {
      p.blocks.truncate(size);
      this.gramsCache.delete(p);
    }
    this.urls.cutFile();
    this.obsolete.push(...drop);
  }

  private resetCaches(): void {
    this.projects.reset();
    this.functions.reset();
    this.apiHours.reset();
    this.urlEpoch++;
  }

  /**
   * Commits what changed: each changed partition to a new version file (synced), the record
   * blocks synced, then the catalog to a temp file, synced and renamed over the old one: the
   * commit point. Saves never overlap; files of replaced versions are deleted afterwards.
   */
  save(): Promise<void> {
    return this.saves.run(async () => {
      const changed = [...this.parts.values()].filter((p) => p.dirty || p.staged !== null);
      const stagedFiles: string[] = [];
      if (!changed.length && !this.catalogDirty) return;
      // One synchronous step takes every image, so the catalog matches the partitions even if
      // an import batch runs while the files are written.
      const undo: Array<{ p: Partition; row: PartitionRow; staged: number | null; dirty: boolean }> = [];
      const images: Array<{ file: string; image: Uint8Array }> = [];
      const replaced: string[] = [];
      for (const p of changed) {
        undo.push({ p, row: { ...p.row }, staged: p.staged, dirty: p.dirty });
        p.blocks.flush();
        let version: number;
        if (p.dirty) {
          version = this.nextVersion(p);
          const image = p.db!.exportImage();
          images.push({ file: p.dbFile(version), image });
          fs.rmSync(columnsFileOf(p.dbFile(version)), { force: true });
          p.row.image_bytes = image.length;
          p.row.db_crc = zlib.crc32(image);
          if (p.staged !== null) replaced.push(p.dbFile(p.staged));
        } else {
          version = p.staged!;
          stagedFiles.push(p.dbFile(version));
          p.row.image_bytes = p.stagedCheck?.bytes ?? p.row.image_bytes;
          p.row.db_crc = p.stagedCheck?.crc ?? null;
        }
        if (p.row.version > 0) replaced.push(p.dbFile(p.row.version));
        p.row.version = version;
        p.row.record_bytes = p.blocks.size;
        p.staged = null;
        p.dirty = false;
        putPartitionRow(this.catalogDb, p.row);
      }
      this.apiHours.flush();
      // New URLs are written now and synced with the record files; the catalog counts them.
      this.urls.flush();
      const urls = this.urls.state();
      setMeta(this.catalogDb, URLS_META, JSON.stringify(urls));
      const catalogImage = this.catalogDb.exportImage();
      this.catalogDirty = false;
      const file = path.join(this.dataDir, CATALOG_FILE);
      const tmp = `${file}.tmp`;
      this.saving = new Set(changed);
      try {
        const dirs = new Set(changed.map((p) => p.dir));
        for (const d of dirs) await fs.promises.mkdir(d, { recursive: true, mode: 0o700 });
        for (const { file: f, image } of images) await writeSynced(f, image);
        for (const f of stagedFiles) await syncFile(f);
        await Promise.all([...changed.map((p) => p.blocks.sync()), this.urls.fsync()]);
        // New partition files must be durable before the catalog that names them.
        for (const d of dirs) await syncDir(d);
        await writeSynced(tmp, catalogImage);
        // The catalog the running import started from is kept (a link, not a copy) for its rollback.
        if (this.importState && !fs.existsSync(this.importState.catalogBefore)) linkOrCopy(file, this.importState.catalogBefore);
        await fs.promises.rename(tmp, file);
        if (this.importState) this.importState.committedDuring = true;
        this.urls.committedAt(urls);
        await syncDir(this.dataDir);
      } catch (err) {
        // Nothing was committed: the partitions keep their rows in memory, unsaved.
        await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
        for (const { file: f } of images) await fs.promises.rm(f, { force: true }).catch(() => undefined);
        for (const u of undo) {
          u.p.row = { ...u.p.row, version: u.row.version, record_bytes: u.row.record_bytes, image_bytes: u.row.image_bytes, db_crc: u.row.db_crc };
          if (u.p.staged === null) {
            u.p.staged = u.staged;
            u.p.dirty = u.p.dirty || u.dirty || u.p.db !== null;
          } else if (u.staged !== null && u.staged !== u.p.staged) {
            // An import batch staged it again while this save ran: that newer version holds
            // all its rows; the one staged before is superseded.
            this.obsolete.push(u.p.dbFile(u.staged));
          }
          putPartitionRow(this.catalogDb, u.p.row);
        }
        this.catalogDirty = true;
        throw isDiskFull(err)
          ? Object.assign(new Error(`cannot save the store: the disk is full (${(err as NodeJS.ErrnoException).code}); the last saved store is intact`, { cause: err }), {
              code: (err as NodeJS.ErrnoException).code,
            })
          : err;
      } finally {
        this.saving.clear();
      }
      this.obsolete.push(...replaced);
      if (!this.importState) this.deleteObsolete();
      // Their columns files are built after the commit, in steps (scan-columns.ts).
      for (const p of changed) this.queueColumns(p);
    });
  }

  private deleteObsolete(): void {
    for (const f of this.obsolete.splice(0)) removeVersionFiles(f);
  }

  /** Deletes every record of a source; returns how many there were. Saved before it returns. */
  deleteSource(source: SourceName): Promise<number> {
    return this.writes.run(async () => {
      if (this.hasUnsaved()) await this.save();
      const info = sourceInfo(source);
      const count = (this.catalogDb.rows('SELECT sum(count) FROM source_summary WHERE source = ?', [info.code])[0]?.[0] as number | null) ?? 0;
      const image = this.catalogDb.exportImage();
      const victims = [...(this.bySource.get(info.code) ?? [])];
      // From here until the files are gone, reads of the source stop with a 409 (its URL ids go first).
      this.deleted.set(info.code, (this.deleted.get(info.code) ?? 0) + 1);
      this.deletingSources.add(info.code);
      this.catalogDb.transaction(() => {
        for (const t of ['partitions', 'partition_projects', 'source_summary']) this.catalogDb.run(`DELETE FROM ${t} WHERE source = ?`, [info.code]);
        if (info.hot === 'function_edge') for (const g of [HOUR_GRAIN, DAY_GRAIN]) this.catalogDb.run(`DELETE FROM ${g.table}`);
        if (info.hot === 'edge') {
          this.catalogDb.run('DELETE FROM api_hours');
          setMeta(this.catalogDb, URLS_META, JSON.stringify({ bytes: 0, count: 0 }));
        }
      });
      this.apiHours.reset();
      // The URLs were the edge logs' alone; the file is cut once the empty state is committed.
      if (info.hot === 'edge') this.resetUrls({ bytes: 0, count: 0 });
      this.catalogDirty = true;
      try {
        await this.save();
      } catch (err) {
        // Not committed: the source stays, in memory as on disk.
        this.deletingSources.delete(info.code);
        this.catalogDb.close();
        this.catalogDb = openDbSync(image);
        this.resetCaches();
        this.resetUrls(urlsState(this.catalogDb));
        this.catalogDirty = false;
        throw err;
      }
      if (info.hot === 'edge') this.urls.cutFile();
      for (const p of victims) {
        this.removePartition(p);
        for (let v = 1; v <= Math.max(p.maxVersion, p.row.version); v++) removeVersionFiles(p.dbFile(v));
        removeVersionFiles(p.blocks.file);
      }
      this.deletingSources.delete(info.code);
      // Row numbers of a new partition of the same hour start again: caches must not match them.
      this.urlEpoch++;
      this.changed();
      return count;
    });
  }

  /** Counts, time span, projects and function ids per source, from the catalog. */
  summary(): SourceSummary[] {
    const rows = this.catalogDb.query<{ source: number; ref: string; function_id: string | null; count: number; min_ts: number; max_ts: number }>(
      `SELECT s.source, p.ref, f.function_id, s.count, s.min_ts, s.max_ts FROM source_summary s
       JOIN projects p ON p.id = s.project LEFT JOIN functions f ON f.id = s.function
       ORDER BY s.source, s.count DESC`,
    );
    return SOURCES.map((info) => {
      const mine = rows.filter((r) => r.source === info.code);
      const projects = new Map<string, number>();
      const functionIds: SourceSummary['functionIds'] = [];
      let count = 0;
      let min: number | null = null;
      let max: number | null = null;
      for (const r of mine) {
        count += r.count;
        projects.set(r.ref, (projects.get(r.ref) ?? 0) + r.count);
        if (r.function_id) functionIds.push({ functionId: r.function_id, project: r.ref, count: r.count });
        min = min === null ? r.min_ts : Math.min(min, r.min_ts);
        max = max === null ? r.max_ts : Math.max(max, r.max_ts);
      }
      return {
        source: info.name,
        alias: info.alias,
        count,
        minTimestamp: min,
        maxTimestamp: max,
        projects: [...projects].map(([ref, c]) => ({ ref, count: c })).sort((a, b) => b.count - a.count),
        functionIds,
      };
    });
  }

  /**
   * Every stored row of a source with its id, project ref, hot fields and full record, in
   * partition order and then insertion order (for tests, checks and exports; reads all).
   */
  dump(source: SourceName): StoredRow[] {
    const info = sourceInfo(source);
    const refs = new Map(this.catalogDb.rows('SELECT id, ref FROM projects').map(([id, ref]) => [id as number, ref as string]));
    const fns = new Map(this.catalogDb.rows('SELECT id, function_id FROM functions').map(([id, f]) => [id as number, f as string]));
    const cols = HOT_COLUMNS[info.hot];
    const out: StoredRow[] = [];
    for (const p of this.partitions(source)) {
      if (p.row.rows === 0) continue;
      const db = this.use(p);
      const ids = new Map(db.rows('SELECT rid, id FROM ids').map(([rid, id]) => [rid as number, id instanceof Uint8Array ? uuidText(id) : (id as string)]));
      const select = `SELECT rid, ts, project, blk, boff, len${cols.map((c) => `, ${c.column}`).join('')} FROM ${info.alias} ORDER BY rid`;
      for (const [rid, ts, project, blk, boff, len, ...hot] of db.rows(select)) {
        const row: StoredRow = {
          partition: p.label,
          rid: rid as number,
          id: ids.get(rid as number)!,
          ts: ts as number,
          project: refs.get(project as number)!,
          raw: this.readRecord(p, { blk: blk as number, boff: boff as number, len: len as number }).toString('utf8'),
        };
        cols.forEach((c, i) => {
          const v = hot[i] ?? null;
          if (c.field === 'url') row.url = this.urls.get(v as number);
          else if (c.field === 'functionId') row.functionId = v === null ? null : (fns.get(v as number) ?? null);
          else if (c.sqlType === 'TEXT') row[c.field as 'method' | 'path' | 'level'] = v as string | null;
          else row[c.field as 'status' | 'exec' | 'families'] = v as number | null;
        });
        out.push(row);
      }
    }
    return out;
  }

  /** SQLite's integrity check of the catalog and every partition: 'ok' when all pass. */
  integrityCheck(): string {
    const problems: string[] = [];
    const check = (db: Db, name: string) => {
      const r = db.rows('PRAGMA integrity_check').map(([x]) => String(x));
      if (r.join() !== 'ok') problems.push(`${name}: ${r.join('; ')}`);
    };
    check(this.catalogDb, 'catalog');
    for (const p of this.parts.values()) if (p.row.rows > 0) check(this.use(p), this.describe(p));
    return problems.length ? problems.join('\n') : 'ok';
  }

  /** A short description of a partition, for messages. */
  describe(p: Partition): string {
    return `${p.source.alias}/${p.label}`;
  }

  async close(): Promise<void> {
    this.stopTrapWatch();
    this.closing = true;
    await this.columnPump;
    await this.writes.run(async () => undefined);
    await this.saves.run(async () => undefined);
    for (const p of this.parts.values()) p.close();
    this.urls.close();
    this.paths.close();
    this.catalogDb.close();
    this.lock?.release();
  }
}

/** True for the errors of a full disk or an exhausted quota. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** Hands batches of one import to the store. */
export class ImportWriter {
  constructor(
    private store: LogStore,
    readonly source: SourceInfo,
  ) {}

  write(records: StoredRecord[]): BatchResult {
    return this.store.insertBatch(this.source, records);
  }

  /**
   * Sets (or, with null, removes) a small value in the catalog's `meta` table as part of this
   * import: committed with its records, rolled back with them (a sync's cursor, server/sync/).
   * Keys are namespaced (`<name>:...`) so they never meet the store's own.
   */
  setMeta(key: string, value: string | null): void {
    this.store.setImportMeta(key, value);
  }
}

/** A second name for a file (a copy where the file system has no hard links). */
function linkOrCopy(from: string, to: string): void {
  try {
    fs.linkSync(from, to);
  } catch {
    fs.copyFileSync(from, to);
  }
}

/** Deletes a file; a version's database file goes with its columns file. */
function removeVersionFiles(file: string): void {
  fs.rmSync(file, { force: true });
  if (file.endsWith('.sqlite')) fs.rmSync(columnsFileOf(file), { force: true });
  // A record file goes with its block index.
  if (file.endsWith('.records')) fs.rmSync(file.replace(/\.records$/, '.grams'), { force: true });
}

/**
 * Writes a columns file through a synced temp file and a rename, so that no reader, and no start
 * after a crash, sees part of one (a file of the right length but unwritten pages would pass the
 * length check). The path ids it holds are made durable first. Without the rename's directory
 * being synced, a crash may lose the file: it is built again when next needed.
 * @param bestEffort a failure (a full disk) is ignored: the columns are rebuilt when next needed
 */
function writeColumnsFile(file: string, cols: ScanColumns, paths: TextDictionary, of: { source: number; start: number; version: number }, bestEffort = true): boolean {
  const tmp = `${file}.tmp`;
  try {
    paths.syncNow();
    const bytes = encodeScanColumns(cols, { ...of, pathBytes: paths.bytes, pathCount: paths.size() });
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      let written = 0;
      while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
    return true;
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    if (!bestEffort) throw err;
    return false;
  }
}
