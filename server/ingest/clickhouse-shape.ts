/**
 * The ClickHouse-era shape of Supabase logs (projects created since June 2026): one `logs` table
 * whose rows are `id`, `timestamp` (`2026-06-22T09:34:06.215000`, UTC, no offset),
 * `event_message`, `severity_text`, `source` (`edge_logs`, ..., `supavisor_logs`) and
 * `log_attributes`, a map from the record's old `metadata` path (without the `metadata` root,
 * dotted) to a string. This module turns one such row back into a record of the ingest shape
 * the normalizer takes (`normalize.ts`), so a record imported or synced in either shape is
 * stored the same way, and gives the inverse for fakes and tests.
 *
 * The rules (README, "ClickHouse-era exports"):
 * - `metadata` is rebuilt as nested objects from the dotted keys, in the map's key order.
 * - Values are text in ClickHouse; the fields the BigQuery-era records held as numbers,
 *   booleans or arrays are typed back where their schemas had them (TYPED_ATTRIBUTES: every field
 *   the endpoints and the explorer read, status codes and execution times, and the other
 *   non-text fields of each source). Every other value stays text: `latitude`, `postalCode` or
 *   `sql_state_code` look numeric but are text in the old shape too.
 * - A key that is both a value and the prefix of other keys (`request.headers` = "…" beside
 *   `request.headers.host`) keeps both: the value moves into the object as `_value`
 *   (`request.headers._value`), or `__value`, `___value`… when an attribute of that name exists.
 *   Nothing is dropped.
 * - `severity_text` is ClickHouse's copy of the record's level. It fills the source's level
 *   field (SOURCE_FIELDS: `parsed.error_severity` of Postgres, `level` of function, auth,
 *   realtime and storage logs) when the attributes do not carry one; otherwise (the attribute
 *   is there, or the source has no level field) it adds nothing the old shape had, and is not
 *   kept, so both shapes of one record store the same record.
 * - `source` names this app's source (`supavisor_logs` and `pgbouncer_logs` are the pooler's).
 * - The timestamp becomes integer µs (an unreadable one is passed on for the normalizer to report).
 */
import { SOURCE_FIELDS } from '../store/hot-columns.ts';
import { findSource, type SourceInfo, type SourceName } from '../sources.ts';
import { formatIsoMicros, inRange, parseIsoInstant, RECORD_RANGE } from '../time.ts';
import { isObject, pick, setOwn, toIngestShape, type Json, type JsonObject } from '../store/shape.ts';

/** The `source` values of ClickHouse's `logs` table, with the app source each one is stored as. */
export const CLICKHOUSE_SOURCES: Readonly<Record<string, SourceName>> = {
  edge_logs: 'cloudflare.logs.prod',
  postgres_logs: 'postgres.logs',
  function_edge_logs: 'deno-relay-logs',
  function_logs: 'deno-subhosting-events',
  auth_logs: 'gotrue.logs.prod',
  realtime_logs: 'realtime.logs.prod',
  storage_logs: 'storage.logs.prod.2',
  postgrest_logs: 'postgREST.logs.prod',
  // The pooler: Supavisor replaced PgBouncer; both land in the pooler source.
  supavisor_logs: 'pgbouncer.logs.prod',
  pgbouncer_logs: 'pgbouncer.logs.prod',
};

/** The columns of a `logs` row this module reads; any other column is kept as a field of the record. */
const ROW_COLUMNS = new Set(['id', 'timestamp', 'event_message', 'severity_text', 'source', 'log_attributes']);

/**
 * The app source a ClickHouse `source` value (or one of this app's source names or aliases)
 * is stored as; undefined when it names none.
 */
export function sourceOfClickHouse(name: string): SourceInfo | undefined {
  const key = name.trim().toLowerCase();
  // An own key only: `constructor` or `__proto__` must not reach Object.prototype's members.
  return Object.hasOwn(CLICKHOUSE_SOURCES, key) ? findSource(CLICKHOUSE_SOURCES[key]!) : findSource(name);
}

/** The `source` value ClickHouse stores a source's records under (the pooler: `supavisor_logs`). */
export function clickHouseSourceOf(source: SourceInfo): string {
  return source.name === 'pgbouncer.logs.prod' ? 'supavisor_logs' : source.alias;
}

type AttributeType = 'number' | 'boolean' | 'array';

/**
 * Where the BigQuery-era records of each source held numbers, booleans or arrays (their
 * `metadata` paths, dotted): Supabase's schemas for these sources, and what the demo data
 * and the endpoints read (hot-columns.ts: `response.status_code`, `execution_time_ms`; the
 * explorer's status fields `status` and `res.statusCode`).
 */
