/**
 * The ClickHouse-era export shape through real imports: one record set
 * written as BigQuery-era per-source NDJSON files and as rows of ClickHouse's `logs` table (NDJSON,
 * JSON array, `{"result": [...]}`, CSV with the map as JSON text, CSV with one column per dotted
 * key; sources mixed in one file), imported into separate stores: every endpoint and explorer
 * answer must be equal. The rows are written here by a small flattener of our own, not by
 * clickhouse-shape.ts, so the comparison does not lean on the code it tests. Also: per-source
 * counts of a mixed file, bad rows reported by line with the good ones kept, a source given
 * against rows naming another, and a failed mixed import keeping nothing in any source.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appOver, NOW, storeKeeper, type TestApp } from '../testing/fixtures.ts';
import { MICROS } from '../time.ts';
import { ImportFailure, importStream, type ImportOptions, type ImportReport } from './import.ts';
import type { LogStore } from '../store/log-store.ts';

const keeper = storeKeeper('le-clickhouse-');
afterEach(() => keeper.cleanup());

const P = 'abcdefghijklmnopqrst';
const { second: SEC, minute: MIN, hour: HOUR, day: DAY } = MICROS;

type Meta = { [key: string]: unknown };
interface Rec {
  id: string;
  timestamp: number;
  project?: string;
  event_message: string;
  metadata: Meta;
}
/** One record of the set: its BigQuery-era form, its source (alias, and the ClickHouse `source` value) and ClickHouse's severity_text. */
interface Item {
  alias: string;
  chSource: string;
  severity: string;
  rec: Rec;
  /** Attribute keys the ClickHouse row leaves out (severity_text stands for them). */
  omit?: string[];
}

/** A fixed sequence, so the set is the same on every run: r(n) is an integer in [0, n). */
function lcg(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return Math.floor((s / 2 ** 31) * n);
  };
}

