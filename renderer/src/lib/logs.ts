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