export const TYPED_ATTRIBUTES: Readonly<Record<SourceName, Readonly<Record<string, AttributeType>>>> = {
  'cloudflare.logs.prod': {
    'response.status_code': 'number',
    'response.origin_time': 'number',
    'request.cf.asn': 'number',
    'request.cf.clientTcpRtt': 'number',
    'request.cf.clientTrustScore': 'number',
    'request.cf.threatScore': 'number',
    'request.cf.edgeRequestKeepAliveStatus': 'number',
    'request.cf.botManagement.score': 'number',
    'request.cf.botManagement.corporateProxy': 'boolean',
    'request.cf.botManagement.staticResource': 'boolean',
    'request.cf.botManagement.verifiedBot': 'boolean',
  },
  'postgres.logs': {
    'parsed.leader_pid': 'number',
    'parsed.process_id': 'number',
    'parsed.query_id': 'number',
    'parsed.session_line_num': 'number',
    'parsed.transaction_id': 'number',
  },
  'deno-relay-logs': { 'response.status_code': 'number', execution_time_ms: 'number' },
  'deno-subhosting-events': {},
  'gotrue.logs.prod': { status: 'number', duration: 'number', 'auth_event.actor_via_sso': 'boolean', metering: 'boolean' },
  'realtime.logs.prod': { 'context.line': 'number', 'context.time': 'number', 'context.pid': 'number', 'context.domain': 'array', 'context.mfa': 'array' },
  'storage.logs.prod.2': { 'res.statusCode': 'number', responseTime: 'number', 'context.pid': 'number' },
  'postgREST.logs.prod': {},
  'pgbouncer.logs.prod': {},
};

// A JSON number written in full: no sign, hex, spaces or Infinity, which Number() would also take.
const NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** A text value typed back as the old shape had it; text that does not read as that type stays text. */
function typed(value: Json, type: AttributeType | undefined): Json {
  if (type === undefined || typeof value !== 'string') return value;
  if (type === 'number') return NUMBER_TEXT.test(value) && Number.isFinite(Number(value)) ? Number(value) : value;
  if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  if (value.startsWith('[')) {
    try {
      const parsed = JSON.parse(value) as Json;
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // Not an array after all: kept as text.
    }
  }
  return value;
}

/** The name a value takes inside an object its key is also the prefix of: `_value`, else one more `_` until no attribute has it. */
function valueKey(prefix: string, keys: ReadonlySet<string>): string {
  let name = '_value';
  while (keys.has(`${prefix}.${name}`)) name = `_${name}`;
  return name;
}

/**
 * Nested objects from dotted keys. A key that is both a value and the prefix of others keeps
 * its value under `valueKey` inside the object (see the module comment), whichever comes first.
 */
export function nestDottedKeys(attributes: Readonly<Record<string, Json>>, typeOf: (key: string) => AttributeType | undefined = () => undefined): JsonObject {
  const keys = new Set(Object.keys(attributes));
  const root: JsonObject = {};
  for (const key of keys) {
    const value = typed(attributes[key] as Json, typeOf(key));
    const parts = key.split('.');
    let node = root;
    for (let i = 0; i < parts.length - 1; i++) {
      const part = parts[i]!;
      const here = Object.hasOwn(node, part) ? node[part] : undefined;
      if (isObject(here)) {
        node = here;
        continue;
      }
      const child: JsonObject = {};
      // A value met on the way down: the key it had is a prefix of this one.
      if (here !== undefined) setOwn(child, valueKey(parts.slice(0, i + 1).join('.'), keys), here);
      setOwn(node, part, child);
      node = child;
    }
    const last = parts[parts.length - 1]!;
    const there = Object.hasOwn(node, last) ? node[last] : undefined;
    if (isObject(there)) setOwn(there, valueKey(key, keys), value);
    else setOwn(node, last, value);
  }
  return root;
}

export type ClickHouseConversion = { source: SourceInfo; record: JsonObject } | { error: string };

/**
 * Whether a parsed record looks like a row of ClickHouse's `logs` table: no `metadata`, and a
 * `log_attributes` or a `severity_text` (columns BigQuery-era records never have). A row whose
 * `source` names no known source is still one, so it is refused for that reason rather than
 * taken for a BigQuery-era record of the import's source.
 */
export function isClickHouseRow(row: unknown): boolean {
  if (!isObject(row) || row.metadata !== undefined) return false;
  return row.log_attributes !== undefined || row.severity_text !== undefined;
}

/**
 * One row of ClickHouse's `logs` table as a record of the ingest shape (see the module comment
 * for the rules). `source` overrides the row's own `source` (a sync asks for one source and does
 * not select it). `log_attributes` may be an object or its JSON text (a CSV cell).
 */
