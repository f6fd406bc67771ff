/**
 * `npm run bench:endpoints [-- --records N]`: with N function edge + N edge records loaded,
 * p50/p95 of every endpoint for every interval and tier, uncached (the query itself) and
 * cached (over loopback HTTP), cached requests/s with autocannon at 10 connections, and the
 * same queries on a naive wide better-sqlite3 table in the same run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { ENDPOINTS } from '../queries/registry.ts';
import { validateParams } from '../server/endpoints/params.ts';
import { runEndpoint } from '../server/endpoints/run.ts';
import { importFile } from '../server/ingest/import.ts';
import { startServer } from '../server/server.ts';
import { MICROS } from '../server/time.ts';
import { BENCH_DIR, BENCH_NOW, benchFiles, fmt, mb, peakRss, percentiles, timeRuns } from './data.ts';
import { NAIVE_SQL, naiveImport, openNative } from './naive.ts';

const { values } = parseArgs({ options: { records: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '15' } } });
const records = Number(values.records);
const runs = Number(values.runs);
const files = await benchFiles(records);

const dataDir = path.join(BENCH_DIR, `store-endpoints-${records}`);
const fresh = !fs.existsSync(path.join(dataDir, 'store.sqlite'));
const server = await startServer({ dataDir, port: 0, apiKey: 'bench', now: BENCH_NOW });
if (fresh) for (const f of files) await importFile(server.store, f.path, { source: f.source });

const project = server.store.summary().find((s) => s.source === 'deno-relay-logs')!.projects[0]!.ref;
const edgeProject = server.store.summary().find((s) => s.source === 'cloudflare.logs.prod')!.projects[0]!.ref;

const time = (fn: () => unknown) => timeRuns(fn, runs);

async function timeHttp(url: string): Promise<{ p50: number; p95: number }> {
  // One retry: an idle keep-alive socket can be closed by the server just as it is reused.
  const once = () => fetch(url, { headers: { 'X-API-KEY': 'bench' } }).then((r) => r.arrayBuffer());
  const get = () => once().catch(once);
  await get();
  const samples: number[] = [];
  for (let i = 0; i < runs * 4; i++) {
    const t = performance.now();
    await get();
    samples.push(performance.now() - t);
  }
  return percentiles(samples);
}

// The naive baseline, loaded once per record count and kept for later runs.
const nativeFile = path.join(BENCH_DIR, `naive-endpoints-${records}.sqlite`);
if (!fs.existsSync(nativeFile)) {
  const db = openNative(`${nativeFile}.tmp`);
  if (db) {
    for (const f of files) await naiveImport(db, f.path, f.source);
    db.close();
    fs.renameSync(`${nativeFile}.tmp`, nativeFile);
  }
}

const interval: Record<string, { span: number; unit: number }> = {
  '5min': { span: 5 * MICROS.minute, unit: MICROS.second },
  '15min': { span: 15 * MICROS.minute, unit: MICROS.minute },
  '1hr': { span: MICROS.hour, unit: MICROS.minute },
  '1day': { span: MICROS.day, unit: MICROS.hour },
  '7day': { span: 7 * MICROS.day, unit: MICROS.day },
};

const nowUs = BENCH_NOW;
type Case = { endpoint: string; label: string; params: Record<string, string> };
const cases: Case[] = [];
for (const iv of Object.keys(interval)) cases.push({ endpoint: 'functions.invocation-stats', label: iv, params: { project, interval: iv } });
for (const tier of ['FREE', 'PRO', 'PAYG', 'ENTERPRISE']) cases.push({ endpoint: 'logs.all', label: tier, params: { project: edgeProject, project_tier: tier } });
for (const iv of ['minutely', 'hourly', 'daily']) {
  cases.push({ endpoint: 'usage.api-counts', label: iv, params: { project: edgeProject.replace(/[.]/g, '\\.'), interval: iv } });
}

console.log(`\nendpoints bench: ${records.toLocaleString('en-US')} function edge + ${records.toLocaleString('en-US')} edge records, ${new Date().toISOString()}`);
console.log('| endpoint | case | uncached p50 / p95 ms | cached HTTP p50 / p95 ms | naive better-sqlite3 p50 ms | ratio (naive / ours) |');
console.log('|---|---|---|---|---|---|');
const native2 = openNativeForQueries(nativeFile);
for (const c of cases) {
  const def = ENDPOINTS.find((e) => e.name === c.endpoint)!;
  const params = validateParams(def, c.params);
  const ours = time(() => runEndpoint(server.store, def, params, nowUs));
  const qs = new URLSearchParams(c.params).toString();
  const cached = def.cacheSeconds > 0 ? await timeHttp(`${server.url}/api/endpoints/${c.endpoint}?${qs}`) : undefined;
  const naive = native2 ? time(() => native2(c.endpoint, c.params)) : undefined;
  console.log(
    `| ${c.endpoint} | ${c.label} | ${fmt(ours.p50, 2)} / ${fmt(ours.p95, 2)} | ${cached ? `${fmt(cached.p50, 2)} / ${fmt(cached.p95, 2)}` : 'never cached'} | ${naive ? fmt(naive.p50, 2) : 'n/a'} | ${naive ? fmt(naive.p50 / ours.p50, 2) + 'x' : 'n/a'} |`,
  );
}

function openNativeForQueries(file: string): ((endpoint: string, p: Record<string, string>) => unknown) | undefined {
  if (!fs.existsSync(file)) return undefined;
  const loaded = openNative(file, false);
  if (!loaded) return undefined;
  const stmts = {
    inv: loaded.prepare(NAIVE_SQL.invocationStats),
    logs: loaded.prepare(NAIVE_SQL.logsAll),
    api: loaded.prepare(NAIVE_SQL.apiCounts),
  };
  const tier: Record<string, number> = { PRO: 7, PAYG: 90, ENTERPRISE: 90 };
  const api: Record<string, [number, number]> = { hourly: [MICROS.hour, MICROS.hour], daily: [7 * MICROS.day, MICROS.day], minutely: [MICROS.hour, MICROS.minute] };
  return (endpoint, p) => {
    if (endpoint === 'functions.invocation-stats') {
      const w = interval[p.interval!]!;
      const first = nowUs - w.span - ((nowUs - w.span) % w.unit);
      const end = nowUs - (nowUs % w.unit) + w.unit;
      return stmts.inv.all({ unit: w.unit, project: p.project, first, end });
    }
    if (endpoint === 'logs.all') return stmts.logs.all({ project: p.project, cutoff: nowUs - (tier[p.project_tier!] ?? 1) * MICROS.day });
    const [span, unit] = api[p.interval!]!;
    return stmts.api.all({ unit, start: nowUs - span, pattern: p.project });
  };
}

// Cached throughput over loopback, 10 connections.
const cachedUrl = `${server.url}/api/endpoints/functions.invocation-stats?project=${project}&interval=1day`;
const result = await autocannon({ url: cachedUrl, connections: 10, duration: 10, headers: { 'X-API-KEY': 'bench' } });
console.log(`\ncached functions.invocation-stats 1day, autocannon 10 connections 10 s: ${fmt(result.requests.average, 0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, errors ${result.errors + result.non2xx}`);
console.log(`peak RSS of this process: ${fmt(mb(peakRss()), 0)} MB`);
await server.close();
