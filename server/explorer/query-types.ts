/**
 * The explorer's query as readExplorerQuery (query.ts) hands it to the walk and its filters
 * (row-filter.ts, path-filter.ts): types only, so the filters need not import the walk.
 */
import type { RE2JS } from 're2js';
import type { StatusSpec } from '../../contract/filters.ts';
import type { SourceInfo } from '../sources.ts';
import type { FieldCondition } from './record-fields.ts';

export interface Filter<T> {
  include: T[];
  exclude: T[];
}

export interface ExplorerQuery {
  source: SourceInfo;
  /** Project id in the catalog; null = every project; -1 = a project the store does not know (no rows). */
  project: number | null;
  projectRef: string | null;
  start: number;
  end: number;
  q: { text: string; lower: string; re: RE2JS | null; rawSafe: boolean } | null;
  status: Filter<StatusSpec>;
  method: Filter<string>;
  path: Filter<string>;
  level: Filter<string>;
  function: Filter<number>;
  limit: number;
  cursor: Cursor | null;
  /** Conditions on fields inside the records (`field=path:value`): decided by the record itself. */
  fields: FieldCondition[];
}

/**
 * Where a page stopped: the last row's instant and its row number. Rows of one instant come in
 * id order (as logs.all orders them), so the rows after the cursor at its instant are those
 * whose id comes after the cursor row's; row number 0 means the whole instant is done.
 */
export interface Cursor {
  ts: number;
  rid: number;
}
