/**
 * `npm run bench:sync [-- --records 1000000 --dialect bigquery --calls-per-minute 1000000 --keep --cpu-prof DIR]`:
 * a live project's backfill, measured the way a user meets it. The fake Management API
 * (server/testing/fake-management-api.ts) serves N edge records over 7 days from an NDJSON file
 * (bench/sync-records.ts), with the platform's caps (1,000 rows a call, 24 hours a query) and its
 * rate limit off; the real server (`scripts/run-server.mjs serve`: the CLI of server/main.ts) runs
 * on a temp data folder, the connection is made through the HTTP API, and while it backfills
 * three other pages are asked every 50 ms: `logs.all`, `functions.invocation-stats` and the Logs
 * explorer's first page (`/api/logs`), with the Data page's card read every 250 ms (bench/waits.ts:
 * each wait over 100 ms is lined up with what the server's thread was doing, from its activity
 * log). Then DuckDB's `read_ndjson` import of the same file, as a reference. Prints a table and
 * writes bench/data/sync-results-<N>.json. Nothing here is asserted by `npm test`.
 *
 * The app's call budget is lifted (`--sync-calls-per-minute`) so the figure is what the sync
 * itself can do; at the default 50 calls a minute the backfill is held to 50,000 records a
 * minute, whatever the machine.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { FakeManagementApi, type FakeDialect } from '../server/testing/fake-management-api.ts';
import { formatIsoMicros, MICROS } from '../server/time.ts';
import { BENCH_DIR, BENCH_NOW, duBytes, exited, fmt, mib, procMemory, REPO_DIR, sampleRss, waitForLine } from './data.ts';
import { NdjsonTable, SYNC_FROM, syncFile } from './sync-records.ts';
import { describeStalls, probeEvery, stallBreakdown, summarizeWaits, type PageRequest } from './waits.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '1000000' },
    dialect: { type: 'string', default: 'bigquery' },
    'calls-per-minute': { type: 'string', default: '1000000' },
    'probe-ms': { type: 'string', default: '50' },
    keep: { type: 'boolean', default: false },
    // Writes the server's CPU profile (node --cpu-prof) into this folder: where the backfill's time goes.
    'cpu-prof': { type: 'string' },
  },
});
const N = Number(values.records);
const CALLS_PER_MINUTE = Number(values['calls-per-minute']);
const PROBE_MS = Number(values['probe-ms']);
if (!Number.isSafeInteger(N) || N <= 0) throw new Error('--records takes a positive whole number');
if (values.dialect !== 'bigquery' && values.dialect !== 'clickhouse') throw new Error('--dialect takes bigquery or clickhouse');
const DIALECT: FakeDialect = values.dialect;
// Under --now the sync's clock stands still, so its budget never frees a call: it must hold the whole run.
if (!Number.isSafeInteger(CALLS_PER_MINUTE) || CALLS_PER_MINUTE <= N / 1000 + 10) throw new Error(`--calls-per-minute must be a whole number above ${Math.ceil(N / 1000) + 10}, the run's calls: the server runs with --now, whose clock stands still, so the budget never frees a call`);
if (!(PROBE_MS > 0)) throw new Error('--probe-ms takes a positive number');

const KEY = 'bench';
const REF = 'benchsyncprojectabcd';
const TOKEN = 'sbp_bench0123456789abcdef0123456789abcdef';
/** How often the card is read to see the backfill end (ms): the backfill time is known to this much. */
const WATCH_MS = 250;
const TIMEOUT_MS = 3 * 3600_000;

// ---- HTTP ----

/** A connection the server closed under a request (fetch says "fetch failed" with this cause). */
const wasReset = (err: unknown) => ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(String(((err as Error).cause as NodeJS.ErrnoException | undefined)?.code));

/**
 * The bench's own requests over loopback (the measured ones are bench/waits.ts's), the answer's
 * `result`; asked again, up to three times, when the connection was reset under it.
 */
async function result<T>(port: number, method: string, p: string, body?: string): Promise<T> {
  const headers: Record<string, string> = { 'X-API-KEY': KEY };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`http://127.0.0.1:${port}${p}`, { method, headers, body, signal: AbortSignal.timeout(120_000) }).catch((err: unknown) => {
      if (attempt >= 3 || !wasReset(err)) throw err;
      return undefined;
    });
    if (!res) continue;
    const text = await res.text();
    if (res.status < 200 || res.status > 299) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
    return (JSON.parse(text) as { result: T }).result;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

// ---- the run ----

