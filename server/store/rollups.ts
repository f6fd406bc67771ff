/**
 * Per-hour rollups of function edge logs: count, errors, and the execution-time sum, min,
 * max and a quantile sketch per (project, hour, function). Hour- and day-bucketed
 * invocation stats read at most 24 rows per day and function instead of every record;
 * counts, errors, min, max and avg stay exact, p95/p99 come from the merged sketches.
 */
import type { Db, SqlValue } from './db.ts';
import { QuantileSketch } from './sketch.ts';

const HOUR = 3_600_000_000;

export const FUNCTION_ROLLUP_DDL = `CREATE TABLE function_edge_hours (
  project INTEGER NOT NULL, hour INTEGER NOT NULL, function INTEGER NOT NULL,
  count INTEGER NOT NULL, errors INTEGER NOT NULL,
  exec_n INTEGER NOT NULL, exec_sum REAL, exec_min REAL, exec_max REAL, sketch BLOB,
  PRIMARY KEY (project, hour, function)) WITHOUT ROWID`;

interface Cell {
  project: number;
  hour: number;
  fn: number;
  count: number;
  errors: number;
  n: number;
  sum: number;
  min: number | null;
  max: number | null;
  sketch: QuantileSketch;
}

/** Collects one batch's records, then merges them into the stored rows. */
export class FunctionRollupBatch {
  private cells = new Map<string, Cell>();

  add(project: number, fn: number | null, ts: number, exec: number | null | undefined, status: number | null | undefined): void {
    const hour = ts - (ts % HOUR);
    const f = fn ?? 0;
    const key = `${project}:${hour}:${f}`;
    let c = this.cells.get(key);
    if (!c) {
      c = { project, hour, fn: f, count: 0, errors: 0, n: 0, sum: 0, min: null, max: null, sketch: new QuantileSketch() };
      this.cells.set(key, c);
    }
    c.count++;
    if (status != null && status >= 400) c.errors++;
    if (exec != null) {
      c.n++;
      c.sum += exec;
      c.min = c.min === null || exec < c.min ? exec : c.min;
      c.max = c.max === null || exec > c.max ? exec : c.max;
      c.sketch.add(exec);
    }
  }

  /** Merges into the table; runs inside the caller's transaction. */
  flush(db: Db): void {
    for (const c of this.cells.values()) {
      const old = db.query<{ count: number; errors: number; exec_n: number; exec_sum: number | null; exec_min: number | null; exec_max: number | null; sketch: Uint8Array | null }>(
        'SELECT count, errors, exec_n, exec_sum, exec_min, exec_max, sketch FROM function_edge_hours WHERE project = ? AND hour = ? AND function = ?',
        [c.project, c.hour, c.fn],
      )[0];
      if (old) {
        c.count += old.count;
        c.errors += old.errors;
        c.n += old.exec_n;
        c.sum += old.exec_sum ?? 0;
        if (old.exec_min !== null) c.min = c.min === null ? old.exec_min : Math.min(c.min, old.exec_min);
        if (old.exec_max !== null) c.max = c.max === null ? old.exec_max : Math.max(c.max, old.exec_max);
        if (old.sketch) c.sketch.merge(QuantileSketch.decode(old.sketch));
      }
      db.run('INSERT OR REPLACE INTO function_edge_hours VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
        c.project, c.hour, c.fn, c.count, c.errors, c.n, c.n ? c.sum : null, c.min, c.max, c.n ? c.sketch.encode() : null,
      ]);
    }
    this.cells.clear();
  }
}

/** Recomputes every rollup row from the hot table (after a rollback or a migration). */
export function rebuildFunctionRollup(db: Db): void {
  db.run('DELETE FROM function_edge_hours');
  const batch = new FunctionRollupBatch();
  const rows = db.query<{ project: number; function: number | null; ts: number; exec: number | null; status: number | null }>(
    'SELECT project, function, ts, exec, status FROM function_edge_logs',
  );
  for (const r of rows) batch.add(r.project, r.function, r.ts, r.exec, r.status);
  batch.flush(db);
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
