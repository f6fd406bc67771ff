/**
 * Rollups of function edge logs: count, errors, and the execution-time sum, min, max and a
 * quantile sketch per (project, bucket, function). Per day and per hour in the catalog (7day
 * reads 8 rows, 1day 25), per minute in each partition (15min/1hr); counts,
 * errors, min, max and avg stay exact, p95/p99 come from the merged sketches (within 1%).
 */
import { ERROR_RULE } from '../../queries/registry.ts';
import { MICROS } from '../time.ts';
import type { Db, SqlValue } from './db.ts';
import { QuantileSketch } from './sketch.ts';

/** Where a rollup lives: its table, its bucket column and the bucket width (µs). */
export interface RollupGrain {
  table: string;
  column: string;
  unit: number;
}

export const HOUR_GRAIN: RollupGrain = { table: 'function_edge_hours', column: 'hour', unit: MICROS.hour };
export const DAY_GRAIN: RollupGrain = { table: 'function_edge_days', column: 'day', unit: MICROS.day };
export const MINUTE_GRAIN: RollupGrain = { table: 'function_edge_minutes', column: 'minute', unit: MICROS.minute };

/** Keyed by (project, function, bucket): a window of one function (or of all) is one range. */
export function rollupDdl(g: RollupGrain): string {
  return `CREATE TABLE ${g.table} (
  project INTEGER NOT NULL, ${g.column} INTEGER NOT NULL, function INTEGER NOT NULL,
  count INTEGER NOT NULL, errors INTEGER NOT NULL,
  exec_n INTEGER NOT NULL, exec_sum REAL, exec_min REAL, exec_max REAL, sketch BLOB,
  PRIMARY KEY (project, function, ${g.column})) WITHOUT ROWID`;
}

/** The catalog's rollups: per hour (1day) and per UTC day (7day reads 8 rows). */
export const FUNCTION_ROLLUP_DDL = `${rollupDdl(HOUR_GRAIN)};\n  ${rollupDdl(DAY_GRAIN)}`;

/** Count, errors and execution-time aggregates of some records: a rollup row, or a bucket. */
export interface ExecStats {
  count: number;
  errors: number;
  /** Records with an execution time, and the sum, min and max of those times. */
  n: number;
  sum: number;
  min: number | null;
  max: number | null;
  sketch: QuantileSketch | null;
}

export const emptyExecStats = (): ExecStats => ({ count: 0, errors: 0, n: 0, sum: 0, min: null, max: null, sketch: null });

/** Whether a record's status makes it an error (the registry's ERROR_RULE; no status is no error). */
export function isErrorStatus(status: number | null | undefined): boolean {
  return status != null && status >= ERROR_RULE.statusAtLeast;
}

/** Counts one record (errors by isErrorStatus); true when it has an execution time. */
export function countRecord(s: ExecStats, exec: number | null | undefined, status: number | null | undefined): exec is number {
  s.count++;
  if (isErrorStatus(status)) s.errors++;
  if (exec == null) return false;
  s.n++;
  s.sum += exec;
  if (s.min === null || exec < s.min) s.min = exec;
  if (s.max === null || exec > s.max) s.max = exec;
  return true;
}

/** The stored columns of a rollup row, in the order addRollupRow reads them. */
export const ROLLUP_COLUMNS = 'count, errors, exec_n, exec_sum, exec_min, exec_max, sketch';

/** Adds a stored rollup row (ROLLUP_COLUMNS, in order) to s, merging the sketches. */
export function addRollupRow(s: ExecStats, [count, errors, n, sum, min, max, sketch]: readonly SqlValue[]): void {
  s.count += count as number;
  s.errors += errors as number;
  s.n += n as number;
  s.sum += (sum as number | null) ?? 0;
  if (min !== null && (s.min === null || (min as number) < s.min)) s.min = min as number;
  if (max !== null && (s.max === null || (max as number) > s.max)) s.max = max as number;
  if (sketch instanceof Uint8Array) {
    const decoded = QuantileSketch.decode(sketch);
    if (s.sketch) s.sketch.merge(decoded);
    else s.sketch = decoded;
  }
}

export interface RollupCell extends ExecStats {
  project: number;
  hour: number;
  fn: number;
}

/**
 * The `function` of the rollup row that counts every record of a project, whatever its function:
 * an unfiltered query reads one row per bucket instead of one per function.
 */
export const ALL_FUNCTIONS = -1;

