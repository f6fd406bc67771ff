/**
 * An import as one transaction of the store (docs/ARCHITECTURE.md, "Commit protocol"): it
 * starts from the committed catalog kept on disk, stages the partitions it has moved past,
 * commits with one save, and on failure puts the catalog, the partitions and their record files
 * back. While it runs, readers see the store as the last commit has it (the committed views).
 *
 * Staging runs in steps with a turn for requests between them: a partition's image is written
 * in one step (in the turn after the batch that left it idle), then its columns file is built
 * a few thousand rows a step; the commit waits for the steps still due.
 */
import fs from 'node:fs';
import path from 'node:path';
import { span, spanOf } from '../activity.ts';
import { blockWorkerDeaths, warmBlockWorker } from './block-packer.ts';
import { CATALOG_FILE, setMeta, type PartitionRow } from './catalog.ts';
import type { CatalogState } from './catalog-state.ts';
import { IMPORT_CACHE_SHARE, type ColumnsCache } from './columns-cache.ts';
import { DAY_MICROS, type Partition } from './partition.ts';
import type { PartitionMap } from './partition-map.ts';
import { buildScanColumnsInSteps, columnsFileOf, type ColumnName, type ScanColumns } from './scan-columns.ts';
import { narrowBlockCache } from './record-blocks.ts';
import { linkOrCopy, removeVersionFiles, ROLLBACK_FILE } from './store-files.ts';
import { turnForRequests } from '../turns.ts';

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
  /** Deaths of the block packing worker when the import began: one during it fails the import. */
  workerDeaths: number;
  /** Staging steps still to run (a partition's image, or its columns), and the task running them. */
  steps: StagingStep[];
  stepping: Promise<void> | null;
  /** A staging step failed (a full disk): the import fails with it. */
  stepFailed: { err: unknown } | null;
  /** The import failed: steps still due are dropped, one running stops at its next turn. */
  stopped: boolean;
}

/**
 * One step of staging: write a partition's image, or build a staged version's columns file
 * (`load`: wanted before the commit even if the partition has left memory meanwhile: loaded again).
 */
type StagingStep = { kind: 'image'; p: Partition; ending?: boolean } | { kind: 'columns'; p: Partition; version: number; load: boolean };

/** A partition the import has not written for this many batches is written out (staged). */
const STAGE_AFTER_BATCHES = 4;
/**
 * Partitions that held rows before an import and end within this span of their source's newest
 * one get their columns files before its commit (the default pages ask for the last hour or day).
 */
const RECENT_COLUMNS_US = DAY_MICROS;
/** How long a staging step or the commit waits (without blocking) for the worker to pack a partition's last block. */
const PACK_WAIT_MS = 50;

