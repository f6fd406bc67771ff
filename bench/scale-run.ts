/**
 * One measured run of the scale bench in its own process (so peak RSS is its own):
 * `tsx bench/scale-run.ts ours|naive N`. Prints one JSON object.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { ENDPOINTS } from '../queries/registry.ts';
import { validateParams } from '../server/endpoints/params.ts';
import { runEndpoint } from '../server/endpoints/run.ts';
import { importFile } from '../server/ingest/import.ts';
import { startServer } from '../server/server.ts';
import { MICROS } from '../server/time.ts';
import { BENCH_DIR, BENCH_NOW, benchFiles, peakRss, percentiles, timeRuns } from './data.ts';
import { NAIVE_SQL, naiveImport, openNative } from './naive.ts';

const [engine = 'ours', nArg = '100000'] = process.argv.slice(2);
const n = Number(nArg);
const files = await benchFiles(n);
const RUNS = 11;
const out: Record<string, unknown> = { engine, records: n };

const p50 = (xs: number[]) => percentiles(xs).p50;
const p99 = (xs: number[]) => percentiles(xs).p99;
const timeIt = (fn: () => unknown) => timeRuns(fn, RUNS).p50;

const INTERVALS = ['5min', '15min', '1hr', '1day', '7day'];
const API = ['minutely', 'hourly', 'daily'];
const WINDOW: Record<string, { span: number; unit: number }> = {
  '5min': { span: 5 * MICROS.minute, unit: MICROS.second },
  '15min': { span: 15 * MICROS.minute, unit: MICROS.minute },
  '1hr': { span: MICROS.hour, unit: MICROS.minute },
  '1day': { span: MICROS.day, unit: MICROS.hour },
  '7day': { span: 7 * MICROS.day, unit: MICROS.day },
};
const API_WINDOW: Record<string, [number, number]> = { hourly: [MICROS.hour, MICROS.hour], daily: [7 * MICROS.day, MICROS.day], minutely: [MICROS.hour, MICROS.minute] };

if (engine === 'ours') {
  const dataDir = path.join(BENCH_DIR, `scale-${n}`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  const server = await startServer({ dataDir, port: 0, apiKey: 'bench', now: BENCH_NOW });
  const get = (p: string) =>
    fetch(`${server.url}${p}`, { headers: { 'X-API-KEY': 'bench' } }).then(async (r) => {
      await r.arrayBuffer();
      return r.status;
    });

  // Imports; while the edge file imports, logs.all is asked continuously over loopback.
  const fnFile = files.find((f) => f.source === 'deno-relay-logs')!;
  const edgeFile = files.find((f) => f.source === 'cloudflare.logs.prod')!;
  let t = performance.now();
  await importFile(server.store, fnFile.path, { source: fnFile.source });
  out.importFnMBs = fnFile.bytes / 1048576 / ((performance.now() - t) / 1000);
  const project = server.store.summary().find((s) => s.source === 'deno-relay-logs')!.projects[0]!.ref;
  let importing = true;
  const during: number[] = [];
  const prober = (async () => {
    while (importing) {
      const s = performance.now();
      await get(`/api/endpoints/logs.all?project=${project}&project_tier=PRO`).catch(() => 0);
      during.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  t = performance.now();
  await importFile(server.store, edgeFile.path, { source: edgeFile.source });
  out.importEdgeMBs = edgeFile.bytes / 1048576 / ((performance.now() - t) / 1000);
  importing = false;
  await prober;
  out.logsDuringImportP99 = during.length ? p99(during) : null;
  out.logsDuringImportSamples = during.length;

  // Uncached query times (the query itself, no cache).
  const edgeProject = server.store.summary().find((s) => s.source === 'cloudflare.logs.prod')!.projects[0]!.ref;
  const q = (name: string, params: Record<string, string>) => {
    const def = ENDPOINTS.find((e) => e.name === name)!;
    const v = validateParams(def, params);
    return timeIt(() => runEndpoint(server.store, def, v, BENCH_NOW));
  };
  for (const iv of INTERVALS) out[`stats ${iv}`] = q('functions.invocation-stats', { project, interval: iv });
  for (const iv of API) out[`api ${iv}`] = q('usage.api-counts', { project: edgeProject, interval: iv });
  out['logs.all'] = q('logs.all', { project: edgeProject, project_tier: 'PRO' });

  // Cached requests over loopback.
  const cachedPath = `/api/endpoints/functions.invocation-stats?project=${project}&interval=1day`;
  await get(cachedPath);
  const lat: number[] = [];
  for (let i = 0; i < 200; i++) {
    const s = performance.now();
    await get(cachedPath);
    lat.push(performance.now() - s);
  }
  out.cachedP50 = p50(lat);
  const ac = await autocannon({ url: `${server.url}${cachedPath}`, connections: 10, duration: 5, headers: { 'X-API-KEY': 'bench' } });
  out.cachedReqPerSec = ac.requests.average;
  out.cachedErrors = ac.errors + ac.non2xx;

  // The longest time answers stop while a save runs (cached requests every 5 ms).
  let saving = true;
  const gaps: number[] = [];
  const pinger = (async () => {
    while (saving) {
      const s = performance.now();
      await get(cachedPath);
      gaps.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  t = performance.now();
  await server.store.save();
  out.saveSeconds = (performance.now() - t) / 1000;
  saving = false;
  await pinger;
  out.longestPauseDuringSave = Math.max(0, ...gaps);
  out.peakRss = peakRss();
  await server.close();

  // Cold start: a new server process on this store, until its first endpoint answer.
  t = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--data-dir', dataDir, '--port', '0', '--api-key', 'bench', '--now', new Date(BENCH_NOW / 1000).toISOString()], {
    cwd: path.resolve(import.meta.dirname, '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve) => {
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /Listening on (\S+)/.exec(buf);
      if (m) resolve(m[1]!);
    });
  });
  const first = await fetch(`${url}/api/endpoints/usage.api-counts?project=${edgeProject}&interval=daily`, { headers: { 'X-API-KEY': 'bench' } });
  await first.arrayBuffer();
  out.coldStartSeconds = (performance.now() - t) / 1000;
  child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
} else {
  const file = path.join(BENCH_DIR, `scale-naive-${n}.sqlite`);
  const db = openNative(file);
  if (!db) {
    console.log(JSON.stringify({ engine, unavailable: true }));
    process.exit(0);
  }
  for (const f of files) {
    const t = performance.now();
    await naiveImport(db, f.path, f.source);
    out[f.source === 'cloudflare.logs.prod' ? 'importEdgeMBs' : 'importFnMBs'] = f.bytes / 1048576 / ((performance.now() - t) / 1000);
  }
  const project = (db.prepare(`SELECT project, count(*) c FROM logs WHERE source = 'deno-relay-logs' GROUP BY 1 ORDER BY 2 DESC LIMIT 1`).get() as { project: string }).project;
  const edgeProject = (db.prepare(`SELECT project, count(*) c FROM logs WHERE source = 'cloudflare.logs.prod' GROUP BY 1 ORDER BY 2 DESC LIMIT 1`).get() as { project: string }).project;
  const inv = db.prepare(NAIVE_SQL.invocationStats);
  const api = db.prepare(NAIVE_SQL.apiCounts);
  const logs = db.prepare(NAIVE_SQL.logsAll);
  for (const iv of INTERVALS) {
    const w = WINDOW[iv]!;
    const first = BENCH_NOW - w.span - ((BENCH_NOW - w.span) % w.unit);
    const end = BENCH_NOW - (BENCH_NOW % w.unit) + w.unit;
    out[`stats ${iv}`] = timeIt(() => inv.all({ unit: w.unit, project, first, end }));
  }
  for (const iv of API) {
    const [span, unit] = API_WINDOW[iv]!;
    out[`api ${iv}`] = timeIt(() => api.all({ unit, start: BENCH_NOW - span, pattern: edgeProject }));
  }
  out['logs.all'] = timeIt(() => logs.all({ project: edgeProject, cutoff: BENCH_NOW - 7 * MICROS.day }));
  out.peakRss = peakRss();
  db.close();
  fs.rmSync(file, { force: true });
}
console.log(JSON.stringify(out));
