/**
 * The endpoints as data, like Logflare's endpoint records: name, a stable UUID (the same on
 * every install), the SQL file, declared parameters, the cache settings of the spec, and the
 * rules the SQL and the speed paths share (windows, bucket units, tier retention, row cut,
 * error rule). The rules' values are the shared ones (contract/registry.ts, which the page reads
 * too); an entry names which apply to it: the server binds them into the SQL as parameters, the
 * speed paths read the same bound values, and `GET /api/endpoints` lists them. Data only (no file
 * reading, no Node modules): the server loads the SQL files (server/endpoints/sql-files.ts).
 * Adding an endpoint means adding one .sql file and one entry.
 */
import {
  API_COUNTS,
  API_COUNTS_INTERVALS,
  ERROR_RULE,
  INVOCATION_STATS,
  INVOCATION_STATS_INTERVALS,
  LOGS_ALL,
  LOGS_ALL_TIERS,
  type ErrorRule,
  type IntervalRules,
  type ParamKind,
  type TierRules,
} from '../contract/registry.ts';
import { MICROS } from '../contract/instants.ts';

export { ERROR_RULE, type IntervalRules };

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
  for (const [unit, name] of [[MICROS.day, 'day'], [MICROS.hour, 'hour'], [MICROS.minute, 'minute'], [MICROS.second, 'second']] as const) {
    if (us % unit === 0) return us === unit ? `1 ${name}` : `${us / unit} ${name}s`;
  }
  return `${us} µs`;
}

/** "hour" for a one-hour unit, else the span. */
const unitText = (us: number) => spanText(us).replace(/^1 /, '');

export const ENDPOINTS: readonly EndpointDefinition[] = [
  {
    name: INVOCATION_STATS,
    id: '0ed7f98d-cc03-4b78-adee-f96fdc5d27a6',
    description: 'Per time bucket: invocations, errors and execution-time aggregates of a project’s edge functions.',
    sqlFile: 'functions.invocation-stats.sql',
    params: [
      { name: 'project', required: true, kind: 'text', description: 'Project ref.' },
      { name: 'function_id', required: false, kind: 'text', default: '', description: 'One function id; empty = all functions.' },
      {
        name: INVOCATION_STATS_INTERVALS.param,
        required: true,
        kind: 'lenient-choice',
        allowed: Object.keys(INVOCATION_STATS_INTERVALS.windows),
        fallback: INVOCATION_STATS_INTERVALS.fallback,
        description: `Window and bucket size (${Object.entries(INVOCATION_STATS_INTERVALS.windows)
          .map(([k, w]) => `${k}: ${spanText(w.spanUs)} by ${unitText(w.unitUs)}`)
          .join('; ')}); any other value behaves as ${INVOCATION_STATS_INTERVALS.fallback}.`,
      },
    ],
    maxRows: 1000,
    cacheSeconds: 900,
    warmSeconds: 300,
    sandboxable: false,
    speedPath: 'partitioned-invocation-stats',
    intervals: INVOCATION_STATS_INTERVALS,
    errorRule: ERROR_RULE,
  },
  {
    name: LOGS_ALL,
    id: '15930e07-5833-4bd5-8c05-3e02145fb068',
    description: 'The newest edge request logs of a project, within the tier’s retention and an optional time range.',
    sqlFile: 'logs.all.sql',
    params: [
      { name: 'project', required: true, kind: 'text', description: 'Project ref.' },
      {
        name: LOGS_ALL_TIERS.param,
        required: true,
        kind: 'lenient-choice',
        allowed: Object.keys(LOGS_ALL_TIERS.tiers),
        fallback: LOGS_ALL_TIERS.fallback,
        description: `Retention: ${Object.entries(LOGS_ALL_TIERS.tiers)
          .map(([k, t]) => `${k} ${spanText(t.retentionUs)}`)
          .join(', ')}; any other value is ${LOGS_ALL_TIERS.fallback}.`,
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
    tiers: LOGS_ALL_TIERS,
    rows: 100,
  },
  {
    name: API_COUNTS,
    id: '1b3e6ece-f6db-452b-8008-dc4692685640',
    description: 'Per time bucket: REST, storage, auth and realtime request counts of URLs matching a pattern.',
    sqlFile: 'usage.api-counts.sql',
    params: [
      { name: 'project', required: true, kind: 're2', description: 'RE2 pattern matched anywhere in the request URL.' },
      {
        name: API_COUNTS_INTERVALS.param,
        required: true,
        kind: 'choice',
        allowed: Object.keys(API_COUNTS_INTERVALS.windows),
        description: Object.entries(API_COUNTS_INTERVALS.windows)
          .map(([k, w]) => `${k}: last ${spanText(w.spanUs)} by ${unitText(w.unitUs)}`)
          .join('; ') + '.',
      },
    ],
    maxRows: 1000,
    cacheSeconds: 900,
    warmSeconds: 300,
    sandboxable: false,
    speedPath: 'partitioned-api-counts',
    intervals: API_COUNTS_INTERVALS,
  },
];

/** Finds an endpoint by name or UUID. */
export function findEndpoint(nameOrId: string, registry: readonly EndpointDefinition[] = ENDPOINTS): EndpointDefinition | undefined {
  const key = nameOrId.toLowerCase();
  return registry.find((e) => e.name === nameOrId || e.id === key);
}
