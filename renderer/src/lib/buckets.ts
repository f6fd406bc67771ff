/**
 * Bucket series of the two bucketed endpoints (queries/*.sql), computed from the server's
 * "now" exactly as the SQL does, so the UI can label bucket ranges and zero-fill gaps. The
 * windows and bucket units are the registry's, read from `GET /api/endpoints`
 * (api/rules.ts) and passed in: nothing here restates them.
 */
import type { ApiCountsRow } from '../../../server/api-types.ts';
import { parseIsoMicros, truncMicros, US, type TimePrecision } from './time.ts';

/**
 * The interval names the pages keep in their URLs (url-state.ts reads a URL before the
 * listing arrives); what each one means comes from the listing.
 */
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

/** A bucketed endpoint's windows, as the registry lists them (api/rules.ts builds this). */
export interface IntervalRules {
  /** The parameter that names the interval. */
  param: string;
  /** Window and bucket unit per interval name. */
  windows: Readonly<Record<string, SeriesSpec>>;
  /** The interval any other name behaves as; absent when other names are refused. */
  fallback?: string;
}

/** The window an interval name gets under the rules: its own, else the fallback's (as the server answers it). */
export function seriesOf(rules: IntervalRules, interval: string): SeriesSpec | undefined {
  return rules.windows[interval] ?? (rules.fallback !== undefined ? rules.windows[rules.fallback] : undefined);
}

/** `5 min`, `1 hour`, `7 days`: an interval's label, from its window. */
export function spanLabel(us: number): string {
  for (const [unit, one, many] of [
    [US.day, 'day', 'days'],
    [US.hour, 'hour', 'hours'],
    [US.minute, 'min', 'min'],
    [US.second, 's', 's'],
  ] as const) {
    if (us >= unit && us % unit === 0) return `${us / unit} ${us === unit ? one : many}`;
  }
  return `${us} µs`;
}

/** `second`, `minute`, `hour`, `day`: the bucket unit in words ("per hour"). */
export function unitName(unitUs: number): string {
  if (unitUs >= US.day && unitUs % US.day === 0) return unitUs === US.day ? 'day' : `${unitUs / US.day} days`;
  if (unitUs >= US.hour && unitUs % US.hour === 0) return unitUs === US.hour ? 'hour' : `${unitUs / US.hour} hours`;
  if (unitUs >= US.minute && unitUs % US.minute === 0) return unitUs === US.minute ? 'minute' : `${unitUs / US.minute} minutes`;
  return unitUs === US.second ? 'second' : `${unitUs / US.second} seconds`;
}

/** Day buckets are UTC days (trunc from the epoch): labels must say so, and name them in UTC. */
export function isUtcDayUnit(unitUs: number): boolean {
  return unitUs >= US.day;
}

/** How finely a bucket's range is written: seconds for sub-minute buckets, else minutes. */
export function unitPrecision(unitUs: number): TimePrecision {
  return unitUs < US.minute ? 'second' : 'minute';
}

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
 * Zero-fills api-counts rows over the window of `spec` (the API returns only non-empty
 * buckets). Rows outside the computed window (records stamped after "now") are kept, in order,
 * so the chart's totals always equal the API's.
 */
export function zeroFillUsageBuckets(rows: readonly ApiCountsRow[], now: number, spec: SeriesSpec): UsageBucket[] {
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
