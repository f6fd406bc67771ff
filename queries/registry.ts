/**
 * The endpoints as data, like Logflare's endpoint records: name, a stable UUID (the same on
 * every install), the SQL file, declared parameters, the cache settings of the spec, and the
 * rules the SQL and the speed paths share (windows, bucket units, tier retention, row cut,
 * error rule). This is the one place those rules are stated: the server binds them into the SQL
 * as parameters, the speed paths read the same bound values, and `GET /api/endpoints` lists them
 * for the renderer. Data only (no file reading, no Node modules): the server loads the SQL files
 * (server/endpoints/sql-files.ts). Adding an endpoint means adding one .sql file and one entry.
 */

/** Microseconds, the unit of every instant and span the endpoints bind. */
const SECOND_US = 1_000_000;
const MINUTE_US = 60 * SECOND_US;
const HOUR_US = 60 * MINUTE_US;
const DAY_US = 24 * HOUR_US;

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

export interface ParamSpec {
  name: string;
  required: boolean;
  kind: ParamKind;
  description: string;
  allowed?: readonly string[];
  /** For lenient choices: the value other inputs behave as. */
  fallback?: string;
  /** Bound when the parameter is absent or empty. */
  default?: string;
  /** The SQL parameter it binds to, when it differs from the name. */
  bindAs?: string;
}

/**
 * A way to answer an endpoint over the partitioned store without running its SQL; the server
 * holds one implementation per name, and the property tests hold it to the SQL's reference.
 */
export type SpeedPathName = 'partitioned-invocation-stats' | 'partitioned-logs-all' | 'partitioned-api-counts';

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
 * the rollups count errors with it at import time (server/store/rollups.ts), so the SQL and
 * the speed paths must use the very same rule.
 */
export const ERROR_RULE: Readonly<ErrorRule> = { statusAtLeast: 400 };

export interface EndpointDefinition {
  name: string;
  id: string;
  description: string;
  /** The definition's file in queries/, loaded by the server (server/endpoints/sql-files.ts). */
  sqlFile: string;
  /** SQL text given directly instead of the file (definitions built in code, such as tests'). */
  sql?: string;
  params: readonly ParamSpec[];
  /** Rows an answer is cut to after the endpoint's own rules (`rows`). */
  maxRows: number;
  /** 0 = never cached. */
  cacheSeconds: number;
  /** How often a live cache entry is recomputed in the background; 0 = never. */
  warmSeconds: number;
  sandboxable: boolean;
  /** Result columns holding JSON text, returned as parsed values. */
  jsonColumns?: readonly string[];
  /**
   * A column holding a whole record as JSON text, replaced by these of its fields (in this
   * order; `timestamp` always comes from the row).
   */
  recordColumn?: { column: string; fields: readonly string[] };
  /** How requests are answered; the SQL stays the definition either way. */
  speedPath?: SpeedPathName;
  /** Windows and bucket units per interval. */
  intervals?: IntervalRules;
  /** Retention per tier. */
  tiers?: TierRules;
  /** The endpoint's own row cut (logs.all's newest 100); bound as @rows. */
  rows?: number;
  /** Present on endpoints that count errors. */
  errorRule?: Readonly<ErrorRule>;
}

/** "1 day", "7 days", "1 hour": descriptions say what the data says. */
function spanText(us: number): string {
  for (const [unit, name] of [[DAY_US, 'day'], [HOUR_US, 'hour'], [MINUTE_US, 'minute'], [SECOND_US, 'second']] as const) {
    if (us % unit === 0) return us === unit ? `1 ${name}` : `${us / unit} ${name}s`;
  }
  return `${us} µs`;
}

/** "hour" for a one-hour unit, else the span. */
const unitText = (us: number) => spanText(us).replace(/^1 /, '');

/** functions.invocation-stats: buckets from trunc(now − span, unit) to trunc(now, unit). */
const STATS_INTERVALS: IntervalRules = {
  param: 'interval',
  windows: {
    '5min': { spanUs: 5 * MINUTE_US, unitUs: SECOND_US },
    '15min': { spanUs: 15 * MINUTE_US, unitUs: MINUTE_US },
    '1hr': { spanUs: HOUR_US, unitUs: MINUTE_US },
    '1day': { spanUs: DAY_US, unitUs: HOUR_US },
    '7day': { spanUs: 7 * DAY_US, unitUs: DAY_US },
  },
  fallback: '1day',
};

/** usage.api-counts: records at or after now − span, by trunc(ts, unit). */
const API_INTERVALS: IntervalRules = {
  param: 'interval',
  windows: {
    hourly: { spanUs: HOUR_US, unitUs: HOUR_US },
    daily: { spanUs: 7 * DAY_US, unitUs: DAY_US },
    minutely: { spanUs: HOUR_US, unitUs: MINUTE_US },
  },
};

