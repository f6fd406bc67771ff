/**
 * logs.all helpers: tiers (named in contract/registry.ts) and their retention (read from
 * `GET /api/endpoints`), time-range presets resolved against the server's now, paging older
 * rows, and the request fields of an edge log record in the query shape
 * (`metadata[0].request[0].method`); the explorer's chips, written in the shared filter grammar
 * (contract/filters.ts).
 */
import type { LogRow } from '../../../contract/api-types.ts';
import type { CompareChoice } from './compare.ts';
import { checkFilterValue, FILTER_FIELDS, parseFilterList, printFilterList, type FilterField, type FilterItem } from '../../../contract/filters.ts';
import { formatIsoMicros, MICROS } from '../../../contract/instants.ts';
import { isTier, type Tier } from '../../../contract/registry.ts';
import type { FieldViewState } from './field-state.ts';

/** logs.all's retention rules as the registry lists them (api/rules.ts `LogsAllRules` has this shape). */
export interface RetentionRules {
  /** Retention per tier, µs: records strictly newer than now − retention are returned. */
  retentionUs: Readonly<Record<string, number>>;
  /** The tier any other name behaves as. */
  fallback: string;
}

/** A tier's retention under the rules (an unlisted tier gets the fallback's, as the server answers it). */
export function retentionOf(rules: RetentionRules, tier: string): number | undefined {
  return rules.retentionUs[tier] ?? rules.retentionUs[rules.fallback];
}

/** The listed tiers a Logs URL can name, in the listing's order, with their retention. */
export function listedTiers(rules: RetentionRules): Array<{ tier: Tier; retentionUs: number }> {
  return Object.entries(rules.retentionUs)
    .filter((e): e is [Tier, number] => isTier(e[0]))
    .map(([tier, retentionUs]) => ({ tier, retentionUs }));
}

export const RANGE_PRESETS = ['15m', '1h', '3h', '24h', '7d'] as const;
export type RangePreset = (typeof RANGE_PRESETS)[number];
export type RangeChoice = RangePreset | 'custom';

export const PRESET_SPAN: Record<RangePreset, number> = {
  '15m': 15 * MICROS.minute,
  '1h': MICROS.hour,
  '3h': 3 * MICROS.hour,
  '24h': MICROS.day,
  '7d': 7 * MICROS.day,
};

/** The Logs page's two views: the explorer over every source, or the exact logs.all endpoint. */
export const LOGS_MODES = ['explore', 'exact'] as const;
export type LogsMode = (typeof LOGS_MODES)[number];

/** The Logs page's state as a URL carries it (url-state.ts reads and writes it). */
/** The state about fields inside the records and the table's layout (field-state.ts) is part of it. */
export interface LogsView extends FieldViewState {
  /** logs.all's tier (the exact view only). */
  tier: Tier;
  range: RangeChoice;
  /** Custom range bounds, µs (only with range 'custom'). */
  start?: number;
  end?: number;
  /**
   * Absent means 'exact': every view of this page made before the explorer (a link with a
   * tier, another page's jump to a range) addressed logs.all, and still does. See logsMode.
   */
  mode?: LogsMode;
  /** The explorer's source (name or alias); '' or absent = the first source the server lists. */
  source?: string;
  /** Search text (plain, or an RE2 pattern with `regex`). */
  q?: string;
  regex?: boolean;
  filters?: LogFilter[];
  /** The explorer's compared period (histogram overlay, facet changes); absent = none. */
  compare?: CompareChoice;
}

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
  if (range.start !== undefined) p.iso_timestamp_start = formatIsoMicros(range.start);
  if (range.end !== undefined) p.iso_timestamp_end = formatIsoMicros(range.end);
  return p;
}

export type RetentionCut =
  | { kind: 'none' }
  /** Part of the range is older than the cutoff. */
  | { kind: 'partial'; cutoff: number }
  /** The whole range is older than the cutoff: nothing can come back. */
  | { kind: 'all'; cutoff: number };

/** Whether a retention (records must be newer than now − retention) cuts the range. */
export function retentionCut(retentionUs: number, now: number, range: LogsRange): RetentionCut {
  const cutoff = now - retentionUs;
  if (range.end !== undefined && range.end <= cutoff) return { kind: 'all', cutoff };
  if (range.start === undefined || range.start < cutoff) return { kind: 'partial', cutoff };
  return { kind: 'none' };
}

/**
 * The tier to query a range starting at `start` with: the preferred one when its retention
 * covers the start, else the listed tier with the shortest retention that does; null when none
 * does (the range starts before the longest retention).
 */
