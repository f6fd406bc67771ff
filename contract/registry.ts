/**
 * The endpoints' rules the server and the page share: the endpoint names, the intervals of the
 * bucketed endpoints (window and bucket unit each), logs.all's tiers and their retention, the
 * error rule, and the API families usage.api-counts counts. The registry entries
 * (queries/registry.ts) bind these into the SQL and the speed paths; the page keeps the names in
 * its URLs and reads the numbers here or from `GET /api/endpoints`, never from a copy.
 */
import { MICROS } from './instants.ts';

export const INVOCATION_STATS = 'functions.invocation-stats';
export const LOGS_ALL = 'logs.all';
export const API_COUNTS = 'usage.api-counts';

export type ParamKind =
  /** Any non-empty text. */
  | 'text'
  /** One of `allowed`; other values are accepted and behave as `fallback`. */
  | 'lenient-choice'
  /** One of `allowed`; other values are a 400. */
  | 'choice'
  /** An ISO 8601 instant, bound as integer microseconds. */
  | 'iso-timestamp'
  /** An RE2 pattern, checked before the query runs. */
  | 're2';

/** One interval of a bucketed endpoint. */
export interface IntervalWindow {
  /** How far back from now the window reaches, µs. */
  spanUs: number;
  /** Bucket width, µs: a record belongs to the bucket trunc(ts, unitUs). */
  unitUs: number;
}

/** The windows an interval parameter chooses between; bound as @span_us and @unit_us. */
export interface IntervalRules {
  /** The declared parameter that names the interval. */
  param: string;
  windows: Readonly<Record<string, IntervalWindow>>;
  /** The interval any other value behaves as (a lenient choice); absent: others are a 400. */
  fallback?: string;
}

export interface TierRule {
  /** Records strictly newer than now − retentionUs are visible. */
  retentionUs: number;
}

/** The retention a tier parameter chooses; bound as @retention_us. */
export interface TierRules {
  /** The declared parameter that names the tier. */
  param: string;
  tiers: Readonly<Record<string, TierRule>>;
  /** The tier any other value behaves as. */
  fallback: string;
}

/** Which records count as errors; bound as @error_status_at_least. */
export interface ErrorRule {
  /** A status code at least this is an error (a record without one is not). */
  statusAtLeast: number;
}

/**
 * The error rule of every endpoint that counts errors. One constant, not a per-entry choice:
 * the rollups count errors with it at import time, so the SQL and the speed paths must use the
 * very same rule.
 */
export const ERROR_RULE: Readonly<ErrorRule> = { statusAtLeast: 400 };

/** functions.invocation-stats: buckets from trunc(now − span, unit) to trunc(now, unit). */
export const INVOCATION_STATS_INTERVALS = {
  param: 'interval',
  windows: {
    '5min': { spanUs: 5 * MICROS.minute, unitUs: MICROS.second },
    '15min': { spanUs: 15 * MICROS.minute, unitUs: MICROS.minute },
    '1hr': { spanUs: MICROS.hour, unitUs: MICROS.minute },
    '1day': { spanUs: MICROS.day, unitUs: MICROS.hour },
    '7day': { spanUs: 7 * MICROS.day, unitUs: MICROS.day },
  },
  fallback: '1day',
} as const satisfies IntervalRules;

/** usage.api-counts: records at or after now − span, by trunc(ts, unit). */
export const API_COUNTS_INTERVALS = {
  param: 'interval',
  windows: {
    hourly: { spanUs: MICROS.hour, unitUs: MICROS.hour },
    daily: { spanUs: 7 * MICROS.day, unitUs: MICROS.day },
    minutely: { spanUs: MICROS.hour, unitUs: MICROS.minute },
  },
} as const satisfies IntervalRules;

/** logs.all: retention per tier. */
export const LOGS_ALL_TIERS = {
  param: 'project_tier',
  tiers: {
    FREE: { retentionUs: MICROS.day },
    PRO: { retentionUs: 7 * MICROS.day },
    PAYG: { retentionUs: 90 * MICROS.day },
    ENTERPRISE: { retentionUs: 90 * MICROS.day },
  },
  fallback: 'FREE',
} as const satisfies TierRules;

export type FunctionInterval = keyof typeof INVOCATION_STATS_INTERVALS.windows;
export type UsageInterval = keyof typeof API_COUNTS_INTERVALS.windows;
export type Tier = keyof typeof LOGS_ALL_TIERS.tiers;

/** The keys of a rule table, in the order it states them (the order pickers list them in). */
const keysOf = <K extends string>(table: Readonly<Record<K, unknown>>): readonly K[] => Object.keys(table) as K[];

/** functions.invocation-stats' intervals, shortest first. */
export const FUNCTION_INTERVALS: readonly FunctionInterval[] = keysOf(INVOCATION_STATS_INTERVALS.windows);
/** The longest RE2 pattern a request may carry (an endpoint's parameter or the explorer's search). */
export const MAX_PATTERN_LENGTH = 2048;
/** The most rows one page of the explorer's `/api/logs` may ask for (its `limit`). */
export const EXPLORER_MAX_LIMIT = 1000;

/** usage.api-counts' intervals, in the registry's order. */
export const USAGE_INTERVALS: readonly UsageInterval[] = keysOf(API_COUNTS_INTERVALS.windows);
/** logs.all's tiers, shortest retention first. */
export const TIERS: readonly Tier[] = keysOf(LOGS_ALL_TIERS.tiers);

export function isTier(name: string): name is Tier {
  return (TIERS as readonly string[]).includes(name);
}

/**
 * The API families usage.api-counts counts: a request whose path contains `path` counts in the
 * family (in every family whose string it contains). `bit` is the family's bit in the stored
 * `families` column (and in the SQL's `families & bit`), `column` its result column.
 */
export interface ApiFamily {
  key: string;
  label: string;
  path: string;
  bit: number;
  column: string;
}

export const API_FAMILIES = [
  { key: 'rest', label: 'REST', path: '/rest', bit: 1, column: 'total_rest_requests' },
  { key: 'storage', label: 'Storage', path: '/storage', bit: 2, column: 'total_storage_requests' },
  { key: 'auth', label: 'Auth', path: '/auth', bit: 4, column: 'total_auth_requests' },
  { key: 'realtime', label: 'Realtime', path: '/realtime', bit: 8, column: 'total_realtime_requests' },
] as const satisfies readonly ApiFamily[];

export type ApiFamilyKey = (typeof API_FAMILIES)[number]['key'];
export type ApiFamilyColumn = (typeof API_FAMILIES)[number]['column'];

/** The family bits a request path holds (a path can hold several). */
export function familiesOf(path: string): number {
  let bits = 0;
  for (const f of API_FAMILIES) if (path.includes(f.path)) bits |= f.bit;
  return bits;
}
