/**
 * The explorer's filters over one partition's columns (store/scan-columns.ts): the window as an
 * index range (rows are newest first), the project and field filters as one test per row.
 * Text fields are decided once per dictionary entry, not per row (paths once per entry of the
 * store's path dictionary: path-filter.ts).
 *
 * The rules are those of the API: an included value must be present (a record without the
 * field is left out), an excluded value drops only records that have it; `status` takes codes
 * and classes, `method` is compared upper-case, `level` case-insensitively, `path` by prefix.
 */
import { NONE, type ColumnName, type ScanColumns, type ScanDictionaries } from '../store/scan-columns.ts';
import type { Cursor, ExplorerQuery } from './query-types.ts';
import type { FilterField } from '../../contract/filters.ts';

/** What a filter reads: a partition's row arrays, or its hour counts (which have no paths). */
export interface FilterTarget {
  readonly project: Int32Array;
  readonly status: Int32Array;
  readonly method: Int32Array;
  readonly path?: Int32Array;
  readonly level: Int32Array;
  readonly fn: Int32Array;
  readonly dicts: ScanDictionaries;
}

/** The path filter's pass table (path-filter.ts), when the query has one. */
export type PathTable = { pass: Uint8Array; passesId: (id: number) => boolean } | null;

/** The row array a filter field's values are in (function ids are `fn`). */
export function columnOfField(f: FilterField): 'status' | 'method' | 'path' | 'level' | 'fn' {
  return f === 'function_id' ? 'fn' : f;
}

/** The row arrays the query's filters read. */
export function filterColumns(q: ExplorerQuery): ColumnName[] {
  const out: ColumnName[] = [];
  if (q.project !== null) out.push('project');
  const used = (f: { include: unknown[]; exclude: unknown[] }) => f.include.length > 0 || f.exclude.length > 0;
  if (used(q.status)) out.push('status');
  if (used(q.method)) out.push('method');
  if (used(q.path)) out.push('path');
  if (used(q.level)) out.push('level');
  if (used(q.function)) out.push('fn');
  return out;
}

/** First index whose instant is at or below `ts` (rows descend by instant). */
function firstAtOrBelow(ts: Float64Array, n: number, at: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ts[mid]! > at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The rows of (start, end], from the cursor's instant on if any, as [from, to) indexes. */
export function windowRange(c: ScanColumns, start: number, end: number, after: Cursor | null): [number, number] {
  let from = firstAtOrBelow(c.ts, c.n, end);
  const to = firstAtOrBelow(c.ts, c.n, start);
  // The cursor's own instant is included: which of its rows come after the cursor is decided
  // by their ids (scanRows), not by their place here.
  if (after) from = Math.max(from, firstAtOrBelow(c.ts, c.n, after.ts));
  return [from, Math.max(from, to)];
}

type Test = (i: number) => boolean;

/** Per dictionary entry: whether a row holding it passes (1) or not (0); `none` for NONE. */
function dictionaryTest(values: Int32Array, dict: readonly string[], pass: (text: string) => boolean, none: boolean): Test | null {
  const ok = new Uint8Array(dict.length);
  let any = none;
  for (let d = 0; d < dict.length; d++) if ((ok[d] = pass(dict[d]!) ? 1 : 0)) any = true;
  if (!any) return null;
  return (i) => {
    const v = values[i]!;
    return v === NONE ? none : ok[v] === 1;
  };
}

const NEVER: Test = () => false;
/** The test when there are no filters: loops may skip calling it. */
export const EVERY_ROW: Test = () => true;

/**
 * The test of one row against every filter but the text search, or null when no row of this
 * partition can pass (so it is skipped whole). `paths` is the path filter's table (required
 * with a path filter).
 */
export function rowFilter(q: ExplorerQuery, c: FilterTarget, paths: PathTable = null): Test | null {
  const tests: Test[] = [];
  const add = (t: Test | null) => {
    tests.push(t ?? NEVER);
  };

  if (q.project !== null) {
    const project = q.project;
    const col = c.project;
    add((i) => col[i] === project);
  }

  if (q.status.include.length || q.status.exclude.length) {
    const matches = (specs: typeof q.status.include, v: number) => specs.some((s) => ('code' in s ? v === s.code : 'cls' in s ? v >= s.cls * 100 && v <= s.cls * 100 + 99 : false));
    const pass = (v: number) => (!q.status.include.length || matches(q.status.include, v)) && !matches(q.status.exclude, v);
    // Codes 0-999 looked up; others (rare) decided when met.
    const table = new Uint8Array(1000);
    for (let v = 0; v < 1000; v++) table[v] = pass(v) ? 1 : 0;
    // A record without a status: kept by `none`, dropped by `!none`, else kept only when no value is included.
    const isNone = (s: (typeof q.status.include)[number]) => 'none' in s;
    const none = !q.status.exclude.some(isNone) && (!q.status.include.length || q.status.include.some(isNone));
    const col = c.status;
    add((i) => {
      const v = col[i]!;
      if (v === NONE) return none;
      return v < 1000 ? table[v] === 1 : pass(v);
    });
  }

  /** `noneWord`: the value that names records without the field, as `status=none` does (the level facet's `none`). */
  const textFilter = (f: { include: string[]; exclude: string[] }, values: () => Int32Array | undefined, dict: () => readonly string[], match: (text: string, value: string) => boolean, noneWord?: string) => {
    if (!f.include.length && !f.exclude.length) return;
    const col = values();
    if (!col) throw new Error('a filter over counts that do not have its field');
    const pass = (text: string) => (!f.include.length || f.include.some((v) => match(text, v))) && !f.exclude.some((v) => match(text, v));
    const none = noneWord !== undefined && f.exclude.includes(noneWord) ? false : !f.include.length || (noneWord !== undefined && f.include.includes(noneWord));
    add(dictionaryTest(col, dict(), pass, none));
  };
  // Arrays and dictionaries are read only for the filters given (a dictionary is read from its file on first use).
  textFilter(q.method, () => c.method, () => c.dicts.method, (text, v) => text === v);
  textFilter(q.level, () => c.level, () => c.dicts.level, (text, v) => text.toLowerCase() === v, 'none');
  if (q.path.include.length || q.path.exclude.length) {
    const col = c.path;
    if (!col || !paths) throw new Error('a path filter without paths or their table');
    const { pass, passesId } = paths;
    const none = !q.path.include.length;
    add((i) => {
      const v = col[i]!;
      if (v === NONE) return none;
      return v < pass.length ? pass[v] === 1 : passesId(v);
    });
  }

  if (q.function.include.length || q.function.exclude.length) {
    const include = new Set(q.function.include);
    const exclude = new Set(q.function.exclude);
    const col = c.fn;
    add((i) => {
      const f = col[i]!;
      if (include.size && !include.has(f)) return false;
      return !exclude.has(f);
    });
  }

  if (tests.includes(NEVER)) return null;
  if (!tests.length) return EVERY_ROW;
  if (tests.length === 1) return tests[0]!;
  if (tests.length === 2) {
    const [a, b] = tests as [Test, Test];
    return (i) => a(i) && b(i);
  }
  return (i) => {
    for (const t of tests) if (!t(i)) return false;
    return true;
  };
}