/** Resolves once every partition's sealed blocks are packed, or after PACK_WAIT_MS (they are then packed on this thread). */
async function packed(parts: Iterable<Partition>): Promise<void> {
  const until = performance.now() + PACK_WAIT_MS;
  for (const p of parts) {
    while (!p.blocks.packed && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** What the transaction needs of the rest of the store. */
export interface ImportHooks {
  /** The commit (commit.ts), through the store's queue of saves. */
  save(): Promise<void>;
  /** The store holds changes no commit has (the catalog's, or partitions' unsaved or staged rows). */
  hasUnsaved(): boolean;
  /** Stored data changed. */
  changed(): void;
}

export class ImportTransaction {
  private state: ImportState | null = null;
  /** Called before a partition's image is written: the rows still waiting for their record blocks go in (batch-insert.ts). */
  beforeImage: (p: Partition) => void = () => undefined;

  constructor(
    private readonly dataDir: string,
    private readonly catalog: CatalogState,
    private readonly map: PartitionMap,
    private readonly cols: ColumnsCache,
    private readonly hooks: ImportHooks,
  ) {}

  /** An import is running (its records are not committed yet). */
  get importing(): boolean {
    return this.state !== null;
  }

  /** Runs `work` as one import: committed when it returns, rolled back when it throws. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const catalogBefore = path.join(this.dataDir, ROLLBACK_FILE);
    fs.rmSync(catalogBefore, { force: true });
    // The committed file is what the import starts from, unless the catalog has unsaved changes or was never committed (a conversion).
    if (this.catalog.dirty || !fs.existsSync(path.join(this.dataDir, CATALOG_FILE))) fs.writeFileSync(catalogBefore, this.catalog.db.exportImage(), { mode: 0o600 });
    // Started now: it packs the record blocks of the import's first batches.
    warmBlockWorker();
    const state: ImportState = (this.state = {
      catalogBefore,
      touched: new Map(),
      removed: [],
      batches: 0,
      committedDuring: false,
      unsavedBefore: this.hooks.hasUnsaved(),
      workerDeaths: blockWorkerDeaths().count,
      steps: [],
      stepping: null,
      stepFailed: null,
      stopped: false,
    });
    // The explorer's caches give the import's partitions room until it ends (the whole run's
    // peak of memory was an import after the explorer had filled them).
    this.cols.importStarted();
    const widenBlocks = narrowBlockCache(IMPORT_CACHE_SHARE);
    try {
      const result = await work();
      // The last blocks of the partitions the commit writes are packed on the worker meanwhile.
      const dirty = [...this.map.loaded].filter((p) => p.dirty);
      for (const p of dirty) p.blocks.seal();
      // The partitions still dirty are staged too, each in a step (its image written off the
      // thread): the commit's one synchronous step then takes only the catalog's image, not
      // every one of theirs at once (at 10M records, 39 MB each: the longest wait during a
      // save, and the import's peak of memory, their copies all held together).
      for (const p of dirty) {
        const queued = state.steps.find((s): s is StagingStep & { kind: 'image' } => s.kind === 'image' && s.p === p);
        if (queued) queued.ending = true;
        else this.queueStep({ kind: 'image', p, ending: true });
      }
      // The staging steps still due: their columns are built with turns for requests, not by the commit.
      await this.stagingDone(state);
      await packed(dirty);
      this.checkWorker();
      await this.hooks.save();
      this.dropRemoved();
      return result;
    } catch (err) {
      state.stopped = true;
      state.steps = [];
      await state.stepping?.catch(() => undefined);
      await this.rollback();
      throw err;
    } finally {
      this.state = null;
      widenBlocks();
      fs.rmSync(catalogBefore, { force: true });
      this.catalog.deleteObsolete();
    }
  }

  /** A meta value that commits (or rolls back) with the running import. */
  setMeta(key: string, value: string | null): void {
    if (!this.state) throw new Error('meta values are set within an import (withWriter)');
    if (!/^[a-z][a-z0-9_-]*:/.test(key)) throw new Error(`meta key ${key} is not namespaced (<name>:...)`);
    if (value === null) this.catalog.db.run('DELETE FROM meta WHERE key = ?', [key]);
    else setMeta(this.catalog.db, key, value);
    this.catalog.dirty = true;
  }

  /** A batch begins (batch-insert.ts): it fails if a staging step failed or the block packing worker died meanwhile. */
  noteBatch(): void {
    const state = this.state;
    if (!state) return;
    if (state.stepFailed) throw state.stepFailed.err;
    this.checkWorker();
    state.batches++;
  }

  /** The worker packing record blocks (block-packer.ts) stopped during this import: it fails. */
  private checkWorker(): void {
    const state = this.state;
    const deaths = blockWorkerDeaths();
    if (state && deaths.count !== state.workerDeaths) {
      throw new Error(`${deaths.cause} during the import; the import was rolled back and the store is as it was before it`);
    }
  }

  /** A batch is about to write a partition: its committed row is kept, and when it was last written. */
  touch(p: Partition): void {
    const state = this.state;
    if (state && !state.touched.has(p)) state.touched.set(p, p.row.version === 0 && p.row.rows === 0 && !p.db ? null : { ...p.row });
    if (state) p.lastBatch = state.batches;
  }

  /** A day partition was split into hours: its files go once the import commits. */
  noteSplit(day: Partition): void {
    this.state?.removed.push(day);
  }

  /** Before a save replaces the committed catalog: the one this import started from is kept (a link, not a copy) for its rollback. */
  keepCatalogBefore(file: string): void {
    if (this.state && !fs.existsSync(this.state.catalogBefore)) linkOrCopy(file, this.state.catalogBefore);
  }

  /** A save committed while the import runs. */
  noteCommitted(): void {
    if (this.state) this.state.committedDuring = true;
  }

  /**
   * The partitions of a source as the last commit has them, ascending: during an import, the
   * partitions it created are left out and the days it split into hours are kept, so that the
   * explorer never shows records an import may still roll back (nor loses committed ones).
   */
  committedPartitions(code: number): Partition[] {
    const state = this.state;
    const all = this.map.ofSource(code);
    if (!state) return [...all];
    const split = state.removed.filter((p) => p.source.code === code && state.touched.get(p) !== null);
    const kept = all.filter((p) => !state.touched.has(p) || state.touched.get(p) !== null);
    return split.length ? [...kept, ...split].sort((a, b) => a.start - b.start) : kept;
  }

  /** The committed row of a partition: during an import, as it was when the import began (null: the import created it). */
  committedRow(p: Partition): PartitionRow | null {
    const state = this.state;
    if (state?.touched.has(p)) return state.touched.get(p)!;
    return p.row;
  }

  /** Whether a running import wrote this partition (its committed columns are then read from its committed version's file). */
  touches(p: Partition): boolean {
    return this.state?.touched.has(p) === true;
  }

  /**
   * A partition's columns as its last commit has them (see committedPartitions); null when it
   * holds no committed rows. Outside an import, `columns`. During one, a partition it wrote is
   * read from its committed version's columns file (built from that version's file when missing).
   */
  committedColumns(p: Partition, needed: readonly ColumnName[] = []): ScanColumns | null {
    const state = this.state;
    if (!state?.touched.has(p)) return this.cols.columns(p, needed);
    return this.cols.versionColumns(p, state.touched.get(p)!, needed);
  }

  /**
   * Parks a dirty partition's rows in a staged version file (not committed): the import's
   * commit names it in the catalog, its rollback deletes it. The image is written now (the
   * partition is about to leave memory); its columns file follows in steps.
   */
  stage(p: Partition): void {
    spanOf('import: stage partition', () => this.stageImage(p));
  }

  private stageImage(p: Partition): void {
    this.beforeImage(p);
    p.blocks.flush();
    const { version, bytes, crc } = p.writeVersion(p.nextVersion());
    this.staged(p, version, { bytes, crc }, false);
  }

  /**
   * stageImage for a staging step: only the image is taken on this thread (one step); the file
   * is written and checksummed off it while the import and requests go on. The partition counts
   * as staged once the file is whole; until then it is dirty and stays in memory (a batch that
   * writes it meanwhile only makes the image older: it is staged again later).
   */
  private async stageImageOffThread(p: Partition, ending: boolean): Promise<void> {
    let written: ReturnType<Partition['writeVersionOffThread']>;
    let changedAt = 0;
    spanOf('import: stage partition', () => {
      this.beforeImage(p);
      p.blocks.flush();
      written = p.writeVersionOffThread(p.nextVersion(), turnForRequests);
      changedAt = p.changes;
    });
    const task = written!.then(({ version, bytes, crc }) => {
      if (p.changes !== changedAt || p.db === null) {
        // Rows came in meanwhile: the file is an older image, not the partition's rows.
        removeVersionFiles(p.dbFile(version));
        return;
      }
      this.staged(p, version, { bytes, crc }, ending);
    });
    const settled = task.then(
      () => undefined,
      () => undefined,
    );
    p.imageWrite = settled;
    try {
      await task;
    } finally {
      if (p.imageWrite === settled) p.imageWrite = null;
    }
  }

  /** The partition's rows are in the version file just written (not committed): it can leave memory. */
  private staged(p: Partition, version: number, check: { bytes: number; crc: number }, ending: boolean): void {
    p.stagedCheck = check;
    // A file left under this name by a crash is replaced.
    fs.rmSync(columnsFileOf(p.dbFile(version)), { force: true });
    if (p.staged !== null) removeVersionFiles(p.dbFile(p.staged));
    p.staged = version;
    p.dirty = false;
    // A partition this import created gets its columns while its rows are in memory: a bulk
    // import stages most of its partitions, and building them later would load each again. One
    // that held rows before and that the import moved past (a small import touching many hours)
    // is left to the background builder after the commit, so the import does not stall on
    // loading each again, unless it is among its source's newest day of partitions, the ones
    // pages ask for first. Those and the ones staged as the import ends (in memory, a few at
    // most) get theirs before its commit: once committed, a page asking for a partition without
    // a columns file builds it on the answering thread (1.4 s for the newest hour right after a
    // restart at 10M records, the URL and path dictionaries loaded for it).
    const wanted = ending || this.amongNewest(p);
    if (wanted || this.state?.touched.get(p) === null) this.queueStep({ kind: 'columns', p, version, load: wanted });
  }

  /** Whether a partition ends within RECENT_COLUMNS_US of its source's newest partition's end. */
  private amongNewest(p: Partition): boolean {
    const newest = this.map.ofSource(p.source.code).at(-1);
    return newest !== undefined && p.end > newest.end - RECENT_COLUMNS_US;
  }

  /** Writes out partitions the import has moved past, so few stay dirty in memory: in a step of their own, after this batch. */
  stageIdle(): void {
    const state = this.state;
    if (!state) return;
    // Only loaded partitions can hold unsaved rows: a few dozen, not every partition touched.
    for (const p of this.map.loaded) {
      if (!this.idle(state, p) || state.steps.some((s) => s.kind === 'image' && s.p === p)) continue;
      // Its last block is packed on the worker until the step writes it.
      p.blocks.seal();
      this.queueStep({ kind: 'image', p });
    }
  }

  private idle(state: ImportState, p: Partition): boolean {
    return p.dirty && p.db !== null && state.touched.has(p) && this.map.holds(p) && state.batches - p.lastBatch >= STAGE_AFTER_BATCHES;
  }

  private queueStep(step: StagingStep): void {
    const state = this.state;
    if (!state) return;
    state.steps.push(step);
    state.stepping ??= this.runSteps(state).finally(() => (state.stepping = null));
  }

  /** Resolves once the staging steps due are done; rejects with a step's failure. */
  private async stagingDone(state: ImportState): Promise<void> {
    while (state.stepping) await state.stepping;
    if (state.stepFailed) throw state.stepFailed.err;
  }

  /**
   * Runs the staging steps, each in a turn of its own (requests are answered in between): an
   * image (if the partition is still idle: a batch may have written it since), then a columns
   * file built STEP_ROWS rows a step from the partition's database, given up when the partition
   * changes or leaves memory meanwhile (the background builder makes it after the commit).
   */
  private async runSteps(state: ImportState): Promise<void> {
    const turn = turnForRequests;
    try {
      while (state.steps.length && this.state === state && !state.stopped) {
        await turn();
        const step = state.steps.shift();
        if (!step || this.state !== state || state.stopped) return;
        const { p } = step;
        if (step.kind === 'image') {
          await packed([p]);
          // As the import ends, every dirty partition is due.
          const due = step.ending ? p.dirty && p.db !== null : this.idle(state, p);
          if (due && this.state === state && !state.stopped) await this.stageImageOffThread(p, step.ending === true);
          continue;
        }
        const unchanged = () => this.state === state && !state.stopped && p.staged === step.version && !p.dirty && p.db !== null && this.map.holds(p);
        // A newest partition a busy import pushed out of memory is loaded again for its columns,
        // and kept in memory until they are written.
        if (step.load && p.db === null && this.state === state && !state.stopped && p.staged === step.version && !p.dirty) this.map.useInBackground(p);
        if (!unchanged()) continue;
        if (step.load) p.pins++;
        try {
          await this.stageColumns(p, step.version, unchanged);
        } finally {
          if (step.load) p.pins--;
        }
      }
    } catch (err) {
      state.stepFailed ??= { err };
      state.steps = [];
    }
  }

  /** Builds a staged version's columns file STEP_ROWS rows a step, with turns for requests, and writes it off the thread. */
  private async stageColumns(p: Partition, version: number, unchanged: () => boolean): Promise<void> {
    const turn = turnForRequests;
    let end = span('import: stage columns');
    let cols: ScanColumns | null;
    try {
      cols = await buildScanColumnsInSteps(
        // Null once the partition left memory: the background builder makes its columns after the commit.
        () => (unchanged() ? p.db : null),
        p.source,
        this.cols.pathIds,
        async () => {
          end();
          await turn();
          end = span('import: stage columns');
          return unchanged();
        },
      );
    } finally {
      end();
    }
    if (!cols?.complete) return;
    // Written and synced off this thread (a synced write here took up to 250 ms while the
    // import's record files were being written). A failure (a full disk) fails the import.
    await turn();
    if (unchanged()) await this.cols.writeColumnsOffThread(p, version, cols, unchanged, false);
  }

  /** After a commit: the files of day partitions this import split are no longer the store. */
  private dropRemoved(): void {
    for (const p of this.state?.removed ?? []) {
      for (let v = 1; v <= Math.max(p.maxVersion, p.row.version); v++) this.catalog.obsolete.push(p.dbFile(v));
      this.catalog.obsolete.push(p.blocks.file);
      p.close();
    }
  }

  /** Puts the store back to the state before the running import, and commits that. */
  private async rollback(): Promise<void> {
    const state = this.state;
    if (!state) return;
    const before = new Uint8Array(fs.readFileSync(fs.existsSync(state.catalogBefore) ? state.catalogBefore : path.join(this.dataDir, CATALOG_FILE)));
    this.catalog.replace(before);
    this.map.loadSplitDays(this.catalog.db);
    // A save during the import listed the versions it replaced as obsolete; the restored
    // catalog names them again, so they must stay.
    const named = new Set<string>();
    for (const [p, before] of state.touched) if (before && before.version > 0) named.add(p.dbFile(before.version));
    this.catalog.obsolete = this.catalog.obsolete.filter((f) => !named.has(f));
    const cuts: Array<{ p: Partition; size: number }> = [];
    const drop: string[] = [];
    for (const [p, before] of state.touched) {
      p.dirty = false;
      p.db?.close();
      p.db = null;
      // Its unwritten block holds rolled-back records only; a reader may load and evict the
      // partition again before the restored catalog is committed.
      p.blocks.dropPending();
      this.map.loaded.delete(p);
      for (let v = (before?.version ?? 0) + 1; v <= Math.max(p.maxVersion, p.row.version, p.staged ?? 0); v++) drop.push(p.dbFile(v));
      p.staged = null;
      if (before === null) {
        drop.push(p.blocks.file);
        this.map.remove(p);
      } else {
        p.row = { ...before };
        // A day partition this import split comes back.
        if (!this.map.holds(p)) this.map.add(p);
        cuts.push({ p, size: before.record_bytes });
      }
    }
    this.catalog.dirty = true;
    this.hooks.changed();
    try {
      // A save may have committed part of this import meanwhile: only once the restored
      // catalog is committed may the files it no longer refers to be cut or deleted.
      await this.hooks.save();
    } catch {
      // The import's own error is the one to report (a full disk, often).
      for (const { p } of cuts) p.blocks.dropPending();
      if (state.committedDuring) return; // the extra bytes stay, unreferenced, until the next open
      // The committed catalog is the one from before the import: what the import appended or
      // wrote is no one's, so it goes now, not at the next start (a full disk needs the space),
      // and memory matches the disk again: nothing is left to save (at shutdown, say).
      this.catalog.dirty = state.unsavedBefore;
    }
    for (const { p, size } of cuts) {
      p.blocks.truncate(size);
      this.cols.forgetGrams(p);
    }
    this.catalog.urls.cutFile();
    this.catalog.obsolete.push(...drop);
  }
}
