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

interface Cell extends ExecStats {
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
  private cells = new Map<number | string, Cell>();

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

  /** Merges into the table; runs inside the caller's transaction. */
  flush(db: Db): void {
    for (const c of this.cells.values()) {
      const old = db.rows(`SELECT ${ROLLUP_COLUMNS} FROM ${this.grain.table} WHERE project = ? AND ${this.grain.column} = ? AND function = ?`, [c.project, c.hour, c.fn])[0];
      if (old) addRollupRow(c, old);
      db.run(`INSERT OR REPLACE INTO ${this.grain.table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
        c.project, c.hour, c.fn, c.count, c.errors, c.n, c.n ? c.sum : null, c.min, c.max, c.n ? c.sketch!.encode() : null,
      ]);
    }
    this.cells.clear();
  }
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
