/**
 * The log store, the one object the rest of the server uses: a small catalog that is always
 * loaded, and per source one partition per UTC day, or per hour once the day holds more than
 * SPLIT_ROWS records (a sql.js database file plus a file of compressed record blocks), loaded
 * on demand under a memory budget. Imports append to the partitions their records fall in; a
 * save writes only the partitions that changed, then the catalog, whose atomic rename commits.
 *
 * This class orders the work (one import or delete at a time, one save at a time) and hands
 * each job to its module:
 * - store-lifecycle.ts: opening a folder, refusals, leftovers of a crash, the start-up check;
 * - catalog-state.ts: the catalog in memory and its dictionaries;
 * - partition-map.ts: which partitions exist, which are loaded, the memory budget;
 * - columns-cache.ts: the explorer's columns files and block indexes, and their builder;
 * - import-transaction.ts: an import's staging, commit and rollback, and the committed views;
 * - batch-insert.ts: batches into partitions, with day splits;
 * - commit.ts: the save;
 * - store-reads.ts: the per-source summary and dumps.
 * The layout and the commit protocol are described in docs/ARCHITECTURE.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gaugeGroup } from '../activity.ts';
import { type SourceInfo, type SourceName, sourceInfo } from '../sources.ts';
import type { ApiHours } from './api-hours.ts';
import { BatchInserter, type BatchResult } from './batch-insert.ts';
import type { BlockTexts } from './block-texts.ts';
import type { RecordTokens } from './record-tokens.ts';
import type { BlockGrams } from './block-grams.ts';
import { crcOffThread } from './search-worker.ts';
import { CATALOG_FILE, setMeta, URLS_META, type PartitionRow } from './catalog.ts';
import type { Dictionary } from './catalog-dictionary.ts';
import { CatalogState } from './catalog-state.ts';
import { ColumnsCache } from './columns-cache.ts';
import { commit } from './commit.ts';
import { DamageRegistry } from './damage.ts';
import { makeOwnerOnly } from './data-dir.ts';
import type { DataLock, DataLockKind } from './data-lock.ts';
import { onEngineTrapped, replaceTrappedEngine, type Db } from './db.ts';
import { ImportTransaction } from './import-transaction.ts';
import { CONVERTED_KEY, convertLegacyStore, LEGACY_STORE_FILE, removeLegacyFiles } from './legacy-store.ts';
import type { Partition } from './partition.ts';
import { describePartition, PartitionMap } from './partition-map.ts';
import { cachedBlockBytes, type RecordAddress } from './record-blocks.ts';
import type { StoredRecord } from './record.ts';
import { DAY_GRAIN, HOUR_GRAIN, type OpenRollups } from './rollups.ts';
import type { ColumnName, ScanColumns } from './scan-columns.ts';
import { removeVersionFiles } from './store-files.ts';
import { loadCommitted, openFolder } from './store-lifecycle.ts';
import { dumpRows, sourceSummaries, type SourceSummary, type StoredRow } from './store-reads.ts';
import type { TextDictionary } from './text-dictionary.ts';
import { turnForRequests } from '../turns.ts';

/** The longest urls.log's background read waits, between chunks, for the reads being answered (ms). */
const URLS_READ_WAIT_MS = 1000;

export type { BatchResult, SourceSummary, StoredRecord, StoredRow };
export { isDiskFull } from './commit.ts';

export interface StoreOptions {
  /** Bytes of partition databases kept in memory (least recently used ones are dropped). */
  memoryBudgetBytes?: number;
  /** Bytes of partition columns kept in memory (tests; 64 MiB by default). */
  columnsBudgetBytes?: number;
  /** Who holds the data folder's lock; `false` skips the lock (tests of the lock itself). */
  lockKind?: DataLockKind | false;
  /** How long the background builder works between turns for requests (tests: 0 for a turn after every unit). */
  builderSliceMs?: number;
}

/**
 * Bytes of partition databases kept loaded. An import needs its current hour and the one whose
 * columns it stages (at 10M records two 40 MB hours); more only holds partitions a scattered
 * import has finished with. On a 10M edge store, the explorer's caches filled, a 10,000-record
 * import over a month peaked at 767 MiB of RSS with 96, 794-813 with 128.
 */