export function tierCovering(rules: RetentionRules, start: number, now: number, preferred: Tier): Tier | null {
  const covers = (retention: number | undefined) => retention !== undefined && start >= now - retention;
  if (covers(retentionOf(rules, preferred))) return preferred;
  let best: { tier: Tier; retentionUs: number } | null = null;
  for (const t of listedTiers(rules)) if (covers(t.retentionUs) && (best === null || t.retentionUs < best.retentionUs)) best = t;
  return best?.tier ?? null;
}

/** The listed tier with the longest retention (what a range older than every tier is told about). */
export function longestTier(rules: RetentionRules): { tier: Tier; retentionUs: number } | null {
  let best: { tier: Tier; retentionUs: number } | null = null;
  for (const t of listedTiers(rules)) if (best === null || t.retentionUs > best.retentionUs) best = t;
  return best;
}

/** Where paging older left off: the oldest instant shown and the ids shown at that instant. */
export interface OlderCursor {
  end: number;
  idsAtEnd: readonly string[];
}

/** The cursor after the rows shown so far (newest first); null when none are shown. */
export function olderCursor(shown: readonly LogRow[]): OlderCursor | null {
  const oldest = shown[shown.length - 1];
  if (!oldest) return null;
  const idsAtEnd: string[] = [];
  for (let i = shown.length - 1; i >= 0 && shown[i]!.timestamp === oldest.timestamp; i--) idsAtEnd.push(shown[i]!.id);
  return { end: oldest.timestamp, idsAtEnd };
}

export interface OlderPage {
  /** Up to `size` rows older than (or tied with, but not yet shown at) the cursor, newest first. */
  rows: LogRow[];
  /** Whether older rows may remain in the range. */
  more: boolean;
  /**
   * Instants whose records filled a whole answer: logs.all orders ties by id and returns at most
   * `size`, so records of that microsecond past the first `size` cannot be reached by paging.
   */
  crowded: number[];
}

/**
 * The next `size` rows of logs.all older than the cursor. The endpoint takes an inclusive end
 * and no offset, so asking with end = the oldest shown instant answers that row (and any ties
 * shown) again: they are dropped, and the request repeats from the new oldest instant until
 * `size` new rows are in hand or the range is exhausted. `fetchEnd(end)` asks logs.all with
 * iso_timestamp_end = end (the caller keeps the tier, start and project).
 */
export async function fetchOlder(fetchEnd: (end: number) => Promise<readonly LogRow[]>, cursor: OlderCursor, size: number): Promise<OlderPage> {
  const seen = new Set(cursor.idsAtEnd);
  const rows: LogRow[] = [];
  const crowded: number[] = [];
  let end = cursor.end;
  for (;;) {
    const answer = await fetchEnd(end);
    let added = 0;
    for (const r of answer) {
      if (seen.has(r.id)) continue;
      seen.add(r.id);
      rows.push(r);
      added++;
    }
    // A short answer is the rest of the range.
    if (answer.length < size) return { rows: rows.slice(0, size), more: rows.length > size, crowded };
    if (rows.length >= size) return { rows: rows.slice(0, size), more: true, crowded };
    const oldest = answer[answer.length - 1]!;
    if (oldest.timestamp === end && added === 0) {
      // A full answer of one microsecond, all shown already: step past it.
      crowded.push(end);
      end -= 1;
    } else {
      end = oldest.timestamp;
    }
  }
}

/**
 * The Logs view a usage bucket opens: the explorer over edge requests in the bucket's range
 * (cut to the window's start for a partial first bucket), searching the usage page's URL
 * pattern as an RE2 pattern, so the rows are the requests the bucket counted. Bounds follow
 * /api/logs (start exclusive, end inclusive): (start − 1 µs, end − 1 µs] is [start, end).
 */
export function usageBucketLogs(logs: LogsView, bucket: { start: number; end: number }, windowStart: number, pattern: string, source: string): LogsView {
  const start = Math.max(bucket.start, windowStart);
  return { ...logs, mode: 'explore', source, range: 'custom', start: start - 1, end: bucket.end - 1, q: pattern, regex: true, filters: [] };
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
/** A message match this far in is past what a table cell shows. */
const VISIBLE_MESSAGE_CHARS = 60;

/**
 * Where the filter box matched, when the table would not show it: the id (not a column) or a
 * point far into the message. Null when the match is in sight (or nothing matched).
 */
export function hiddenMatch(row: LogRow, fields: RequestFields, filter: string): string | null {
  const q = filter.trim().toLowerCase();
  if (!q) return null;
  const visible =
    (fields.path ?? '').toLowerCase().includes(q) || (fields.method ?? '').toLowerCase() === q || String(fields.status ?? '') === q;
  if (visible) return null;
  const at = row.event_message.toLowerCase().indexOf(q);
  if (at >= 0) return at < VISIBLE_MESSAGE_CHARS ? null : `match at character ${at + 1} of the message`;
  return row.id.toLowerCase().includes(q) ? 'match in id' : null;
}

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

// ---- the explorer: filters over every source ----

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
