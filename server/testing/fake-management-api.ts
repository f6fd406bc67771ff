/**
 * A loopback fake of Supabase's Management API analytics endpoint, written from its documented
 * contract (the Supabase CLI's OpenAPI, docs/…; FACTS "Supabase's log surfaces"), for tests and
 * the bench. `GET /v1/projects/{ref}/analytics/endpoints/logs.all?sql=&iso_timestamp_start=&iso_timestamp_end=`:
 *
 * - `Authorization: Bearer <personal access token>`; a token belongs to a user, who may read some
 *   projects. Unknown token: 401. A ref that is not 20 lowercase letters: 400. A project the
 *   user cannot read (or that does not exist): 403.
 * - 60 calls a minute per user, across all their tokens; past that every call is refused with a
 *   429 for a minute (`Retry-After` only when `retryAfterSeconds` is set). `callsPerMinute`
 *   changes the limit; Infinity turns it off (the bench).
 * - The range: none given is the last minute; more than 24 hours is a 400; the ends are rounded
 *   down to the minute. Rows are those with start <= timestamp < end.
 * - Without `sql`: edge logs of the range, newest first. With `sql`: exactly one of the two
 *   page forms the app sends, in the project's dialect, read with a strict regular expression;
 *   anything else is a 400 as the engine would give it (BigQuery: `{code, errors: [{domain,
 *   location, locationType, message, reason}], message, status}`; ClickHouse: a string).
 * - At most 1,000 rows an answer. Answers: `{"result": [...]}`, errors `{"error": ...}` or
 *   `{"message": ...}` (the gateway's 401/403/429).
 *
 * Records are held in the BigQuery-era shape per table (`edge_logs`, ..., `supavisor_logs`), in
 * (timestamp, id) order, found by binary search (the bench holds a million in a table, read from
 * a file: FakeTable), and answered in the project's dialect: BigQuery rows `{id, timestamp (µs), event_message, metadata
 * (query shape)}`, ClickHouse rows `{id, timestamp (text, UTC), event_message, severity_text,
 * log_attributes}` (clickhouse-shape.ts, toClickHouseRow).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CLICKHOUSE_SOURCES, toClickHouseRow } from '../ingest/clickhouse-shape.ts';
import { toQueryShape, type JsonObject } from '../store/shape.ts';
import { sourceInfo } from '../sources.ts';
import { MICROS, parseIsoInstant, systemClock, truncMicros, type Clock } from '../time.ts';

export interface FakeRecord {
  id: string;
  /** µs UTC. */
  timestamp: number;
  event_message: string;
  /** Ingest shape. */
  metadata: JsonObject;
  project?: string;
}

export type FakeDialect = 'bigquery' | 'clickhouse';

/**
 * A table's rows in (timestamp, id) order (ids compared as JavaScript strings), read by
 * position: an array of records (`add`), or rows kept elsewhere (`setTable`).
 */
export interface FakeTable {
  readonly length: number;
  timestamp(i: number): number;
  id(i: number): string;
  /** The rows at positions from .. to - 1. */
  rows(from: number, to: number): FakeRecord[];
}

class ArrayTable implements FakeTable {
  constructor(readonly list: FakeRecord[]) {}
  get length(): number {
    return this.list.length;
  }
  timestamp(i: number): number {
    return this.list[i]!.timestamp;
  }
  id(i: number): string {
    return this.list[i]!.id;
  }
  rows(from: number, to: number): FakeRecord[] {
    return this.list.slice(from, to);
  }
}