export const DEFAULT_MEMORY_BUDGET = 96 * 1024 * 1024;

/** Runs async work one piece at a time, in call order. */
class Queue {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

export class LogStore {
  private readonly catalogState: CatalogState;
  private readonly partitionMap: PartitionMap;
  private readonly columnsCache: ColumnsCache;
  private readonly importTxn: ImportTransaction;
  private readonly inserter: BatchInserter;
  private readonly writes = new Queue();
  private readonly saves = new Queue();
  private readonly listeners = new Set<() => void>();
  readonly projects: Dictionary;
  readonly urls: TextDictionary;
  /** Every distinct request path, for the columns files' shared path ids. */
  readonly paths: TextDictionary;
  readonly functions: Dictionary;
  readonly apiHours: ApiHours;
  /** The catalog's hour and day rollups, read through `rollups.rows` (an import's open cells in place). */
  readonly rollups: OpenRollups;
  /** `close` has begun: nothing may be read or written through the store any more. */
  closed = false;
  /** The walk that makes every entry of the folder owner-only, started once the store is open. */
  private ownerOnly: Promise<void> = Promise.resolve();
  /** Bumps whenever stored data changes; caches key on it. */
  dataVersion = 0;
  readonly memoryBudgetBytes: number;
  lock: DataLock | undefined;
  private stopTrapWatch: () => void = () => undefined;
  private recovering: Promise<void> | null = null;
  /** Deletions per source code, and the sources being deleted now (see `deletions`). */
  private readonly deleted = new Map<number, number>();
  private readonly deletingSources = new Set<number>();
  /** Committed files found damaged: named at start-up and in the 503s of requests that need them. */
  readonly damage: DamageRegistry;

  private constructor(
    readonly dataDir: string,
    catalog: Db,
    opts: StoreOptions,
  ) {
    this.memoryBudgetBytes = opts.memoryBudgetBytes ?? DEFAULT_MEMORY_BUDGET;
    this.damage = new DamageRegistry(dataDir);
    const state = (this.catalogState = new CatalogState(dataDir, catalog));
    this.projects = state.projects;
    this.urls = state.urls;
    this.paths = state.paths;
    this.functions = state.functions;
    this.apiHours = state.apiHours;
    this.rollups = state.rollups;
    // The parts reach one another through these hooks, called only once all exist.
    this.partitionMap = new PartitionMap(dataDir, this.memoryBudgetBytes, this.damage, {
      importing: () => this.importTxn.importing,
      stage: (p) => this.importTxn.stage(p),
      forget: (p) => this.columnsCache.forget(p),
      save: () => this.save(),
    });
    this.columnsCache = new ColumnsCache(this.partitionMap, state.paths, state.pathIds, {
      importing: () => this.importTxn.importing,
      committedRow: (p) => this.importTxn.committedRow(p),
    }, opts.columnsBudgetBytes);
    if (opts.builderSliceMs !== undefined) this.columnsCache.buildSliceMs = opts.builderSliceMs;
    this.importTxn = new ImportTransaction(dataDir, state, this.partitionMap, this.columnsCache, {
      save: () => this.save(),
      hasUnsaved: () => this.hasUnsaved(),
      changed: () => this.changed(),
    });
    this.inserter = new BatchInserter(state, this.partitionMap, this.importTxn, () => this.changed());
    // Where the main thread's memory goes, sampled with the process's figures when the log is on.
    gaugeGroup('store', () => {
      const [[pages, size]] = this.catalog.rows('SELECT page_count, page_size FROM pragma_page_count(), pragma_page_size()') as [[number, number]];
      return { catalog: pages * size, ...this.heldBytes() };
    });
  }

  /** Bytes the store's caches and decoded tables hold now (the activity log's gauges). */
  heldBytes(): { apiHours: number; dictionaries: number; columnsCache: number; gramsCache: number; blocksCache: number } {
    const { columns, grams } = this.columnsCache.heldBytes();
    return { apiHours: this.apiHours.heldBytes(), dictionaries: this.urls.heldBytes() + this.paths.heldBytes(), columnsCache: columns, gramsCache: grams, blocksCache: cachedBlockBytes() };
  }

