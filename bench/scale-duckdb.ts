/**
 * The DuckDB side of the scale bench, in its own process so its memory figures are its own:
 *
 *   tsx bench/scale-duckdb.ts run '<json DuckArgs>'      import both files into a fresh
 *       database file, time the same queries at the same instants as ours and the explorer's
 *       cases over the edge table, add the small save file, checkpoint, and print one JSON
 *       line (DuckRun)
 *   tsx bench/scale-duckdb.ts restart '<json DuckArgs>'  open that file, answer logs.all once
 *       (prints "first-answer"), then one round of every case; prints one JSON line (DuckRestart)
 *   tsx bench/scale-duckdb.ts fields '<json DuckFieldArgs>'  the edge file alone into a fresh
 *       database file with `metadata` as JSON, then the search and field cases (settledCases)
 *       with json_extract_string, each answered once (cold) and `runs` times; prints one JSON line
 *       (DuckFieldRun)
 *
 * DuckDB as a new user would use it: `CREATE TABLE ... AS SELECT * FROM read_ndjson(file)`
 * with the schema it infers (metadata becomes a nested STRUCT), default settings (threads =
 * cores), and the endpoints written as plain SQL over those tables, prepared once and bound
 * per run; each timed run includes reading the rows into JS values.
 */
import fs from 'node:fs';
import { BIGINT, DuckDBInstance, VARCHAR, type DuckDBConnection, type DuckDBPreparedStatement } from '@duckdb/node-api';
import { formatDatetime } from '../server/time.ts';
import {
  API_INTERVALS,
  BENCH_NOW,
  benchCases,
  EXPLORER_ALL_SPAN,
  explorerBuckets,
  EXPLORER_FACETS,
  EXPLORER_NOMATCH,
  explorerCases,
  settledCases,
  percentiles,
  procMemory,
  STATS_INTERVALS,
  TIER_RETENTION,
  type BenchCase,
  type ExplorerCase,
  type Percentiles,
} from './data.ts';

export interface DuckArgs {
  dbFile: string;
  fnFile: string;
  edgeFile: string;
  saveFile: string;
  fnProject: string;
  edgeProject: string;
  runs: number;
  /** Times each endpoint case is timed after its first (at least 21: see scale.ts). */
  endpointRuns: number;
  explorer: {
    /** Per deep case: the last row of ours' page before it (the keyset to continue after). */
    deep: Record<string, { timestamp: number; id: string }>;
  };
}

/** An explorer answer reduced to what both sides are checked on. */
export type ExplorerAnswer =
  | { kind: 'histogram'; buckets: Array<{ timestamp: number; count: number; by: Record<string, number> }> }
  | { kind: 'facets'; facets: Record<string, Array<{ value: string | number; count: number }>> }
  | { kind: 'page'; rows: Array<{ id: string; timestamp: number; event_message: string }> };

export type Row = Record<string, unknown>;

export interface DuckRun {
  importFnSeconds: number;
  importEdgeSeconds: number;
  /** The small save file appended after the queries, so both stores hold the same records. */
  importSaveSeconds: number;
  records: { fn: number; edge: number };
  peakRss: number;
  cases: Record<string, { first: number; uncached: Percentiles; rows: Row[] }>;
  explorer: Record<string, { first: number; uncached: Percentiles; answer: ExplorerAnswer }>;
  /** ILIKE of a text no record holds over the whole store's event_message (ms per run). */
  nomatch: Percentiles & { count: number };
}

/** The `fields` mode (`npm run bench -- --settled`). */
export interface DuckFieldArgs {
  dbFile: string;
  edgeFile: string;
  runs: number;
}

export interface DuckFieldRun {
  importSeconds: number;
  records: number;
  explorer: Record<string, { first: number; uncached: Percentiles; answer: ExplorerAnswer }>;
}

export interface DuckRestart {
  rssAfterFirstAnswer: number;
  rssAfterRound: number;
  peakRss: number;
  round: Record<string, number>;
}

