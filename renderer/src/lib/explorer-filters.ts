/**
 * The explorer's chips, written in the shared filter grammar (contract/filters.ts), and the
 * `/api/logs*` parameters of a search.
 */
import { checkFilterValue, FILTER_FIELDS, type FilterField, type FilterItem, parseFilterList, printFilterList } from '../../../contract/filters.ts';
import { formatIsoMicros } from '../../../contract/instants.ts';
import type { LogsRange } from './logs-range.ts';

/** One chip: `status: 5xx`, or with `exclude` a "not" chip (`!404` in the parameter). */
export interface LogFilter extends FilterItem {
  field: FilterField;
}

const fieldOrder = (f: FilterField) => FILTER_FIELDS.indexOf(f);

/** Chips grouped by field (in FILTER_FIELDS order), each field's values in the order added. */
function canonical(filters: readonly LogFilter[]): LogFilter[] {
  return filters
    .map((f, i) => ({ f, i }))
    .sort((a, b) => fieldOrder(a.f.field) - fieldOrder(b.f.field) || a.i - b.i)
    .map(({ f }) => f);
}

const sameChip = (a: Pick<LogFilter, 'field' | 'value'>, b: Pick<LogFilter, 'field' | 'value'>) => a.field === b.field && a.value === b.value;

/**
 * Adds a chip; the same field and value already there is replaced, so including a value that
 * was excluded flips its chip rather than adding a contradicting one.
 */
export function addFilter(filters: readonly LogFilter[], chip: LogFilter): LogFilter[] {
  const i = filters.findIndex((f) => sameChip(f, chip));
  if (i >= 0) return filters.map((f, k) => (k === i ? { ...chip } : f));
  return canonical([...filters, { ...chip }]);
}

export function removeFilter(filters: readonly LogFilter[], chip: Pick<LogFilter, 'field' | 'value'>): LogFilter[] {
  return filters.filter((f) => !sameChip(f, chip));
}

export function findFilter(filters: readonly LogFilter[], field: FilterField, value: string): LogFilter | undefined {
  return filters.find((f) => f.field === field && f.value === value);
}

/** `{status: "5xx,!404"}`: one parameter per field, as the API and the page's URL take them. */
export function filtersToParams(filters: readonly LogFilter[]): Partial<Record<FilterField, string>> {
  const out: Partial<Record<FilterField, string>> = {};
  for (const field of FILTER_FIELDS) {
    const items = filters.filter((f) => f.field === field);
    if (items.length) out[field] = printFilterList(items);
  }
  return out;
}

/** Reads chips back from parameters; values that cannot be valid chips are dropped, never an error. */
export function filtersFromParams(get: (name: FilterField) => string | null): LogFilter[] {
  let out: LogFilter[] = [];
  for (const field of FILTER_FIELDS) {
    for (const { value, exclude } of parseFilterList(get(field) ?? '')) {
      const checked = checkFilterValue(field, value);
      if (checked.ok) out = addFilter(out, { field, value: checked.value, exclude });
    }
  }
  return out;
}

/** What the explorer asks the server: one source, optional project, a range, text and chips. */
export interface ExplorerRequest {
  /** A source name or alias. */
  source: string;
  project: string | null;
  range: LogsRange;
  q: string;
  regex: boolean;
  filters: readonly LogFilter[];
}

/**
 * The `/api/logs*` query parameters, in a fixed order (they key the caches). Bounds are ISO
 * with microseconds: start exclusive, end inclusive.
 */
export function explorerParams(query: ExplorerRequest): Record<string, string> {
  const p: Record<string, string> = { source: query.source };
  if (query.project) p.project = query.project;
  if (query.range.start !== undefined) p.start = formatIsoMicros(query.range.start);
  if (query.range.end !== undefined) p.end = formatIsoMicros(query.range.end);
  if (query.q) {
    p.q = query.q;
    if (query.regex) p.regex = '1';
  }
  const byField = filtersToParams(query.filters);
  for (const field of FILTER_FIELDS) {
    const v = byField[field];
    if (v !== undefined) p[field] = v;
  }
  return p;
}

/** A chip as a person reads it: `status 5xx`, `not status 404`, `path /rest/v1*` (a prefix). */
export function filterLabel(f: LogFilter): string {
  const value = f.field === 'path' ? `${f.value}*` : f.value;
  return `${f.exclude ? 'not ' : ''}${f.field} ${value}`;
}
