/**
 * Bucket series of the two bucketed endpoints (queries/*.sql), computed from the server's
 * "now" exactly as the SQL does, so the UI can label bucket ranges and zero-fill gaps.
 */
import type { ApiCountsRow } from '../../../server/api-types.ts';
import { parseIsoMicros, truncMicros, US } from './time.ts';

export const FUNCTION_INTERVALS = ['5min', '15min', '1hr', '1day', '7day'] as const;
export type FunctionInterval = (typeof FUNCTION_INTERVALS)[number];

export const USAGE_INTERVALS = ['hourly', 'daily', 'minutely'] as const;
export type UsageInterval = (typeof USAGE_INTERVALS)[number];

export interface SeriesSpec {
  /** Window length looked back from now, µs. */
  span: number;
  /** Bucket width, µs. */
  unit: number;
}

/** functions.invocation-stats: 5min by second, 15min/1hr by minute, 1day by hour, 7day by day. */
export const FUNCTION_SERIES: Record<FunctionInterval, SeriesSpec> = {
  '5min': { span: 5 * US.minute, unit: US.second },
  '15min': { span: 15 * US.minute, unit: US.minute },
  '1hr': { span: US.hour, unit: US.minute },
  '1day': { span: US.day, unit: US.hour },
  '7day': { span: 7 * US.day, unit: US.day },
};

/** usage.api-counts: hourly = last hour by hour, daily = last 7 days by day, minutely = last 60 min by minute. */
export const USAGE_SERIES: Record<UsageInterval, SeriesSpec> = {
  hourly: { span: US.hour, unit: US.hour },
  daily: { span: 7 * US.day, unit: US.day },
  minutely: { span: US.hour, unit: US.minute },
};

export interface BucketRange {
  /** Bucket start, µs (inclusive). */
  start: number;
  /** Bucket end, µs (exclusive): start + unit. */
  end: number;
}

/** Bucket starts from trunc(now − span, unit) to trunc(now, unit), inclusive, ascending. */
export function bucketStarts(now: number, spec: SeriesSpec): number[] {
  const first = truncMicros(now - spec.span, spec.unit);
  const last = truncMicros(now, spec.unit);
  const out: number[] = [];
  for (let t = first; t <= last; t += spec.unit) out.push(t);
  return out;
}

/** The bucket a start timestamp opens: [start, start + unit). */
export function bucketRange(start: number, unit: number): BucketRange {
  return { start, end: start + unit };
}

export interface UsageBucket {
  /** Bucket start, µs. */
  start: number;
  /** The API's `YYYY-MM-DDTHH:MM:SS` label (also for filled buckets). */
  timestamp: string;
  rest: number;
  storage: number;
  auth: number;
  realtime: number;
  /** True when the API returned no row for this bucket. */
  filled: boolean;
}

/** `YYYY-MM-DDTHH:MM:SS` (UTC, no zone) of a µs instant, as the API labels buckets. */
export function datetimeLabel(us: number): string {
  return new Date(Math.floor(us / 1000)).toISOString().slice(0, 19);
}

/**
 * Zero-fills api-counts rows over the whole window (the API returns only non-empty buckets).
 * Rows outside the computed window (records stamped after "now") are kept, in order, so the
 * chart's totals always equal the API's.
 */
export function zeroFillUsage(rows: readonly ApiCountsRow[], now: number, interval: UsageInterval): UsageBucket[] {
  const spec = USAGE_SERIES[interval];
  const byStart = new Map<number, UsageBucket>();
  for (const start of bucketStarts(now, spec)) {
    byStart.set(start, { start, timestamp: datetimeLabel(start), rest: 0, storage: 0, auth: 0, realtime: 0, filled: true });
  }
  for (const row of rows) {
    const start = parseIsoMicros(row.timestamp);
    if (start === undefined) continue;
    const bucket: UsageBucket = {
      start,
      timestamp: row.timestamp,
      rest: row.total_rest_requests,
      storage: row.total_storage_requests,
      auth: row.total_auth_requests,
      realtime: row.total_realtime_requests,
      filled: false,
    };
    const existing = byStart.get(start);
    if (existing && !existing.filled) {
      existing.rest += bucket.rest;
      existing.storage += bucket.storage;
      existing.auth += bucket.auth;
      existing.realtime += bucket.realtime;
    } else {
      byStart.set(start, bucket);
    }
  }
  return [...byStart.values()].sort((a, b) => a.start - b.start);
}

export interface UsageTotals {
  rest: number;
  storage: number;
  auth: number;
  realtime: number;
}

/** Per-family sums of the API rows. */
export function usageTotals(rows: readonly ApiCountsRow[]): UsageTotals {
  const t: UsageTotals = { rest: 0, storage: 0, auth: 0, realtime: 0 };
  for (const r of rows) {
    t.rest += r.total_rest_requests;
    t.storage += r.total_storage_requests;
    t.auth += r.total_auth_requests;
    t.realtime += r.total_realtime_requests;
  }
  return t;
}