/** The record set: edge, function edge, function runtime, auth, Postgres and pooler records over the last 9 days. */
function recordSet(): Item[] {
  const r = lcg(7);
  const items: Item[] = [];
  // Offsets before NOW: the last minutes (5min stats, minutely counts), the last hour, the last day, the last week, and older.
  const offset = (i: number) => {
    const spans = [4 * MIN, 14 * MIN, 58 * MIN, 23 * HOUR, 6 * DAY, 9 * DAY];
    return 1 + r(spans[i % spans.length]!) + r(997);
  };
  const used = new Set<number>();
  // Timestamps unique within the whole set: ties would leave the order between them to the store.
  const ts = (i: number) => {
    let t = NOW - offset(i);
    while (used.has(t)) t -= 1;
    used.add(t);
    return t;
  };

  const paths = ['/rest/v1/todos', '/auth/v1/token', '/storage/v1/object/public/a.png', '/realtime/v1/websocket', '/functions/v1/hello', '/rest/v1/rpc/auth_check', '/graphql/v1'];
  const methods = ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'];
  const statuses = [200, 200, 201, 204, 301, 400, 401, 404, 500, 503];
  for (let i = 0; i < 60; i++) {
    const path = paths[r(paths.length)]!;
    const method = methods[r(methods.length)]!;
    const status = statuses[r(statuses.length)]!;
    const url = `https://${P}.supabase.co${path}?select=*&n=${i}`;
    items.push({
      alias: 'edge_logs',
      chSource: 'edge_logs',
      severity: status >= 500 ? 'ERROR' : 'INFO',
      rec: {
        id: `edge-${i}`,
        timestamp: ts(i),
        project: P,
        event_message: `${method} | ${status} | ${url}`,
        metadata: {
          request: { method, url, path, host: `${P}.supabase.co`, headers: { user_agent: 'curl/8.0', x_client_info: 'supabase-js/2' }, cf: { country: ['DE', 'US', 'BR'][r(3)], asn: 3320 + r(5) } },
          response: { status_code: status, origin_time: r(400) / 4 },
        },
      },
    });
  }

  const fns = ['fn-a', 'fn-b', 'fn-c'];
  for (let i = 0; i < 45; i++) {
    const status = statuses[r(statuses.length)]!;
    const fn = fns[r(fns.length)]!;
    const meta: Meta = {
      project_ref: P,
      function_id: fn,
      deployment_id: `${fn}_1`,
      request: { method: methods[r(2)], url: `https://${P}.supabase.co/functions/v1/${fn}?i=${i}` },
      response: { status_code: status },
    };
    // Some invocations have no execution time: they count but stay out of the aggregates.
    if (i % 7 !== 3) meta.execution_time_ms = r(5) === 0 ? r(2000) + 0.5 : r(300);
    items.push({ alias: 'function_edge_logs', chSource: 'function_edge_logs', severity: status >= 500 ? 'ERROR' : 'INFO', rec: { id: `fe-${i}`, timestamp: ts(i), event_message: `POST | ${status} | ${fn}`, metadata: meta } });
  }

  const levels = ['info', 'warning', 'error', 'debug'];
  for (let i = 0; i < 20; i++) {
    const level = levels[r(levels.length)]!;
    items.push({
      alias: 'function_logs',
      chSource: 'function_logs',
      severity: level,
      rec: { id: `fl-${i}`, timestamp: ts(i), event_message: `log line ${i}`, metadata: { project_ref: P, function_id: fns[r(3)], execution_id: `ex-${i}`, event_type: 'Log', level } },
    });
  }

  for (let i = 0; i < 30; i++) {
    const level = levels[r(3)]!;
    const status = [200, 200, 400, 401, 422, 500][r(6)]!;
    const path = ['/token', '/user', '/signup', '/verify'][r(4)]!;
    const method = ['POST', 'GET', 'PUT'][r(3)]!;
    items.push({
      alias: 'auth_logs',
      chSource: 'auth_logs',
      severity: level,
      rec: {
        id: `auth-${i}`,
        timestamp: ts(i),
        project: P,
        event_message: JSON.stringify({ msg: 'request completed', status }),
        metadata: { level, method, path, status, duration: r(90000), msg: 'request completed', component: 'api', remote_addr: `10.0.0.${r(9)}`, request_id: `req-${i}` },
      },
    });
  }

  const severities = ['LOG', 'LOG', 'ERROR', 'WARNING', 'FATAL'];
  for (let i = 0; i < 30; i++) {
    const sev = severities[r(severities.length)]!;
    items.push({
      alias: 'postgres_logs',
      chSource: 'postgres_logs',
      severity: sev,
      rec: {
        id: `pg-${i}`,
        timestamp: ts(i),
        project: P,
        event_message: sev === 'ERROR' ? 'relation "todo" does not exist' : 'connection authorized',
        metadata: {
          host: `db-${P}`,
          parsed: {
            error_severity: sev,
            user_name: 'postgres',
            database_name: 'postgres',
            sql_state_code: sev === 'ERROR' ? '42P01' : '00000',
            process_id: 1000 + r(500),
            session_line_num: r(20),
            command_tag: 'SELECT',
            backend_type: 'client backend',
          },
        },
      },
      // A third of the Postgres rows carry their level only as severity_text: it must fill parsed.error_severity.
      ...(i % 3 === 0 ? { omit: ['parsed.error_severity'] } : {}),
    });
  }

  for (let i = 0; i < 8; i++) {
    items.push({
      alias: 'pgbouncer_logs',
      chSource: 'supavisor_logs',
      severity: 'LOG',
      rec: { id: `pool-${i}`, timestamp: ts(i), project: P, event_message: `client ${i} connected`, metadata: { host: 'pooler', pid: String(100 + i) } },
    });
  }
  // In time order, in both shapes: records of one source then reach the store in the same order
  // (the explorer's cursors name a record by its instant and its row number in its partition).
  return items.sort((a, b) => a.rec.timestamp - b.rec.timestamp);
}

/** The old `metadata` path of every scalar, dotted, as text: what ClickHouse's log_attributes holds. */
function attributesOf(meta: Meta, prefix = '', out: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of Object.entries(meta)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) attributesOf(v as Meta, key, out);
    else out[key] = Array.isArray(v) ? JSON.stringify(v) : String(v);
  }
  return out;
}

