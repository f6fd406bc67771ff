/**
 * The partition map: which partitions each source has (those the catalog names and those an
 * import creates), which days are stored as hours, and which databases are loaded, under the
 * memory budget, least recently used dropped first (docs/ARCHITECTURE.md, "In memory").
 */
import path from 'node:path';
import { gauge, span } from '../activity.ts';
import { SOURCES, type SourceInfo } from '../sources.ts';
import { partitionRows, type PartitionRow } from './catalog.ts';
import { StoreFileDamaged, type DamageRegistry } from './damage.ts';
import type { Db } from './db.ts';
import { DAY_MICROS, dayStart, HOUR_MICROS, hourStart, Partition } from './partition.ts';
import { PARTS_DIR } from './store-files.ts';

/** Partitions held in memory at most, whatever their size (each costs sql.js some memory). */
const MAX_LOADED = 48;
/** How long a loaded database's measured size is taken as its size (ms); it grows by at most a few hundred KB meanwhile. */
const MEASURE_MS = 20;

const partKey = (code: number, start: number) => `${code}:${start}`;

/** A short description of a partition, for messages. */
export function describePartition(p: Partition): string {
  return `${p.source.alias}/${p.label}`;
}

/** What the map needs of the rest of the store. */
export interface PartitionMapHooks {
  /** An import is running: only its partitions can be dirty when the budget is enforced. */
  importing(): boolean;
  /** Writes a dirty partition of the running import to a staged version file, so it can be dropped. */
  stage(p: Partition): void;
  /** A partition left the map: what is cached of it goes. */
  forget(p: Partition): void;
  save(): Promise<void>;
}

export class PartitionMap {
  private readonly parts = new Map<string, Partition>();
  /** Per source code, its partitions by start, ascending (kept sorted). */
  private readonly bySource = new Map<number, Partition[]>();
  /** Partitions whose database may be in memory. */
  readonly loaded = new Set<Partition>();
  /** Days (per source) stored as hour partitions: `${code}:${dayStart}`. */
  private splitDays = new Set<string>();
  /** Partitions a running save is writing: kept in memory until it ends (if it fails, their rows are only there). */
  saving = new Set<Partition>();
  private useClock = 0;
  /** When a request last used a partition (the background builder waits for a quiet moment). */
  private lastForegroundAt = 0;
  private inBackground = false;

  constructor(
    private readonly dataDir: string,
    private readonly memoryBudgetBytes: number,
    private readonly damage: DamageRegistry,
    private readonly hooks: PartitionMapHooks,
  ) {
    gauge('partitionsLoaded', () => this.loadedBytes());
  }

  /** Adds the partitions the catalog names, and its split days. */
  load(catalog: Db): void {
    for (const row of partitionRows(catalog)) this.add(new Partition(this.sourceByCode(row.source), this.partsDir(row.source), row));
    this.loadSplitDays(catalog);
  }

  loadSplitDays(catalog: Db): void {
    this.splitDays = new Set(catalog.rows('SELECT source, day FROM split_days').map(([code, day]) => `${code as number}:${day as number}`));
  }

  isSplitDay(code: number, day: number): boolean {
    return this.splitDays.has(`${code}:${day}`);
  }

  addSplitDay(code: number, day: number): void {
    this.splitDays.add(`${code}:${day}`);
  }

  sourceByCode(code: number): SourceInfo {
    const s = SOURCES.find((x) => x.code === code);
    if (!s) throw new Error(`the catalog names an unknown source code ${code}`);
    return s;
  }

  partsDir(code: number): string {
    let dir = this.dirs.get(code);
    if (dir === undefined) this.dirs.set(code, (dir = path.join(this.dataDir, PARTS_DIR, this.sourceByCode(code).alias)));
    return dir;
  }

  /** partsDir's answers (a start asks once per partition). */
  private readonly dirs = new Map<number, string>();

  get(code: number, start: number): Partition | undefined {
    return this.parts.get(partKey(code, start));
  }

  has(code: number, start: number): boolean {
    return this.parts.has(partKey(code, start));
  }

  /** The partition is the one the map holds for its source and start (not a split day's, not a removed one). */
  holds(p: Partition): boolean {
    return this.parts.get(partKey(p.source.code, p.start)) === p;
  }

  all(): IterableIterator<Partition> {
    return this.parts.values();
  }

  /** Partitions of a source, ascending by start. */
  ofSource(code: number): readonly Partition[] {
    return this.bySource.get(code) ?? [];
  }

  add(p: Partition): void {
    this.parts.set(partKey(p.source.code, p.start), p);
    let list = this.bySource.get(p.source.code);
    if (!list) this.bySource.set(p.source.code, (list = []));
    list.push(p);
    if (list.length > 1 && list[list.length - 2]!.start > p.start) list.sort((a, b) => a.start - b.start);
  }

