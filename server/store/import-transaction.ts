/**
 * An import as one transaction of the store (docs/ARCHITECTURE.md, "Commit protocol"): it
 * starts from the committed catalog kept on disk, stages the partitions it has moved past,
 * commits with one save, and on failure puts the catalog, the partitions and their record files
 * back. While it runs, readers see the store as the last commit has it (the committed views).
 */
import fs from 'node:fs';
import path from 'node:path';
import { spanOf } from '../activity.ts';
import { CATALOG_FILE, setMeta, type PartitionRow } from './catalog.ts';
import type { CatalogState } from './catalog-state.ts';
import type { ColumnsCache } from './columns-cache.ts';
import type { Partition } from './partition.ts';
import type { PartitionMap } from './partition-map.ts';
import { buildScanColumns, columnsFileOf, type ColumnName, type ScanColumns } from './scan-columns.ts';
import { linkOrCopy, removeVersionFiles, ROLLBACK_FILE } from './store-files.ts';

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

/** A partition the import has not written for this many batches is written out (staged). */
const STAGE_AFTER_BATCHES = 4;

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
    this.state = { catalogBefore, touched: new Map(), removed: [], batches: 0, committedDuring: false, unsavedBefore: this.hooks.hasUnsaved() };
    try {
      const result = await work();
      await this.hooks.save();
      this.dropRemoved();
      return result;
    } catch (err) {
      await this.rollback();
      throw err;
    } finally {
      this.state = null;
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

  /** A batch begins (batch-insert.ts). */
  noteBatch(): void {
    if (this.state) this.state.batches++;
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
   * commit names it in the catalog, its rollback deletes it.
   */
  stage(p: Partition): void {
    spanOf('import: stage partition', () => this.stageNow(p));
  }

  private stageNow(p: Partition): void {
    p.blocks.flush();
    const { version, bytes, crc } = p.writeVersion(p.nextVersion());
    p.stagedCheck = { bytes, crc };
    // A partition this import created gets its columns now, while its rows are in memory: a bulk
    // import stages most of its partitions, and building them later would load each again. One
    // that held rows before (a small import touching many hours) is left to the background
    // builder after the commit, so the import does not stall on rebuilding them. (A file left
    // under this name by a crash is replaced.) writeColumnsFile syncs it.
    const cols = this.state?.touched.get(p) === null ? buildScanColumns(p.db!, p.source, this.cols.pathIds) : null;
    if (cols?.complete) this.cols.writeColumns(p, version, cols, false);
    else fs.rmSync(columnsFileOf(p.dbFile(version)), { force: true });
    if (p.staged !== null) removeVersionFiles(p.dbFile(p.staged));
    p.staged = version;
    p.dirty = false;
  }

  /** Writes out partitions the import has moved past, so few stay dirty in memory. */
  stageIdle(): void {
    const state = this.state;
    if (!state) return;
    // Only loaded partitions can hold unsaved rows: a few dozen, not every partition touched.
    for (const p of this.map.loaded) {
      if (p.dirty && p.db && state.touched.has(p) && this.map.holds(p) && state.batches - p.lastBatch >= STAGE_AFTER_BATCHES) this.stage(p);
    }
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