const SQL = {
  // Buckets trunc(now - span, unit) .. trunc(now, unit) inclusive, zero-filled; a record counts
  // in trunc(ts, unit) when that bucket is in the series; errors are status >= 400.
  'functions.invocation-stats': `
    WITH b AS (SELECT ($now - $span) - ($now - $span) % $unit AS first, $now - $now % $unit AS last),
    agg AS (
      SELECT timestamp - timestamp % $unit AS bucket,
             count(*) AS count,
             count(*) FILTER (WHERE metadata.response.status_code >= 400) AS error_count,
             min(metadata.execution_time_ms) AS min_execution_time,
             max(metadata.execution_time_ms) AS max_execution_time,
             avg(metadata.execution_time_ms) AS avg_execution_time,
             quantile_disc(metadata.execution_time_ms, 0.95) AS p95_execution_time,
             quantile_disc(metadata.execution_time_ms, 0.99) AS p99_execution_time
      FROM function_edge_logs, b
      WHERE metadata.project_ref = $project AND timestamp >= b.first AND timestamp < b.last + $unit
      GROUP BY 1
    )
    SELECT s.ts AS timestamp, min_execution_time, max_execution_time, avg_execution_time,
           p95_execution_time, p99_execution_time, coalesce(count, 0) AS count, coalesce(error_count, 0) AS error_count
    FROM (SELECT unnest(generate_series(first, last, $unit)) AS ts FROM b) s
    LEFT JOIN agg ON agg.bucket = s.ts
    ORDER BY s.ts`,
  // ts >= now - window, the pattern anywhere in the URL, only non-empty buckets.
  'usage.api-counts': `
    SELECT timestamp - timestamp % $unit AS timestamp,
           count(*) FILTER (WHERE regexp_matches(metadata.request.path, '/rest')) AS total_rest_requests,
           count(*) FILTER (WHERE regexp_matches(metadata.request.path, '/storage')) AS total_storage_requests,
           count(*) FILTER (WHERE regexp_matches(metadata.request.path, '/auth')) AS total_auth_requests,
           count(*) FILTER (WHERE regexp_matches(metadata.request.path, '/realtime')) AS total_realtime_requests
    FROM edge_logs
    WHERE timestamp >= $now - $span AND regexp_matches(metadata.request.url, $pattern)
    GROUP BY 1
    ORDER BY 1`,
  // ts > now - retention, newest first, ties by id, 100 rows.
  'logs.all': `
    SELECT CAST(id AS VARCHAR) AS id, timestamp, event_message, metadata
    FROM edge_logs
    WHERE project = $project AND timestamp > $now - $retention
    ORDER BY timestamp DESC, CAST(id AS VARCHAR)
    LIMIT 100`,
} as const;

function bindings(c: BenchCase, now: number): Record<string, bigint | string> {
  const p = c.params;
  if (c.endpoint === 'functions.invocation-stats') {
    const w = STATS_INTERVALS[p.interval as keyof typeof STATS_INTERVALS];
    return { now: BigInt(now), span: BigInt(w.span), unit: BigInt(w.unit), project: p.project! };
  }
  if (c.endpoint === 'usage.api-counts') {
    const w = API_INTERVALS[p.interval as keyof typeof API_INTERVALS];
    return { now: BigInt(now), span: BigInt(w.span), unit: BigInt(w.unit), pattern: p.project! };
  }
  return { now: BigInt(now), retention: BigInt(TIER_RETENTION[p.project_tier as keyof typeof TIER_RETENTION]), project: p.project! };
}

/** Runs one case at one instant and returns its rows as JS values (the timed unit). */
async function runCase(stmt: DuckDBPreparedStatement, c: BenchCase, now: number): Promise<Row[]> {
  const values = bindings(c, now);
  stmt.bind(values, Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === 'bigint' ? BIGINT : VARCHAR])));
  return (await stmt.runAndReadAll()).getRowObjectsJS() as Row[];
}

/** Rows in the shape the HTTP API answers (numbers, api-counts buckets as DATETIME text). */
function apiShape(c: BenchCase, rows: Row[]): Row[] {
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return rows.map((r) => {
    if (c.endpoint === 'logs.all') return { id: r.id, timestamp: num(r.timestamp), event_message: r.event_message };
    const out: Row = {};
    for (const [k, v] of Object.entries(r)) out[k] = k === 'timestamp' && c.endpoint === 'usage.api-counts' ? formatDatetime(Number(v)) : num(v);
    return out;
  });
}

// ---- the explorer's queries (ExplorerCase), as plain SQL over the edge table ----

const STATUS = 'metadata.response.status_code';

/**
 * How a field inside the records is read: from the nested STRUCT read_ndjson infers, or (`json`,
 * the fields mode) with json_extract_string from `metadata` kept as JSON. Either gives a
 * number's or a boolean's text and NULL for a missing field or JSON null, as ours counts them.
 */
let metadataAsJson = false;
const fieldExpr = (path: string) => (metadataAsJson ? `json_extract_string(metadata, '$.${path}')` : `CAST(metadata.${path} AS VARCHAR)`);
const statusExpr = () => (metadataAsJson ? `TRY_CAST(json_extract_string(metadata, '$.response.status_code') AS INTEGER)` : STATUS);

