/**
 * The Logs page's state as its URL carries it (its two views, range, search and chips), and the
 * view a usage bucket opens.
 */
import type { Tier } from '../../../contract/registry.ts';
import type { CompareChoice } from './compare.ts';
import type { LogFilter } from './explorer-filters.ts';
import type { FieldViewState } from './field-state.ts';
import type { RangeChoice } from './logs-range.ts';

/** The Logs page's two views: the explorer over every source, or the exact logs.all endpoint. */
export const LOGS_MODES = ['explore', 'exact'] as const;
export type LogsMode = (typeof LOGS_MODES)[number];

/** The Logs page's state as a URL carries it (url-state.ts reads and writes it). */
/** The state about fields inside the records and the table's layout (field-state.ts) is part of it. */
export interface LogsView extends FieldViewState {
  /** logs.all's tier (the exact view only). */
  tier: Tier;
  range: RangeChoice;
  /** Custom range bounds, µs (only with range 'custom'). */
  start?: number;
  end?: number;
  /**
   * Absent means 'exact': every view of this page made before the explorer (a link with a
   * tier, another page's jump to a range) addressed logs.all, and still does. See logsMode.
   */
  mode?: LogsMode;
  /** The explorer's source (name or alias); '' or absent = the first source the server lists. */
  source?: string;
  /** Search text (plain, or an RE2 pattern with `regex`). */
  q?: string;
  regex?: boolean;
  filters?: LogFilter[];
  /** The explorer's compared period (histogram overlay, facet changes); absent = none. */
  compare?: CompareChoice;
}


/**
 * The Logs view a usage bucket opens: the explorer over edge requests in the bucket's range
 * (cut to the window's start for a partial first bucket), searching the usage page's URL
 * pattern as an RE2 pattern, so the rows are the requests the bucket counted. Bounds follow
 * /api/logs (start exclusive, end inclusive): (start − 1 µs, end − 1 µs] is [start, end).
 */
export function usageBucketLogs(logs: LogsView, bucket: { start: number; end: number }, windowStart: number, pattern: string, source: string): LogsView {
  const start = Math.max(bucket.start, windowStart);
  return { ...logs, mode: 'explore', source, range: 'custom', start: start - 1, end: bucket.end - 1, q: pattern, regex: true, filters: [] };
}