/** `2026-06-22T09:34:06.215000`: UTC, microseconds, no offset. */
function clickHouseTime(us: number): string {
  const iso = new Date(Math.floor(us / 1000)).toISOString();
  return `${iso.slice(0, 19)}.${String(us % 1_000_000).padStart(6, '0')}`;
}

function clickHouseRow(item: Item) {
  const attributes = attributesOf(item.rec.metadata);
  for (const k of item.omit ?? []) delete attributes[k];
  return { id: item.rec.id, timestamp: clickHouseTime(item.rec.timestamp), event_message: item.rec.event_message, severity_text: item.severity, source: item.chSource, log_attributes: attributes };
}
type Row = ReturnType<typeof clickHouseRow>;

/** The app's source for each ClickHouse `source` value, written out here (not taken from the code under test). */
const APP_SOURCE: Record<string, string> = {
  edge_logs: 'cloudflare.logs.prod',
  postgres_logs: 'postgres.logs',
  function_edge_logs: 'deno-relay-logs',
  function_logs: 'deno-subhosting-events',
  auth_logs: 'gotrue.logs.prod',
  supavisor_logs: 'pgbouncer.logs.prod',
};

const csvCell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const ROW_HEAD = ['id', 'timestamp', 'event_message', 'severity_text', 'source'] as const;

const WRITERS: Record<string, (rows: Row[]) => string> = {
  ndjson: (rows) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n',
  'json-array': (rows) => JSON.stringify(rows, null, 1),
  result: (rows) => JSON.stringify({ result: rows }),
  'csv, log_attributes as JSON text': (rows) =>
    [[...ROW_HEAD, 'log_attributes'].join(','), ...rows.map((r) => [...ROW_HEAD.map((k) => r[k]), JSON.stringify(r.log_attributes)].map(csvCell).join(','))].join('\r\n') + '\r\n',
  'csv, one column per dotted key': (rows) => {
    const keys: string[] = [];
    for (const r of rows) for (const k of Object.keys(r.log_attributes)) if (!keys.includes(k)) keys.push(k);
    return [[...ROW_HEAD, ...keys].map(csvCell).join(','), ...rows.map((r) => [...ROW_HEAD.map((k) => r[k]), ...keys.map((k) => r.log_attributes[k] ?? '')].map(csvCell).join(','))].join('\n') + '\n';
  },
};
const FORMAT_REPORTED: Record<string, string> = {
  ndjson: 'ndjson',
  'json-array': 'json-array',
  result: 'result',
  'csv, log_attributes as JSON text': 'csv',
  'csv, one column per dotted key': 'csv',
};

const body = (text: string) => [Buffer.from(text)];
const ndjson = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

async function newStore(): Promise<LogStore> {
  return keeper.open(keeper.newDir());
}

/** The BigQuery-era store: one NDJSON file per source, each imported with its source. */
async function classicStore(items: Item[]): Promise<LogStore> {
  const store = await newStore();
  for (const alias of [...new Set(items.map((i) => i.alias))]) {
    const records = items.filter((i) => i.alias === alias).map((i) => i.rec);
    const report = await importStream(store, body(ndjson(records)), { source: alias });
    expect(report).toMatchObject({ imported: records.length, rejected: 0 });
  }
  return store;
}

const iso = (us: number) => new Date(us / 1000).toISOString();
const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
const WINDOW = { start: iso(NOW - 10 * DAY), end: iso(NOW) };