export function fromClickHouseRow(row: unknown, source?: SourceInfo): ClickHouseConversion {
  if (!isObject(row)) return { error: 'not a JSON object' };
  let info = source;
  if (!info) {
    if (typeof row.source !== 'string' || row.source === '') return { error: 'no source: a row of the logs table names its source' };
    info = sourceOfClickHouse(row.source);
    if (!info) return { error: `unknown source ${JSON.stringify(row.source).slice(0, 60)}; expected one of ${Object.keys(CLICKHOUSE_SOURCES).join(', ')}` };
  }
  let attributes: Json | undefined = row.log_attributes;
  if (typeof attributes === 'string') {
    if (attributes.trim() === '') attributes = {};
    else {
      try {
        attributes = JSON.parse(attributes) as Json;
      } catch {
        return { error: 'log_attributes is not valid JSON' };
      }
    }
  }
  if (attributes === undefined || attributes === null) attributes = {};
  if (!isObject(attributes)) return { error: 'log_attributes is not a map of keys to values' };

  const types = TYPED_ATTRIBUTES[info.name];
  const metadata = nestDottedKeys(attributes, (key) => (Object.hasOwn(types, key) ? types[key] : undefined));
  const level = SOURCE_FIELDS[info.name].level;
  const severity = typeof row.severity_text === 'string' ? row.severity_text : null;
  if (level && 'at' in level && severity && pick(metadata, level.at) === undefined) setPath(metadata, level.at, severity);

  const record: JsonObject = {};
  if (row.id !== undefined) setOwn(record, 'id', row.id);
  setOwn(record, 'timestamp', timestampOf(row.timestamp));
  if (row.event_message !== undefined) setOwn(record, 'event_message', row.event_message);
  for (const [k, v] of Object.entries(row)) if (!ROW_COLUMNS.has(k)) setOwn(record, k, v);
  setOwn(record, 'metadata', metadata);
  return { source: info, record };
}

/**
 * A `logs` timestamp (no offset: UTC) as µs; anything else as it came, for the normalizer to read
 * or refuse. So is an instant outside the accepted range: as a µs number it would be read by its
 * digit count (before 1973 as milliseconds) and reported as a number the file never held.
 */
function timestampOf(value: Json | undefined): Json {
  if (typeof value !== 'string') return value ?? null;
  const i = parseIsoInstant(value);
  if (!i) return value;
  const us = i.seconds * 1_000_000 + i.micros;
  return inRange(us, RECORD_RANGE) ? us : value;
}

/** Sets a nested path, creating objects on the way (only where nothing is: callers check first). */
function setPath(root: JsonObject, path: readonly string[], value: Json): void {
  let node = root;
  for (const part of path.slice(0, -1)) {
    const here = Object.hasOwn(node, part) ? node[part] : undefined;
    if (isObject(here)) node = here;
    else if (here === undefined) {
      const child: JsonObject = {};
      setOwn(node, part, child);
      node = child;
    } else return; // a value is in the way: the level stays unset rather than displacing it
  }
  setOwn(node, path[path.length - 1]!, value);
}

/** A record's metadata as ClickHouse's dotted attributes: text values, arrays as JSON text. */
export function flattenToAttributes(metadata: Json | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const work: Array<[Json, string]> = [[toIngestShape(metadata), '']];
  for (let task = work.pop(); task; task = work.pop()) {
    const [v, prefix] = task;
    if (isObject(v)) {
      // Pushed in reverse so keys come out in their order.
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) work.push([v[keys[i]!] as Json, prefix ? `${prefix}.${keys[i]}` : keys[i]!]);
      continue;
    }
    const text = typeof v === 'string' ? v : Array.isArray(v) ? JSON.stringify(v) : v === null ? '' : String(v);
    setOwn(out as JsonObject, prefix, text);
  }
  return out;
}

/**
 * The inverse, for fakes and tests: a BigQuery-era record (`id`, `timestamp` in µs,
 * `event_message`, `metadata` in either shape) as a row of ClickHouse's `logs` table, its
 * `severity_text` taken from the source's level field ('' when it has none).
 */
export function toClickHouseRow(record: { id: string; timestamp: number; event_message: string; metadata?: Json }, source: SourceInfo): JsonObject {
  const level = SOURCE_FIELDS[source.name].level;
  const severity = level && 'at' in level ? pick(record.metadata, level.at) : undefined;
  return {
    id: record.id,
    timestamp: formatIsoMicros(record.timestamp).slice(0, -1),
    event_message: record.event_message,
    severity_text: typeof severity === 'string' ? severity : '',
    source: clickHouseSourceOf(source),
    log_attributes: flattenToAttributes(record.metadata),
  };
}
