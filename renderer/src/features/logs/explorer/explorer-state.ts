/** The explorer's pure decisions: which source a URL names, which chips apply, labels, zoom. */
import type { ExplorerPage, ExplorerSource, FacetsAnswer, HistogramAnswer } from '../../../api/logs.ts';
import { filterLabel, type LogFilter } from '../../../lib/explorer-filters.ts';
import type { LogsRange } from '../../../lib/logs-range.ts';
import { fieldFilterLabel } from '../../../lib/field-filters.ts';
import { forOtherSource } from '../../../lib/field-state.ts';
import { formatRange, formatSpan } from '../../../lib/time.ts';
import type { LogsView } from '../../../lib/url-state.ts';
import { RANGE_LABELS } from '../range-labels.ts';

/** A source by name or alias (case-insensitive, as the API resolves it); '' = the first listed. */
export function resolveSource(list: readonly ExplorerSource[], key: string | undefined): ExplorerSource | undefined {
  const k = (key ?? '').trim().toLowerCase();
  if (!k) return list[0];
  return list.find((s) => s.source.toLowerCase() === k || s.alias.toLowerCase() === k);
}

/** Chips on fields the source has; the others stay visible (struck out) but are not sent. */
export function usableFilters(filters: readonly LogFilter[], source: ExplorerSource | undefined): LogFilter[] {
  if (!source) return [];
  return filters.filter((f) => source.fields.includes(f.field));
}

/**
 * Switching source keeps the search text and drops chips the new source cannot apply, and the
 * chips, facets and columns on fields inside the old source's records (field-state.ts).
 */
export function switchSource(logs: LogsView, to: ExplorerSource): LogsView {
  const same = [to.alias, to.source].some((n) => n.toLowerCase() === (logs.source ?? '').toLowerCase());
  return { ...(same ? logs : forOtherSource(logs)), source: to.alias, filters: (logs.filters ?? []).filter((f) => to.fields.includes(f.field)) };
}

/** One line for the recent-searches list: `Edge requests · "timeout" · status 5xx, not status 404 · 1 h`. */
export function searchLabel(source: ExplorerSource | undefined, logs: LogsView, range: LogsRange | undefined): string {
  const parts: string[] = [source?.label ?? logs.source ?? 'Logs'];
  if (logs.q) parts.push(logs.regex ? `/${logs.q}/` : `"${logs.q}"`);
  const chips = (logs.filters ?? []).map(filterLabel);
  for (const f of logs.fieldFilters ?? []) chips.push(fieldFilterLabel(f));
  if (chips.length) parts.push(chips.join(', '));
  if (logs.range !== 'custom') parts.push(RANGE_LABELS[logs.range]);
  else if (range?.start !== undefined && range.end !== undefined) parts.push(formatRange(range.start, range.end, 'second'));
  const label = parts.join(' · ');
  return label.length > 200 ? `${label.slice(0, 199)}…` : label;
}

/**
 * Zooming out doubles the span around its middle; the end never moves past `now` when it was
 * not past it already (the newest records are the interesting ones).
 */
export function zoomOut(range: Required<LogsRange>, now: number): Required<LogsRange> {
  const span = range.end - range.start;
  let start = range.start - Math.ceil(span / 2);
  let end = range.end + Math.floor(span / 2);
  if (range.end <= now && end > now) {
    start -= end - now;
    end = now;
  }
  return { start, end };
}

/** `1 h 30 min` style span of a range, for the histogram header. */
export function spanText(range: LogsRange): string {
  if (range.start === undefined || range.end === undefined) return '';
  return formatSpan(range.end - range.start);
}

/**
 * What the table's footer offers after the last page: to continue a search that stopped early
 * (it scanned back only to `through`), to load older records (a full page), or nothing more.
 */
export type PagingState = { kind: 'continue'; through: number } | { kind: 'older' } | { kind: 'end' } | { kind: 'none' };

export function pagingState(last: Pick<ExplorerPage, 'next' | 'scanned'> | undefined, loaded: number, rangeStart?: number): PagingState {
  if (!last) return { kind: 'none' };
  // A search that looked back past the range's start has seen all of it: there is nothing to continue.
  const pastStart = rangeStart !== undefined && last.scanned.through <= rangeStart;
  if (last.next !== null && !last.scanned.complete && !pastStart) return { kind: 'continue', through: last.scanned.through };
  if (last.next !== null && last.scanned.complete) return { kind: 'older' };
  return loaded > 0 ? { kind: 'end' } : { kind: 'none' };
}

/**
 * Records without a status count in the histogram (its `none` part) but the server's facets list
 * only the values records have, so they could not be selected. The status facet gets
 * a value for them (null, "no status", filtered as `status=none`) with the histogram's count
 * under the same filters, placed by its count as the facets order values.
 */
export function withNoStatus(facets: FacetsAnswer | undefined, histogram: HistogramAnswer | undefined): FacetsAnswer | undefined {
  if (!facets || !histogram || histogram.split !== 'status') return facets;
  const list = facets.result.status;
  if (!list || list.some((v) => v.value === null)) return facets;
  const none = histogram.result.reduce((n, b) => n + (b.by.none ?? 0), 0);
  if (none === 0) return facets;
  const out = [...list];
  const at = out.findIndex((v) => v.count < none);
  out.splice(at < 0 ? out.length : at, 0, { value: null, count: none });
  return { ...facets, result: { ...facets.result, status: out } };
}