/** Every answer the comparison asks for, as [what, status, body]. */
async function answers(t: TestApp): Promise<Array<[string, number, unknown]>> {
  const out: Array<[string, number, unknown]> = [];
  const get = async (what: string) => {
    const res = await t.request(what);
    const answer = (await res.json()) as { result?: { bytes?: number } };
    // A count's `bytes` estimates an export's size from the stored text, which is the file's own
    // (the same records pretty-printed, or with keys in another order, differ as much): not compared.
    if (what.startsWith('/api/logs/count?') && answer.result) delete answer.result.bytes;
    out.push([what, res.status, answer]);
  };

  // The three endpoints.
  for (const tier of ['FREE', 'PRO', 'ENTERPRISE']) await get(`/api/endpoints/logs.all?${q({ project: P, project_tier: tier })}`);
  await get(`/api/endpoints/logs.all?${q({ project: P, project_tier: 'PRO', iso_timestamp_start: iso(NOW - 2 * DAY), iso_timestamp_end: iso(NOW - 30 * MIN) })}`);
  for (const interval of ['5min', '15min', '1hr', '1day', '7day']) {
    for (const fn of ['', 'fn-a', 'fn-c']) await get(`/api/endpoints/functions.invocation-stats?${q({ project: P, function_id: fn, interval })}`);
  }
  for (const interval of ['hourly', 'daily', 'minutely']) {
    for (const project of [P, 'abcdef.*\\.supabase\\.co/rest', 'nomatch']) await get(`/api/endpoints/usage.api-counts?${q({ project, interval })}`);
  }

  // The explorer, per source, over the whole set and with filters.
  await get('/api/sources');
  const filters: Record<string, Array<Record<string, string>>> = {
    edge_logs: [{}, { status: '5xx' }, { status: '!200' }, { method: 'POST,PATCH' }, { path: '/rest/v1/todos' }, { q: 'todos' }, { project: P }],
    function_edge_logs: [{}, { status: '4xx' }, { function_id: 'fn-a' }, { method: 'GET' }],
    function_logs: [{}, { level: 'error' }, { function_id: 'fn-b' }, { q: 'line 1' }],
    auth_logs: [{}, { level: 'error,warning' }, { status: '5xx' }, { method: 'POST' }, { path: '/token' }],
    postgres_logs: [{}, { level: 'ERROR' }, { level: '!LOG' }, { q: 'relation' }],
    pgbouncer_logs: [{}],
  };
  for (const [source, list] of Object.entries(filters)) {
    for (const f of list) {
      const params = { source, ...WINDOW, ...f };
      await get(`/api/logs/count?${q(params)}`);
      await get(`/api/logs/histogram?${q({ ...params, buckets: '30' })}`);
      await get(`/api/logs/facets?${q(params)}`);
      // Every page, small ones, following the cursor.
      let cursor: string | null = null;
      do {
        const what = `/api/logs?${q({ ...params, limit: '9', ...(cursor ? { cursor } : {}) })}`;
        const res = await t.request(what);
        const page = (await res.json()) as { next: string | null };
        out.push([what, res.status, page]);
        cursor = page.next;
      } while (cursor);
    }
  }
  return out;
}