  /** The catalog database (dictionaries, partitions, summary, rollups). */
  get catalog(): Db {
    return this.catalogState.db;
  }

  /** Bumps when dictionary ids may have been reused (a rolled-back import). */
  get urlEpoch(): number {
    return this.catalogState.urlEpoch;
  }

  /** Opens (or creates) the store in a data folder, repairing what a crash could leave. */
  static async open(dataDir: string, opts: StoreOptions = {}): Promise<LogStore> {
    return openFolder(dataDir, opts.lockKind, async (catalog, exists, lock) => {
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
        store.catalogState.dirty = true;
        await store.save();
      }
      // Columns files missing, or of an earlier format or path dictionary (after an upgrade),
      // are built in the background, not by the first request that needs a week of them.
      for (const p of store.partitionMap.all()) store.columnsCache.queue(p);
      // The dictionaries' line offsets, paths.log's first (a third of urls.log's bytes at 10M
      // records): every columns file read is checked against them, so a walk after a start
      // waits for them, not for urls.log's.
      // Both wait for the reads being answered between their steps (the first is the saved
      // offsets' check, after their file is read off the thread): a first request after a start
      // goes first.
      const afterReads = () => turnForRequests(URLS_READ_WAIT_MS);
      void store.catalogState.paths.loadInSteps(afterReads, crcOffThread);
      // urls.log's a chunk per turn (saved ones: their CRC computed on the search worker, else
      // checked a megabyte a turn), so that a user's first search or URL count after a start
      // does not read them; a read that needs them finishes them.
      void store.catalogState.urls.loadInSteps(afterReads, crcOffThread);
      // Every folder and file inside made owner-only a few ms a turn: the folder itself already
      // is (openFolder), so nothing inside was reachable by others meanwhile.
      // Its turns wait for the reads being answered: a first request after a start goes first.
      store.ownerOnly = makeOwnerOnly(dataDir, { turn: () => turnForRequests(), stopped: () => store.closed }).then(
        (loose) => {
          if (loose.length) console.warn(`cannot make ${loose.length} entries of ${dataDir} owner-only (not owned by this user), e.g. ${loose[0]}`);
        },
        (err: unknown) => console.warn(`could not make every entry of ${dataDir} owner-only: ${(err as Error).message}`),
      );
      return store;
    });
  }

