/**
 * Bucket series of the two bucketed endpoints (queries/*.sql), computed from the server's
 * "now" exactly as the SQL does, so the UI can label bucket ranges and zero-fill gaps. The
 * windows and bucket units are the registry's, read from `GET /api/endpoints`
 * (api/rules.ts) and passed in: nothing here restates them.
 */
import type { ApiCountsRow } from '../../../contract/api-types.ts';
import { formatDatetime, MICROS, parseIsoMicros, truncMicros } from '../../../contract/instants.ts';
import { API_FAMILIES, type ApiFamilyKey } from '../../../contract/registry.ts';
import type { TimePrecision } from './time.ts';

export interface SeriesSpec {
  /** Window length looked back from now, µs. */
  span: number;
  /** Bucket width, µs. */
  unit: number;
}

/** A bucketed endpoint's windows, as the registry lists them (api/rules.ts builds this). */
export interface SeriesRules {
  /** The parameter that names the interval. */
  param: string;
  /** Window and bucket unit per interval name. */
  windows: Readonly<Record<string, SeriesSpec>>;
  /** The interval any other name behaves as; absent when other names are refused. */
  fallback?: string;
}

/** The window an interval name gets under the rules: its own, else the fallback's (as the server answers it). */
export function seriesOf(rules: SeriesRules, interval: string): SeriesSpec | undefined {
  return rules.windows[interval] ?? (rules.fallback !== undefined ? rules.windows[rules.fallback] : undefined);
}

/** `5 min`, `1 hour`, `7 days`: an interval's label, from its window. */
export function spanLabel(us: number): string {
  for (const [unit, one, many] of [
    [MICROS.day, 'day', 'days'],
    [MICROS.hour, 'hour', 'hours'],
    [MICROS.minute, 'min', 'min'],
    [MICROS.second, 's', 's'],
  ] as const) {
    if (us >= unit && us % unit === 0) return `${us / unit} ${us === unit ? one : many}`;
  }
  return `${us} µs`;
}

/** `second`, `minute`, `hour`, `day`: the bucket unit in words ("per hour"). */
export function unitName(unitUs: number): string {
  if (unitUs >= MICROS.day && unitUs % MICROS.day === 0) return unitUs === MICROS.day ? 'day' : `${unitUs / MICROS.day} days`;
  if (unitUs >= MICROS.hour && unitUs % MICROS.hour === 0) return unitUs === MICROS.hour ? 'hour' : `${unitUs / MICROS.hour} hours`;
  if (unitUs >= MICROS.minute && unitUs % MICROS.minute === 0) return unitUs === MICROS.minute ? 'minute' : `${unitUs / MICROS.minute} minutes`;
  return unitUs === MICROS.second ? 'second' : `${unitUs / MICROS.second} seconds`;
}

/** Day buckets are UTC days (trunc from the epoch): labels must say so, and name them in UTC. */
export function isUtcDayUnit(unitUs: number): boolean {
  return unitUs >= MICROS.day;
}

/** How finely a bucket's range is written: seconds for sub-minute buckets, else minutes. */
export function unitPrecision(unitUs: number): TimePrecision {
  return unitUs < MICROS.minute ? 'second' : 'minute';
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

/** Requests per API family (contract/registry.ts, API_FAMILIES). */
export type UsageTotals = Record<ApiFamilyKey, number>;

export interface UsageBucket extends UsageTotals {
  /** Bucket start, µs. */
  start: number;
  /** The API's `YYYY-MM-DDTHH:MM:SS` label (also for filled buckets). */
  timestamp: string;
  /** True when the API returned no row for this bucket. */
  filled: boolean;
}

const noRequests = (): UsageTotals => Object.fromEntries(API_FAMILIES.map((f) => [f.key, 0])) as UsageTotals;

/** Adds a row's count of each family to `into`. */
function addRow(into: UsageTotals, row: ApiCountsRow): void {
  for (const f of API_FAMILIES) into[f.key] += row[f.column];
}

/**
 * Zero-fills api-counts rows over the window of `spec` (the API returns only non-empty
 * buckets). Rows outside the computed window (records stamped after "now") are kept, in order,
 * so the chart's totals always equal the API's.
 */
export function zeroFillUsageBuckets(rows: readonly ApiCountsRow[], now: number, spec: SeriesSpec): UsageBucket[] {
  const byStart = new Map<number, UsageBucket>();
  for (const start of bucketStarts(now, spec)) {
    byStart.set(start, { start, timestamp: formatDatetime(start), ...noRequests(), filled: true });
  }
  for (const row of rows) {
    const start = parseIsoMicros(row.timestamp);
    if (start === undefined) continue;
    const existing = byStart.get(start);
    if (existing && !existing.filled) {
      addRow(existing, row);
    } else {
      const bucket: UsageBucket = { start, timestamp: row.timestamp, ...noRequests(), filled: false };
      addRow(bucket, row);
      byStart.set(start, bucket);
    }
  }
  return [...byStart.values()].sort((a, b) => a.start - b.start);
}

/** Per-family sums of the API rows. */
export function usageTotals(rows: readonly ApiCountsRow[]): UsageTotals {
  const t = noRequests();
  for (const r of rows) addRow(t, r);
  return t;
}

/** The bucket a chart event points at: recharts gives its index as a number or a string (null: none). */
export function chartBucketIndex(raw: unknown): number | null {
  const i = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : NaN;
  return Number.isInteger(i) && i >= 0 ? i : null;
}
