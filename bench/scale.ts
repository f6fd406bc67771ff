/**
 * `npm run bench [-- --sizes 1000000,3000000 --runs 21 --keep --server-dir DIR]`: the product measured the way a
 * new user meets it, beside DuckDB on the same files in the same run. Per size N (records per
 * source): `npm run serve` on a fresh folder, both files imported over HTTP, logs.all probed
 * during the edge import and during a small import's save, every endpoint timed uncached and
 * cached over loopback, the folder's size after a SIGTERM, a restart on it; then DuckDB in its
 * own process (bench/scale-duckdb.ts) on the same files and queries, its answers checked
 * against ours. Prints one table per size and writes bench/data/results-<N>.json.
 *
 * Only HTTP: nothing here imports the server's store or endpoints (see bench/README.md).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { formatIsoMicros } from '../server/time.ts';
import {
  BENCH_DIR,
  BENCH_NOW,
  benchCases,
  benchFiles,
  duBytes,
  exited,
  fmt,
  mib,
  percentiles,
  procMemory,
  REPO_DIR,
  sampleRss,
  SAVE_RECORDS,
  saveFile,
  waitForLine,
  type BenchCase,
  type BenchFile,
  type Percentiles,
} from './data.ts';
import type { DuckArgs, DuckRestart, DuckRun, Row } from './scale-duckdb.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '21' },
    keep: { type: 'boolean', default: false },
    // Another checkout whose `npm run serve` to measure (e.g. a stable commit while this tree changes).
    'server-dir': { type: 'string', default: REPO_DIR },
  },
});
const SERVER_DIR = path.resolve(values['server-dir']!);
const sizes = values.sizes!.split(',').map(Number);
const RUNS = Number(values.runs);
if (sizes.some((n) => !Number.isSafeInteger(n) || n <= 0) || !(RUNS >= 1)) throw new Error('--sizes takes positive integers, --runs a count');
const KEY = 'bench';

// ---- HTTP, as any client would speak it ----

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** Loopback requests on keep-alive connections of its own. */
class Client {
  private agent = new http.Agent({ keepAlive: true });
  constructor(readonly port: number) {}

  private once(method: string, p: string, body?: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { 'X-API-KEY': KEY };
      if (body !== undefined) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      const req = http.request({ host: '127.0.0.1', port: this.port, method, path: p, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
        res.on('error', reject);
      });
      req.on('error', reject);
      // A stuck server fails the bench instead of hanging it.
      req.setTimeout(120_000, () => req.destroy(new Error(`${method} ${p}: no answer in 120 s`)));
      req.end(body);
    });
  }

  /** One retry when the server has just closed an idle keep-alive connection. */
  request(method: string, p: string, body?: string): Promise<Answer> {
    return this.once(method, p, body).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') return this.once(method, p, body);
      throw err;
    });
  }

  async result<T>(method: string, p: string, body?: string): Promise<T> {
    const a = await this.request(method, p, body);
    if (a.status !== 200) throw new Error(`${method} ${p}: ${a.status} ${a.body.slice(0, 300)}`);
    return (JSON.parse(a.body) as { result: T }).result;
  }

  setClock(us: number): Promise<unknown> {
    return this.result('PUT', '/api/clock', JSON.stringify({ mode: 'fixed', now: formatIsoMicros(us) }));
  }

  close(): void {
    this.agent.destroy();
  }
}

interface ImportReport {
  imported: number;
  duplicates: number;
  rejected: number;
}

