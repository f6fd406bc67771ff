/**
 * The import end to end into a real store: ids and dedupe, how the source and the project
 * are told, the report, the hot fields and the stored full record. Fixtures are small
 * hand-written records; expected values are written out by hand.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { constants as zlibConstants, gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { findSource, sourceInfo, type SourceName } from '../sources.ts';
import { LogStore } from '../store/log-store.ts';
import { MAX_RECORD_BYTES } from './formats.ts';
import { ImportCancelled, ImportFailure, importFile, importStream, ImportTooLarge, type ImportOptions } from './import.ts';
import { activeParseWorkers } from './parse-host.ts';
import { canonicalRecord } from './normalize.ts';

// 2023-03-23T14:40:18.149123Z and one second later.
const T0 = Date.UTC(2023, 2, 23, 14, 40, 18) * 1000 + 149_123;
const T1 = T0 + 1_000_000;
const P = 'abcdefghijklmnopqrst';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const dirs: string[] = [];
const openStores = new Set<LogStore>();

async function newStore(): Promise<LogStore> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-import-'));
  dirs.push(dir);
  const store = await LogStore.open(dir);
  openStores.add(store);
  return store;
}

afterEach(async () => {
  for (const s of openStores) await s.close();
  openStores.clear();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const ndjson = (...records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';
const run = (store: LogStore, body: string, opts: ImportOptions = {}) => importStream(store, [Buffer.from(body)], opts);

type Edge = { id?: string; timestamp?: unknown; project?: string; event_message?: string; metadata?: unknown };
function edge(o: Edge & { path?: string } = {}) {
  const p = o.path ?? '/rest/v1/todos';
  const rec: Record<string, unknown> = {
    id: 'e-1',
    timestamp: T0,
    project: P,
    event_message: `GET | 200 | ${p}`,
    metadata: { request: { method: 'GET', url: `https://${P}.supabase.co${p}`, path: p }, response: { status_code: 200 } },
    ...o,
  };
  delete rec.path;
  for (const k of Object.keys(rec)) if (rec[k] === undefined) delete rec[k];
  return rec;
}

function fnEdge(meta: Record<string, unknown>, id = 'f-1', ts: unknown = T0) {
  return { id, timestamp: ts, event_message: 'POST | 200 | hello', metadata: { project_ref: P, function_id: 'fn-hello', ...meta } };
}

// Every stored row of a source, in insertion order (the records of these tests share one hour).
const rowsOf = (store: LogStore, table: string) => store.dump(findSource(table)!.name);
const hotProjects = (store: LogStore, table: string) => rowsOf(store, table).map((r) => r.project);
const ids = (store: LogStore, table: string) => rowsOf(store, table).map((r) => r.id);
const count = (store: LogStore, table: string) => rowsOf(store, table).length;
function fullRecords(store: LogStore, source: SourceName): unknown[] {
  return store.dump(source).map((r) => JSON.parse(canonicalRecord(r.raw, sourceInfo(source), r.project)));
}

describe('ids', () => {
  it('an id present in the record is kept as is', async () => {
    const store = await newStore();
    await run(store, ndjson(edge({ id: 'given-id-1' })), { source: 'edge_logs' });
    expect(ids(store, 'edge_logs')).toEqual(['given-id-1']);
  });

  it('a numeric id is kept as its decimal text', async () => {
    const store = await newStore();
    await run(store, ndjson({ ...edge(), id: 12345 }), { source: 'edge_logs' });
    expect(ids(store, 'edge_logs')).toEqual(['12345']);
  });

  it('without an id, a UUID-shaped id is derived and stored in the full record too', async () => {
    const store = await newStore();
    await run(store, ndjson(edge({ id: undefined })), { source: 'edge_logs' });
    const [id] = ids(store, 'edge_logs');
    expect(id).toMatch(UUID_RE);
    expect((fullRecords(store, 'cloudflare.logs.prod')[0] as { id: string }).id).toBe(id);
  });

  it('the same id-less record imported twice: the second import reports 1 duplicate and imports 0', async () => {
    const store = await newStore();
    const body = ndjson(edge({ id: undefined }));
    expect(await run(store, body, { source: 'edge_logs' })).toMatchObject({ imported: 1, duplicates: 0 });
    expect(await run(store, body, { source: 'edge_logs' })).toMatchObject({ imported: 0, duplicates: 1 });
    expect(count(store, 'edge_logs')).toBe(1);
  });

  it('same content in the ingest shape and the query shape derives the same id', async () => {
    const store = await newStore();
    const ingest = { timestamp: T0, project: P, event_message: 'm', metadata: { request: { path: '/rest/v1/x' }, response: { status_code: 200 } } };
    const query = { timestamp: T0, project: P, event_message: 'm', metadata: [{ request: [{ path: '/rest/v1/x' }], response: [{ status_code: 200 }] }] };
    expect(await run(store, ndjson(ingest), { source: 'edge_logs' })).toMatchObject({ imported: 1, duplicates: 0 });
    expect(await run(store, ndjson(query), { source: 'edge_logs' })).toMatchObject({ imported: 0, duplicates: 1 });
    expect(ids(store, 'edge_logs')).toHaveLength(1);
  });

  it('the same instant written as µs and as ISO derives the same id', async () => {
    const store = await newStore();
    expect(await run(store, ndjson(edge({ id: undefined, timestamp: T0 })), { source: 'edge_logs' })).toMatchObject({ imported: 1 });
    expect(await run(store, ndjson(edge({ id: undefined, timestamp: '2023-03-23T14:40:18.149123Z' })), { source: 'edge_logs' })).toMatchObject({
      imported: 0,
      duplicates: 1,
    });
  });

  it('the same id-less record as NDJSON and as CSV derives the same id', async () => {
    const store = await newStore();
    const meta = { request: { path: '/rest/v1/x' } };
    await run(store, ndjson({ timestamp: T0, project: P, event_message: 'a, "b"', metadata: meta }), { source: 'edge_logs' });
    const csv = `timestamp,project,event_message,metadata\n${T0},${P},"a, ""b""","{""request"":{""path"":""/rest/v1/x""}}"\n`;
    expect(await run(store, csv, { source: 'edge_logs' })).toMatchObject({ format: 'csv', imported: 0, duplicates: 1 });
  });

  it('records that differ only in event_message derive different ids', async () => {
    const store = await newStore();
    const r = await run(store, ndjson(edge({ id: undefined, event_message: 'one' }), edge({ id: undefined, event_message: 'two' })), {
      source: 'edge_logs',
    });
    expect(r).toMatchObject({ imported: 2, duplicates: 0 });
  });
});

describe('dedupe', () => {
  it('a repeated id within one file is imported once; duplicates counts the repeats', async () => {
    const store = await newStore();
    const r = await run(store, ndjson(edge({ id: 'a' }), edge({ id: 'b' }), edge({ id: 'a' }), edge({ id: 'a', event_message: 'changed' })), {
      source: 'edge_logs',
    });
    expect(r).toMatchObject({ imported: 2, duplicates: 2, rejected: 0 });
    expect(ids(store, 'edge_logs')).toEqual(['a', 'b']);
  });

  it('the first occurrence wins: the stored record is the first one read', async () => {
    const store = await newStore();
    await run(store, ndjson(edge({ id: 'a', event_message: 'first' }), edge({ id: 'a', event_message: 'second' })), { source: 'edge_logs' });
    expect(fullRecords(store, 'cloudflare.logs.prod').map((r) => (r as { event_message: string }).event_message)).toEqual(['first']);
  });

  it('across imports: ids already stored count as duplicates', async () => {
    const store = await newStore();
    expect(await run(store, ndjson(edge({ id: 'a' }), edge({ id: 'b' })), { source: 'edge_logs' })).toMatchObject({ imported: 2, duplicates: 0 });
    expect(await run(store, ndjson(edge({ id: 'b' }), edge({ id: 'c' }), edge({ id: 'a' })), { source: 'edge_logs' })).toMatchObject({
      imported: 1,
      duplicates: 2,
    });
    expect(ids(store, 'edge_logs')).toEqual(['a', 'b', 'c']);
  });

  it('ids are per source: the same id in two sources is two records', async () => {
    const store = await newStore();
    await run(store, ndjson(edge({ id: 'same' })), { source: 'edge_logs' });
    expect(await run(store, ndjson({ id: 'same', timestamp: T0, project: P, event_message: 'x' }), { source: 'postgres_logs' })).toMatchObject({
      imported: 1,
      duplicates: 0,
    });
  });

  it('more records than one insert batch (2000) dedupe across batch boundaries', async () => {
    const store = await newStore();
    const recs = Array.from({ length: 2500 }, (_, i) => edge({ id: `r${i % 2100}`, timestamp: T0 + i }));
    expect(await run(store, ndjson(...recs), { source: 'edge_logs' })).toMatchObject({ imported: 2100, duplicates: 400 });
    expect(count(store, 'edge_logs')).toBe(2100);
  });
});

describe('source', () => {
  const plain = { id: 'x', timestamp: T0, project: P, event_message: 'hello', metadata: { host: 'db-default', project_ref: P } };

  it('by explicit Logflare name', async () => {
    const store = await newStore();
    expect((await run(store, ndjson(plain), { source: 'pgbouncer.logs.prod' })).source).toBe('pgbouncer.logs.prod');
    expect(count(store, 'pgbouncer_logs')).toBe(1);
  });

  it('by alias, case-insensitively', async () => {
    const store = await newStore();
    expect((await run(store, ndjson(plain), { source: 'PostgREST_Logs' })).source).toBe('postgREST.logs.prod');
    expect(count(store, 'postgrest_logs')).toBe(1);
  });

  it('an explicit source wins over the file name and the record shape', async () => {
    const store = await newStore();
    expect((await run(store, ndjson(edge()), { source: 'auth_logs', fileName: 'edge_logs.ndjson' })).source).toBe('gotrue.logs.prod');
  });

  it('an unknown explicit source is an ImportFailure naming it, and nothing is written', async () => {
    const store = await newStore();
    const p = run(store, ndjson(edge()), { source: 'nginx_logs' });
    await expect(p).rejects.toBeInstanceOf(ImportFailure);
    await expect(run(store, ndjson(edge()), { source: 'nginx_logs' })).rejects.toThrow(/^unknown source "nginx_logs"; expected one of cloudflare\.logs\.prod, /);
    expect(count(store, 'edge_logs')).toBe(0);
  });

  it('by file name: my_function_edge_logs_export.ndjson is deno-relay-logs, not edge_logs', async () => {
    const store = await newStore();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-files-'));
    dirs.push(dir);
    const file = path.join(dir, 'my_function_edge_logs_export.ndjson');
    fs.writeFileSync(file, ndjson(plain));
    const r = await importFile(store, file);
    expect(r).toMatchObject({ file: 'my_function_edge_logs_export.ndjson', source: 'deno-relay-logs', imported: 1 });
    expect(count(store, 'function_edge_logs')).toBe(1);
    expect(count(store, 'edge_logs')).toBe(0);
  });

  it('by file name: the Logflare name postgREST.logs.prod.json (shape alone cannot tell)', async () => {
    const store = await newStore();
    expect((await run(store, ndjson(plain), { fileName: 'postgREST.logs.prod.json' })).source).toBe('postgREST.logs.prod');
  });

  it('by file name: the Logflare name storage.logs.prod.2 inside a longer file name', async () => {
    const store = await newStore();
    const rec = { ...plain, metadata: { project: P } };
    expect((await run(store, ndjson(rec), { fileName: 'export-storage.logs.prod.2.ndjson' })).source).toBe('storage.logs.prod.2');
  });

  it('a file name wins over the record shape', async () => {
    const store = await newStore();
    expect((await run(store, ndjson(edge()), { fileName: 'auth_logs.ndjson' })).source).toBe('gotrue.logs.prod');
  });

  const byShape: Array<[label: string, source: SourceName, record: unknown]> = [
    ['edge (request.url + response.status_code)', 'cloudflare.logs.prod', edge()],
    [
      'function edge (function_id + execution_time_ms)',
      'deno-relay-logs',
      fnEdge({ execution_time_ms: 9, request: { url: 'https://x.supabase.co/functions/v1/hello' }, response: { status_code: 200 } }),
    ],
    ['function runtime event (function_id + event_type)', 'deno-subhosting-events', fnEdge({ event_type: 'log', execution_id: 'ex-1', level: 'info' })],
    ['postgres (parsed.error_severity)', 'postgres.logs', { timestamp: T0, project: P, event_message: 'x', metadata: { host: 'db', parsed: { error_severity: 'LOG' } } }],
    [
      'auth (auth_event)',
      'gotrue.logs.prod',
      { timestamp: T0, project: P, event_message: 'x', metadata: { auth_event: { action: 'login', actor_id: 'u1' } } },
    ],
    ['auth (component + msg)', 'gotrue.logs.prod', { timestamp: T0, project: P, event_message: 'x', metadata: { component: 'api', msg: 'request started' } }],
    [
      'realtime (context.application = realtime)',
      'realtime.logs.prod',
      { timestamp: T0, event_message: 'x', metadata: { context: { application: 'realtime' }, level: 'error', project: P } },
    ],
    ['storage (tenantId, reqId)', 'storage.logs.prod.2', { timestamp: T0, event_message: 'x', metadata: { tenantId: P, reqId: 'r-1', project: P } }],
  ];
  for (const [label, source, record] of byShape) {
    it(`by record shape: ${label} is ${source}`, async () => {
      const store = await newStore();
      expect(await run(store, ndjson(record))).toMatchObject({ source, imported: 1, rejected: 0 });
    });
  }

  it('by record shape, in the query shape', async () => {
    const store = await newStore();
    const rec = { timestamp: T0, project: P, event_message: 'x', metadata: [{ request: [{ url: 'https://x/rest/v1/t' }], response: [{ status_code: 200 }] }] };
    expect((await run(store, ndjson(rec))).source).toBe('cloudflare.logs.prod');
  });

  it('by record shape, from a CSV metadata cell', async () => {
    const store = await newStore();
    const csv = `timestamp,event_message,metadata\n${T0},x,"{""function_id"":""fn-1"",""execution_time_ms"":5,""project_ref"":""${P}""}"\n`;
    expect(await run(store, csv)).toMatchObject({ source: 'deno-relay-logs', format: 'csv', imported: 1 });
  });

  it('a pgbouncer-like record with no name cannot be told: ImportFailure asking for the source, nothing written', async () => {
    const store = await newStore();
    const rec = { timestamp: T0, project: P, event_message: 'new connection', metadata: { host: 'db-default' } };
    const p = run(store, ndjson(rec), { fileName: 'export.ndjson' });
    await expect(p).rejects.toBeInstanceOf(ImportFailure);
    await expect(run(store, ndjson(rec))).rejects.toThrow(
      'cannot tell the source of this file from its name or its records; give it explicitly (source name or alias)',
    );
    expect(store.summary().reduce((n, s) => n + s.count, 0)).toBe(0);
  });
});

describe('project', () => {
  // Each record also carries a decoy in the other place, to show which one is read.
  const decoyMeta = { project_ref: 'decoy-meta', project: 'decoy-meta', host: 'h' };
  const fromRecord: Array<[SourceName, string]> = [
    ['cloudflare.logs.prod', 'edge_logs'],
    ['postgres.logs', 'postgres_logs'],
    ['gotrue.logs.prod', 'auth_logs'],
    ['postgREST.logs.prod', 'postgrest_logs'],
    ['pgbouncer.logs.prod', 'pgbouncer_logs'],
  ];
  for (const [source, table] of fromRecord) {
    it(`${source}: from the record's project field, not metadata`, async () => {
      const store = await newStore();
      await run(store, ndjson({ timestamp: T0, project: 'rec-project', event_message: 'x', metadata: decoyMeta }), { source });
      expect(hotProjects(store, table)).toEqual(['rec-project']);
    });
  }

  const fromMeta: Array<[SourceName, string, string]> = [
    ['deno-relay-logs', 'function_edge_logs', 'project_ref'],
    ['deno-subhosting-events', 'function_logs', 'project_ref'],
    ['realtime.logs.prod', 'realtime_logs', 'project'],
    ['storage.logs.prod.2', 'storage_logs', 'project'],
  ];
  for (const [source, table, key] of fromMeta) {
    it(`${source}: from metadata.${key}, not the record's project field`, async () => {
      const store = await newStore();
      const metadata = { project_ref: 'decoy-ref', project: 'decoy-project', [key]: 'meta-project' };
      await run(store, ndjson({ timestamp: T0, project: 'decoy-top', event_message: 'x', metadata }), { source });
      expect(hotProjects(store, table)).toEqual(['meta-project']);
    });
  }

  it('metadata.project_ref is read through the query shape too', async () => {
    const store = await newStore();
    await run(store, ndjson({ timestamp: T0, event_message: 'x', metadata: [{ project_ref: 'q-project', function_id: 'fn' }] }), {
      source: 'function_edge_logs',
    });
    expect(hotProjects(store, 'function_edge_logs')).toEqual(['q-project']);
  });

  /** An edge record lacking a project, served from a custom domain: its host names no project ref. */
  const unnamed = (id: string) => edge({ id, project: undefined, metadata: { request: { method: 'GET', url: 'https://api.example.com/rest/v1/todos', path: '/rest/v1/todos' }, response: { status_code: 200 } } });

  it('the project option fills records that lack one', async () => {
    const store = await newStore();
    const r = await run(store, ndjson(unnamed('a')), { source: 'edge_logs', project: 'opt-project' });
    expect(r).toMatchObject({ imported: 1, rejected: 0 });
    expect(hotProjects(store, 'edge_logs')).toEqual(['opt-project']);
    expect((fullRecords(store, 'cloudflare.logs.prod')[0] as { project: string }).project).toBe('opt-project');
  });

  it('the project option fills function records without metadata.project_ref', async () => {
    const store = await newStore();
    await run(store, ndjson({ timestamp: T0, event_message: 'x', metadata: { function_id: 'fn' } }), { source: 'deno-relay-logs', project: 'opt-project' });
    expect(hotProjects(store, 'function_edge_logs')).toEqual(['opt-project']);
  });

  it('a record with its own project keeps it even when the option is given', async () => {
    const store = await newStore();
    await run(store, ndjson(edge({ id: 'own', project: 'own-project' }), unnamed('none')), {
      source: 'edge_logs',
      project: 'opt-project',
    });
    expect(hotProjects(store, 'edge_logs')).toEqual(['own-project', 'opt-project']);
  });

  it('without the option, records lacking a project are rejected with a reason naming the field', async () => {
    const store = await newStore();
    const r = await run(store, ndjson(edge({ id: 'a' }), unnamed('b')), { source: 'edge_logs' });
    expect(r).toMatchObject({
      imported: 1,
      rejected: 1,
      errors: [{ line: 2, reason: 'no project: the record has no project and no project option was given' }],
    });
  });

  it('a function record lacking metadata.project_ref is rejected with "no project" naming metadata.project_ref', async () => {
    const store = await newStore();
    const r = await run(store, ndjson({ timestamp: T0, project: 'top-level-is-not-read', event_message: 'x', metadata: { function_id: 'fn' } }), {
      source: 'deno-relay-logs',
    });
    expect(r.errors).toEqual([{ line: 1, reason: 'no project: the record has no metadata.project_ref and no project option was given' }]);
  });
});