/** Collects one batch's records, then merges them into the stored rows. */
export class FunctionRollupBatch {
  private cells = new Map<number | string, RollupCell>();

  /** @param perFunction whether each function gets its own rows besides the all-functions row */
  constructor(
    private grain: RollupGrain = HOUR_GRAIN,
    private perFunction = true,
  ) {}

  /** Counts a record in the project's all-functions row (and its function's row). */
  add(project: number, fn: number | null, ts: number, exec: number | null | undefined, status: number | null | undefined): void {
    const hour = ts - (((ts % this.grain.unit) + this.grain.unit) % this.grain.unit);
    if (this.perFunction) this.addTo(project, hour, fn ?? 0, exec, status);
    this.addTo(project, hour, ALL_FUNCTIONS, exec, status);
  }

  private addTo(project: number, hour: number, f: number, exec: number | null | undefined, status: number | null | undefined): void {
    // A number key while the ids are small (no string built per record), else a string.
    const key = project < 4096 && f + 1 < 4096 ? (hour / this.grain.unit) * 16_777_216 + project * 4096 + f + 1 : `${project}:${hour}:${f}`;
    let c = this.cells.get(key);
    if (!c) {
      c = { project, hour, fn: f, ...emptyExecStats(), sketch: new QuantileSketch() };
      this.cells.set(key, c);
    }
    if (countRecord(c, exec, status)) c.sketch!.add(exec);
  }

  /** The grain of the table its cells go to. */
  get table(): RollupGrain {
    return this.grain;
  }

  /** The batch's cells, emptied (each is handed over whole). */
  take(): RollupCell[] {
    const out = [...this.cells.values()];
    this.cells.clear();
    return out;
  }

  /** Merges into the table; runs inside the caller's transaction. */
  flush(db: Db): void {
    for (const c of this.take()) {
      addStoredCell(db, this.grain, c);
      writeCell(db, this.grain, c);
    }
  }
}

/** Adds the cell's stored row in `g`'s table, if it has one, to `c`. */
function addStoredCell(db: Db, g: RollupGrain, c: RollupCell): void {
  const old = db.rows(`SELECT ${ROLLUP_COLUMNS} FROM ${g.table} WHERE project = ? AND ${g.column} = ? AND function = ?`, [c.project, c.hour, c.fn])[0];
  if (old) addRollupRow(c, old);
}

