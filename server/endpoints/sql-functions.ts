/** Nearest-rank percentiles, as the endpoint rules define them (shared by SQL and speed paths). */

/** Nearest-rank percentile: the value at 1-based rank ceil(p/100 * n) of the sorted values. */
export function nearestRank(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? null;
}
