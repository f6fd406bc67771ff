/**
 * The explorer's state about fields inside the records and the table's layout, as
 * the page's URL carries it beside the built-in chips (url-state.ts):
 * `field=request.headers.cf_ipcountry:DE` (repeated, the API's own form),
 * `facets=request.headers.cf_ipcountry,parsed.user_name`, `cols=…` (table-columns.ts),
 * `wrap=1` and `dense=1`.
 */
import { isFieldPath, MAX_FIELD_FACETS, MAX_FIELD_FILTERS, printFieldFilter, readFieldFilter, type FieldFilter } from '../../../contract/fields.ts';
import { addFieldFilter } from './field-filters.ts';
import { columnsParam, parseColumns, type ColumnSpec } from './table-columns.ts';

export interface FieldViewState {
  /** Conditions on fields inside the records, in the order added. */
  fieldFilters?: FieldFilter[];
  /** Fields inside the records shown as facets, in the order added. */
  fieldFacets?: string[];
  /** The table's columns; absent = the source's own. */
  columns?: ColumnSpec[];
  /** Long cells wrap onto more lines instead of being cut. */
  wrap?: boolean;
  /** Shorter rows, smaller text. */
  dense?: boolean;
}

/** Writes the state into a query string (nothing for what is empty or default). */
export function writeFieldState(q: URLSearchParams, s: FieldViewState): void {
  for (const f of s.fieldFilters ?? []) q.append('field', printFieldFilter(f));
  if (s.fieldFacets?.length) q.set('facets', s.fieldFacets.join(','));
  if (s.columns?.length) q.set('cols', columnsParam(s.columns));
  if (s.wrap) q.set('wrap', '1');
  if (s.dense) q.set('dense', '1');
}

/** Reads it back; what cannot be valid is dropped, never an error. */
export function readFieldState(q: URLSearchParams): FieldViewState {
  let fieldFilters: FieldFilter[] = [];
  for (const text of q.getAll('field')) {
    const read = readFieldFilter(text);
    if (read.ok && fieldFilters.length < MAX_FIELD_FILTERS) fieldFilters = addFieldFilter(fieldFilters, read.filter);
  }
  const fieldFacets = [...new Set((q.get('facets') ?? '').split(',').filter(isFieldPath))].slice(0, MAX_FIELD_FACETS);
  // Only what is there: a view without any of it reads as it did before (views saved before fields and columns existed).
  const out: FieldViewState = {};
  if (fieldFilters.length) out.fieldFilters = fieldFilters;
  if (fieldFacets.length) out.fieldFacets = fieldFacets;
  const columns = parseColumns(q.get('cols'));
  if (columns) out.columns = columns;
  if (q.get('wrap') === '1') out.wrap = true;
  if (q.get('dense') === '1') out.dense = true;
  return out;
}

/** The same state of another view (the explorer's, kept while the exact view is open). */
export function copyFieldState(s: FieldViewState): FieldViewState {
  const out: FieldViewState = {};
  if (s.fieldFilters?.length) out.fieldFilters = [...s.fieldFilters];
  if (s.fieldFacets?.length) out.fieldFacets = [...s.fieldFacets];
  if (s.columns) out.columns = s.columns.map((c) => ({ ...c }));
  if (s.wrap) out.wrap = true;
  if (s.dense) out.dense = true;
  return out;
}

/**
 * Another source's records have other fields: switching drops the field chips, facets and
 * columns (as the built-in chips the new source cannot apply are dropped); wrap and dense stay.
 */
export function forOtherSource<S extends FieldViewState>(s: S): S {
  const out: S = { ...s };
  delete out.fieldFilters;
  delete out.fieldFacets;
  delete out.columns;
  return out;
}

/** The `field` parameters the API takes for the chips. */
export function fieldParams(filters: readonly FieldFilter[] | undefined): { field?: string[] } {
  return filters?.length ? { field: filters.map(printFieldFilter) } : {};
}