  /** Takes a partition out of the maps (it stays open: a split still reads it). */
  detach(p: Partition): void {
    if (this.parts.get(partKey(p.source.code, p.start)) === p) this.parts.delete(partKey(p.source.code, p.start));
    const list = this.bySource.get(p.source.code);
    const i = list ? list.indexOf(p) : -1;
    if (i >= 0) list!.splice(i, 1);
    this.loaded.delete(p);
    this.hooks.forget(p);
  }

  remove(p: Partition): void {
    this.detach(p);
    p.close();
  }

  /** The partition a record of this instant belongs to, if there is one yet. */
  existingFor(info: SourceInfo, ts: number): Partition | undefined {
    const day = dayStart(ts);
    return this.parts.get(partKey(info.code, this.splitDays.has(`${info.code}:${day}`) ? hourStart(ts) : day));
  }

  /** The partition a record of this instant belongs to (created when missing). */
  partitionFor(info: SourceInfo, ts: number): Partition {
    const day = dayStart(ts);
    const split = this.splitDays.has(`${info.code}:${day}`);
    const start = split ? hourStart(ts) : day;
    const width = split ? HOUR_MICROS : DAY_MICROS;
    let p = this.parts.get(partKey(info.code, start));
    if (p && p.row.width !== width) throw new Error(`${describePartition(p)} does not have the width the catalog's split days say`);
    if (!p) {
      const row: PartitionRow = { source: info.code, start, width, version: 0, rows: 0, next_rid: 1, record_bytes: 0, image_bytes: 0, min_ts: null, max_ts: null, db_crc: null };
      p = new Partition(info, this.partsDir(info.code), row);
      this.add(p);
    }
    return p;
  }

  /** Closes every partition and forgets them all (the engine is being replaced). */
  reset(): void {
    for (const p of new Set([...this.parts.values(), ...this.loaded])) p.close();
    this.parts.clear();
    this.bySource.clear();
    this.loaded.clear();
    this.saving.clear();
  }

  /** Closes every partition (the store is closing). */
  close(): void {
    for (const p of this.parts.values()) p.close();
  }

  /** A request is reading now: the background builder yields to it. */
  noteForeground(): void {
    this.lastForegroundAt = performance.now();
  }

  /** When a request last used a partition (performance.now()). */
  get lastForeground(): number {
    return this.lastForegroundAt;
  }

  /** The partition's database, loaded if needed; clean partitions past the budget are dropped. */
  use(p: Partition): Db {
    if (!this.inBackground) this.lastForegroundAt = performance.now();
    p.lastUsed = ++this.useClock;
    let db: Db;
    const loading = p.db ? null : span('store: load partition');
    try {
      db = p.load();
    } catch (err) {
      if (err instanceof StoreFileDamaged) this.damage.note(err);
      throw err;
    } finally {
      loading?.();
    }
    this.loaded.add(p);
    if (p.migrated) {
      p.migrated = false;
      // Written soon, so that a migrated partition does not wait in memory for the next import.
      setImmediate(() => void this.hooks.save().catch((err: unknown) => console.error('could not save migrated partitions:', err)));
    }
    this.enforceBudget(p);
    return db;
  }

  /** `use` for background work, which does not count as a request's. */
  useInBackground(p: Partition): Db {
    this.inBackground = true;
    try {
      return this.use(p);
    } finally {
      this.inBackground = false;
    }
  }

  /** Bytes of partition databases held in memory now. */
  loadedBytes(): number {
    let total = 0;
    for (const p of this.loaded) if (p.db) total += p.loadedBytes;
    return total;
  }

  private enforceBudget(keep: Partition): void {
    // Measured at most every MEASURE_MS: an import uses its partition for every 250-record
    // slice, and two PRAGMA queries each time were 1.5% of its inserting thread's time.
    const now = performance.now();
    if (now - keep.measuredAt >= MEASURE_MS || keep.loadedBytes === 0) {
      keep.loadedBytes = keep.imageBytes();
      keep.measuredAt = now;
    }
    for (const p of this.loaded) if (!p.db) this.loaded.delete(p);
    let total = this.loadedBytes();
    let count = this.loaded.size;
    if (total <= this.memoryBudgetBytes && count <= MAX_LOADED) return;
    const byAge = [...this.loaded].filter((p) => p !== keep).sort((a, b) => a.lastUsed - b.lastUsed);
    for (const p of byAge) {
      if (total <= this.memoryBudgetBytes && count <= MAX_LOADED) break;
      // Only an import's own partitions can be dirty here: outside an import they wait.
      // Nor partitions whose file is still being written (off the thread): it is not whole yet;
      // nor pinned ones.
      if (this.saving.has(p) || p.imageWrite || p.pins > 0) continue;
      if (p.dirty && !this.hooks.importing()) continue;
      if (p.dirty) this.hooks.stage(p);
      total -= p.loadedBytes;
      count--;
      p.unload();
      this.loaded.delete(p);
    }
  }
}