/** Writes the cell as its row of `g`'s table (`values`: its stored values, when already made). */
function writeCell(db: Db, g: RollupGrain, c: RollupCell, values: SqlValue[] = storedValues(c)): void {
  db.run(`INSERT OR REPLACE INTO ${g.table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [c.project, c.hour, c.fn, ...values]);
}

/** `sketch_merge(blob)` aggregate and `sketch_quantile(blob, p, min, max)`, for the endpoint SQL. */
export function registerSketchFunctions(db: Db): void {
  db.defineAggregate<QuantileSketch | null>('sketch_merge', {
    init: () => null,
    step: (state: QuantileSketch | null, blob: SqlValue) => {
      if (!(blob instanceof Uint8Array)) return state;
      const s = QuantileSketch.decode(blob);
      if (!state) return s;
      state.merge(s);
      return state;
    },
    finalize: (state) => (state ? state.encode() : null),
  });
  db.defineFunction('sketch_quantile', (blob: SqlValue, p: SqlValue, min: SqlValue, max: SqlValue) => {
    if (!(blob instanceof Uint8Array) || typeof p !== 'number') return null;
    return QuantileSketch.decode(blob).quantile(p, typeof min === 'number' ? min : null, typeof max === 'number' ? max : null);
  });
}

/** A cell's key in OpenRollups: grain, project, function and bucket. */
const cellKey = (g: RollupGrain, project: number, fn: number, bucket: number) => `${g.column}:${project}:${fn}:${bucket}`;

/** How a rollup cell is stored: ROLLUP_COLUMNS, in order. */
function storedValues(c: ExecStats): SqlValue[] {
  return [c.count, c.errors, c.n, c.n ? c.sum : null, c.min, c.max, c.n ? c.sketch!.encode() : null];
}

/** Batches merged after which an open cell no batch added to is written by flushSettled. */
const SETTLED_MERGES = 2;
/** Open cells past which flushSettled writes settled ones whatever its budget (about 20 µs each). */
const MAX_OPEN_CELLS = 500;

interface OpenCell {
  grain: RollupGrain;
  cell: RollupCell;
  /** The merge that last added to it. */
  touched: number;
  /** Its row as stored values, made on first read after a change. */
  values: SqlValue[] | null;
}

/**
 * The catalog's hour and day rollups an import is adding to, decoded in memory until they
 * settle. Each batch (250 records) used to read, decode, merge, encode and write back every
 * (project, function, hour) and (…, day) cell it touched: a few dozen cells a batch, 1.1 s of
 * the 7.8 s an import of 300k function edge records spent on its inserting thread. A cell is
 * now read once when an import first adds to it and written once when no batch has added to
 * it for SETTLED_MERGES batches (flushSettled), or at the save (flush). Readers of the catalog's
 * rollups go through `rows`, which puts the open cells in place of their stored rows.
 */
export class OpenRollups {
  private open = new Map<string, OpenCell>();
  private merges = 0;

  constructor(private catalog: () => Db) {}

  /** Adds one batch's cells (of the catalog's hour and day grains). */
  merge(...batches: FunctionRollupBatch[]): void {
    this.merges++;
    for (const batch of batches) {
      const g = batch.table;
      for (const c of batch.take()) {
        const key = cellKey(g, c.project, c.fn, c.hour);
        const o = this.open.get(key);
        if (o) {
          mergeStats(o.cell, c);
          o.touched = this.merges;
          o.values = null;
          continue;
        }
        addStoredCell(this.catalog(), g, c);
        this.open.set(key, { grain: g, cell: c, touched: this.merges, values: null });
      }
    }
  }

  /**
   * The rows of `g`'s table as `[bucket, function, ...ROLLUP_COLUMNS]` for `project`, the
   * functions `fns` and buckets in [from, to): the stored rows, with the open cells in place
   * of theirs.
   */
  rows(g: RollupGrain, project: number, fns: readonly number[], from: number, to: number): SqlValue[][] {
    const stored = this.catalog().rows(
      `SELECT ${g.column}, function, ${ROLLUP_COLUMNS} FROM ${g.table} WHERE project = ? AND function IN (SELECT value FROM json_each(?)) AND ${g.column} >= ? AND ${g.column} < ?`,
      [project, JSON.stringify(fns), from, to],
    );
    if (!this.open.size) return stored;
    const out = stored.filter(([bucket, fn]) => !this.open.has(cellKey(g, project, fn as number, bucket as number)));
    const wanted = new Set(fns);
    for (const o of this.open.values()) {
      const c = o.cell;
      if (o.grain !== g || c.project !== project || !wanted.has(c.fn) || c.hour < from || c.hour >= to) continue;
      out.push([c.hour, c.fn, ...(o.values ??= storedValues(c))]);
    }
    return out;
  }

  /** Writes every open cell to the catalog (before a save exports it, or before its tables are read whole). */
  flush(): void {
    for (const [key, o] of this.open) this.write(key, o);
  }

  /**
   * Writes the open cells no batch added to in the last SETTLED_MERGES, until `budgetMs` has
   * passed and fewer than MAX_OPEN_CELLS stay open: sparse days spread a batch over many hours
   * (a few hundred new cells a batch), and a budget alone left thousands for the save's one
   * synchronous step.
   */
  flushSettled(budgetMs: number): void {
    const until = performance.now() + budgetMs;
    for (const [key, o] of this.open) {
      if (this.merges - o.touched < SETTLED_MERGES) continue;
      this.write(key, o);
      if (performance.now() > until && this.open.size < MAX_OPEN_CELLS) break;
    }
  }

  private write(key: string, { grain: g, cell: c, values }: OpenCell): void {
    writeCell(this.catalog(), g, c, values ?? undefined);
    this.open.delete(key);
  }

  /** Forgets the open cells (the catalog was restored, or the rollups deleted). */
  reset(): void {
    this.open.clear();
  }
}

/** Adds `b`'s counts and sketch to `a`. */
function mergeStats(a: ExecStats, b: ExecStats): void {
  a.count += b.count;
  a.errors += b.errors;
  a.n += b.n;
  a.sum += b.sum;
  if (b.min !== null && (a.min === null || b.min < a.min)) a.min = b.min;
  if (b.max !== null && (a.max === null || b.max > a.max)) a.max = b.max;
  if (b.sketch && b.n) {
    if (a.sketch) a.sketch.merge(b.sketch);
    else a.sketch = b.sketch;
  }
}
