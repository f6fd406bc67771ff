/**
 * Each source's hot columns, declared once: which field of a record becomes which column of
 * its partition's hot table, where the normalizer finds it, and how it is stored. The schema
 * (partition DDL and inserts), the normalizer and the flat view used by the SQL definitions all
 * read this table; nothing else restates it. See docs/ARCHITECTURE.md, "Hot columns".
 */
import type { HotKind, SourceName } from '../sources.ts';

/** The StoredRecord fields a hot column can come from. */
export type HotField = 'url' | 'families' | 'status' | 'functionId' | 'exec' | 'method' | 'path' | 'level';

export interface HotColumn {
  /** Column name in the hot table (and in the endpoint SQL). */
  column: string;
  sqlType: 'INTEGER' | 'REAL' | 'TEXT';
  field: HotField;
  /** Path inside `metadata` (either shape) where the value is read. */
  from: readonly string[];
  /**
   * `number`: a finite number or numeric text, else NULL. `text`: text kept as is.
   * `families`: the bits of the API families (API_FAMILIES, contract/registry.ts) whose string
   * the request path contains (the path from `from`, else the URL's path). Text fields are
   * stored as dictionary ids (`dictionary`). `source`: the explorer's fields, read where each
   * source keeps them (SOURCE_FIELDS; `from` is unused).
   */
  read: 'number' | 'text' | 'families' | 'source';
  dictionary?: 'urls' | 'functions';
  notNull?: boolean;
}

const URL_COLUMN: HotColumn = { column: 'url', sqlType: 'INTEGER', field: 'url', from: ['request', 'url'], read: 'text', dictionary: 'urls', notNull: true };
const FAMILIES: HotColumn = { column: 'families', sqlType: 'INTEGER', field: 'families', from: ['request', 'path'], read: 'families', notNull: true };
const STATUS: HotColumn = { column: 'status', sqlType: 'INTEGER', field: 'status', from: ['response', 'status_code'], read: 'number' };
const FUNCTION: HotColumn = { column: 'function', sqlType: 'INTEGER', field: 'functionId', from: ['function_id'], read: 'text', dictionary: 'functions' };
/** In a key column NULL is not allowed: a record without a function id is stored as 0. */
const FUNCTION_KEY: HotColumn = { ...FUNCTION, notNull: true };
const EXEC: HotColumn = { column: 'exec', sqlType: 'REAL', field: 'exec', from: ['execution_time_ms'], read: 'number' };

/** The explorer's filter fields, read per source (SOURCE_FIELDS). */
const BY_SOURCE = (column: 'status' | 'method' | 'path' | 'level'): HotColumn => ({
  column,
  sqlType: column === 'status' ? 'INTEGER' : 'TEXT',
  field: column,
  from: [],
  read: 'source',
});

export const HOT_COLUMNS: Readonly<Record<HotKind, readonly HotColumn[]>> = {
  // Edge paths come from the URL dictionary (`url`), so they are not stored twice.
  edge: [URL_COLUMN, FAMILIES, STATUS, BY_SOURCE('method')],
  function_edge: [FUNCTION_KEY, EXEC, STATUS, BY_SOURCE('method'), BY_SOURCE('path')],
  function_event: [FUNCTION, BY_SOURCE('level')],
  plain: [BY_SOURCE('status'), BY_SOURCE('method'), BY_SOURCE('path'), BY_SOURCE('level')],
};

/** Where a source keeps a field: a metadata path, or (`url`) the path of the URL at that metadata path. */
export type FieldRule = { at: readonly string[] } | { urlAt: readonly string[] };

/**
 * The explorer's filter fields of each source, where its records keep them (docs/ARCHITECTURE.md,
 * "Explorer"). A source without a rule for a field has no such filter or facet. `status` is a
 * number (numeric text too); `method` is stored upper-case; `level` as written (a level or a
 * severity, as the source calls it); `path` is a request path.
 */
export const SOURCE_FIELDS: Readonly<Record<SourceName, Partial<Record<'status' | 'method' | 'path' | 'level', FieldRule>>>> = {
  'cloudflare.logs.prod': { status: { at: ['response', 'status_code'] }, method: { at: ['request', 'method'] }, path: { urlAt: ['request', 'url'] } },
  'postgres.logs': { level: { at: ['parsed', 'error_severity'] } },
  'deno-relay-logs': { status: { at: ['response', 'status_code'] }, method: { at: ['request', 'method'] }, path: { urlAt: ['request', 'url'] } },
  'deno-subhosting-events': { level: { at: ['level'] } },
  'gotrue.logs.prod': { status: { at: ['status'] }, method: { at: ['method'] }, path: { at: ['path'] }, level: { at: ['level'] } },
  'realtime.logs.prod': { level: { at: ['level'] } },
  'storage.logs.prod.2': { status: { at: ['res', 'statusCode'] }, method: { at: ['req', 'method'] }, path: { urlAt: ['req', 'url'] }, level: { at: ['level'] } },
  'postgREST.logs.prod': {},
  'pgbouncer.logs.prod': {},
};

/**
 * How each kind's hot table is keyed. Function edge rows are clustered by (project, function,
 * ts) in a WITHOUT ROWID table: invocation-stats reads a project's (or one function's) rows of
 * a window as one range, and the table needs no second index. The others keep rowid order (the
 * order records arrived) with a (project, ts) index.
 */
export const HOT_LAYOUT: Readonly<Record<HotKind, { clusteredBy?: readonly string[]; index?: readonly string[] }>> = {
  edge: { index: ['project', 'ts'] },
  function_edge: { clusteredBy: ['project', 'function', 'ts', 'rid'] },
  function_event: { index: ['project', 'ts', 'function'] },
  plain: { index: ['project', 'ts'] },
};