/** WHERE of an explorer case and its bindings: (start, end], then the case's filters. */
function explorerWhere(c: ExplorerCase, args: Pick<DuckArgs, 'explorer'>): { sql: string; values: Record<string, bigint | string> } {
  const parts = ['timestamp > $start', 'timestamp <= $end'];
  const values: Record<string, bigint | string> = { start: BigInt(c.start), end: BigInt(c.end) };
  if (c.project !== undefined) {
    parts.push('project = $project');
    values.project = c.project;
  }
  if (c.status5xx) parts.push(`${statusExpr()} BETWEEN 500 AND 599`);
  if (c.q !== undefined && c.regex) {
    // RE2 in both: case-insensitive, anywhere in the message (which holds the request URL).
    parts.push(`regexp_matches(event_message, $pattern, 'i')`);
    values.pattern = c.q;
  } else if (c.q !== undefined) {
    parts.push(`event_message ILIKE $pattern ESCAPE '\\'`);
    values.pattern = `%${c.q.replace(/[\\%_]/g, '\\$&')}%`;
  }
  if (c.field) {
    // `x*` is a prefix, as the API reads it.
    const prefix = c.field.value.length > 1 && c.field.value.endsWith('*');
    parts.push(prefix ? `starts_with(${fieldExpr(c.field.path)}, $fieldValue)` : `${fieldExpr(c.field.path)} = $fieldValue`);
    values.fieldValue = prefix ? c.field.value.slice(0, -1) : c.field.value;
  }
  if (c.deep) {
    const k = args.explorer.deep[c.label]!;
    parts.push('(timestamp < $cts OR (timestamp = $cts AND CAST(id AS VARCHAR) > $cid))');
    Object.assign(values, { cts: BigInt(k.timestamp), cid: k.id });
  }
  return { sql: parts.join(' AND '), values };
}

/** The statements of one case (facets: one per field), bound once: every run asks the same. */
async function prepareExplorer(conn: DuckDBConnection, c: ExplorerCase, args: Pick<DuckArgs, 'explorer'>): Promise<DuckDBPreparedStatement[]> {
  const w = explorerWhere(c, args);
  const prep = async (sql: string, extra: Record<string, bigint | string> = {}) => {
    const stmt = await conn.prepare(sql);
    const values = { ...w.values, ...extra };
    stmt.bind(values, Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === 'bigint' ? BIGINT : VARCHAR])));
    return stmt;
  };
  if (c.kind === 'histogram') {
    const { width, first } = explorerBuckets(c.start, c.end);
    return [
      await prep(
        `SELECT (timestamp - $first) // $width AS b,
                CASE WHEN s BETWEEN 100 AND 599 THEN CAST(s // 100 AS VARCHAR) || 'xx' ELSE 'none' END AS k,
                count(*) AS n
         FROM (SELECT timestamp, ${statusExpr()} AS s FROM edge_logs WHERE ${w.sql})
         GROUP BY ALL`,
        { first: BigInt(first), width: BigInt(width) },
      ),
    ];
  }
  if (c.kind === 'facets' && c.fieldFacet) {
    // A field inside the records: its value as text, as ours counts it.
    const e = fieldExpr(c.fieldFacet);
    return [await prep(`SELECT ${e} AS v, count(*) AS n FROM edge_logs WHERE ${w.sql} AND ${e} IS NOT NULL GROUP BY v ORDER BY n DESC, v LIMIT 10`)];
  }
  if (c.kind === 'facets') {
    const expr: Record<(typeof EXPLORER_FACETS)[number], string> = { status: statusExpr(), method: `upper(${fieldExpr('request.method')})`, path: fieldExpr('request.path') };
    return Promise.all(
      EXPLORER_FACETS.map((f) => prep(`SELECT ${expr[f]} AS v, count(*) AS n FROM edge_logs WHERE ${w.sql} AND ${expr[f]} IS NOT NULL GROUP BY v ORDER BY n DESC, v LIMIT 10`)),
    );
  }
  // A page returns what ours does: id, instant, message and the metadata.
  return [await prep(`SELECT CAST(id AS VARCHAR) AS id, timestamp, event_message, metadata FROM edge_logs WHERE ${w.sql} ORDER BY timestamp DESC, CAST(id AS VARCHAR) LIMIT 100`)];
}

