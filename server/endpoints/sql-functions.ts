/** Nearest-rank percentiles, as the endpoint rules define them (shared by SQL and speed paths). */
import type { Db } from '../store/db.ts';

/** Nearest-rank percentile: the value at 1-based rank ceil(p/100 * n) of the sorted values. */
export function nearestRank(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? null;
}

/** `nearest_rank(value, p)`: the aggregate the endpoint SQL computes exact percentiles with. */
export function registerNearestRank(db: Db): void {
  db.defineAggregate<{ values: number[]; p: number }>('nearest_rank', {
    init: () => ({ values: [], p: 0 }),
    step: (state, value, p) => {
      if (typeof value === 'number') state.values.push(value);
      if (typeof p === 'number') state.p = p;
      return state;
    },
    finalize: (state) => nearestRank(state.values.sort((a, b) => a - b), state.p),
  });
}