/** POST /api/imports with the file streamed as the raw body; seconds until the answer. */
function postFile(port: number, file: BenchFile): Promise<{ seconds: number; report: ImportReport }> {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const q = new URLSearchParams({ source: file.source, filename: path.basename(file.path) });
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/api/imports?${q}`,
        agent: false,
        headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/x-ndjson', 'Content-Length': file.bytes },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`import of ${file.path}: ${res.statusCode} ${body.slice(0, 300)}`));
          resolve({ seconds: (performance.now() - t) / 1000, report: (JSON.parse(body) as { result: ImportReport }).result });
        });
      },
    );
    req.on('error', reject);
    fs.createReadStream(file.path, { highWaterMark: 1 << 20 }).on('error', reject).pipe(req);
  });
}

/** Asks `p` back to back on its own connection until stopped; the waits in ms. */
function probe(port: number, p: string): { stop: () => Promise<{ waits: number[]; failures: number }> } {
  const client = new Client(port);
  let running = true;
  let failures = 0;
  const waits: number[] = [];
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      const a = await client.request('GET', p).catch(() => undefined);
      waits.push(performance.now() - t);
      if (a?.status !== 200) failures++;
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      client.close();
      return { waits, failures };
    },
  };
}

// ---- the server process ----

/** Parent pid of every process, from /proc/<pid>/stat (the field after the command's ")"). */
function parentPids(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      out.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/**
 * The pid of the process listening on 127.0.0.1:port among the descendants of `root`: the
 * socket's inode from /proc/net/tcp, then the descendant holding a descriptor to it. `npm run
 * serve` runs npm → sh → tsx → node; this finds the last whatever the chain becomes.
 */
function listeningPid(root: number, port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const line = fs
    .readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find((f) => f[1] === `0100007F:${hexPort}` && f[3] === '0A');
  if (!line) throw new Error(`nothing listens on 127.0.0.1:${port}`);
  const socket = `socket:[${line[9]}]`;
  const parents = parentPids();
  const descendants: number[] = [];
  const queue = [root];
  while (queue.length) {
    const p = queue.shift()!;
    for (const [child, parent] of parents) if (parent === p) (descendants.push(child), queue.push(child));
  }
  for (const pid of descendants) {
    let fds: string[] = [];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === socket) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  throw new Error(`no descendant of ${root} holds the socket listening on port ${port}`);
}

interface Served {
  npm: ChildProcess;
  /** The node process that listens (and holds the store). */
  pid: number;
  port: number;
  client: Client;
  spawnedAt: number;
  listeningAt: number;
}

/** Servers still running: stopped if the bench itself is interrupted or fails. */
const live = new Set<number>();
process.on('exit', () => {
  for (const pid of live) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone already
    }
  }
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

/** `npm run serve -- --data-dir DIR --port 0 --api-key bench --now <BENCH_NOW>` until it listens. */
async function serve(dataDir: string): Promise<Served> {
  const spawnedAt = performance.now();
  const args = ['run', 'serve', '--', '--data-dir', dataDir, '--port', '0', '--api-key', KEY, '--now', formatIsoMicros(BENCH_NOW)];
  const npm = spawn('npm', args, { cwd: SERVER_DIR, stdio: ['ignore', 'pipe', 'inherit'] });
  const m = await waitForLine(npm, /Listening on http:\/\/127\.0\.0\.1:(\d+)/);
  const listeningAt = performance.now();
  npm.stdout!.resume(); // keep draining what it prints later
  const port = Number(m[1]);
  const pid = listeningPid(npm.pid!, port);
  live.add(pid);
  return { npm, pid, port, client: new Client(port), spawnedAt, listeningAt };
}

/** SIGTERM to the server process (it saves and exits), then npm's exit; seconds it took. */
async function stop(s: Served): Promise<number> {
  const t = performance.now();
  s.client.close();
  process.kill(s.pid, 'SIGTERM');
  const code = await exited(s.npm);
  live.delete(s.pid);
  if (code !== 0) throw new Error(`npm run serve exited ${code} after SIGTERM`);
  return (performance.now() - t) / 1000;
}

const endpointPath = (c: BenchCase) => `/api/endpoints/${c.endpoint}?${new URLSearchParams(c.params)}`;
const cacheable = (c: BenchCase) => c.endpoint !== 'logs.all';

interface Source {
  source: string;
  count: number;
  projects: Array<{ ref: string; count: number }>;
}
function busiest(sources: Source[], name: string): string {
  const s = sources.find((x) => x.source === name);
  if (!s?.projects.length) throw new Error(`no projects in ${name}`);
  return s.projects.reduce((a, b) => (b.count > a.count ? b : a)).ref;
}

interface OursRun {
  fnProject: string;
  edgeProject: string;
  importFnSeconds: number;
  importEdgeSeconds: number;
  reports: ImportReport[];
  duringImport: Percentiles & { failures: number };
  duringSave: Percentiles & { failures: number; importSeconds: number };
  peakRss: { sampled: number; hwm: number; peak: number };
  cases: Record<string, { first: number; uncached: Percentiles; cached?: Percentiles; rows: Row[] }>;
  shutdownSeconds: number;
  storeBytes: number;
  restart: { listeningSeconds: number; coldStartSeconds: number; rssAfterFirstAnswer: number; rssAfterRound: number; peakRss: number; round: Record<string, number> };
}

async function runOurs(n: number, files: { fn: BenchFile; edge: BenchFile }, small: BenchFile): Promise<OursRun> {
  const dataDir = path.join(BENCH_DIR, `ours-${n}`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  const s = await serve(dataDir);
  const rss = sampleRss(s.pid);
  const log = (msg: string) => console.error(`[${n}] ours: ${msg}`);

  const fn = await postFile(s.port, files.fn);
  log(`function edge imported in ${fmt(fn.seconds, 2)} s`);
  const fnProject = busiest(await s.client.result<Source[]>('GET', '/api/sources'), 'deno-relay-logs');

  // The edge import, with logs.all asked back to back over loopback all along.
  let prober = probe(s.port, `/api/endpoints/logs.all?project=${fnProject}&project_tier=PRO`);
  const edge = await postFile(s.port, files.edge);
  const during = await prober.stop();
  log(`edge imported in ${fmt(edge.seconds, 2)} s (${during.waits.length} logs.all answers meanwhile)`);
  const sources = await s.client.result<Source[]>('GET', '/api/sources');
  const edgeProject = busiest(sources, 'cloudflare.logs.prod');
  for (const [file, r] of [[files.fn, fn.report], [files.edge, edge.report]] as const) {
    if (r.imported !== file.records || r.rejected !== 0) throw new Error(`import of ${file.path}: ${JSON.stringify(r)}`);
  }

  // Every case: once at BENCH_NOW (the answer DuckDB's is checked against), then RUNS times
  // uncached (the clock moved by 1 µs each time: a clock change drops the results cache, and
  // the buckets stay those of BENCH_NOW), then RUNS times cached at the last instant.
  const cases: OursRun['cases'] = {};
  for (const c of benchCases(fnProject, edgeProject)) {
    const p = endpointPath(c);
    const timed = async (expect: 'miss' | 'hit' | 'bypass') => {
      const t = performance.now();
      const a = await s.client.request('GET', p);
      const ms = performance.now() - t;
      if (a.status !== 200) throw new Error(`${p}: ${a.status} ${a.body.slice(0, 300)}`);
      const status = String(a.headers['cache-status'] ?? '');
      if (!status.includes(expect)) throw new Error(`${p}: Cache-Status "${status}", expected ${expect}`);
      return { ms, a };
    };
    const expect = cacheable(c) ? 'miss' : 'bypass';
    await s.client.setClock(BENCH_NOW);
    const first = await timed(expect);
    const uncached: number[] = [];
    for (let k = 1; k <= RUNS; k++) {
      await s.client.setClock(BENCH_NOW + k);
      uncached.push((await timed(expect)).ms);
    }
    const cached: number[] = [];
    if (cacheable(c)) for (let k = 0; k < RUNS; k++) cached.push((await timed('hit')).ms);
    cases[c.label] = {
      first: first.ms,
      uncached: percentiles(uncached),
      ...(cached.length ? { cached: percentiles(cached) } : {}),
      rows: (JSON.parse(first.a.body) as { result: Row[] }).result,
    };
  }
  await s.client.setClock(BENCH_NOW);
  log('endpoints timed');

  // A small import: it is acknowledged only once saved, and a save writes the store.
  prober = probe(s.port, `/api/endpoints/logs.all?project=${edgeProject}&project_tier=PRO`);
  const saved = await postFile(s.port, small);
  const duringSave = await prober.stop();
  if (saved.report.imported !== small.records) throw new Error(`import of ${small.path}: ${JSON.stringify(saved.report)}`);

  const mem = procMemory(s.pid)!;
  rss.stop();
  const peakRss = { sampled: rss.max(), hwm: mem.hwm, peak: Math.max(rss.max(), mem.hwm) };
  const shutdownSeconds = await stop(s);
  const storeBytes = await duBytes(dataDir);
  log(`stopped; store ${fmt(mib(storeBytes), 0)} MiB`);

  // Restart on the same folder: spawn → first 200 of logs.all, asked as soon as it listens.
  const r = await serve(dataDir);
  const logsPath = endpointPath(benchCases(fnProject, edgeProject).find((c) => c.label === 'logs.all PRO')!);
  for (let a = await r.client.request('GET', logsPath); a.status !== 200; a = await r.client.request('GET', logsPath)) {
    if (performance.now() - r.listeningAt > 120_000) throw new Error(`logs.all after the restart: ${a.status} ${a.body.slice(0, 300)}`);
    await new Promise((res) => setTimeout(res, 5));
  }
  const coldStartSeconds = (performance.now() - r.spawnedAt) / 1000;
  const rssAfterFirstAnswer = procMemory(r.pid)!.rss;
  const round: Record<string, number> = {};
  for (const c of benchCases(fnProject, edgeProject)) {
    const t = performance.now();
    await r.client.result('GET', endpointPath(c));
    round[c.label] = performance.now() - t;
  }
  const after = procMemory(r.pid)!;
  await stop(r);
  if (!values.keep) fs.rmSync(dataDir, { recursive: true, force: true });
  log(`restarted: first answer ${fmt(coldStartSeconds, 2)} s after spawn`);

  return {
    fnProject,
    edgeProject,
    importFnSeconds: fn.seconds,
    importEdgeSeconds: edge.seconds,
    reports: [fn.report, edge.report, saved.report],
    duringImport: { ...percentiles(during.waits), failures: during.failures },
    duringSave: { ...percentiles(duringSave.waits), failures: duringSave.failures, importSeconds: saved.seconds },
    peakRss,
    cases,
    shutdownSeconds,
    storeBytes,
    restart: {
      listeningSeconds: (r.listeningAt - r.spawnedAt) / 1000,
      coldStartSeconds,
      rssAfterFirstAnswer,
      rssAfterRound: after.rss,
      peakRss: after.hwm,
      round,
    },
  };
}

// ---- DuckDB, in processes of its own ----

function duckChild(mode: 'run' | 'restart', args: DuckArgs): { child: ChildProcess; result: Promise<unknown> } {
  const script = path.join(import.meta.dirname, 'scale-duckdb.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', script, mode, JSON.stringify(args)], { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const result = exited(child).then((code) => {
    if (code !== 0) throw new Error(`scale-duckdb.ts ${mode} exited ${code}: ${out}`);
    return JSON.parse(out.trim().split('\n').pop()!) as unknown;
  });
  return { child, result };
}

async function runDuck(n: number, files: { fn: BenchFile; edge: BenchFile }, small: BenchFile, ours: OursRun) {
  const args: DuckArgs = {
    dbFile: path.join(BENCH_DIR, `duckdb-${n}.duckdb`),
    fnFile: files.fn.path,
    edgeFile: files.edge.path,
    saveFile: small.path,
    fnProject: ours.fnProject,
    edgeProject: ours.edgeProject,
    runs: RUNS,
  };
  const run = (await duckChild('run', args).result) as DuckRun;
  console.error(`[${n}] duckdb: imported and timed`);
  const fileBytes = await duBytes(args.dbFile);
  const spawnedAt = performance.now();
  const r = duckChild('restart', args);
  await waitForLine(r.child, /^first-answer$/m);
  const coldStartSeconds = (performance.now() - spawnedAt) / 1000;
  const restart = (await r.result) as DuckRestart;
  if (!values.keep) for (const f of [args.dbFile, `${args.dbFile}.wal`]) fs.rmSync(f, { force: true });
  return { ...run, fileBytes, restart: { ...restart, coldStartSeconds } };
}

// ---- checking DuckDB's answers against ours ----

function compare(label: string, ours: Row[], duck: Row[]): string[] {
  const problems: string[] = [];
  if (ours.length !== duck.length) problems.push(`${label}: ${ours.length} rows, DuckDB ${duck.length}`);
  const close = (a: unknown, b: unknown, rel: number) =>
    a === b || (typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b)));
  const tolerance = (field: string) => (/^p9\d_/.test(field) ? 0.01 : field.startsWith('avg_') ? 1e-9 : 0);
  for (let i = 0; i < Math.min(ours.length, duck.length) && problems.length < 5; i++) {
    for (const [field, want] of Object.entries(duck[i]!)) {
      const got = ours[i]![field];
      if (!close(got, want, tolerance(field))) problems.push(`${label} row ${i} ${field}: ours ${JSON.stringify(got)}, DuckDB ${JSON.stringify(want)}`);
    }
  }
  return problems;
}

// ---- the table ----

type Duck = Awaited<ReturnType<typeof runDuck>>;
interface Line {
  figure: string;
  ours: number | null;
  duck: number | null;
  goal: string;
  met?: boolean;
}

function lines(files: { fn: BenchFile; edge: BenchFile }, o: OursRun, d: Duck): Line[] {
  const rate = (bytes: number, s: number) => mib(bytes) / s;
  const atMost = (limit: number, v: number | null, text = `≤ ${fmt(limit, limit % 1 ? 1 : 0)}`) => ({ goal: text, met: v !== null && v <= limit });
  const GiB = 1024;
  const out: Line[] = [];
  const add = (figure: string, ours: number | null, duck: number | null, goal?: { goal: string; met?: boolean }) =>
    out.push({ figure, ours, duck, goal: goal?.goal ?? '–', met: goal?.met });

  const fnRate = [rate(files.fn.bytes, o.importFnSeconds), rate(files.fn.bytes, d.importFnSeconds)] as const;
  const edgeRate = [rate(files.edge.bytes, o.importEdgeSeconds), rate(files.edge.bytes, d.importEdgeSeconds)] as const;
  add('import, function edge NDJSON (MiB/s)', ...fnRate, { goal: '≥ DuckDB', met: fnRate[0] >= fnRate[1] });
  add('import, edge NDJSON, logs.all probed meanwhile (MiB/s)', ...edgeRate, { goal: '≥ DuckDB', met: edgeRate[0] >= edgeRate[1] });
  add('peak RSS, whole run (MiB)', mib(o.peakRss.peak), mib(d.peakRss), atMost(GiB, mib(o.peakRss.peak)));
  add('RSS after restart, first answer (MiB)', mib(o.restart.rssAfterFirstAnswer), mib(d.restart.rssAfterFirstAnswer), atMost(GiB, mib(o.restart.rssAfterFirstAnswer)));
  add('RSS after restart + one round of every endpoint (MiB)', mib(o.restart.rssAfterRound), mib(d.restart.rssAfterRound), atMost(GiB, mib(o.restart.rssAfterRound)));
  add('peak RSS of the restarted server, start + one round (MiB)', mib(o.restart.peakRss), mib(d.restart.peakRss));
  add('longest logs.all wait during the edge import (ms)', o.duringImport.max, null, atMost(250, o.duringImport.max));
  add('logs.all p99 during the edge import (ms)', o.duringImport.p99, null, atMost(250, o.duringImport.p99));
  add(`longest logs.all wait during a ${fmt(SAVE_RECORDS, 0)}-record import + save (ms)`, o.duringSave.max, null);
  add('cold start: spawn to first logs.all answer (s)', o.restart.coldStartSeconds, d.restart.coldStartSeconds, atMost(2, o.restart.coldStartSeconds));
  for (const [label, oc] of Object.entries(o.cases)) {
    const dc = d.cases[label]!;
    const limit = label.startsWith('invocation-stats') ? 5 : label.startsWith('api-counts') ? 10 : 2;
    add(`${label}, uncached p50 (ms)`, oc.uncached.p50, dc.uncached.p50, atMost(limit, oc.uncached.p50));
    add(`${label}, uncached p99 (ms)`, oc.uncached.p99, dc.uncached.p99, atMost(limit, oc.uncached.p99));
  }
  const cachedP50 = Math.max(...Object.values(o.cases).flatMap((c) => (c.cached ? [c.cached.p50] : [])));
  add('cached answer over loopback p50, slowest case (ms)', cachedP50, null);
  add('store on disk (MiB)', mib(o.storeBytes), mib(d.fileBytes), { goal: '≤ DuckDB', met: o.storeBytes <= d.fileBytes });
  return out;
}

function printTable(n: number, rows: Line[], problems: string[]): void {
  const num = (v: number | null, figure: string) => (v === null ? '–' : fmt(v, figure.includes('(MiB') && !figure.includes('/s') ? 0 : v < 10 ? 2 : 1));
  console.log(`\n### ${n.toLocaleString('en-US')} records per source, ${new Date().toISOString().slice(0, 16)} UTC, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`server: npm run serve in ${SERVER_DIR}\n`);
  console.log('| figure | ours | DuckDB | ratio | goal |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) {
    const x = r.ours !== null && r.duck !== null && r.duck !== 0 ? r.ours / r.duck : undefined;
    const ratio = x === undefined ? '–' : `${fmt(x, x < 0.1 ? 3 : 2)}x`;
    const goal = r.met === undefined ? r.goal : `${r.goal} ${r.met ? '✓' : '✗'}`;
    console.log(`| ${r.figure} | ${num(r.ours, r.figure)} | ${num(r.duck, r.figure)} | ${ratio} | ${goal} |`);
  }
  console.log('\nratio = ours / DuckDB. DuckDB runs in-process (no HTTP); ours is timed over loopback HTTP.');
  if (problems.length) {
    console.log(`\n!!! MISMATCH: DuckDB's answers differ from ours (${problems.length}):`);
    for (const p of problems) console.log(`!!!   ${p}`);
  } else {
    console.log("DuckDB's answers equal ours on every case at BENCH_NOW (counts exactly, p95/p99 within 1%).");
  }
}

