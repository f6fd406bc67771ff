/**
 * The Functions page's table: sorting (empty figures always last, whichever the direction) and
 * the link to a function's logs.
 */
import type { FunctionStatsRow } from '../../../../contract/api-types.ts';
import { PRESET_SPAN, RANGE_PRESETS, type RangePreset } from '../../lib/logs-range.ts';
import { formatIsoMicros } from '../../../../contract/instants.ts';

export const SORT_KEYS = ['name', 'invocations', 'errors', 'errorRate', 'avgMs', 'p95Ms', 'p99Ms'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export type SortDir = 'asc' | 'desc';

export interface TableSort {
  key: SortKey;
  dir: SortDir;
}

export const DEFAULT_SORT: TableSort = { key: 'invocations', dir: 'desc' };

/** The slug when the records name one, else the id. */
export function functionName(row: Pick<FunctionStatsRow, 'slug' | 'functionId'>): string {
  return row.slug ?? row.functionId;
}

/** Names read A→Z first; figures worst (largest) first. */
export function firstDir(key: SortKey): SortDir {
  return key === 'name' ? 'asc' : 'desc';
}

/** A header click: the same column flips, another starts in its natural direction. */
export function nextSort(current: TableSort, key: SortKey): TableSort {
  return current.key === key ? { key, dir: current.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: firstDir(key) };
}

const byName = (a: FunctionStatsRow, b: FunctionStatsRow) => functionName(a).localeCompare(functionName(b)) || a.functionId.localeCompare(b.functionId);

/**
 * Sorted copy. A function without a figure (no invocations, or none timed) goes last in both
 * directions: "worst error rate" must not start with functions that were never called. Ties
 * go to the busier function, then by name.
 */
export function sortFunctionRows(rows: readonly FunctionStatsRow[], sort: TableSort): FunctionStatsRow[] {
  const sign = sort.dir === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    if (sort.key === 'name') return sign * byName(a, b);
    const x = a[sort.key];
    const y = b[sort.key];
    if (x === null || y === null) {
      if (x !== y) return x === null ? 1 : -1;
    } else if (x !== y) return sign * (x - y);
    return b.invocations - a.invocations || byName(a, b);
  });
}

/** The Logs page's narrowest preset range that covers a window of `spanUs` (the widest when none does). */
export function rangeCovering(spanUs: number): RangePreset {
  return RANGE_PRESETS.find((r) => PRESET_SPAN[r] >= spanUs) ?? RANGE_PRESETS[RANGE_PRESETS.length - 1]!;
}

/**
 * The Logs page filtered to one function's invocation records over exactly the window the table
 * counted, [start, end) (the API's `/api/functions` window), in the app's URL scheme (path =
 * page, query = its state; see url-state.ts). A rolling preset counted other records: at 7 days
 * the table counts the calendar window 11-18 00:00 to 11-26 00:00, and "1 day" is 25 hourly
 * buckets, not 24 h. The explorer's range is (start, end], hence the 1 µs shifts.
 */
export function functionLogsHref(project: string, functionId: string, window: { start: number; end: number }): string {
  const q = new URLSearchParams({ project, source: 'function_edge_logs', function_id: functionId, range: 'custom', start: formatIsoMicros(window.start - 1), end: formatIsoMicros(window.end - 1) });
  return `/logs?${q.toString()}`;
}