describe('report', () => {
  const good = (id: string) => edge({ id });
  const missingTs = { id: 'c', project: P, event_message: 'no ts', metadata: {} };
  const badTs = { id: 'd', timestamp: 'yesterday', project: P, event_message: 'x', metadata: {} };
  const noProject = { id: 'e', timestamp: T0, event_message: 'x', metadata: {} };

  it('NDJSON: errors by line (blank lines counted); imported + duplicates + rejected = records in the file', async () => {
    const store = await newStore();
    const lines = [
      JSON.stringify(good('a')), // 1
      '{"id":"b","timestamp":', // 2 malformed
      '', // 3 blank, skipped silently
      JSON.stringify(missingTs), // 4
      JSON.stringify(badTs), // 5
      JSON.stringify(noProject), // 6
      JSON.stringify(good('f')), // 7
      JSON.stringify(good('a')), // 8 duplicate
      '42', // 9 not an object
    ];
    const r = await run(store, lines.join('\n') + '\n', { source: 'edge_logs' });
    expect(r).toEqual({
      source: 'cloudflare.logs.prod',
      format: 'ndjson',
      imported: 2,
      duplicates: 1,
      rejected: 5,
      sources: { 'cloudflare.logs.prod': { imported: 2, duplicates: 1, rejected: 5 } },
      errors: [
        { line: 2, reason: expect.stringMatching(/^invalid JSON: /) },
        { line: 4, reason: 'missing timestamp' },
        { line: 5, reason: 'unrecognized timestamp "yesterday"' },
        { line: 6, reason: 'no project: the record has no project and no project option was given' },
        { line: 9, reason: 'not a JSON object' },
      ],
      errorsOmitted: 0,
    });
    expect(r.imported + r.duplicates + r.rejected).toBe(8);
  });

  it('CSV: errors by file line (header is line 1)', async () => {
    const store = await newStore();
    const csv = [
      'id,timestamp,project,event_message,metadata', // 1
      `a,${T0},${P},ok,`, // 2
      `b,${T0}`, // 3 wrong number of cells
      `c,,${P},no ts,`, // 4
      `d,yesterday,${P},x,`, // 5
      `e,${T0},,x,`, // 6 no project
      `f,${T1},${P},ok,`, // 7
      `a,${T0},${P},ok,`, // 8 duplicate
      `g,${T0},${P},x,{not json`, // 9 metadata cell is not JSON
    ];
    const r = await run(store, csv.join('\r\n') + '\r\n', { source: 'edge_logs' });
    expect(r).toEqual({
      source: 'cloudflare.logs.prod',
      format: 'csv',
      imported: 2,
      duplicates: 1,
      rejected: 5,
      sources: { 'cloudflare.logs.prod': { imported: 2, duplicates: 1, rejected: 5 } },
      errors: [
        { line: 3, reason: expect.stringMatching(/^invalid CSV: /) },
        { line: 4, reason: 'missing timestamp' },
        { line: 5, reason: 'unrecognized timestamp "yesterday"' },
        { line: 6, reason: 'no project: the record has no project and no project option was given' },
        { line: 9, reason: 'metadata is not valid JSON' },
      ],
      errorsOmitted: 0,
    });
    expect(r.imported + r.duplicates + r.rejected).toBe(8);
  });

  it('JSON array: errors by 0-based index', async () => {
    const store = await newStore();
    const body = JSON.stringify([good('a'), 42, missingTs, badTs, noProject, good('f'), good('a')]);
    const r = await run(store, body, { source: 'edge_logs' });
    expect(r).toEqual({
      source: 'cloudflare.logs.prod',
      format: 'json-array',
      imported: 2,
      duplicates: 1,
      rejected: 4,
      sources: { 'cloudflare.logs.prod': { imported: 2, duplicates: 1, rejected: 4 } },
      errors: [
        { index: 1, reason: 'not a JSON object' },
        { index: 2, reason: 'missing timestamp' },
        { index: 3, reason: 'unrecognized timestamp "yesterday"' },
        { index: 4, reason: 'no project: the record has no project and no project option was given' },
      ],
      errorsOmitted: 0,
    });
    expect(r.imported + r.duplicates + r.rejected).toBe(7);
  });

  it('a truncated JSON array keeps the records before the cut and reports the cut', async () => {
    const store = await newStore();
    const body = `[${JSON.stringify(good('a'))},${JSON.stringify(good('b'))},{"id":"c","times`;
    const r = await run(store, body, { source: 'edge_logs' });
    expect(r).toMatchObject({ imported: 2, rejected: 1, errors: [{ index: 2, reason: expect.stringMatching(/^invalid JSON after element 2/) }] });
  });

  it('BOM, CRLF and blank lines in NDJSON: all good records imported, nothing rejected', async () => {
    const store = await newStore();
    const body = `\uFEFF${JSON.stringify(good('a'))}\r\n\r\n${JSON.stringify(good('b'))}\r\n\r\n`;
    expect(await run(store, body, { source: 'edge_logs' })).toMatchObject({ imported: 2, rejected: 0, errors: [] });
    expect(ids(store, 'edge_logs')).toEqual(['a', 'b']);
  });

  it('BOM and CRLF in CSV: the first header cell is "id", not "\\uFEFFid"', async () => {
    const store = await newStore();
    const body = `\uFEFFid,timestamp,project\r\na,${T0},${P}\r\n\r\nb,${T1},${P}\r\n`;
    expect(await run(store, body, { source: 'edge_logs' })).toMatchObject({ imported: 2, rejected: 0 });
    expect(ids(store, 'edge_logs')).toEqual(['a', 'b']);
  });

  it('a truncated last NDJSON line is rejected with its line number; the lines before are imported', async () => {
    const store = await newStore();
    const body = `${JSON.stringify(good('a'))}\n${JSON.stringify(good('b'))}\n{"id":"c","timestamp":${T0},"pro`;
    const r = await run(store, body, { source: 'edge_logs' });
    expect(r).toMatchObject({ imported: 2, rejected: 1, errors: [{ line: 3, reason: expect.stringMatching(/^invalid JSON: /) }] });
  });

  it('an empty {"result": []} with a known source imports nothing, fails nothing and says the file held no records', async () => {
    const store = await newStore();
    expect(await run(store, '{"result": []}', { source: 'edge_logs' })).toEqual({
      source: 'cloudflare.logs.prod',
      format: 'result',
      imported: 0,
      duplicates: 0,
      rejected: 0,
      sources: { 'cloudflare.logs.prod': { imported: 0, duplicates: 0, rejected: 0 } },
      errors: [],
      errorsOmitted: 0,
      note: 'the file held no records',
    });
  });

  it('a header-only CSV and an empty JSON array say the file held no records; a file of duplicates or rejects does not', async () => {
    const store = await newStore();
    for (const [body, format] of [
      ['id,timestamp,project,event_message,metadata\r\n', 'csv'],
      ['id,timestamp,event_message\n\n\n', 'csv'],
      ['[]', 'json-array'],
    ] as const) {
      const r = await run(store, body, { source: 'edge_logs' });
      expect(r).toEqual({
        source: 'cloudflare.logs.prod',
        format,
        imported: 0,
        duplicates: 0,
        rejected: 0,
        sources: { 'cloudflare.logs.prod': { imported: 0, duplicates: 0, rejected: 0 } },
        errors: [],
        errorsOmitted: 0,
        note: 'the file held no records',
      });
    }
    expect(await run(store, ndjson(good('a')), { source: 'edge_logs' })).not.toHaveProperty('note');
    expect(await run(store, ndjson(good('a')), { source: 'edge_logs' })).not.toHaveProperty('note');
    expect(await run(store, ndjson(missingTs), { source: 'edge_logs' })).not.toHaveProperty('note');
  });

  it('a header-only CSV with no name: the failure says the file held no records', async () => {
    const store = await newStore();
    await expect(run(store, 'id,timestamp,event_message\n')).rejects.toThrow(
      'cannot tell the source of this file from its name, and it held no records; give it explicitly (source name or alias)',
    );
  });

  it('an empty JSON array with no name: ImportFailure, the source cannot be told', async () => {
    const store = await newStore();
    await expect(run(store, '[]')).rejects.toThrow(/^cannot tell the source/);
  });

  it('the error list is capped at 1000 entries; errorsOmitted counts the rest, rejected counts all', async () => {
    const store = await newStore();
    const lines = Array.from({ length: 1003 }, (_, i) => JSON.stringify({ id: `bad${i}`, project: P, event_message: 'no ts' }));
    const r = await run(store, `${lines.join('\n')}\n${JSON.stringify(good('ok'))}\n`, { source: 'edge_logs' });
    expect(r).toMatchObject({ imported: 1, rejected: 1003, errorsOmitted: 3 });
    expect(r.errors).toHaveLength(1000);
    expect(r.errors[999]).toEqual({ line: 1000, reason: 'missing timestamp' });
  });

  it('progress ends with every byte of the input and every normalized record counted', async () => {
    const store = await newStore();
    const body = ndjson(good('a'), good('b'), good('a'), { id: 'x' });
    const seen: Array<{ bytes: number; records: number }> = [];
    await run(store, body, { source: 'edge_logs', onProgress: (p) => seen.push(p) });
    expect(seen.at(-1)).toEqual({ bytes: Buffer.byteLength(body), records: 3 });
  });

  it('two imports into one source at once are serialized: every record lands once', async () => {
    const store = await newStore();
    const [r1, r2] = await Promise.all([
      run(store, ndjson(good('a'), good('b'), good('c')), { source: 'edge_logs' }),
      run(store, ndjson(good('c'), good('d'), good('a')), { source: 'edge_logs' }),
    ]);
    expect(r1.imported + r2.imported).toBe(4);
    expect(r1.duplicates + r2.duplicates).toBe(2);
    expect([...ids(store, 'edge_logs')].sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('the format comes from the content, not the extension: CSV named .json, NDJSON named .csv', async () => {
    const store = await newStore();
    const csv = `id,timestamp,project\na,${T0},${P}\n`;
    expect(await run(store, csv, { fileName: 'edge_logs.json' })).toMatchObject({ format: 'csv', imported: 1 });
    expect(await run(store, ndjson(good('b')), { fileName: 'edge_logs.csv' })).toMatchObject({ format: 'ndjson', imported: 1 });
  });

  it('the report carries the file name when importing a file', async () => {
    const store = await newStore();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-files-'));
    dirs.push(dir);
    const file = path.join(dir, 'edge_logs.ndjson');
    fs.writeFileSync(file, ndjson(good('a')));
    expect(await importFile(store, file)).toEqual({
      file: 'edge_logs.ndjson',
      source: 'cloudflare.logs.prod',
      format: 'ndjson',
      imported: 1,
      duplicates: 0,
      rejected: 0,
      sources: { 'cloudflare.logs.prod': { imported: 1, duplicates: 0, rejected: 0 } },
      errors: [],
      errorsOmitted: 0,
    });
  });
});

describe('gzip-compressed exports', () => {
  const good = (id: string) => edge({ id });
  const missingTs = { id: 'bad', project: P, event_message: 'no ts', metadata: {} };
  const bodies = {
    ndjson: [JSON.stringify(good('a')), '', '{"id":', JSON.stringify(missingTs), JSON.stringify(good('b')), JSON.stringify(good('a'))].join('\n') + '\n',
    'json-array': JSON.stringify([good('a'), missingTs, good('b'), good('a')]),
    csv: ['id,timestamp,project,event_message,metadata', `a,${T0},${P},ok,`, '', `bad,,${P},no ts,`, `b,${T1},${P},ok,`, 'short'].join('\n') + '\n',
  };

  for (const [format, body] of Object.entries(bodies)) {
    it(`${format}: the same report and records as the plain file, lines counted in the content`, async () => {
      const plainStore = await newStore();
      const gzStore = await newStore();
      const plain = await run(plainStore, body, { source: 'edge_logs' });
      const gz = await importStream(gzStore, [gzipSync(body)], { source: 'edge_logs' });
      expect(plain).toMatchObject({ format, imported: 2, rejected: format === 'json-array' ? 1 : 2 });
      expect(gz).toEqual(plain);
      expect(ids(gzStore, 'edge_logs')).toEqual(ids(plainStore, 'edge_logs'));
    });
  }

  it('the bad lines of a compressed NDJSON file are numbered as in the decompressed text', async () => {
    const store = await newStore();
    const r = await importStream(store, [gzipSync(bodies.ndjson)], { source: 'edge_logs' });
    // Line 2 is blank; 3 is broken JSON, 4 lacks a timestamp, 6 repeats a.
    expect(r).toMatchObject({ imported: 2, duplicates: 1, rejected: 2, errors: [{ line: 3 }, { line: 4, reason: 'missing timestamp' }] });
  });

  it('a .ndjson.gz file from disk: the source from its name, progress counted in compressed bytes', async () => {
    const store = await newStore();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-gz-'));
    dirs.push(dir);
    const file = path.join(dir, 'edge_logs.ndjson.gz');
    const gz = gzipSync(ndjson(good('a'), good('b'), good('c')));
    fs.writeFileSync(file, gz);
    const seen: Array<{ bytes: number; records: number }> = [];
    const r = await importFile(store, file, { onProgress: (p) => seen.push(p) });
    expect(r).toEqual({
      file: 'edge_logs.ndjson.gz',
      source: 'cloudflare.logs.prod',
      format: 'ndjson',
      imported: 3,
      duplicates: 0,
      rejected: 0,
      sources: { 'cloudflare.logs.prod': { imported: 3, duplicates: 0, rejected: 0 } },
      errors: [],
      errorsOmitted: 0,
    });
    expect(seen.at(-1)).toEqual({ bytes: gz.length, records: 3 });
  });

  it('two gzip members one after the other import as one file', async () => {
    const store = await newStore();
    const r = await importStream(store, [Buffer.concat([gzipSync(ndjson(good('a'), good('b'))), gzipSync(ndjson(good('c')))])], { source: 'edge_logs' });
    expect(r).toMatchObject({ imported: 3, rejected: 0 });
    expect(ids(store, 'edge_logs')).toEqual(['a', 'b', 'c']);
  });

  it('a truncated archive: the records before the damage are imported, and one error says where it stopped', async () => {
    const store = await newStore();
    const N = 3000;
    // Random messages compress little, so half the archive holds a good share of the records.
    const lines = Array.from({ length: N }, (_, i) => JSON.stringify({ ...good(`r${i}`), event_message: randomBytes(60).toString('hex') }));
    const full = gzipSync(lines.join('\n') + '\n');
    const cut = full.subarray(0, Math.floor(full.length / 2));
    const r = await importStream(store, [cut], { source: 'edge_logs' });
    // Independently: what zlib can decompress of the cut archive, and the whole lines in it.
    const partial = gunzipSync(cut, { finishFlush: zlibConstants.Z_SYNC_FLUSH });
    const whole = partial.toString('utf8').split('\n').length - 1;
    expect(whole).toBeGreaterThan(N / 4);
    expect(whole).toBeLessThan(N);
    expect(ids(store, 'edge_logs')).toEqual(lines.slice(0, whole).map((_, i) => `r${i}`));
    // The cut line is the damage, not a bad record of its own.
    expect(r).toMatchObject({ imported: whole, rejected: 1, errorsOmitted: 0 });
    expect(r.errors).toEqual([
      {
        line: whole + 1,
        reason: `the gzip archive is damaged after ${cut.length} bytes of compressed input (${partial.length} bytes decompressed): the compressed data is damaged at this line, so it and the rest of the file were not read (zlib: unexpected end of file)`,
      },
    ]);
  });

  it('the damage is listed even when the error list is full', async () => {
    const store = await newStore();
    const bad = Array.from({ length: 1005 }, (_, i) => JSON.stringify({ id: `bad${i}`, project: P, event_message: 'no ts' }));
    const gz = gzipSync(`${bad.join('\n')}\n${JSON.stringify(good('ok'))}\n`);
    const r = await importStream(store, [gz.subarray(0, gz.length - 4)], { source: 'edge_logs' });
    expect(r).toMatchObject({ imported: 1, rejected: 1006, errorsOmitted: 5 });
    expect(r.errors).toHaveLength(1001);
    expect(r.errors[1000]!.reason).toMatch(/^the gzip archive is damaged after /);
  });
});

describe('a damaged later gzip member', () => {
  const N = 1200;
  const M = 300;
  const first = Array.from({ length: N }, (_, i) => JSON.stringify(edge({ id: `g${i}` })));
  const second = Array.from({ length: M }, (_, i) => JSON.stringify(edge({ id: `h${i}` })));
  const text1 = first.join('\n') + '\n';

  // Member 2 is damaged from its first deflate byte (BFINAL 1, BTYPE 11: no such block type), so
  // none of its lines decompress: exactly the N records of member 1 are expected.
  for (const parser of ['worker', 'inline'] as const) {
    it(`${parser}: exactly the N records of the good member are kept, the damage names line N + 1, and the import finishes`, async () => {
      const store = await newStore();
      const m1 = gzipSync(text1);
      const m2 = Buffer.from(gzipSync(second.join('\n') + '\n'));
      m2[10] = 0xff;
      const r = await importStream(store, [Buffer.concat([m1, m2])], { source: 'edge_logs', parser });
      expect(r).toEqual({
        source: 'cloudflare.logs.prod',
        format: 'ndjson',
        imported: N,
        duplicates: 0,
        rejected: 1,
        sources: { 'cloudflare.logs.prod': { imported: N, duplicates: 0, rejected: 1 } },
        errors: [
          {
            line: N + 1,
            reason: `the gzip archive is damaged after ${m1.length + 10} bytes of compressed input (${Buffer.byteLength(text1)} bytes decompressed): the compressed data is damaged at this line, so it and the rest of the file were not read (zlib: invalid block type)`,
          },
        ],
        errorsOmitted: 0,
      });
      expect(ids(store, 'edge_logs')).toEqual(first.map((_, i) => `g${i}`));
    });
  }
});

describe('decompressed size limit', () => {
  it('past maxContentBytes the import fails with ImportTooLarge and the store is as it was, batches written before included', async () => {
    const store = await newStore();
    await run(store, ndjson(edge({ id: 'before' })), { source: 'edge_logs' });
    const lines = Array.from({ length: 20_000 }, (_, i) => JSON.stringify(edge({ id: `big${i}` })));
    const text = lines.join('\n') + '\n';
    const limit = Math.floor(Buffer.byteLength(text) / 2);
    let written = 0;
    const failed = importStream(store, [gzipSync(text)], { source: 'edge_logs', maxContentBytes: limit, onProgress: (p) => (written = p.records) });
    await expect(failed).rejects.toBeInstanceOf(ImportTooLarge);
    await expect(failed).rejects.toThrow(
      `the decompressed size of the file passed the limit of ${limit} bytes; the import failed and nothing from this file was kept (a failed import leaves the store as it was)`,
    );
    // Batches had been written (the rollback had something to undo).
    expect(written).toBeGreaterThanOrEqual(1000);
    expect(ids(store, 'edge_logs')).toEqual(['before']);
    // At exactly the limit it imports.
    const exact = await importStream(store, [gzipSync(text)], { source: 'edge_logs', maxContentBytes: Buffer.byteLength(text) });
    expect(exact).toMatchObject({ imported: 20_000, rejected: 0 });
  });
});

describe('cancelling an import', () => {
  /** One gzip member of ~64 MiB of a single short record line (~230 KB compressed); built once. */
  let bombMember: Buffer | undefined;
  /** A gzip bomb: 3000 distinct records (written in several batches), then `members` x 64 MiB of one line repeated. */
  function gzipBomb(members: number): Buffer {
    if (!bombMember) {
      const line = JSON.stringify({ id: 'bomb-dup', timestamp: T0, project: P }) + '\n';
      bombMember = gzipSync(Buffer.alloc(Math.floor((64 * 1024 * 1024) / line.length) * line.length, line), { level: 9 });
    }
    const head = gzipSync(Array.from({ length: 3000 }, (_, i) => JSON.stringify(edge({ id: `bomb-${i}` }))).join('\n') + '\n');
    return Buffer.concat([head, ...Array.from({ length: members }, () => bombMember!)]);
  }

  for (const parser of ['worker', 'inline'] as const) {
    it(`${parser}: an aborted gzip bomb stops at once and keeps nothing; an import started right after succeeds within 20 s`, async () => {
      const store = await newStore();
      // ~256 MiB of lines: minutes of parsing, were it not stopped.
      const body = gzipBomb(4);
      expect(body.length).toBeLessThan(2 * 1024 * 1024);
      const controller = new AbortController();
      let abortedAt = 0;
      const bomb = importStream(store, [body], {
        source: 'edge_logs',
        parser,
        signal: controller.signal,
        onProgress: (p) => {
          // Once records are written: the rollback has something to undo.
          if (p.records < 3000 || controller.signal.aborted) return;
          abortedAt = performance.now();
          controller.abort(new Error('the client went away'));
        },
      });
      bomb.catch(() => undefined);
      await vi.waitUntil(() => abortedAt > 0, { timeout: 20_000, interval: 10 });
      const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the next import did not finish within 20 s of the abort')), 20_000).unref());
      const after = await Promise.race([run(store, ndjson(edge({ id: 'after-1' }), edge({ id: 'after-2' })), { source: 'edge_logs', parser }), late]);
      expect(performance.now() - abortedAt).toBeLessThan(20_000);
      expect(after).toMatchObject({ imported: 2, duplicates: 0, rejected: 0 });
      await expect(bomb).rejects.toBeInstanceOf(ImportCancelled);
      await expect(bomb).rejects.toThrow('the import was cancelled (the client went away); nothing from it was kept');
      expect(ids(store, 'edge_logs')).toEqual(['after-1', 'after-2']);
      // The parser has stopped: no worker is busy, and the process is idle.
      expect(activeParseWorkers().size).toBe(0);
      const cpu = process.cpuUsage();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const used = process.cpuUsage(cpu);
      expect((used.user + used.system) / 1000).toBeLessThan(300);
    }, 60_000);
  }

  it('a signal aborted before the import starts: ImportCancelled, nothing read or written', async () => {
    const store = await newStore();
    const controller = new AbortController();
    controller.abort();
    await expect(run(store, ndjson(edge({ id: 'x' })), { source: 'edge_logs', signal: controller.signal })).rejects.toThrow('the import was cancelled (This operation was aborted); nothing from it was kept');
    expect(ids(store, 'edge_logs')).toEqual([]);
  });
});

describe('per-record limit', () => {
  const good = (id: string) => edge({ id });
  // A record padded past the limit by its message.
  const huge = (id: string) => ({ ...good(id), event_message: 'x'.repeat(MAX_RECORD_BYTES) });

  it(`JSON array and {"result": [...]}: an element over ${MAX_RECORD_BYTES} bytes is rejected at its index, the others stored`, async () => {
    for (const wrap of [(s: string) => s, (s: string) => `{"result": ${s}}`]) {
      const store = await newStore();
      const body = wrap(`[${[good('a'), huge('big'), good('b')].map((r) => JSON.stringify(r)).join(',')}]`);
      const r = await run(store, body, { source: 'edge_logs' });
      expect(r).toMatchObject({ imported: 2, rejected: 1, errors: [{ index: 1, reason: `element longer than ${MAX_RECORD_BYTES} bytes` }] });
      expect(ids(store, 'edge_logs')).toEqual(['a', 'b']);
    }
  }, 20_000);

  it(`CSV: a row over ${MAX_RECORD_BYTES} bytes is rejected at its line, the rows around it stored`, async () => {
    const store = await newStore();
    const row = (id: string, msg: string) => `${id},${T0},${P},"${msg}",`;
    const body = ['id,timestamp,project,event_message,metadata', row('a', 'ok'), row('big', 'y\n'.repeat(MAX_RECORD_BYTES / 2)), row('b', 'ok')].join('\n') + '\n';
    const r = await run(store, body, { source: 'edge_logs' });
    // The long row starts on line 3 and spans MAX_RECORD_BYTES / 2 + 1 lines; b is on the line after.
    expect(r).toMatchObject({ imported: 2, rejected: 1, errors: [{ line: 3, reason: `row longer than ${MAX_RECORD_BYTES} bytes` }] });
    expect(ids(store, 'edge_logs')).toEqual(['a', 'b']);
  }, 20_000);
});

describe('hot fields', () => {
  const families: Array<[path: string, bits: number]> = [
    ['/rest/v1/todos', 1],
    ['/storage/v1/object/public/a.png', 2],
    ['/auth/v1/token', 4],
    ['/realtime/v1/websocket', 8],
    ['/storage/v1/object/auth/avatar.png', 2 | 4],
    ['/rest/v1/rpc/realtime_check', 1 | 8],
    ['/functions/v1/hello', 0],
  ];
  for (const [p, bits] of families) {
    it(`edge: path ${p} has families ${bits}`, async () => {
      const store = await newStore();
      await run(store, ndjson(edge({ path: p })), { source: 'edge_logs' });
      expect(rowsOf(store, 'edge_logs').map((r) => r.families)).toEqual([bits]);
    });
  }

  const edgeRows = (store: LogStore) => rowsOf(store, 'edge_logs').map(({ url, families, status, ts }) => ({ url, families, status, ts }));

  it('edge: url, families from metadata.request.path (not the URL), status and ts', async () => {
    const store = await newStore();
    const rec = {
      id: 'a',
      timestamp: T0,
      project: P,
      event_message: 'x',
      metadata: { request: { url: 'https://x.supabase.co/auth/v1/user?x=1', path: '/rest/v1/todos' }, response: { status_code: 404 } },
    };
    await run(store, ndjson(rec), { source: 'edge_logs' });
    expect(edgeRows(store)).toEqual([{ url: 'https://x.supabase.co/auth/v1/user?x=1', families: 1, status: 404, ts: T0 }]);
  });

  it('edge: without request.path, families come from the URL path (query string ignored)', async () => {
    const store = await newStore();
    const rec = { id: 'a', timestamp: T0, project: P, event_message: 'x', metadata: { request: { url: 'https://x.supabase.co/storage/v1/object/a?next=/rest' } } };
    await run(store, ndjson(rec), { source: 'edge_logs' });
    expect(edgeRows(store)).toEqual([{ url: 'https://x.supabase.co/storage/v1/object/a?next=/rest', families: 2, status: null, ts: T0 }]);
  });

  it('edge: no request at all stores an empty url, families 0 and a null status', async () => {
    const store = await newStore();
    await run(store, ndjson({ id: 'a', timestamp: T0, project: P, event_message: 'x' }), { source: 'edge_logs' });
    expect(edgeRows(store)).toEqual([{ url: '', families: 0, status: null, ts: T0 }]);
  });

  it('edge: repeated URLs are stored once in the urls dictionary', async () => {
    const store = await newStore();
    await run(store, ndjson(edge({ id: 'a' }), edge({ id: 'b' }), edge({ id: 'c', path: '/auth/v1/token' })), { source: 'edge_logs' });
    expect(store.urls.slice(0, 100)).toEqual([
      { id: 1, text: `https://${P}.supabase.co/rest/v1/todos` },
      { id: 2, text: `https://${P}.supabase.co/auth/v1/token` },
    ]);
  });

  const fnRows = (store: LogStore) =>
    rowsOf(store, 'function_edge_logs').map(({ functionId, exec, status, project }) => ({ function_id: functionId, exec, status, project }));

  it('function edge: function id, execution time and status', async () => {
    const store = await newStore();
    await run(
      store,
      ndjson(
        fnEdge({ function_id: 'fn-a', execution_time_ms: 9, response: { status_code: 200 } }, 'a'),
        fnEdge({ function_id: 'fn-b', execution_time_ms: 12.5, response: { status_code: 503 } }, 'b'),
      ),
      { source: 'function_edge_logs' },
    );
    expect(fnRows(store)).toEqual([
      { function_id: 'fn-a', exec: 9, status: 200, project: P },
      { function_id: 'fn-b', exec: 12.5, status: 503, project: P },
    ]);
  });

  it('function edge: a missing execution time and status are null; the record is still imported', async () => {
    const store = await newStore();
    const r = await run(store, ndjson(fnEdge({ function_id: 'fn-a' }, 'a')), { source: 'function_edge_logs' });
    expect(r.imported).toBe(1);
    expect(fnRows(store)).toEqual([{ function_id: 'fn-a', exec: null, status: null, project: P }]);
  });

  it('function edge: the query shape gives the same hot fields', async () => {
    const store = await newStore();
    const rec = { id: 'q', timestamp: T0, event_message: 'x', metadata: [{ project_ref: P, function_id: 'fn-q', execution_time_ms: 7, response: [{ status_code: 201 }] }] };
    await run(store, ndjson(rec), { source: 'function_edge_logs' });
    expect(fnRows(store)).toEqual([{ function_id: 'fn-q', exec: 7, status: 201, project: P }]);
  });

  it('function runtime events: the function id is stored', async () => {
    const store = await newStore();
    await run(store, ndjson(fnEdge({ function_id: 'fn-ev', event_type: 'log' }, 'ev')), { source: 'function_logs' });
    expect(rowsOf(store, 'function_logs').map((r) => r.functionId)).toEqual(['fn-ev']);
  });
});

describe('stored full record', () => {
  it('edge: JSON with id, timestamp in µs, project, event_message and metadata in the query shape', async () => {
    const store = await newStore();
    const rec = {
      id: 'full-1',
      timestamp: '2023-03-23T14:40:18.149123Z',
      project: P,
      event_message: 'GET | 200 | ü',
      metadata: { request: { path: '/rest/v1/t', headers: { host: 'h' } }, response: { status_code: 200 } },
    };
    await run(store, ndjson(rec), { source: 'edge_logs' });
    expect(fullRecords(store, 'cloudflare.logs.prod')).toEqual([
      {
        id: 'full-1',
        timestamp: T0,
        project: P,
        event_message: 'GET | 200 | ü',
        metadata: [{ request: [{ path: '/rest/v1/t', headers: [{ host: 'h' }] }], response: [{ status_code: 200 }] }],
      },
    ]);
  });

  it('function edge: each read back by its address among several records', async () => {
    const store = await newStore();
    await run(store, ndjson(fnEdge({ execution_time_ms: 1 }, 'a', T0), fnEdge({ execution_time_ms: 2 }, 'b', T1)), { source: 'deno-relay-logs' });
    expect(fullRecords(store, 'deno-relay-logs')).toEqual([
      { id: 'a', timestamp: T0, event_message: 'POST | 200 | hello', metadata: [{ project_ref: P, function_id: 'fn-hello', execution_time_ms: 1 }] },
      { id: 'b', timestamp: T1, event_message: 'POST | 200 | hello', metadata: [{ project_ref: P, function_id: 'fn-hello', execution_time_ms: 2 }] },
    ]);
  });

  it('a CSV record: the JSON metadata cell is parsed, event_message keeps its quotes, commas and newline', async () => {
    const store = await newStore();
    const csv =
      'timestamp,id,event_message,metadata\r\n' +
      `${T0},csv-1,"GET | 200 | ""quoted"", with comma\nand newline","[{""request"":[{""path"":""/rest/v1/t""}],""response"":[{""status_code"":200}]}]"\r\n`;
    await run(store, csv, { source: 'edge_logs', project: P });
    expect(fullRecords(store, 'cloudflare.logs.prod')).toEqual([
      {
        id: 'csv-1',
        timestamp: T0,
        project: P,
        event_message: 'GET | 200 | "quoted", with comma\nand newline',
        metadata: [{ request: [{ path: '/rest/v1/t' }], response: [{ status_code: 200 }] }],
      },
    ]);
  });

  it('a record without metadata stores an empty metadata array and an empty event_message', async () => {
    const store = await newStore();
    await run(store, ndjson({ id: 'bare', timestamp: T0, project: P }), { source: 'postgres_logs' });
    expect(fullRecords(store, 'postgres.logs')).toEqual([{ id: 'bare', timestamp: T0, project: P, event_message: '', metadata: [] }]);
  });
});