describe('one record set in both shapes answers the same', () => {
  const items = recordSet();
  const rows = items.map(clickHouseRow);

  it('the set covers what the endpoints and the explorer read (a check on the fixture itself)', () => {
    const sources = new Set(rows.map((r) => r.source));
    expect([...sources].sort()).toEqual(['auth_logs', 'edge_logs', 'function_edge_logs', 'function_logs', 'postgres_logs', 'supavisor_logs']);
    // Mixed: the file does not hold the sources one after the other.
    expect(rows.slice(0, 40).map((r) => r.source)).toEqual(expect.arrayContaining(['edge_logs', 'postgres_logs', 'auth_logs']));
    expect(items.filter((i) => i.alias === 'postgres_logs' && i.omit).length).toBe(10);
  });

  for (const [format, write] of Object.entries(WRITERS)) {
    it(`${format}: every endpoint and explorer answer equals the BigQuery-era import's`, async () => {
      const classic = appOver(await classicStore(items), NOW);
      const store = await newStore();
      const report = await importStream(store, body(write(rows)), { project: P });
      const perSource = (alias: string) => items.filter((i) => i.alias === alias).length;
      expect(report).toEqual({
        source: APP_SOURCE[rows[0]!.source], // the first row's
        format: FORMAT_REPORTED[format],
        imported: items.length,
        duplicates: 0,
        rejected: 0,
        sources: {
          'postgres.logs': { imported: perSource('postgres_logs'), duplicates: 0, rejected: 0 },
          'cloudflare.logs.prod': { imported: perSource('edge_logs'), duplicates: 0, rejected: 0 },
          'deno-relay-logs': { imported: perSource('function_edge_logs'), duplicates: 0, rejected: 0 },
          'deno-subhosting-events': { imported: perSource('function_logs'), duplicates: 0, rejected: 0 },
          'gotrue.logs.prod': { imported: perSource('auth_logs'), duplicates: 0, rejected: 0 },
          'pgbouncer.logs.prod': { imported: perSource('pgbouncer_logs'), duplicates: 0, rejected: 0 },
        },
        errors: [],
        errorsOmitted: 0,
      });
      const ch = appOver(store, NOW);

      const want = await answers(classic);
      const got = await answers(ch);
      expect(got.map(([what, status]) => [what, status])).toEqual(want.map(([what, status]) => [what, status]));
      for (let i = 0; i < want.length; i++) expect({ what: got[i]![0], body: got[i]![2] }).toEqual({ what: want[i]![0], body: want[i]![2] });

      // Not equal by being empty: the answers hold what the set puts there (counted here from the set itself).
      expect(want.every(([, status]) => status === 200)).toBe(true);
      const answer = (what: string) => want.find(([w]) => w === what)![2] as { result: unknown };
      const inDay = items.filter((i) => i.alias === 'edge_logs' && i.rec.timestamp > NOW - DAY);
      expect(inDay.length).toBeGreaterThan(0);
      expect((answer(`/api/endpoints/logs.all?${q({ project: P, project_tier: 'FREE' })}`).result as unknown[]).length).toBe(inDay.length);
      const pgErrors = items.filter((i) => i.alias === 'postgres_logs' && (i.rec.metadata.parsed as Meta).error_severity === 'ERROR');
      expect(pgErrors.length).toBeGreaterThan(0);
      expect(pgErrors.some((i) => i.omit)).toBe(true);
      expect(answer(`/api/logs/count?${q({ source: 'postgres_logs', ...WINDOW, level: 'ERROR' })}`).result).toEqual(expect.objectContaining({ count: pgErrors.length }));
      const fnLastHour = items.filter((i) => i.alias === 'function_edge_logs' && i.rec.timestamp >= NOW - HOUR - MIN);
      const stats = answer(`/api/endpoints/functions.invocation-stats?${q({ project: P, function_id: '', interval: '1hr' })}`).result as Array<{ count: number }>;
      expect(stats.length).toBe(61);
      const week = answer(`/api/endpoints/functions.invocation-stats?${q({ project: P, function_id: '', interval: '7day' })}`).result as Array<{ error_count: number; p95_execution_time: number | null }>;
      expect(week.some((b) => b.error_count > 0 && b.p95_execution_time !== null)).toBe(true);
      const daily = answer(`/api/endpoints/usage.api-counts?${q({ project: P, interval: 'daily' })}`).result as Array<Record<string, number>>;
      expect(daily.some((b) => b.total_rest_requests! > 0 && b.total_auth_requests! > 0)).toBe(true);
      expect(stats.reduce((n, b) => n + b.count, 0)).toBeGreaterThan(0);
      expect(stats.reduce((n, b) => n + b.count, 0)).toBeLessThanOrEqual(fnLastHour.length);
    });
  }
});

