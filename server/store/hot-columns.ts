/**
 * Each source's hot columns, declared once: which field of a record becomes which column of
 * its partition's hot table, where the normalizer finds it, and how it is stored. The schema
 * (partition DDL and inserts), the normalizer and the flat view used by the SQL definitions all
 * read this table; nothing else restates it. See docs/ARCHITECTURE.md, "Hot columns".
 */
import type { HotKind } from '../sources.ts';

/** The StoredRecord fields a hot column can come from. */
export type HotField = 'url' | 'families' | 'status' | 'functionId' | 'exec';

export interface HotColumn {
  /** Column name in the hot table (and in the endpoint SQL). */
  column: string;
  sqlType: 'INTEGER' | 'REAL';
  field: HotField;
  /** Path inside `metadata` (either shape) where the value is read. */
  from: readonly string[];
  /**
   * `number`: a finite number or numeric text, else NULL. `text`: text kept as is.
   * `families`: bits of the API family strings in the request path (the path from `from`,
   * else the URL's path). Text fields are stored as dictionary ids (`dictionary`).
   */
  read: 'number' | 'text' | 'families';
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

export const HOT_COLUMNS: Readonly<Record<HotKind, readonly HotColumn[]>> = {
  edge: [URL_COLUMN, FAMILIES, STATUS],
  function_edge: [FUNCTION_KEY, EXEC, STATUS],
  function_event: [FUNCTION],
  plain: [],
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

/** Bits of the `families` column: which API family strings the request path contains. */
export const FAMILY = { rest: 1, storage: 2, auth: 4, realtime: 8 } as const;
