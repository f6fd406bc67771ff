/**
 * logs.all helpers: tiers and their retention, time-range presets resolved against the
 * server's now, and the request fields of an edge log record in the query shape
 * (`metadata[0].request[0].method`).
 */
import type { LogRow } from '../../../server/api-types.ts';
import { isoMicros, US } from './time.ts';

export const TIERS = ['FREE', 'PRO', 'PAYG', 'ENTERPRISE'] as const;
export type Tier = (typeof TIERS)[number];

/** Retention per tier (queries/logs.all.sql): FREE 1 day, PRO 7 days, PAYG/ENTERPRISE 90 days. */
export const RETENTION: Record<Tier, number> = {
  FREE: US.day,
  PRO: 7 * US.day,
  PAYG: 90 * US.day,
  ENTERPRISE: 90 * US.day,
};

export const RANGE_PRESETS = ['15m', '1h', '3h', '24h', '7d'] as const;
export type RangePreset = (typeof RANGE_PRESETS)[number];
export type RangeChoice = RangePreset | 'custom';

export const PRESET_SPAN: Record<RangePreset, number> = {
  '15m': 15 * US.minute,
  '1h': US.hour,
  '3h': 3 * US.hour,
  '24h': US.day,
  '7d': 7 * US.day,
};

export interface LogsRange {
  /** Exclusive lower bound, µs; undefined = none. */
  start?: number;
  /** Inclusive upper bound, µs; undefined = none. */
  end?: number;
}

/** A preset ends at the server's now and starts one span earlier. */
export function resolveRange(choice: RangeChoice, now: number, custom: LogsRange = {}): LogsRange {
  if (choice === 'custom') return { ...custom };
  return { start: now - PRESET_SPAN[choice], end: now };
}

/** The logs.all query parameters for a project, tier and range (ISO with microseconds). */
export function logsParams(project: string, tier: Tier, range: LogsRange): Record<string, string> {
  const p: Record<string, string> = { project, project_tier: tier };
  if (range.start !== undefined) p.iso_timestamp_start = isoMicros(range.start);
  if (range.end !== undefined) p.iso_timestamp_end = isoMicros(range.end);
  return p;
}

export type RetentionCut =
  | { kind: 'none' }
  /** Part of the range is older than the cutoff. */
  | { kind: 'partial'; cutoff: number }
  /** The whole range is older than the cutoff: nothing can come back. */
  | { kind: 'all'; cutoff: number };

/** Whether the tier's retention (records must be newer than now − window) cuts the range. */
export function retentionCut(tier: Tier, now: number, range: LogsRange): RetentionCut {
  const cutoff = now - RETENTION[tier];
  if (range.end !== undefined && range.end <= cutoff) return { kind: 'all', cutoff };
  if (range.start === undefined || range.start < cutoff) return { kind: 'partial', cutoff };
  return { kind: 'none' };
}

/** The smallest tier whose retention covers a range start (for jumps from other pages). */
export function tierCovering(start: number, now: number, preferred: Tier): Tier {
  if (start >= now - RETENTION[preferred]) return preferred;
  return TIERS.find((t) => start >= now - RETENTION[t]) ?? 'ENTERPRISE';
}

export interface RequestFields {
  method: string | null;
  path: string | null;
  status: number | null;
}

function first(value: unknown): Record<string, unknown> | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** method/path from metadata[0].request[0], status from metadata[0].response[0].status_code. */
export function requestFields(row: Pick<LogRow, 'metadata'>): RequestFields {
  const meta = first(row.metadata);
  const req = first(meta?.request);
  const res = first(meta?.response);
  const status = res?.status_code;
  const statusNum = typeof status === 'number' ? status : typeof status === 'string' && /^\d+$/.test(status) ? Number(status) : null;
  return {
    method: typeof req?.method === 'string' ? req.method : null,
    path: typeof req?.path === 'string' ? req.path : null,
    status: statusNum,
  };
}

/** `ok` 1xx–3xx split for colour: 2xx success, 3xx redirect, 4xx client, 5xx server. */
export function statusClass(status: number | null): 'success' | 'redirect' | 'client' | 'server' | 'info' | 'unknown' {
  if (status === null) return 'unknown';
  if (status >= 500) return 'server';
  if (status >= 400) return 'client';
  if (status >= 300) return 'redirect';
  if (status >= 200) return 'success';
  return 'info';
}