describe('reports', () => {
  const T = NOW - HOUR;
  const row = (id: string, source: string, attrs: Record<string, string>, o: Record<string, unknown> = {}) => ({
    id,
    timestamp: clickHouseTime(T + Number(id.replace(/\D/g, '')) * SEC),
    event_message: `${source} ${id}`,
    severity_text: 'INFO',
    source,
    log_attributes: attrs,
    ...o,
  });
  const edgeAttrs = { 'request.method': 'GET', 'request.url': `https://${P}.supabase.co/rest/v1/t`, 'response.status_code': '200' };
  const fnAttrs = { project_ref: P, function_id: 'fn-a', execution_time_ms: '12', 'response.status_code': '500' };

  it('a file mixing sources: each row in the source it names (supavisor_logs in the pooler), counted per source', async () => {
    const store = await newStore();
    const text = ndjson([
      row('e1', 'edge_logs', edgeAttrs),
      row('f2', 'function_edge_logs', fnAttrs),
      row('p3', 'postgres_logs', { 'parsed.error_severity': 'ERROR' }),
      row('s4', 'supavisor_logs', {}),
      row('e5', 'edge_logs', edgeAttrs),
      row('e1', 'edge_logs', edgeAttrs), // the same id again: a duplicate
      row('s6', 'pgbouncer_logs', {}),
      row('f7', 'function_edge_logs', fnAttrs),
      row('p8', 'postgres_logs', {}, { timestamp: 'yesterday' }),
    ]);
    const report = await importStream(store, body(text), { project: P });
    expect(report).toEqual({
      source: 'cloudflare.logs.prod',
      format: 'ndjson',
      imported: 7,
      duplicates: 1,
      rejected: 1,
      sources: {
        'cloudflare.logs.prod': { imported: 2, duplicates: 1, rejected: 0 },
        'deno-relay-logs': { imported: 2, duplicates: 0, rejected: 0 },
        'postgres.logs': { imported: 1, duplicates: 0, rejected: 1 },
        'pgbouncer.logs.prod': { imported: 2, duplicates: 0, rejected: 0 },
      },
      errors: [{ line: 9, reason: 'unrecognized timestamp "yesterday"' }],
      errorsOmitted: 0,
    });
    const counts = Object.fromEntries(store.summary().map((s) => [s.source, s.count]));
    expect(counts).toMatchObject({ 'cloudflare.logs.prod': 2, 'deno-relay-logs': 2, 'postgres.logs': 1, 'pgbouncer.logs.prod': 2 });
    // Hot fields typed from text: status and execution time as numbers, the level from the attribute.
    expect(store.dump('deno-relay-logs').map((r) => [r.id, r.status, r.exec, r.functionId])).toEqual([
      ['f2', 500, 12, 'fn-a'],
      ['f7', 500, 12, 'fn-a'],
    ]);
    expect(store.dump('postgres.logs').map((r) => [r.id, r.level, r.project])).toEqual([['p3', 'ERROR', P]]);
  });

  it('bad rows are reported by line (NDJSON, CSV) or index (JSON), the good ones kept', async () => {
    const store = await newStore();
    const lines = [
      JSON.stringify(row('e1', 'edge_logs', edgeAttrs)),
      '{"id": "broken", ',
      JSON.stringify(row('x3', 'edge_log', edgeAttrs)),
      JSON.stringify(row('e4', 'edge_logs', edgeAttrs, { log_attributes: '{not json' })),
      JSON.stringify(row('e5', 'edge_logs', edgeAttrs, { source: '' })),
      JSON.stringify(row('e6', 'edge_logs', { 'request.method': 'GET' })), // no host names a project, and no project option
      JSON.stringify(row('e7', 'constructor', edgeAttrs)),
      JSON.stringify(row('e8', 'edge_logs', edgeAttrs)),
      JSON.stringify(row('e9', 'edge_logs', edgeAttrs, { log_attributes: '[1]' })),
    ];
    const report = await importStream(store, body(lines.join('\n') + '\n'));
    const known = 'expected one of edge_logs, postgres_logs, function_edge_logs, function_logs, auth_logs, realtime_logs, storage_logs, postgrest_logs, supavisor_logs, pgbouncer_logs';
    expect(report).toEqual({
      source: 'cloudflare.logs.prod',
      format: 'ndjson',
      imported: 2,
      duplicates: 0,
      rejected: 7,
      // Rejections count under the source their row names; rows naming none known, under the import's.
      sources: { 'cloudflare.logs.prod': { imported: 2, duplicates: 0, rejected: 7 } },
      errors: [
        { line: 2, reason: expect.stringMatching(/^invalid JSON: /) },
        { line: 3, reason: `unknown source "edge_log"; ${known}` },
        { line: 4, reason: 'log_attributes is not valid JSON' },
        { line: 5, reason: 'no source: a row of the logs table names its source in `source`, and the import was given none' },
        { line: 6, reason: 'no project: the record has no project and no project option was given' },
        { line: 7, reason: `unknown source "constructor"; ${known}` },
        { line: 9, reason: 'log_attributes is not a map of keys to values' },
      ],
      errorsOmitted: 0,
    });
    expect(store.dump('cloudflare.logs.prod').map((r) => [r.id, r.status, r.project])).toEqual([
      ['e1', 200, P],
      ['e8', 200, P],
    ]);

    // CSV, one column per key: lines are the file's (a quoted cell with a line break counts two).
    const csv = [
      'id,timestamp,event_message,severity_text,source,request.method,request.url,response.status_code',
      `c1,${clickHouseTime(T)},"two\nlines",INFO,edge_logs,GET,https://${P}.supabase.co/rest/v1/a,201`,
      `c2,not a time,m,INFO,edge_logs,GET,https://${P}.supabase.co/rest/v1/a,200`,
      `c3,${clickHouseTime(T + SEC)},m,INFO,nope,GET,https://${P}.supabase.co/rest/v1/a,200`,
      `c4,${clickHouseTime(T + 2 * SEC)},m,INFO,edge_logs,POST,https://${P}.supabase.co/auth/v1/token,503`,
    ].join('\n');
    const csvReport = await importStream(store, body(csv + '\n'));
    expect(csvReport).toMatchObject({
      source: 'cloudflare.logs.prod',
      format: 'csv',
      imported: 2,
      rejected: 2,
      errors: [
        { line: 4, reason: 'unrecognized timestamp "not a time"' },
        { line: 5, reason: `unknown source "nope"; ${known}` },
      ],
    });
    expect(store.dump('cloudflare.logs.prod').map((r) => [r.id, r.status, r.method, r.url, r.families])).toEqual([
      ['e1', 200, 'GET', `https://${P}.supabase.co/rest/v1/t`, 1],
      ['e8', 200, 'GET', `https://${P}.supabase.co/rest/v1/t`, 1],
      ['c1', 201, 'GET', `https://${P}.supabase.co/rest/v1/a`, 1],
      ['c4', 503, 'POST', `https://${P}.supabase.co/auth/v1/token`, 4],
    ]);

    // JSON array: by 0-based index.
    const arrayReport = await importStream(store, body(JSON.stringify([row('a10', 'edge_logs', edgeAttrs), row('a11', 'nope', {}), 42])));
    expect(arrayReport).toMatchObject({ imported: 1, rejected: 2, errors: [{ index: 1, reason: `unknown source "nope"; ${known}` }, { index: 2, reason: 'not a JSON object' }] });
  });

  it('a source given with the import: rows naming another source are rejected by line, rows naming none take it', async () => {
    const store = await newStore();
    const text = ndjson([
      row('e1', 'edge_logs', edgeAttrs),
      row('p2', 'postgres_logs', {}),
      row('e3', 'cloudflare.logs.prod', edgeAttrs), // the app's own name of the same source
      { ...row('e4', 'edge_logs', edgeAttrs), source: undefined },
    ]);
    const report = await importStream(store, body(text), { source: 'edge_logs', project: P });
    expect(report).toEqual({
      source: 'cloudflare.logs.prod',
      format: 'ndjson',
      imported: 3,
      duplicates: 0,
      rejected: 1,
      sources: { 'cloudflare.logs.prod': { imported: 3, duplicates: 0, rejected: 0 }, 'postgres.logs': { imported: 0, duplicates: 0, rejected: 1 } },
      errors: [
        {
          line: 2,
          reason:
            'source "postgres_logs" is stored in postgres.logs, not in cloudflare.logs.prod, the source this import was given; import the file without a source to store each row in its own',
        },
      ],
      errorsOmitted: 0,
    });
    expect(store.summary().find((s) => s.source === 'postgres.logs')?.count ?? 0).toBe(0);
  });

  it('a file name names the source of rows that name none; rows that name one go there', async () => {
    const store = await newStore();
    const text = ndjson([{ ...row('e1', 'edge_logs', edgeAttrs), source: undefined }, row('p2', 'postgres_logs', {})]);
    const report = await importStream(store, body(text), { fileName: 'edge_logs-export.ndjson', project: P });
    expect(report).toMatchObject({
      file: 'edge_logs-export.ndjson',
      source: 'cloudflare.logs.prod',
      imported: 2,
      sources: { 'cloudflare.logs.prod': { imported: 1, duplicates: 0, rejected: 0 }, 'postgres.logs': { imported: 1, duplicates: 0, rejected: 0 } },
    });
  });

  it('rows that name no source, with no source given or named: the import fails and says so', async () => {
    const store = await newStore();
    const text = ndjson([{ ...row('e1', 'edge_logs', edgeAttrs), source: undefined }]);
    await expect(importStream(store, body(text), { project: P })).rejects.toThrow(ImportFailure);
  });

  it('a BigQuery-era import reports its one source with the totals', async () => {
    const store = await newStore();
    const rec = { id: 'b1', timestamp: T, project: P, event_message: 'x', metadata: { request: { url: `https://${P}.supabase.co/rest/v1/t` }, response: { status_code: 200 } } };
    const report = await importStream(store, body(ndjson([rec, rec, { id: 'b2', timestamp: 'never', project: P }])), { source: 'edge_logs' });
    expect(report.sources).toEqual({ 'cloudflare.logs.prod': { imported: 1, duplicates: 1, rejected: 1 } });
  });
});