  /** The partitions the catalog names, split days, and no file the catalog does not name. */
  private loadPartitions(): void {
    loadCommitted({ dataDir: this.dataDir, catalog: this.catalogState.db, map: this.partitionMap, damage: this.damage, importing: this.importTxn.importing });
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
          this.partitionMap.reset();
          this.columnsCache.clear();
          this.catalogState.obsolete = [];
          this.catalogState.replace(new Uint8Array(fs.readFileSync(path.join(this.dataDir, CATALOG_FILE))));
          this.catalogState.dirty = false;
          this.catalogState.urls.close();
          this.catalogState.urls.cutFile();
          this.loadPartitions();
          this.changed();
        }),
      )
      .finally(() => {
        this.recovering = null;
      });
    return this.recovering;
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
    return this.partitionMap.ofSource(sourceInfo(source).code);
  }

  /**
   * Starts of the partitions of a source that hold records of a project within [lower, upper],
   * newest first (from the catalog: no partition is loaded to find them); the newest `limit`
   * of them, or all (-1).
   */
  partitionsWithProject(source: SourceName, project: number, lower: number, upper: number, limit = -1): Partition[] {
    const code = sourceInfo(source).code;
    const rows = this.catalog.rows(
      'SELECT start FROM partition_projects WHERE source = ? AND project = ? AND max_ts >= ? AND min_ts <= ? ORDER BY start DESC LIMIT ?',
      [code, project, lower, upper, limit],
    );
    return rows.map(([start]) => this.partitionMap.get(code, start as number)!).filter(Boolean);
  }

  /** The function ids (0: none) a project's records of a source carry, from the catalog. */
  functionsOf(source: SourceName, project: number): number[] {
    return this.catalog.rows('SELECT function FROM source_summary WHERE source = ? AND project = ?', [sourceInfo(source).code, project]).map(([f]) => f as number);
  }

  /** The partition's database, loaded if needed; clean partitions past the budget are dropped. */
  use(p: Partition): Db {
    return this.partitionMap.use(p);
  }

  /**
   * The partition's hot columns, newest first, with the row arrays `needed` loaded. A clean
   * partition's come from its version's columns file (built from the database and written when
   * missing or not whole); a partition with unsaved rows is read from its database each time.
   */
  columns(p: Partition, needed: readonly ColumnName[] = []): ScanColumns {
    return this.columnsCache.columns(p, needed);
  }

  /** How many saved partitions' columns were built for a request, on the answering thread. */
  get columnsBuiltForRequests(): number {
    return this.columnsCache.builtForRequests;
  }

  /** The partition's columns when they need no building (see ColumnsCache.readyColumns), else null. */
  readyColumns(p: Partition, needed: readonly ColumnName[] = []): ScanColumns | null {
    return this.columnsCache.readyColumns(p, needed);
  }

  /**
   * The partitions of a source as the last commit has them, ascending: during an import, the
   * partitions it created are left out and the days it split into hours are kept, so that the
   * explorer never shows records an import may still roll back (nor loses committed ones).
   */
  committedPartitions(source: SourceName): Partition[] {
    return this.importTxn.committedPartitions(sourceInfo(source).code);
  }

  /** An import is running (its records are not committed yet). */
  get importing(): boolean {
    return this.importTxn.importing;
  }

  /** The committed row of a partition: during an import, as it was when the import began (null: the import created it). */
  committedRow(p: Partition): PartitionRow | null {
    return this.importTxn.committedRow(p);
  }

  /**
   * Asks the search worker to read `needed` arrays of a partition's committed columns ahead of a
   * walk (ColumnsCache.readAhead); `columnsArrived` takes them in before the walk reads them, and
   * `dropColumnsAhead` takes back what the worker has not started. Nothing for a partition a
   * running import wrote.
   */
  readColumnsAhead(p: Partition, needed: readonly ColumnName[]): void {
    if (!this.importTxn.touches(p)) this.columnsCache.readAhead(p, needed);
  }

  columnsArrived(p: Partition): Promise<void> {
    return this.columnsCache.arrived(p);
  }

  dropColumnsAhead(p: Partition): void {
    this.columnsCache.dropAhead(p);
  }

  /**
   * A partition's columns as its last commit has them (see committedPartitions); null when it
   * holds no committed rows. Outside an import, `columns`. During one, a partition it wrote is
   * read from its committed version's columns file (built from that version's file when missing).
   */
  committedColumns(p: Partition, needed: readonly ColumnName[] = []): ScanColumns | null {
    return this.importTxn.committedColumns(p, needed);
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
  columnsSettled(): Promise<void> {
    return this.columnsCache.settled();
  }

  /**
   * A partition's block index as far as it covers its committed record bytes, or null (then
   * every block is searched).
   */
  blockGrams(p: Partition): BlockGrams | null {
    return this.columnsCache.blockGrams(p);
  }

  /**
   * A partition's record texts (block-texts.ts) as far as they cover its committed record bytes,
   * or null (then its records are searched).
   */
  blockTexts(p: Partition): BlockTexts | null {
    return this.columnsCache.blockTexts(p);
  }

  /** A group of a partition's record texts failed its check (block-texts.ts): built again from the block at `blk`. */
  textsDamaged(p: Partition, blk: number): void {
    this.columnsCache.textsDamaged(p, blk);
  }

  /**
   * Resolves once the path dictionary's saved line offsets are not being checked on the search
   * worker (after a start): every columns file is checked against them, and a read that waits
   * for this does not check them again here. (urls.log's are waited for by the URL search
   * itself, url-hits.ts, so that a walk reads its first partitions meanwhile.)
   */
  pathsChecked(): Promise<void> {
    return this.paths.whenChecked();
  }

  /** A partition's record words (record-tokens.ts) as far as they cover its committed record bytes, or null. */
  recordTokens(p: Partition): RecordTokens | null {
    return this.columnsCache.recordTokens(p);
  }

  /** A segment of a partition's record words failed its check: built again from the block at `blk`. */
  tokensDamaged(p: Partition, blk: number): void {
    this.columnsCache.tokensDamaged(p, blk);
  }

  /** One record's bytes back from its partition's blocks. */
  readRecord(p: Partition, addr: RecordAddress): Buffer {
    return p.blocks.read(addr);
  }

  /** Bytes of partition databases held in memory now. */
  loadedBytes(): number {
    return this.partitionMap.loadedBytes();
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
      const info = sourceInfo(source);
      // The dictionaries the import looks texts up in (URLs for edge records; paths for every
      // columns file it builds) are hashed with turns for requests first, not all at once by
      // its first batch or columns step.
      if (info.hot === 'edge') await this.catalogState.urls.indexInSteps();
      await this.catalogState.paths.indexInSteps();
      return this.importTxn.run(() => work(new ImportWriter(this, info)));
    });
  }

  /**
   * Loads many sources in one transaction of the store (a conversion): nothing is committed
   * until `work` has finished, then everything is, at once.
   */
  bulkLoad(work: (insert: (info: SourceInfo, records: StoredRecord[]) => BatchResult) => Promise<void>): Promise<void> {
    return this.writes.run(() => this.importTxn.run(() => work((info, records) => this.insertBatch(info, records))));
  }

  private hasUnsaved(): boolean {
    if (this.catalogState.dirty) return true;
    for (const p of this.partitionMap.all()) if (p.dirty || p.staged !== null) return true;
    return false;
  }

  /** @internal used by ImportWriter: a meta value that commits (or rolls back) with the running import. */
  setImportMeta(key: string, value: string | null): void {
    this.importTxn.setMeta(key, value);
  }

  /** @internal used by ImportWriter: stores one batch, routed to the partitions of its instants (see ImportWriter.write). */
  insertBatch(info: SourceInfo, records: StoredRecord[], settle = true): BatchResult {
    return this.inserter.insert(info, records, settle);
  }

  /** @internal used by ImportWriter: see ImportWriter.sliceEnd. */
  insertSliceEnd(info: SourceInfo, records: readonly StoredRecord[], from: number, max: number): number {
    return this.inserter.sliceEnd(info, records, from, max);
  }

  /** @internal used by ImportWriter: see ImportWriter.settle. */
  settleInserts(): void {
    this.inserter.settle();
  }

  /** See ImportWriter.markDenseDays. */
  markDenseDays(info: SourceInfo, records: StoredRecord[]): void {
    this.inserter.markDenseDays(info, records);
  }

  /**
   * Commits what changed (commit.ts): the changed partitions, then the catalog, whose rename is
   * the commit point. Saves never overlap; files of replaced versions are deleted afterwards.
   */
  save(): Promise<void> {
    return this.saves.run(() =>
      commit({ dataDir: this.dataDir, catalog: this.catalogState, map: this.partitionMap, txn: this.importTxn, cols: this.columnsCache }),
    );
  }

  /** Deletes every record of a source; returns how many there were. Saved before it returns. */
  deleteSource(source: SourceName): Promise<number> {
    return this.writes.run(async () => {
      if (this.hasUnsaved()) await this.save();
      const info = sourceInfo(source);
      const state = this.catalogState;
      const count = (state.db.rows('SELECT sum(count) FROM source_summary WHERE source = ?', [info.code])[0]?.[0] as number | null) ?? 0;
      const image = state.db.exportImage();
      const victims = [...this.partitionMap.ofSource(info.code)];
      // From here until the files are gone, reads of the source stop with a 409 (its URL ids go first).
      this.deleted.set(info.code, (this.deleted.get(info.code) ?? 0) + 1);
      this.deletingSources.add(info.code);
      state.db.transaction(() => {
        for (const t of ['partitions', 'partition_projects', 'source_summary']) state.db.run(`DELETE FROM ${t} WHERE source = ?`, [info.code]);
        if (info.hot === 'function_edge') for (const g of [HOUR_GRAIN, DAY_GRAIN]) state.db.run(`DELETE FROM ${g.table}`);
        if (info.hot === 'edge') {
          state.db.run('DELETE FROM api_hours');
          setMeta(state.db, URLS_META, JSON.stringify({ bytes: 0, count: 0 }));
        }
      });
      state.apiHours.reset();
      state.rollups.reset();
      // The URLs were the edge logs' alone; the file is cut once the empty state is committed.
      if (info.hot === 'edge') state.resetUrls({ bytes: 0, count: 0 });
      state.dirty = true;
      try {
        await this.save();
      } catch (err) {
        // Not committed: the source stays, in memory as on disk.
        this.deletingSources.delete(info.code);
        state.replace(image);
        state.dirty = false;
        throw err;
      }
      if (info.hot === 'edge') state.urls.cutFile();
      for (const p of victims) {
        this.partitionMap.remove(p);
        for (let v = 1; v <= Math.max(p.maxVersion, p.row.version); v++) removeVersionFiles(p.dbFile(v));
        removeVersionFiles(p.blocks.file);
      }
      // A columns file written off the thread when the files went: it finds its partition gone and drops its temp file.
      await this.columnsCache.writesDone();
      this.deletingSources.delete(info.code);
      // Row numbers of a new partition of the same day or hour start again: caches must not match them.
      state.urlEpoch++;
      this.changed();
      return count;
    });
  }

  /** Counts, time span, projects and function ids per source, from the catalog. */
  summary(): SourceSummary[] {
    return sourceSummaries(this.catalog);
  }

  /**
   * Every stored row of a source with its id, project ref, hot fields and full record, in
   * partition order and then insertion order (for tests, checks and exports; reads all).
   */
  dump(source: SourceName): StoredRow[] {
    return dumpRows({ catalog: this.catalog, urls: this.urls, partitions: this.partitions(source), use: (p) => this.use(p) }, sourceInfo(source));
  }

  /** SQLite's integrity check of the catalog and every partition: 'ok' when all pass. */
  integrityCheck(): string {
    const problems: string[] = [];
    const check = (db: Db, name: string) => {
      const r = db.rows('PRAGMA integrity_check').map(([x]) => String(x));
      if (r.join() !== 'ok') problems.push(`${name}: ${r.join('; ')}`);
    };
    check(this.catalog, 'catalog');
    for (const p of this.partitionMap.all()) if (p.row.rows > 0) check(this.use(p), this.describe(p));
    return problems.length ? problems.join('\n') : 'ok';
  }

  /** A short description of a partition, for messages. */
  describe(p: Partition): string {
    return describePartition(p);
  }

  /** Resolves once every entry of the data folder has been made owner-only (or the store closed first). */
  ownerOnlyDone(): Promise<void> {
    return this.ownerOnly;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopTrapWatch();
    await this.ownerOnly;
    await this.columnsCache.stop();
    await this.writes.run(async () => undefined);
    await this.saves.run(async () => undefined);
    this.partitionMap.close();
    this.urls.close();
    this.paths.close();
    this.catalog.close();
    this.lock?.release();
  }
}

/** Hands batches of one import to the store. */
export class ImportWriter {
  constructor(
    private store: LogStore,
    readonly source: SourceInfo,
  ) {}

  /**
   * Stores records. With `settle` false, the rows of records whose blocks are still being
   * packed on the worker (record-blocks.ts) may wait: `settle` must follow before the caller
   * lets anything else run (a turn of the event loop), so a run of writes overlaps the packing.
   */
  write(records: StoredRecord[], settle = true): BatchResult {
    return this.store.insertBatch(this.source, records, settle);
  }

  /** Where the slice of `records` from `from` should end: at most `max` records, and at most one partition read from disk to write them. */
  sliceEnd(records: readonly StoredRecord[], from: number, max: number): number {
    return this.store.insertSliceEnd(this.source, records, from, max);
  }

  /** Writes the blocks being packed and the rows waiting for them (every source's): nothing waits after. */
  settle(): void {
    this.store.settleInserts();
  }

  /**
   * Judges from a whole batch which of its days are dense enough to be stored as hours from the
   * start, before the batch is written in slices (each too small to judge).
   */
  markDenseDays(records: StoredRecord[]): void {
    this.store.markDenseDays(this.source, records);
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