const machine = `${os.cpus().length} vCPU ${os.cpus()[0]?.model.trim() ?? '?'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const loadAtStart = os.loadavg();
const startedAt = new Date().toISOString();
console.error(`sync bench, ${N.toLocaleString('en-US')} edge records over 7 days, ${DIALECT}; ${machine}; load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`);

const file = await syncFile(N);
if (file.generatedSeconds !== null) console.error(`generated ${file.path} (${fmt(mib(file.bytes))} MiB) in ${fmt(file.generatedSeconds)} s`);
let t = performance.now();
const table = NdjsonTable.open(file.path);
console.error(`indexed ${table.length.toLocaleString('en-US')} lines in ${fmt((performance.now() - t) / 1000)} s`);
if (table.length !== N) throw new Error(`${file.path} holds ${table.length} records, not ${N}`);

const fake = new FakeManagementApi({ callsPerMinute: Infinity });
fake.addUser('bench', TOKEN, [REF]).addProject(REF, DIALECT).setTable(REF, 'edge_logs', table);
await fake.listen();

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-sync-bench-'));
// What the server's thread does, to line the long waits up with (server/activity.ts).
const activityFile = `${dataDir}.activity.ndjson`;
const server = spawn(
  process.execPath,
  [...(values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`] : []), path.join(REPO_DIR, 'scripts', 'run-server.mjs'), 'serve', '--data-dir', dataDir, '--port', '0', '--api-key', KEY, '--now', formatIsoMicros(BENCH_NOW), '--sync-calls-per-minute', String(CALLS_PER_MINUTE)],
  { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LOG_EXPLORER_ACTIVITY: activityFile } },
);
// A failed or interrupted bench leaves no server behind, and says where its folder is.
process.on('exit', () => {
  if (server.exitCode !== null || server.signalCode !== null) return;
  server.kill('SIGTERM');
  console.error(`stopped the server; its data folder ${dataDir} is left for a look (delete it when done)`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
const port = Number((await waitForLine(server, /Listening on http:\/\/127\.0\.0\.1:(\d+)/))[1]);
server.stdout!.resume();
const pid = server.pid!;
const rss = sampleRss(pid);

const day = new URLSearchParams({ source: 'edge_logs', start: formatIsoMicros(BENCH_NOW - MICROS.day), end: formatIsoMicros(BENCH_NOW) });
const PAGES: PageRequest[] = [
  { page: 'logs.all PRO', path: `/api/endpoints/logs.all?project=${REF}&project_tier=PRO` },
  { page: 'functions.invocation-stats 1hr', path: `/api/endpoints/functions.invocation-stats?project=${REF}&interval=1hr` },
  { page: 'explorer /api/logs 24h, first page', path: `/api/logs?${day}` },
];
const probes = probeEvery(port, KEY, PAGES, PROBE_MS);

const cpu0 = { server: cpuSeconds(pid), bench: process.cpuUsage() };
const t0 = performance.now();
const created = await result<{ id: string }>(
  port,
  'POST',
  '/api/connections',
  JSON.stringify({ kind: 'supabase', ref: REF, url: fake.url, token: TOKEN, dialect: DIALECT, sources: ['edge_logs'], start: formatIsoMicros(SYNC_FROM), follow: true }),
);
interface Card {
  sources: Record<string, { records: number; state: string; error: string | null; through: number | null }>;
}
const CARD = 'Data page card (every 250 ms)';
const card = probeEvery(port, KEY, [{ page: CARD, path: `/api/connections/${created.id}` }], WATCH_MS);
let last: Card['sources'][string] | undefined;
let progressAt = 0;
for (;;) {
  last = (await result<Card>(port, 'GET', `/api/connections/${created.id}`)).sources['cloudflare.logs.prod']!;
  if (last.state === 'following') break;
  if (last.state === 'failed' || last.state === 'paused') throw new Error(`the sync stopped: ${last.state} ${last.error}`);
  if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`not caught up after ${TIMEOUT_MS / 1000} s: ${JSON.stringify(last)}`);
  if (performance.now() - progressAt > 30_000) {
    progressAt = performance.now();
    console.error(`  ${((performance.now() - t0) / 1000).toFixed(0)} s: ${last.records.toLocaleString('en-US')} records, through ${last.through === null ? '-' : formatIsoMicros(last.through)}, ${last.state}`);
  }
  await sleep(WATCH_MS);
}
const backfillSeconds = (performance.now() - t0) / 1000;
const cpu = { server: cpuSeconds(pid) - cpu0.server, bench: ((u) => (u.user + u.system) / 1e6)(process.cpuUsage(cpu0.bench)) };
const probed = new Map([...(await probes.stop()), ...(await card.stop())]);
const waits = summarizeWaits(probed);
const loadAtEnd = os.loadavg();
await sleep(500); // the activity log is written every 200 ms
const stalls = stallBreakdown(probed, activityFile);

// Everything arrived once: the store and the card count N, and the fake gave N rows in all.
const stored = (await result<Array<{ alias: string; count: number }>>(port, 'GET', '/api/sources')).find((s) => s.alias === 'edge_logs')?.count ?? 0;
const ok = fake.calls.filter((c) => c.status === 200);
const rows = ok.reduce((n, c) => n + c.rows, 0);
const problems = [
  ...(stored !== N ? [`the store holds ${stored} edge records, not ${N}`] : []),
  ...(last.records !== N ? [`the card counts ${last.records} records, not ${N}`] : []),
  ...(rows !== N ? [`the fake answered ${rows} rows in all, not ${N}`] : []),
  ...(ok.length !== fake.calls.length ? [`${fake.calls.length - ok.length} calls were not answered 200`] : []),
];

// The kernel's high-water mark too: a peak between two samples.
const peakRss = Math.max(rss.max(), procMemory(pid)?.hwm ?? 0);
rss.stop();
process.kill(pid, 'SIGTERM');
if ((await exited(server)) !== 0) problems.push('the server did not exit 0 after SIGTERM');
const storeBytes = await duBytes(dataDir);
if (!values.keep) for (const f of [dataDir, activityFile]) fs.rmSync(f, { recursive: true, force: true });
await fake.close();
table.close();

// DuckDB, as a user would load the same records (scale-duckdb.ts does the same for its files).
const duckDir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-sync-duckdb-'));
const duck = await DuckDBInstance.create(path.join(duckDir, 'sync.duckdb'));
const conn = await duck.connect();
t = performance.now();
await conn.run(`CREATE TABLE edge_logs AS SELECT * FROM read_ndjson('${file.path}')`);
await conn.run('CHECKPOINT');
const duckSeconds = (performance.now() - t) / 1000;
const duckRows = Number((await conn.runAndReadAll('SELECT count(*) FROM edge_logs')).getRowsJS()[0]![0]);
conn.closeSync();
duck.closeSync();
fs.rmSync(duckDir, { recursive: true, force: true });
if (duckRows !== N) problems.push(`DuckDB read ${duckRows} records, not ${N}`);

// ---- the table ----

const results = {
  startedAt,
  machine,
  load: { start: loadAtStart, end: loadAtEnd },
  records: N,
  dialect: DIALECT,
  callsPerMinute: CALLS_PER_MINUTE,
  fileBytes: file.bytes,
  backfillSeconds,
  recordsPerSecond: N / backfillSeconds,
  calls: fake.calls.length,
  cpuSeconds: cpu,
  serverPeakRss: peakRss,
  storeBytes,
  waits,
  stalls,
  duckdb: { importSeconds: duckSeconds, recordsPerSecond: N / duckSeconds },
  problems,
};
fs.writeFileSync(path.join(BENCH_DIR, `sync-results-${N}.json`), `${JSON.stringify(results, null, 1)}\n`);

const line = (figure: string, value: string) => console.log(`| ${figure} | ${value} |`);
console.log(`\nSync of ${N.toLocaleString('en-US')} edge records over 7 days (${DIALECT}), ${startedAt}; ${machine}; load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')} at the start, ${loadAtEnd.map((l) => l.toFixed(2)).join(' ')} at the end\n`);
console.log('| figure | value |');
console.log('|---|---|');
line('backfill, POST to following (s)', `${fmt(backfillSeconds)} (±${WATCH_MS / 1000})`);
line('records/s', fmt(N / backfillSeconds, 0));
line('calls to the remote (1,000 rows, ≤ 24 h each) / per second', `${fake.calls.length.toLocaleString('en-US')} / ${fmt(fake.calls.length / backfillSeconds)}`);
line('CPU during the backfill: server / bench process (fake, probes) (s)', `${fmt(cpu.server)} / ${fmt(cpu.bench)}`);
line('server peak RSS (MiB)', fmt(mib(peakRss), 0));
line('store on disk (MiB); the NDJSON file (MiB)', `${fmt(mib(storeBytes), 0)}; ${fmt(mib(file.bytes), 0)}`);
for (const [label, w] of Object.entries(waits)) {
  line(`${label}: longest wait / p99 / p50 (ms), requests`, `${fmt(w.max)} / ${fmt(w.p99)} / ${fmt(w.p50)}, ${w.count}${w.failures ? `, ${w.failures} not 200 or no answer` : ''}`);
}
line('DuckDB read_ndjson + CHECKPOINT of the same file (s); records/s', `${fmt(duckSeconds)}; ${fmt(N / duckSeconds, 0)}`);
console.log(`\n${describeStalls(stalls)}`);
for (const l of stalls.longest) console.log(`  ${l.page} ${fmt(l.ms, 0)} ms: ${l.during}`);
for (const p of problems) console.log(`!!! ${p}`);
if (problems.length) process.exitCode = 1;