describe('a failed import of a mixed file', () => {
  it('keeps nothing in any source, and what was there before stays', async () => {
    const store = await newStore();
    const before = await importStream(store, body(ndjson([{ id: 'old', timestamp: NOW - DAY, project: P, event_message: 'x', metadata: { request: { url: `https://${P}.supabase.co/rest/v1/t` } } }])), { source: 'edge_logs' });
    expect(before.imported).toBe(1);
    const sources = ['edge_logs', 'postgres_logs', 'function_edge_logs', 'auth_logs'];
    const attrs: Record<string, Record<string, string>> = {
      edge_logs: { 'request.url': `https://${P}.supabase.co/rest/v1/t`, 'response.status_code': '200' },
      postgres_logs: { 'parsed.error_severity': 'LOG' },
      function_edge_logs: { project_ref: P, function_id: 'fn-a', execution_time_ms: '3' },
      auth_logs: { level: 'info', status: '200' },
    };
    // Enough rows for several batches of every source to reach the store before the input fails.
    const rows = Array.from({ length: 6000 }, (_, i) => {
      const source = sources[i % sources.length]!;
      return { id: `m${i}`, timestamp: clickHouseTime(NOW - 2 * HOUR + i * 1000), event_message: 'm', severity_text: 'INFO', source, log_attributes: attrs[source]! };
    });
    const written: string[] = [];
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from(ndjson(rows));
      // Lets batches of the first chunk reach several sources (waited for, not timed: a slow machine only waits longer).
      const reached = () => store.summary().filter((s) => s.count > 0).length;
      for (let i = 0; i < 6000 && reached() < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      written.push(...store.summary().filter((s) => s.count > 0).map((s) => `${s.source}:${s.count}`));
      throw new Error('the connection dropped');
    }
    const opts: ImportOptions = { project: P, parser: 'inline' };
    await expect(importStream(store, failing(), opts)).rejects.toThrow('the connection dropped');
    // The import had reached several sources before it failed...
    expect(written.length).toBeGreaterThan(1);
    // ...and none of it stayed.
    const after = store.summary().filter((s) => s.count > 0).map((s) => [s.source, s.count]);
    expect(after).toEqual([['cloudflare.logs.prod', 1]]);
  });
});

// The report type is the API's: a mixed import's report types with its per-source counts.
export type _ReportHasSources = ImportReport['sources'];