/** Appends an older page, dropping rows already shown (the end bound is inclusive). */
export function mergePages(pages: ReadonlyArray<readonly LogRow[]>): LogRow[] {
  const seen = new Set<string>();
  const out: LogRow[] = [];
  for (const page of pages) {
    for (const row of page) {
      if (seen.has(row.id)) continue;
      seen.add(row.id);
      out.push(row);
    }
  }
  return out;
}

/** Case-insensitive match of a filter text against a row's visible fields. */
export function rowMatches(row: LogRow, fields: RequestFields, filter: string): boolean {
  const q = filter.trim().toLowerCase();
  if (!q) return true;
  return (
    row.event_message.toLowerCase().includes(q) ||
    row.id.toLowerCase().includes(q) ||
    (fields.path ?? '').toLowerCase().includes(q) ||
    (fields.method ?? '').toLowerCase() === q ||
    String(fields.status ?? '') === q
  );
}

// ---- the explorer (issue 12): filters over every source ----

/** The fields the explorer filters on; a source has the ones `/api/logs/fields` lists. */
export const FILTER_FIELDS = ['status', 'method', 'path', 'level', 'function_id'] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

export function isFilterField(name: string): name is FilterField {
  return (FILTER_FIELDS as readonly string[]).includes(name);
}

/** One chip: `status: 5xx`, or with `exclude` a "not" chip (`!404` on the wire). */
export interface LogFilter {
  field: FilterField;
  value: string;
  exclude: boolean;
}

export type FilterValueCheck = { ok: true; value: string } | { ok: false; reason: string };

/**
 * Normalizes a typed or clicked value for a field. The wire form is comma-separated with `!`
 * for exclusion, so a value holding a comma or starting with `!` cannot be sent and is refused.
 */
export function checkFilterValue(field: FilterField, raw: string): FilterValueCheck {
  const value = raw.trim();
  if (!value) return { ok: false, reason: 'Enter a value' };
  if (value.includes(',')) return { ok: false, reason: 'A value cannot contain a comma' };
  if (value.startsWith('!')) return { ok: false, reason: 'Use “exclude” instead of a leading !' };
  switch (field) {
    case 'status': {
      const v = value.toLowerCase();
      if (/^[1-5]xx$/.test(v) || /^[1-5]\d\d$/.test(v)) return { ok: true, value: v };
      return { ok: false, reason: 'A status is a code (503) or a class (5xx)' };
    }
    case 'method':
      // Methods are stored upper-case.
      return /^[A-Za-z]+$/.test(value) ? { ok: true, value: value.toUpperCase() } : { ok: false, reason: 'A method is a word such as GET' };
    default:
      return { ok: true, value };
  }
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
  for (const f of canonical(filters)) {
    const item = `${f.exclude ? '!' : ''}${f.value}`;
    out[f.field] = out[f.field] === undefined ? item : `${out[f.field]},${item}`;
  }
  return out;
}

/** Reads chips back from parameters; values that cannot be valid chips are dropped, never an error. */
export function filtersFromParams(get: (name: FilterField) => string | null): LogFilter[] {
  let out: LogFilter[] = [];
  for (const field of FILTER_FIELDS) {
    const raw = get(field);
    if (!raw) continue;
    for (const part of raw.split(',')) {
      const exclude = part.startsWith('!');
      const checked = checkFilterValue(field, exclude ? part.slice(1) : part);
      if (checked.ok) out = addFilter(out, { field, value: checked.value, exclude });
    }
  }
  return out;
}

/** What the explorer asks the server: one source, optional project, a range, text and chips. */
export interface ExplorerQuery {
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
export function explorerParams(query: ExplorerQuery): Record<string, string> {
  const p: Record<string, string> = { source: query.source };
  if (query.project) p.project = query.project;
  if (query.range.start !== undefined) p.start = isoMicros(query.range.start);
  if (query.range.end !== undefined) p.end = isoMicros(query.range.end);
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
