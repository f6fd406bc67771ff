/**
 * Functions the endpoint SQL calls: nearest-rank percentiles, the URL ids an RE2 pattern matches
 * and reading a full record back from its segment. Registered once per store.
 */
import type { LogStore } from '../store/log-store.ts';
import { findSource } from '../sources.ts';
import type { SqlValue } from '../store/db.ts';
import { canonicalRecord } from '../ingest/normalize.ts';
import { helpersOf } from './accelerators.ts';

/** Nearest-rank percentile: the value at 1-based rank ceil(p/100 * n) of the sorted values. */
export function nearestRank(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? null;
}

/** Canonical records kept for logs.all (about 2 KB each). */
const RECENT_RECORDS = 2000;

export function registerSqlFunctions(store: LogStore): void {
  store.db.defineAggregate<{ values: number[]; p: number }>('nearest_rank', {
    init: () => ({ values: [], p: 0 }),
    step: (state, value, p) => {
      if (typeof value === 'number') state.values.push(value);
      if (typeof p === 'number') state.p = p;
      return state;
    },
    finalize: (state) => nearestRank(state.values.sort((a, b) => a - b), state.p),
  });
  const { urlMatches } = helpersOf(store);
  store.db.defineFunction('re2_url_ids', (pattern: SqlValue) => (typeof pattern === 'string' ? urlMatches.idsJson(pattern) : '[]'));
  // The full record in the query shape, rebuilt from its stored text for the rows returned;
  // the newest rows are asked for again and again (paging, refreshes), so keep the last few.
  const recent = new Map<string, string>();
  store.db.defineFunction('log_record', (table: SqlValue, off: SqlValue, len: SqlValue, project: SqlValue) => {
    const source = typeof table === 'string' ? findSource(table) : undefined;
    if (!source || typeof off !== 'number' || typeof len !== 'number' || typeof project !== 'string') return null;
    const key = `${source.code}:${store.recordGeneration(source.name)}:${off}:${project}`;
    let json = recent.get(key);
    if (json === undefined) {
      json = canonicalRecord(store.readRecord(source.name, off, len), source, project);
      if (recent.size >= RECENT_RECORDS) recent.delete(recent.keys().next().value!);
      recent.set(key, json);
    }
    return json;
  });
}
