/**
 * The endpoints as data, like Logflare's endpoint records: name, a stable UUID (the same on
 * every install), the SQL file, declared parameters and the cache settings of the spec.
 * Adding an endpoint means adding one .sql file and one entry here.
 */
import fs from 'node:fs';

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

export interface EndpointDefinition {
  name: string;
  id: string;
  description: string;
  sql: string;
  params: readonly ParamSpec[];
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
}

const sql = (file: string) => fs.readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');

export const ENDPOINTS: readonly EndpointDefinition[] = [
  {
    name: 'functions.invocation-stats',
    id: '0ed7f98d-cc03-4b78-adee-f96fdc5d27a6',
    description: 'Per time bucket: invocations, errors and execution-time aggregates of a project’s edge functions.',
    sql: sql('functions.invocation-stats.sql'),
    params: [
      { name: 'project', required: true, kind: 'text', description: 'Project ref.' },
      { name: 'function_id', required: false, kind: 'text', default: '', description: 'One function id; empty = all functions.' },
      {
        name: 'interval',
        required: true,
        kind: 'lenient-choice',
        allowed: ['5min', '15min', '1hr', '1day', '7day'],
        fallback: '1day',
        description: 'Window and bucket size; any other value behaves as 1day.',
      },
    ],
    maxRows: 1000,
    cacheSeconds: 900,
    warmSeconds: 300,
    sandboxable: false,
    speedPath: 'partitioned-invocation-stats',
  },
  {
    name: 'logs.all',
    id: '15930e07-5833-4bd5-8c05-3e02145fb068',
    description: 'The newest edge request logs of a project, within the tier’s retention and an optional time range.',
    sql: sql('logs.all.sql'),
    params: [
      { name: 'project', required: true, kind: 'text', description: 'Project ref.' },
      {
        name: 'project_tier',
        required: true,
        kind: 'lenient-choice',
        allowed: ['FREE', 'PRO', 'PAYG', 'ENTERPRISE'],
        fallback: 'FREE',
        description: 'Retention: FREE 1 day, PRO 7 days, PAYG/ENTERPRISE 90 days; any other value is FREE.',
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
  },
  {
    name: 'usage.api-counts',
    id: '1b3e6ece-f6db-452b-8008-dc4692685640',
    description: 'Per time bucket: REST, storage, auth and realtime request counts of URLs matching a pattern.',
    sql: sql('usage.api-counts.sql'),
    params: [
      { name: 'project', required: true, kind: 're2', description: 'RE2 pattern matched anywhere in the request URL.' },
      {
        name: 'interval',
        required: true,
        kind: 'choice',
        allowed: ['hourly', 'daily', 'minutely'],
        description: 'hourly: last hour by hour; daily: last 7 days by day; minutely: last 60 minutes by minute.',
      },
    ],
    maxRows: 1000,
    cacheSeconds: 900,
    warmSeconds: 300,
    sandboxable: false,
    speedPath: 'partitioned-api-counts',
  },
];

/** Finds an endpoint by name or UUID. */
export function findEndpoint(nameOrId: string, registry: readonly EndpointDefinition[] = ENDPOINTS): EndpointDefinition | undefined {
  const key = nameOrId.toLowerCase();
  return registry.find((e) => e.name === nameOrId || e.id === key);
}
