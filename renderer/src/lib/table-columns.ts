/**
 * The explorer table's columns: the source's own (time, status, method, path, level,
 * function, message) and any field inside the records, in the user's order and widths. In the
 * URL as `cols=timestamp,status:60,metadata.request.cf.country:120,event_message`: a record
 * field is named `metadata.<path>` so it never reads as a built-in column of the same name.
 */
import { isFieldPath } from '../../../contract/fields.ts';

/** A built-in column of the explorer's table. */
import type { ExplorerColumn } from '../../../contract/api-types.ts';
export type { ExplorerColumn };

export const BUILTIN_COLUMNS: readonly ExplorerColumn[] = ['timestamp', 'status', 'method', 'path', 'level', 'function_id', 'event_message'];

/** `status`, or `metadata.request.cf.country` for a field inside the records. */
export type ColumnId = ExplorerColumn | `metadata.${string}`;

export interface ColumnSpec {
  id: ColumnId;
  /** px; absent = the column's own width. */
  width?: number;
}

export const MIN_COLUMN_WIDTH = 40;
export const MAX_COLUMN_WIDTH = 1200;
/** Columns a table may have (the URL stays short). */
export const MAX_COLUMNS = 24;
const FIELD_PREFIX = 'metadata.';

export function isBuiltinColumn(id: string): id is ExplorerColumn {
  return (BUILTIN_COLUMNS as readonly string[]).includes(id);
}

/** The record field a column shows (`request.cf.country`), or null for a built-in column. */
export function columnField(id: ColumnId): string | null {
  return id.startsWith(FIELD_PREFIX) ? id.slice(FIELD_PREFIX.length) : null;
}

export function fieldColumn(path: string): ColumnId {
  return `${FIELD_PREFIX}${path}`;
}

export function clampWidth(px: number): number {
  return Math.round(Math.min(MAX_COLUMN_WIDTH, Math.max(MIN_COLUMN_WIDTH, px)));
}

/** `timestamp,status:60,metadata.request.cf.country:120`. */
export function columnsParam(cols: readonly ColumnSpec[]): string {
  return cols.map((c) => (c.width === undefined ? c.id : `${c.id}:${c.width}`)).join(',');
}

/**
 * Reads `cols`; unknown names, repeats and malformed widths are dropped, never an error. An
 * empty or absent list is undefined: the source's own columns.
 */
export function parseColumns(text: string | null): ColumnSpec[] | undefined {
  if (!text) return undefined;
  const out: ColumnSpec[] = [];
  const seen = new Set<string>();
  for (const part of text.split(',')) {
    const m = /^([^:]+)(?::(\d{1,4}))?$/.exec(part.trim());
    if (!m) continue;
    const id = m[1]!;
    const field = columnField(id as ColumnId);
    if (!(isBuiltinColumn(id) || (field !== null && isFieldPath(field))) || seen.has(id)) continue;
    seen.add(id);
    const spec: ColumnSpec = { id: id as ColumnId };
    if (m[2] !== undefined) spec.width = clampWidth(Number(m[2]));
    out.push(spec);
    if (out.length === MAX_COLUMNS) break;
  }
  return out.length ? out : undefined;
}

/**
 * The columns a table shows: the chosen ones the source has (a built-in column of another
 * source is skipped), else the source's own.
 */
export function effectiveColumns(chosen: readonly ColumnSpec[] | undefined, sourceColumns: readonly ExplorerColumn[]): ColumnSpec[] {
  if (!chosen?.length) return sourceColumns.map((id) => ({ id }));
  const kept = chosen.filter((c) => !isBuiltinColumn(c.id) || sourceColumns.includes(c.id));
  return kept.length ? kept.map((c) => ({ ...c })) : sourceColumns.map((id) => ({ id }));
}

/** Whether a layout is the source's own (so the URL need not carry it). */
export function isDefaultLayout(cols: readonly ColumnSpec[], sourceColumns: readonly ExplorerColumn[]): boolean {
  return cols.length === sourceColumns.length && cols.every((c, i) => c.id === sourceColumns[i] && c.width === undefined);
}

/** Shows a column (at the end, or just before the message column, which fills the row) or hides it. */
export function toggleColumn(cols: readonly ColumnSpec[], id: ColumnId): ColumnSpec[] {
  if (cols.some((c) => c.id === id)) return cols.filter((c) => c.id !== id);
  if (cols.length >= MAX_COLUMNS) return [...cols];
  const msg = cols.findIndex((c) => c.id === 'event_message');
  const at = msg >= 0 && msg === cols.length - 1 ? msg : cols.length;
  return [...cols.slice(0, at), { id }, ...cols.slice(at)];
}

/** Moves a column one place left (−1) or right (+1); at an end it stays. */
export function moveColumn(cols: readonly ColumnSpec[], id: ColumnId, by: -1 | 1): ColumnSpec[] {
  const i = cols.findIndex((c) => c.id === id);
  const j = i + by;
  if (i < 0 || j < 0 || j >= cols.length) return [...cols];
  const out = [...cols];
  [out[i], out[j]] = [out[j]!, out[i]!];
  return out;
}

/** Sets a column's width (px, clamped), or back to its own with undefined. */
export function resizeColumn(cols: readonly ColumnSpec[], id: ColumnId, width: number | undefined): ColumnSpec[] {
  return cols.map((c) => {
    if (c.id !== id) return c;
    const next: ColumnSpec = { id: c.id };
    if (width !== undefined) next.width = clampWidth(width);
    return next;
  });
}