// ---- main ----

let failed = false;
for (const n of sizes) {
  const files = await benchFiles(n);
  const small = await saveFile();
  const ours = await runOurs(n, files, small);
  const duck = await runDuck(n, files, small, ours);
  if (duck.records.fn !== n || duck.records.edge !== n) console.log(`!!! DuckDB imported ${JSON.stringify(duck.records)} records, expected ${n} each`);
  const problems = Object.keys(ours.cases).flatMap((label) => compare(label, ours.cases[label]!.rows, duck.cases[label]!.rows));
  failed ||= problems.length > 0;
  const rows = lines(files, ours, duck);
  printTable(n, rows, problems);
  const strip = <T extends { rows: Row[] }>(cases: Record<string, T>) => Object.fromEntries(Object.entries(cases).map(([k, { rows: _rows, ...v }]) => [k, v]));
  const result = {
    records: n,
    at: new Date().toISOString(),
    serverDir: SERVER_DIR,
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memBytes: os.totalmem(), node: process.version, loadavg: os.loadavg() },
    files: { fn: files.fn.bytes, edge: files.edge.bytes, save: small.bytes },
    table: rows,
    mismatches: problems,
    ours: { ...ours, cases: strip(ours.cases) },
    duckdb: { ...duck, cases: strip(duck.cases) },
  };
  fs.writeFileSync(path.join(BENCH_DIR, `results-${n}.json`), `${JSON.stringify(result, null, 2)}\n`);
}
if (failed) process.exitCode = 1;
