/**
 * A text search's count, histogram and facets come from one walk on the server that answers
 * with what it has counted so far (`scanned`) while it runs. These decide whether a
 * result is still partial, how much of the range it covers, and how the count reads meanwhile.
 */
import { formatInt } from './format.ts';
import type { LogsRange } from './logs-range.ts';

import type { ScanProgress } from '../../../contract/api-types.ts';
export type { ScanProgress };

/** How often a partial answer is asked for again (ms). */
export const SEARCH_REFETCH_MS = 1_000;

export interface SearchProgress {
  complete: boolean;
  /** µs: records from here to the range's end are counted; null once complete. */
  through: number | null;
  /** The share of the range counted so far, 0..1 (1 once complete). */
  fraction: number;
}

const DONE: SearchProgress = { complete: true, through: null, fraction: 1 };

/**
 * Whether an answer is final. A walk that reached the range's start has seen every record of
 * the range (start is exclusive), so it is complete whatever its flag says.
 */
export function searchProgress(scanned: ScanProgress | undefined, range: LogsRange): SearchProgress {
  if (!scanned || scanned.complete) return DONE;
  const { start, end } = range;
  if (start !== undefined && scanned.through <= start) return DONE;
  const fraction = start !== undefined && end !== undefined && end > start ? Math.min(1, Math.max(0, (end - scanned.through) / (end - start))) : 0;
  return { complete: false, through: scanned.through, fraction };
}

/** The two answers' progress together: partial while either is, counted as far as the lesser. */
export function combinedProgress(a: SearchProgress, b: SearchProgress): SearchProgress {
  if (a.complete) return b;
  if (b.complete) return a;
  return a.fraction <= b.fraction ? a : b;
}

/**
 * The headline count: exact once the search is complete, a lower bound while it runs. Never
 * "0 matching records" for a search that has not looked at the whole range.
 */
export function matchCountText(total: number, progress: SearchProgress): string {
  if (progress.complete) return `${formatInt(total)} matching ${total === 1 ? 'record' : 'records'}`;
  if (total === 0) return 'No matches so far';
  return `At least ${formatInt(total)} matching ${total === 1 ? 'record' : 'records'} so far`;
}