/** One run of a case, read into JS values (the timed unit), in the shape it is checked in. */
async function runExplorer(c: ExplorerCase, stmts: DuckDBPreparedStatement[]): Promise<ExplorerAnswer> {
  const results: Row[][] = [];
  for (const stmt of stmts) results.push((await stmt.runAndReadAll()).getRowObjectsJS() as Row[]);
  if (c.kind === 'histogram') {
    const { width, first } = explorerBuckets(c.start, c.end);
    const byBucket = new Map<number, { timestamp: number; count: number; by: Record<string, number> }>();
    for (const r of results[0]!) {
      const ts = first + Number(r.b) * width;
      const b = byBucket.get(ts) ?? { timestamp: ts, count: 0, by: {} };
      b.count += Number(r.n);
      b.by[String(r.k)] = (b.by[String(r.k)] ?? 0) + Number(r.n);
      byBucket.set(ts, b);
    }
    return { kind: 'histogram', buckets: [...byBucket.values()].sort((a, b) => a.timestamp - b.timestamp) };
  }
  if (c.kind === 'facets' && c.fieldFacet) {
    return { kind: 'facets', facets: { [c.fieldFacet]: results[0]!.map((r) => ({ value: String(r.v), count: Number(r.n) })) } };
  }
  if (c.kind === 'facets') {
    const facets = Object.fromEntries(EXPLORER_FACETS.map((f, i) => [f, results[i]!.map((r) => ({ value: typeof r.v === 'bigint' ? Number(r.v) : (r.v as string | number), count: Number(r.n) }))]));
    return { kind: 'facets', facets };
  }
  return { kind: 'page', rows: results[0]!.map((r) => ({ id: String(r.id), timestamp: Number(r.timestamp), event_message: String(r.event_message) })) };
}

/** One explorer case: its first run (the answer kept), then `runs` more timed. */
async function timeExplorerCase(conn: DuckDBConnection, c: ExplorerCase, args: Pick<DuckArgs, 'explorer'>, runs: number) {
  const stmts = await prepareExplorer(conn, c, args);
  let t = performance.now();
  const answer = await runExplorer(c, stmts);
  const first = performance.now() - t;
  const samples: number[] = [];
  for (let k = 0; k < runs; k++) {
    t = performance.now();
    await runExplorer(c, stmts);
    samples.push(performance.now() - t);
  }
  for (const stmt of stmts) stmt.destroySync();
  return { first, uncached: percentiles(samples), answer };
}

/** Every explorer case at the same parameters as ours, then the no-match scan of the whole store. */
async function explorer(conn: DuckDBConnection, args: DuckArgs): Promise<Pick<DuckRun, 'explorer' | 'nomatch'>> {
  const out: DuckRun['explorer'] = {};
  for (const c of explorerCases(args.edgeProject)) out[c.label] = await timeExplorerCase(conn, c, args, args.runs);
  // Three runs: a whole-store scan takes seconds at 10M.
  const scan = await conn.prepare(`SELECT count(*) AS n FROM edge_logs WHERE timestamp > $start AND timestamp <= $end AND event_message ILIKE $pattern`);
  scan.bind({ start: BigInt(BENCH_NOW - EXPLORER_ALL_SPAN), end: BigInt(BENCH_NOW), pattern: `%${EXPLORER_NOMATCH}%` }, { start: BIGINT, end: BIGINT, pattern: VARCHAR });
  const samples: number[] = [];
  let count = 0;
  for (let k = 0; k < 3; k++) {
    const t = performance.now();
    count = Number((await scan.runAndReadAll()).getRowsJS()[0]![0]);
    samples.push(performance.now() - t);
  }
  scan.destroySync();
  return { explorer: out, nomatch: { ...percentiles(samples), count } };
}

async function prepareAll(conn: DuckDBConnection, cases: BenchCase[]): Promise<Map<string, DuckDBPreparedStatement>> {
  const out = new Map<string, DuckDBPreparedStatement>();
  for (const c of cases) out.set(c.label, await conn.prepare(SQL[c.endpoint]));
  return out;
}