/** logs.all: retention per tier. */
const LOGS_TIERS: TierRules = {
  param: 'project_tier',
  tiers: {
    FREE: { retentionUs: DAY_US },
    PRO: { retentionUs: 7 * DAY_US },
    PAYG: { retentionUs: 90 * DAY_US },
    ENTERPRISE: { retentionUs: 90 * DAY_US },
  },
  fallback: 'FREE',
};

export const ENDPOINTS: readonly EndpointDefinition[] = [
  {
    name: 'functions.invocation-stats',
    id: '0ed7f98d-cc03-4b78-adee-f96fdc5d27a6',
    description: 'Per time bucket: invocations, errors and execution-time aggregates of a project’s edge functions.',
    sqlFile: 'functions.invocation-stats.sql',
    params: [
      { name: 'project', required: true, kind: 'text', description: 'Project ref.' },
      { name: 'function_id', required: false, kind: 'text', default: '', description: 'One function id; empty = all functions.' },
      {
        name: STATS_INTERVALS.param,
        required: true,
        kind: 'lenient-choice',
        allowed: Object.keys(STATS_INTERVALS.windows),
        fallback: STATS_INTERVALS.fallback,
        description: `Window and bucket size (${Object.entries(STATS_INTERVALS.windows)
          .map(([k, w]) => `${k}: ${spanText(w.spanUs)} by ${unitText(w.unitUs)}`)
          .join('; ')}); any other value behaves as ${STATS_INTERVALS.fallback}.`,
      },
    ],
    maxRows: 1000,
    cacheSeconds: 900,
    warmSeconds: 300,
    sandboxable: false,
    speedPath: 'partitioned-invocation-stats',
    intervals: STATS_INTERVALS,
    errorRule: ERROR_RULE,
  },
  {
    name: 'logs.all',
    id: '15930e07-5833-4bd5-8c05-3e02145fb068',
    description: 'The newest edge request logs of a project, within the tier’s retention and an optional time range.',
    sqlFile: 'logs.all.sql',
    params: [
      { name: 'project', required: true, kind: 'text', description: 'Project ref.' },
      {
        name: LOGS_TIERS.param,
        required: true,
        kind: 'lenient-choice',
        allowed: Object.keys(LOGS_TIERS.tiers),
        fallback: LOGS_TIERS.fallback,
        description: `Retention: ${Object.entries(LOGS_TIERS.tiers)
          .map(([k, t]) => `${k} ${spanText(t.retentionUs)}`)
          .join(', ')}; any other value is ${LOGS_TIERS.fallback}.`,
      },
      { name: 'iso_timestamp_start', required: false, kind: 'iso-timestamp', bindAs: 'start', description: 'Exclusive lower bound (ISO 8601).' },
      { name: 'iso_timestamp_end', required: false, kind: 'iso-timestamp', bindAs: 'end', description: 'Inclusive upper bound (ISO 8601).' },
    ],
    maxRows: 1000,
    cacheSeconds: 0,
    warmSeconds: 0,
    sandboxable: false,
    recordColumn: { column: 'record', fields: ['id', 'timestamp', 'event_message', 'metadata'] },
    speedPath: 'partitioned-logs-all',
    tiers: LOGS_TIERS,
    rows: 100,
  },
  {
    name: 'usage.api-counts',
    id: '1b3e6ece-f6db-452b-8008-dc4692685640',
    description: 'Per time bucket: REST, storage, auth and realtime request counts of URLs matching a pattern.',
    sqlFile: 'usage.api-counts.sql',
    params: [
      { name: 'project', required: true, kind: 're2', description: 'RE2 pattern matched anywhere in the request URL.' },
      {
        name: API_INTERVALS.param,
        required: true,
        kind: 'choice',
        allowed: Object.keys(API_INTERVALS.windows),
        description: Object.entries(API_INTERVALS.windows)
          .map(([k, w]) => `${k}: last ${spanText(w.spanUs)} by ${unitText(w.unitUs)}`)
          .join('; ') + '.',
      },
    ],
    maxRows: 1000,
    cacheSeconds: 900,
    warmSeconds: 300,
    sandboxable: false,
    speedPath: 'partitioned-api-counts',
    intervals: API_INTERVALS,
  },
];

/** Finds an endpoint by name or UUID. */
export function findEndpoint(nameOrId: string, registry: readonly EndpointDefinition[] = ENDPOINTS): EndpointDefinition | undefined {
  const key = nameOrId.toLowerCase();
  return registry.find((e) => e.name === nameOrId || e.id === key);
}