/** The first position whose row comes after `(ts, id)`; with id null, the first at or after `ts`. */
function firstAfter(t: FakeTable, ts: number, id: string | null): number {
  let lo = 0;
  let hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const at = t.timestamp(mid);
    if (at < ts || (at === ts && id !== null && t.id(mid) <= id)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface FakeCall {
  /** When it came (the fake's clock, µs). */
  at: number;
  /** The request's path and query as sent. */
  path: string;
  ref: string;
  token: string | null;
  sql: string | null;
  /** The range as sent. */
  startText: string | null;
  endText: string | null;
  /** The range as read (whole minutes). */
  start: number | null;
  end: number | null;
  status: number;
  rows: number;
}

export interface FakeFault {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeOptions {
  clock?: Clock;
  /** Calls a minute per user before every call is refused for a minute (60); Infinity: no limit. */
  callsPerMinute?: number;
  /** Sent as Retry-After on a 429; none by default (the platform's answer does not promise one). */
  retryAfterSeconds?: number;
  /** Waits this long before each answer (ms): a slow remote. */
  delayMs?: number;
  /** The status of a query the engine refuses: 400, or 200 with `{"result": [], "error": ...}`. */
  queryErrorStatus?: 200 | 400;
}

export const FAKE_MAX_ROWS = 1000;
const REF = /^[a-z]{20}$/;
const MINUTE = MICROS.minute;
const TABLES = Object.keys(CLICKHOUSE_SOURCES);

// The two page forms, exactly as the app writes them (server/sync/pages.ts), nothing else.
const STRING = String.raw`'((?:[^'\\]|\\.)*)'`;
const BIGQUERY_SQL = new RegExp(
  String.raw`^select id, timestamp, event_message, metadata from ([a-z_]+) where ` +
    String.raw`(?:timestamp >= timestamp_micros\((\d+)\)|timestamp > timestamp_micros\((\d+)\) or \(timestamp = timestamp_micros\((\d+)\) and id > ${STRING}\))` +
    String.raw` order by timestamp asc, id asc limit (\d+)$`,
);
const CLICKHOUSE_SQL = new RegExp(
  String.raw`^select id, timestamp, event_message, severity_text, log_attributes from logs where source = ${STRING} and ` +
    String.raw`(?:timestamp >= fromUnixTimestamp64Micro\((\d+)\)|\(timestamp > fromUnixTimestamp64Micro\((\d+)\) or \(timestamp = fromUnixTimestamp64Micro\((\d+)\) and id > ${STRING}\)\))` +
    String.raw` order by timestamp asc, id asc limit (\d+)$`,
);

const unescape = (s: string) => s.replace(/\\(.)/g, '$1');

interface Query {
  table: string;
  ts: number;
  /** null: `timestamp >= ts`. */
  id: string | null;
  limit: number;
}

export type ParsedSql = { query: Query } | { problem: string };

/** Reads one of the two page forms of `dialect`; anything else is a problem, as the engine would call it. */
export function parsePageSql(sql: string, dialect: FakeDialect): ParsedSql {
  if (dialect === 'bigquery') {
    const m = BIGQUERY_SQL.exec(sql);
    if (!m) return { problem: `Syntax error: Unexpected query text at [1:1]: ${sql.slice(0, 80)}` };
    const [, table, ge, gt, eq, id, limit] = m;
    if (gt !== undefined && gt !== eq) return { problem: 'Syntax error: the two instants of a keyset page differ' };
    return { query: { table: table!, ts: Number(ge ?? gt), id: gt !== undefined ? unescape(id!) : null, limit: Number(limit) } };
  }
  const m = CLICKHOUSE_SQL.exec(sql);
  if (!m) return { problem: `Code: 62. DB::Exception: Syntax error: failed at position 1 (${JSON.stringify(sql.slice(0, 40))}): expected one of the queries this endpoint allows. (SYNTAX_ERROR)` };
  const [, source, ge, gt, eq, id, limit] = m;
  if (gt !== undefined && gt !== eq) return { problem: 'Code: 62. DB::Exception: the two instants of a keyset page differ. (SYNTAX_ERROR)' };
  return { query: { table: unescape(source!), ts: Number(ge ?? gt), id: gt !== undefined ? unescape(id!) : null, limit: Number(limit) } };
}

function bigQueryError(message: string, reason = 'invalidQuery') {
  return { code: 400, errors: [{ domain: 'global', location: 'q', locationType: 'parameter', message, reason }], message, status: 'INVALID_ARGUMENT' };
}

function byKey(a: FakeRecord, b: FakeRecord): number {
  return a.timestamp - b.timestamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export class FakeManagementApi {
  readonly calls: FakeCall[] = [];
  private readonly tokens = new Map<string, string>();
  private readonly access = new Map<string, Set<string>>();
  private readonly projects = new Map<string, { dialect: FakeDialect; tables: Map<string, FakeTable> }>();
  private readonly usage = new Map<string, { calls: number[]; blockedUntil: number }>();
  private readonly faults: FakeFault[] = [];
  private readonly faultsAt = new Map<number, FakeFault>();
  private server: http.Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();
  readonly clock: Clock;
  delayMs: number;

  constructor(private readonly opts: FakeOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.delayMs = opts.delayMs ?? 0;
  }

  /** A user with a token and the projects they may read. */
  addUser(user: string, token: string, refs: string[]): this {
    this.tokens.set(token, user);
    const set = this.access.get(user) ?? new Set<string>();
    for (const r of refs) set.add(r);
    this.access.set(user, set);
    return this;
  }

  addProject(ref: string, dialect: FakeDialect): this {
    this.projects.set(ref, { dialect, tables: new Map() });
    return this;
  }

  /** Adds records to a table (`edge_logs`, ..., `supavisor_logs`) of a project; they may arrive late (older than ones held). */
  add(ref: string, table: string, records: readonly FakeRecord[]): this {
    const p = this.project(ref);
    const t = p.tables.get(table) ?? new ArrayTable([]);
    if (!(t instanceof ArrayTable)) throw new Error(`${table} of ${ref} was set whole (setTable): records cannot be added to it`);
    t.list.push(...records);
    t.list.sort(byKey);
    p.tables.set(table, t);
    return this;
  }

  /** Sets a table whole: rows the caller keeps, in (timestamp, id) order. */
  setTable(ref: string, table: string, rows: FakeTable): this {
    this.project(ref).tables.set(table, rows);
    return this;
  }

  records(ref: string, table: string): FakeRecord[] {
    const t = this.projects.get(ref)?.tables.get(table);
    return t ? t.rows(0, t.length) : [];
  }

  private project(ref: string): { dialect: FakeDialect; tables: Map<string, FakeTable> } {
    const p = this.projects.get(ref);
    if (!p) throw new Error(`no project ${ref}`);
    return p;
  }

  /** The next calls (that pass the token and rate checks) answer these, in order. */
  failNext(...faults: FakeFault[]): this {
    this.faults.push(...faults);
    return this;
  }

  /** The call numbered `n` (1-based, in `calls`) answers this fault, if it passes the token and rate checks. */
  failAt(n: number, fault: FakeFault): this {
    this.faultsAt.set(n, fault);
    return this;
  }

  get url(): string {
    const a = this.server?.address() as AddressInfo | undefined;
    if (!a) throw new Error('the fake is not listening');
    return `http://127.0.0.1:${a.port}`;
  }

  async listen(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this.url;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}, call?: Omit<FakeCall, 'status' | 'rows'>, rows = 0) => {
      if (call) this.calls.push({ ...call, status, rows });
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
      res.end(text);
    };
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    const url = new URL(req.url ?? '/', 'http://fake');
    if (req.method !== 'GET') return answer(405, { message: `Cannot ${req.method} ${url.pathname}` });
    const m = /^\/v1\/projects\/([^/]+)\/analytics\/endpoints\/logs\.all$/.exec(url.pathname);
    if (!m) return answer(404, { message: `Cannot GET ${url.pathname}`, error: 'Not Found', statusCode: 404 });
    const ref = decodeURIComponent(m[1]!);
    const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const token = auth?.[1] ?? null;
    const sql = url.searchParams.get('sql');
    const startText = url.searchParams.get('iso_timestamp_start');
    const endText = url.searchParams.get('iso_timestamp_end');
    const base = { at: this.clock.now(), path: req.url ?? '', ref, token, sql, startText, endText, start: null as number | null, end: null as number | null };
    const user = token === null ? undefined : this.tokens.get(token);
    if (!user) return answer(401, { message: 'Unauthorized' }, {}, base);

    // The rate limit counts every call of the user that passes the token check.
    const now = this.clock.now();
    const u = this.usage.get(user) ?? { calls: [], blockedUntil: 0 };
    this.usage.set(user, u);
    const retry: Record<string, string> = this.opts.retryAfterSeconds !== undefined ? { 'retry-after': String(this.opts.retryAfterSeconds) } : {};
    if (now < u.blockedUntil) return answer(429, { message: 'ThrottlerException: Too Many Requests' }, retry, base);
    const limit = this.opts.callsPerMinute ?? 60;
    if (Number.isFinite(limit)) {
      u.calls = u.calls.filter((t) => t > now - MINUTE);
      u.calls.push(now);
      if (u.calls.length > limit) {
        u.blockedUntil = now + MINUTE;
        return answer(429, { message: 'ThrottlerException: Too Many Requests' }, retry, base);
      }
    }

    const fault = this.faultsAt.get(this.calls.length + 1) ?? this.faults.shift();
    if (fault) return answer(fault.status, fault.body ?? { error: `fault ${fault.status}` }, fault.headers ?? {}, base);

    if (!REF.test(ref)) return answer(400, { message: ['ref must be a 20-character project ref of lowercase letters'], error: 'Bad Request', statusCode: 400 }, {}, base);
    const project = this.projects.get(ref);
    if (!project || !this.access.get(user)?.has(ref)) {
      return answer(403, { message: 'Your account does not have the necessary privileges to access this endpoint. For more details, refer to our documentation https://supabase.com/docs/guides/platform/access-control' }, {}, base);
    }

    // The range, rounded down to whole minutes; none: the last minute.
    const read = (t: string | null) => {
      if (t === null || t === '') return undefined;
      const i = parseIsoInstant(t);
      return i ? i.seconds * 1_000_000 + i.micros : null;
    };
    const s0 = read(startText);
    const e0 = read(endText);
    if (s0 === null) return answer(400, { error: 'iso_timestamp_start must be an ISO 8601 timestamp' }, {}, base);
    if (e0 === null) return answer(400, { error: 'iso_timestamp_end must be an ISO 8601 timestamp' }, {}, base);
    const end = truncMicros(e0 ?? now, MINUTE);
    const start = truncMicros(s0 ?? end - MINUTE, MINUTE);
    const call = { ...base, start, end };
    if (end < start) return answer(400, { error: 'iso_timestamp_end must not be before iso_timestamp_start' }, {}, call);
    if (end - start > 24 * MICROS.hour) return answer(400, { error: 'the range of iso_timestamp_start to iso_timestamp_end must not be longer than 24 hours' }, {}, call);

    const refuse = (message: string) => {
      const error = project.dialect === 'bigquery' ? bigQueryError(message) : message;
      const status = this.opts.queryErrorStatus ?? 400;
      return answer(status, { result: [], error }, {}, call);
    };
    const empty = new ArrayTable([]);
    if (sql === null || sql === '') {
      // Without sql: edge logs of the range, newest first.
      const t = project.tables.get('edge_logs') ?? empty;
      const to = firstAfter(t, end, null);
      const rows = t.rows(Math.max(firstAfter(t, start, null), to - FAKE_MAX_ROWS), to).reverse();
      return answer(200, { result: rows.map((r) => this.render(r, 'edge_logs', project.dialect)) }, {}, call, rows.length);
    }
    const parsed = parsePageSql(sql, project.dialect);
    if ('problem' in parsed) return refuse(parsed.problem);
    const q = parsed.query;
    if (!TABLES.includes(q.table)) {
      if (project.dialect === 'bigquery') return refuse(`Not found: Table ${q.table} was not found in location US`);
      return answer(200, { result: [] }, {}, call);
    }
    // In the range (start <= timestamp < end) and after the keyset, the first `limit`.
    const t = project.tables.get(q.table) ?? empty;
    const from = Math.max(firstAfter(t, start, null), firstAfter(t, q.ts, q.id));
    const rows = t.rows(from, Math.max(from, Math.min(from + Math.min(q.limit, FAKE_MAX_ROWS), firstAfter(t, end, null))));
    return answer(200, { result: rows.map((r) => this.render(r, q.table, project.dialect)) }, {}, call, rows.length);
  }

  private render(r: FakeRecord, table: string, dialect: FakeDialect): JsonObject {
    if (dialect === 'bigquery') return { id: r.id, timestamp: r.timestamp, event_message: r.event_message, metadata: toQueryShape(r.metadata) };
    const { source: _source, ...row } = toClickHouseRow(r, sourceInfo(CLICKHOUSE_SOURCES[table]!));
    return row;
  }
}