async function run(args: DuckArgs): Promise<DuckRun> {
  for (const f of [args.dbFile, `${args.dbFile}.wal`]) fs.rmSync(f, { force: true });
  const instance = await DuckDBInstance.create(args.dbFile);
  const conn = await instance.connect();
  const seconds = async (fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    return (performance.now() - t) / 1000;
  };
  // Function edge first, then edge, as ours; each made durable (CHECKPOINT) before it counts.
  const importFnSeconds = await seconds(async () => {
    await conn.run(`CREATE TABLE function_edge_logs AS SELECT * FROM read_ndjson('${args.fnFile}')`);
    await conn.run('CHECKPOINT');
  });
  const importEdgeSeconds = await seconds(async () => {
    await conn.run(`CREATE TABLE edge_logs AS SELECT * FROM read_ndjson('${args.edgeFile}')`);
    await conn.run('CHECKPOINT');
  });
  const count = async (table: string) => Number((await conn.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRowsJS()[0]![0]);
  const records = { fn: await count('function_edge_logs'), edge: await count('edge_logs') };

  const cases = benchCases(args.fnProject, args.edgeProject);
  const stmts = await prepareAll(conn, cases);
  const out: DuckRun['cases'] = {};
  for (const c of cases) {
    const stmt = stmts.get(c.label)!;
    let t = performance.now();
    const rows = apiShape(c, await runCase(stmt, c, BENCH_NOW));
    const first = performance.now() - t;
    const samples: number[] = [];
    for (let k = 1; k <= args.endpointRuns; k++) {
      t = performance.now();
      await runCase(stmt, c, BENCH_NOW + k);
      samples.push(performance.now() - t);
    }
    out[c.label] = { first, uncached: percentiles(samples), rows };
  }
  for (const s of stmts.values()) s.destroySync();
  const explored = await explorer(conn, args);

  // The small import ours receives while its save pause is measured; read with the table's
  // own column types, since the schema inferred from 10k records can differ.
  const columns = (await conn.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE edge_logs)`)).getRowsJS();
  const spec = columns.map(([name, type]) => `'${String(name)}': '${String(type).replace(/'/g, "''")}'`).join(', ');
  const importSaveSeconds = await seconds(async () => {
    await conn.run(`INSERT INTO edge_logs SELECT * FROM read_ndjson('${args.saveFile}', columns = {${spec}})`);
    await conn.run('CHECKPOINT');
  });
  const peakRss = procMemory(process.pid)!.hwm;
  conn.closeSync();
  instance.closeSync();
  return { importFnSeconds, importEdgeSeconds, importSaveSeconds, records, peakRss, cases: out, ...explored };
}

async function restart(args: DuckArgs): Promise<DuckRestart> {
  const instance = await DuckDBInstance.create(args.dbFile);
  const conn = await instance.connect();
  const cases = benchCases(args.fnProject, args.edgeProject);
  const logs = cases.find((c) => c.label === 'logs.all PRO')!;
  const first = await conn.prepare(SQL[logs.endpoint]);
  await runCase(first, logs, BENCH_NOW);
  console.log('first-answer');
  const rssAfterFirstAnswer = procMemory(process.pid)!.rss;
  const stmts = await prepareAll(conn, cases);
  const round: Record<string, number> = {};
  for (const c of cases) {
    const t = performance.now();
    await runCase(stmts.get(c.label)!, c, BENCH_NOW);
    round[c.label] = performance.now() - t;
  }
  const mem = procMemory(process.pid)!;
  conn.closeSync();
  instance.closeSync();
  return { rssAfterFirstAnswer, rssAfterRound: mem.rss, peakRss: mem.hwm, round };
}

/** The edge file with `metadata` as JSON, then each search and field case: one answer (cold), then `runs` (warm). */
async function fields(args: DuckFieldArgs): Promise<DuckFieldRun> {
  metadataAsJson = true;
  for (const f of [args.dbFile, `${args.dbFile}.wal`]) fs.rmSync(f, { force: true });
  const instance = await DuckDBInstance.create(args.dbFile);
  const conn = await instance.connect();
  let t = performance.now();
  await conn.run(
    `CREATE TABLE edge_logs AS SELECT * FROM read_ndjson('${args.edgeFile}', columns = {id: 'VARCHAR', timestamp: 'BIGINT', event_message: 'VARCHAR', project: 'VARCHAR', metadata: 'JSON'})`,
  );
  await conn.run('CHECKPOINT');
  const importSeconds = (performance.now() - t) / 1000;
  const records = Number((await conn.runAndReadAll('SELECT count(*) FROM edge_logs')).getRowsJS()[0]![0]);
  const out: DuckFieldRun['explorer'] = {};
  for (const c of settledCases()) out[c.label] = await timeExplorerCase(conn, c, { explorer: { deep: {} } }, args.runs);
  conn.closeSync();
  instance.closeSync();
  return { importSeconds, records, explorer: out };
}

const [mode, json] = process.argv.slice(2);
const args = JSON.parse(json ?? '{}') as DuckArgs;
if (mode === 'run') console.log(JSON.stringify(await run(args)));
else if (mode === 'restart') console.log(JSON.stringify(await restart(args)));
else if (mode === 'fields') console.log(JSON.stringify(await fields(args as unknown as DuckFieldArgs)));
else throw new Error(`usage: scale-duckdb.ts run|restart|fields '<json>'`);
