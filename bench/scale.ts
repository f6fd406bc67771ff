/**
 * `npm run bench [-- --sizes 1000000,3000000 --runs 21 --order newest,oldest,shuffled --keep --server-dir DIR]`:
 * the product measured the way a new user meets it, beside DuckDB on the same files in the same
 * run. Per size N (records per source): `npm run serve` on a fresh folder, both files imported
 * over HTTP in the first record order with every page's default request asked every 50 ms (the
 * waits over 100 ms lined up with the server's activity log), logs.all probed during a small
 * import's save, every endpoint timed uncached and cached over loopback, the explorer's
 * histogram, facets, pages and searches, the folder's size after a SIGTERM, a restart on it and
 * each page's first answer on a server just restarted; the other record orders' imports on
 * folders of their own; then DuckDB in its own process
 * (bench/scale-duckdb.ts) on the same files and queries, its answers checked against ours. Prints one table per size and writes bench/data/results-<N>.json.
 *
 * `--settled`: just the text searches and the fields inside the records, cold on a settled store (see runSettled), in minutes.
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
  EXPLORER_ALL_SPAN,
  explorerBuckets,
  EXPLORER_BUCKETS,
  EXPLORER_DEEP_ROWS,
  EXPLORER_FACETS,
  EXPLORER_NOMATCH,
  explorerCases,
  settledCases,
  exited,
  fmt,
  mib,
  percentiles,
  postFile,
  procMemory,
  residentParts,
  REPO_DIR,
  sampleRss,
  SAVE_RECORDS,
  saveFile,
  waitForLine,
  type BenchCase,
  type BenchFile,
  type ExplorerCase,
  type ImportReport,
  type Percentiles,
} from './data.ts';
import type { DuckArgs, DuckFieldArgs, DuckFieldRun, DuckRestart, DuckRun, ExplorerAnswer, Row } from './scale-duckdb.ts';
import { DEMO_PROJECTS } from '../server/demo/generate.ts';
import { orderedFile, readOrders, type RecordOrder } from './order.ts';
import { describeStalls, importUnderProbes, pageAnswers, pageRequests, probeEvery, stageTotals, summarizeWaits, type ImportRun, type StallBreakdown, type WaitSummary } from './waits.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '21' },
    keep: { type: 'boolean', default: false },
    // Record orders of the export files: the first gets the whole run, the others their imports and the waits meanwhile.
    order: { type: 'string', default: 'newest' },
    // Another checkout whose `npm run serve` to measure (e.g. a stable commit while this tree changes).
    'server-dir': { type: 'string', default: REPO_DIR },
    // Only the search and field cases (settledCases): the edge file imported, the background
    // builder done (field index, record texts), each case cold on a server just restarted and
    // warm, beside DuckDB with json_extract_string.
    settled: { type: 'boolean', default: false },
  },
});
const SERVER_DIR = path.resolve(values['server-dir']!);
const sizes = values.sizes!.split(',').map(Number);
const RUNS = Number(values.runs);
/**
 * The endpoint cases are timed at least this many times whatever --runs says: they take
 * milliseconds, and with 5 (the 10M runs) the p50 was the third answer of a code path still
 * warming up (invocation-stats 5min: 10.8 ms in one run, 6.2 in the next).
 */
const ENDPOINT_RUNS = Math.max(RUNS, 21);
const ORDER_LIST = readOrders(values.order!);
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

/** Every process below `root`, parents before their children. */
function descendantsOf(root: number): number[] {
  const parents = parentPids();
  const descendants: number[] = [];
  const queue = [root];
  while (queue.length) {
    const p = queue.shift()!;
    for (const [child, parent] of parents) if (parent === p) (descendants.push(child), queue.push(child));
  }
  return descendants;
}

/**
 * The process tree's peak (bytes): each process's VmHWM summed, npm and every process under it
 * (its shell, the launcher that sets the server's environment, the server). An upper bound: the
 * peaks need not coincide, but all but the server's hold steady.
 */
function treeHwm(root: number): number {
  let total = 0;
  for (const pid of [root, ...descendantsOf(root)]) total += procMemory(pid)?.hwm ?? 0;
  return total;
}

/**
 * The process tree's peak with each page counted once (bytes): the server's peak, and for every
 * other process of the tree (npm, its shell, the launcher) its own pages and the pages of files
 * it maps beyond those the server has of the same file. treeHwm counts node's executable once
 * per process (about 40 MiB each); the kernel holds it once. Read once the run is over: those
 * processes hold steady after the server starts.
 */
function treeOnce(root: number, server: number, serverPeak: number): number {
  const serverFiles = residentParts(server)?.files ?? new Map<string, number>();
  let total = serverPeak;
  for (const pid of [root, ...descendantsOf(root)]) {
    if (pid === server) continue;
    const parts = residentParts(pid);
    if (!parts) continue;
    total += parts.own;
    for (const [file, bytes] of parts.files) total += Math.max(0, bytes - (serverFiles.get(file) ?? 0));
  }
  return total;
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
  for (const pid of descendantsOf(root)) {
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
/** `activityFile`: where the server logs what its thread does (server/activity.ts), for the stall breakdown. */
async function serve(dataDir: string, activityFile?: string): Promise<Served> {
  const spawnedAt = performance.now();
  const args = ['run', 'serve', '--', '--data-dir', dataDir, '--port', '0', '--api-key', KEY, '--now', formatIsoMicros(BENCH_NOW)];
  const env = activityFile ? { ...process.env, LOG_EXPLORER_ACTIVITY: activityFile } : process.env;
  const npm = spawn('npm', args, { cwd: SERVER_DIR, stdio: ['ignore', 'pipe', 'inherit'], env });
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

/** Both files imported while every page's default request is asked every 50 ms. */
interface OursRun {
  imports: ImportRun;
  /** The first and second answer of each page's default requests, each on a server just restarted. */
  pages: Record<string, { first: number; second: number }>;
  fnProject: string;
  edgeProject: string;
  importFnSeconds: number;
  importEdgeSeconds: number;
  /** The same files imported into a fresh folder with nothing asked meanwhile. */
  alone?: { fnSeconds: number; edgeSeconds: number };
  reports: ImportReport[];
  duringImport: Percentiles & { failures: number };
  duringSave: Percentiles & { failures: number; importSeconds: number };
  /** The server's (VmRSS sampled, VmHWM, the larger) and the whole tree's from npm down (treeHwm). */
  peakRss: { sampled: number; hwm: number; peak: number; tree: number; treeOnce: number };
  cases: Record<string, { first: number; uncached: Percentiles; cached?: Percentiles; rows: Row[] }>;
  shutdownSeconds: number;
  storeBytes: number;
  restart: { listeningSeconds: number; coldStartSeconds: number; rssAfterFirstAnswer: number; rssAfterRound: number; peakRss: number; round: Record<string, number> };
  explorer: ExplorerRun;
}

// ---- the explorer: /api/logs, /histogram, /facets over the edge source ----

/** An explorer case whose first answer takes longer than this (ms) is timed 5 times instead of RUNS. */
const EXPLORER_SLOW_MS = 1000;

interface ExplorerRun {
  /** `answer` is null when the first answer was not a 200 (see `notes`). */
  cases: Record<string, { first: number; uncached: Percentiles; answer: ExplorerAnswer | null; path: string; deepRows?: number }>;
  /** Per deep case: the last row of the page before it. */
  deep: Record<string, { timestamp: number; id: string }>;
  /** The search case: rows on its first page, and the time to 100 rows following `next`. */
  search: { label: string; firstPageRows: number; requests: number; hundredRows: Percentiles } | null;
  /** Answers that were not 200, histogram buckets not as the API describes them. */
  notes: string[];
  /** The text no record holds, searched over the whole store page after page. */
  nomatch: { seconds: number; pages: number; page: Percentiles };
  /** VmRSS before the explorer cases (what the imports left), its peak during them, and after. */
  rss: { before: number; peak: number; after: number };
}

interface LogsPage {
  result: Array<{ id: string; timestamp: number; event_message: string }>;
  next: string | null;
  scanned: { through: number; complete: boolean };
}

function explorerPath(c: ExplorerCase, extra: Record<string, string> = {}): string {
  const p: Record<string, string> = { source: 'edge_logs', start: formatIsoMicros(c.start), end: formatIsoMicros(c.end) };
  if (c.project !== undefined) p.project = c.project;
  if (c.status5xx) p.status = '5xx';
  if (c.q !== undefined) p.q = c.q;
  if (c.regex) p.regex = '1';
  if (c.field) p.field = `${c.field.path}:${c.field.value}`;
  if (c.kind === 'histogram') p.buckets = String(EXPLORER_BUCKETS);
  if (c.kind === 'facets') p.fields = c.fieldFacet ?? EXPLORER_FACETS.join(',');
  const route = c.kind === 'histogram' ? '/histogram' : c.kind === 'facets' ? '/facets' : '';
  return `/api/logs${route}?${new URLSearchParams({ ...p, ...extra })}`;
}

/** An answer's body in the shape both sides are checked in. */
function explorerAnswer(c: ExplorerCase, body: string): ExplorerAnswer {
  if (c.kind === 'histogram') return { kind: 'histogram', buckets: (JSON.parse(body) as { result: Array<{ timestamp: number; count: number; by: Record<string, number> }> }).result };
  if (c.kind === 'facets') return { kind: 'facets', facets: (JSON.parse(body) as { result: Record<string, Array<{ value: string | number; count: number }>> }).result };
  // (Search aggregates carry `scanned` beside `result`: checked on `result` alone.)
  return { kind: 'page', rows: (JSON.parse(body) as LogsPage).result.map((r) => ({ id: r.id, timestamp: r.timestamp, event_message: r.event_message })) };
}

/** Pages `rows` rows into the window with limit-1000 pages; the cursor there and the last row passed. */
async function walkTo(client: Client, c: ExplorerCase, rows: number): Promise<{ cursor: string; last: { timestamp: number; id: string } }> {
  let cursor: string | undefined;
  let last: { timestamp: number; id: string } | undefined;
  for (let walked = 0; walked < rows; ) {
    const limit = Math.min(1000, rows - walked);
    const a = await client.request('GET', explorerPath({ ...c, deep: false }, { limit: String(limit), ...(cursor ? { cursor } : {}) }));
    if (a.status !== 200) throw new Error(`walking to a deep page: ${a.status} ${a.body.slice(0, 300)}`);
    const page = JSON.parse(a.body) as LogsPage;
    if (page.result.length !== limit || !page.next) throw new Error(`walking to a deep page: ${page.result.length} rows after ${walked}`);
    walked += limit;
    cursor = page.next;
    const r = page.result[page.result.length - 1]!;
    last = { timestamp: r.timestamp, id: r.id };
  }
  if (!cursor || !last) throw new Error(`${c.label}: no rows to page through`);
  return { cursor, last };
}

/** The first 100 rows of a search, following `next` while a page ran out of its time budget. */
async function searchPage(client: Client, c: ExplorerCase): Promise<{ rows: Array<{ id: string; timestamp: number; event_message: string }>; requests: number }> {
  const rows: Array<{ id: string; timestamp: number; event_message: string }> = [];
  let requests = 0;
  for (let cursor: string | null = null; rows.length < 100; ) {
    const a = await client.request('GET', explorerPath(c, { limit: String(100 - rows.length), ...(cursor ? { cursor } : {}) }));
    requests++;
    if (a.status !== 200) throw new Error(`${c.label}: ${a.status} ${a.body.slice(0, 300)}`);
    const page = JSON.parse(a.body) as LogsPage;
    rows.push(...page.result.map((r) => ({ id: r.id, timestamp: r.timestamp, event_message: r.event_message })));
    if (page.scanned.complete || !page.next) break;
    cursor = page.next;
  }
  return { rows, requests };
}

/**
 * Every explorer case: the depth of a deep page fixed first (half the matching rows, at most
 * EXPLORER_DEEP_ROWS), then one answer (kept, checked against DuckDB's) and RUNS timed answers.
 * The explorer has no results cache, so every answer is computed. Last, the whole-store search.
 */
async function runExplorer(client: Client, pid: number, edgeProject: string): Promise<ExplorerRun> {
  const before = procMemory(pid)!.rss;
  const rss = sampleRss(pid);
  const cases: ExplorerRun['cases'] = {};
  const deep: ExplorerRun['deep'] = {};
  const notes: string[] = [];
  let search: ExplorerRun['search'] = null;
  for (const c of explorerCases(edgeProject)) {
    let p = explorerPath(c);
    let deepRows: number | undefined;
    if (c.deep) {
      const count = (await client.result<{ count: number }>('GET', explorerPath({ ...c, kind: 'page', deep: false }).replace('/api/logs?', '/api/logs/count?'))).count;
      deepRows = Math.min(EXPLORER_DEEP_ROWS, Math.floor(count / 2));
      const w = await walkTo(client, c, deepRows);
      deep[c.label] = w.last;
      p = explorerPath(c, { cursor: w.cursor });
    }
    // Not thrown: an answer past the server's query time limit (503) is a figure too.
    const failed: number[] = [];
    const timed = async () => {
      const t = performance.now();
      let a = await client.request('GET', p);
      // An aggregate of a search answers with its progress until its shared walk is done: asked again.
      while (a.status === 200 && c.kind !== 'page' && (JSON.parse(a.body) as { scanned?: { complete: boolean } }).scanned?.complete === false) a = await client.request('GET', p);
      const ms = performance.now() - t;
      if (a.status !== 200) failed.push(a.status);
      return { ms, a };
    };
    const first = await timed();
    // A case whose answer takes seconds (the 7-day aggregates at 10M) is timed 5 times, not RUNS.
    const runs = first.ms > EXPLORER_SLOW_MS ? Math.min(RUNS, 5) : RUNS;
    const uncached: number[] = [];
    for (let k = 0; k < runs; k++) uncached.push((await timed()).ms);
    if (failed.length) notes.push(`${c.label}: ${failed.length} of ${runs + 1} answers were ${[...new Set(failed)].join('/')} (${first.a.body.slice(0, 160)})`);
    let answer = first.a.status === 200 ? explorerAnswer(c, first.a.body) : null;
    if (c.q !== undefined && answer?.kind === 'page') {
      // A search page answers after its time budget with what it found so far: also time 100
      // rows as a user gets them, following `next`, and check those against DuckDB's 100.
      const firstPageRows = answer.rows.length;
      let full: Awaited<ReturnType<typeof searchPage>> | undefined;
      const chained: number[] = [];
      for (let k = 0; k <= runs; k++) {
        const t = performance.now();
        full = await searchPage(client, c);
        if (k > 0) chained.push(performance.now() - t);
      }
      answer = { kind: 'page', rows: full!.rows };
      search = { label: c.label, firstPageRows, requests: full!.requests, hundredRows: percentiles(chained) };
    }
    if (c.kind === 'histogram' && first.a.status === 200) {
      const h = JSON.parse(first.a.body) as { result: Array<{ timestamp: number }>; width: number };
      const want = explorerBuckets(c.start, c.end);
      if (h.width !== want.width || h.result[0]?.timestamp !== want.first) notes.push(`${c.label}: buckets of ${h.width} µs from ${h.result[0]?.timestamp}, expected ${want.width} from ${want.first}`);
    }
    cases[c.label] = { first: first.ms, uncached: percentiles(uncached), answer, path: p, ...(deepRows !== undefined ? { deepRows } : {}) };
  }

  // A search that matches nothing over the whole store, `next` after `next` until scanned.complete.
  const all: ExplorerCase = { label: 'whole store', kind: 'page', start: BENCH_NOW - EXPLORER_ALL_SPAN, end: BENCH_NOW, q: EXPLORER_NOMATCH, goalMs: 0 };
  const pageMs: number[] = [];
  const started = performance.now();
  for (let cursor: string | null = null; ; ) {
    const t = performance.now();
    const a = await client.request('GET', explorerPath(all, cursor ? { cursor } : {}));
    pageMs.push(performance.now() - t);
    if (a.status !== 200) throw new Error(`whole-store search: ${a.status} ${a.body.slice(0, 300)}`);
    const page = JSON.parse(a.body) as LogsPage;
    if (page.result.length) throw new Error(`whole-store search for ${EXPLORER_NOMATCH} found ${page.result.length} rows`);
    if (page.scanned.complete) break;
    if (!page.next) throw new Error('whole-store search: incomplete page without next');
    cursor = page.next;
  }
  const seconds = (performance.now() - started) / 1000;
  rss.stop();
  return { cases, deep, search, notes, nomatch: { seconds, pages: pageMs.length, page: percentiles(pageMs) }, rss: { before, peak: rss.max(), after: procMemory(pid)!.rss } };
}

const activityFileOf = (dataDir: string) => `${dataDir}.activity.ndjson`;

/** Moves an earlier run's activity log aside (named by when it was last written) instead of deleting it: runs are compared afterwards. */
function setAsideActivity(file: string): void {
  if (!fs.existsSync(file)) return;
  const stamp = fs.statSync(file).mtime.toISOString().replace(/[:.]/g, '-');
  fs.renameSync(file, file.replace(/\.ndjson$/, `.${stamp}.ndjson`));
}

/**
 * The two imports on a fresh folder with nothing asked meanwhile: the figure that compares with
 * DuckDB's load (the imports under probes give way to every page asked every 50 ms, and the
 * answers' work is most of the answering thread's time then).
 */
async function runImportsAlone(n: number, files: { fn: BenchFile; edge: BenchFile }): Promise<{ fnSeconds: number; edgeSeconds: number }> {
  const dataDir = path.join(BENCH_DIR, `ours-${n}-alone`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  const s = await serve(dataDir);
  const fn = await postFile(s.port, KEY, files.fn);
  const edge = await postFile(s.port, KEY, files.edge);
  await stop(s);
  fs.rmSync(dataDir, { recursive: true, force: true });
  console.error(`[${n}] ours: imported alone in ${fmt(fn.seconds, 2)} + ${fmt(edge.seconds, 2)} s`);
  return { fnSeconds: fn.seconds, edgeSeconds: edge.seconds };
}

/** Another record order: a fresh folder, the two imports under probes, nothing else. */
async function runImportsOnly(n: number, files: { fn: BenchFile; edge: BenchFile }, order: RecordOrder): Promise<ImportRun> {
  const dataDir = path.join(BENCH_DIR, `ours-${n}-${order}`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  setAsideActivity(activityFileOf(dataDir));
  const s = await serve(dataDir, activityFileOf(dataDir));
  const run = await importUnderProbes(s.port, KEY, files, order, activityFileOf(dataDir), (msg) => console.error(`[${n}] ours: ${msg}`));
  await stop(s);
  if (!values.keep) fs.rmSync(dataDir, { recursive: true, force: true });
  return run;
}

async function runOurs(n: number, files: { fn: BenchFile; edge: BenchFile }, small: BenchFile, order: RecordOrder): Promise<OursRun> {
  const dataDir = path.join(BENCH_DIR, `ours-${n}`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  setAsideActivity(activityFileOf(dataDir));
  const s = await serve(dataDir, activityFileOf(dataDir));
  const rss = sampleRss(s.pid);
  const log = (msg: string) => console.error(`[${n}] ours: ${msg}`);

  const imports = await importUnderProbes(s.port, KEY, files, order, activityFileOf(dataDir), log);
  const sources = await s.client.result<Source[]>('GET', '/api/sources');
  const fnProject = busiest(sources, 'deno-relay-logs');
  const edgeProject = busiest(sources, 'cloudflare.logs.prod');

  // Every case: once at BENCH_NOW (the answer DuckDB's is checked against), then ENDPOINT_RUNS
  // times uncached (the clock moved by 1 µs each time: a clock change drops the results cache,
  // and the buckets stay those of BENCH_NOW), then ENDPOINT_RUNS times cached at the last instant.
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
    for (let k = 1; k <= ENDPOINT_RUNS; k++) {
      await s.client.setClock(BENCH_NOW + k);
      uncached.push((await timed(expect)).ms);
    }
    const cached: number[] = [];
    if (cacheable(c)) for (let k = 0; k < ENDPOINT_RUNS; k++) cached.push((await timed('hit')).ms);
    cases[c.label] = {
      first: first.ms,
      uncached: percentiles(uncached),
      ...(cached.length ? { cached: percentiles(cached) } : {}),
      rows: (JSON.parse(first.a.body) as { result: Row[] }).result,
    };
  }
  await s.client.setClock(BENCH_NOW);
  log('endpoints timed');
  const explorer = await runExplorer(s.client, s.pid, edgeProject);
  log(`explorer timed; whole-store search ${fmt(explorer.nomatch.seconds, 1)} s in ${explorer.nomatch.pages} pages`);

  // A small import: it is acknowledged only once saved, and a save writes the store.
  const prober = probe(s.port, `/api/endpoints/logs.all?project=${edgeProject}&project_tier=PRO`);
  const saved = await postFile(s.port, KEY, small);
  const duringSave = await prober.stop();
  if (saved.report.imported !== small.records) throw new Error(`import of ${small.path}: ${JSON.stringify(saved.report)}`);

  const mem = procMemory(s.pid)!;
  rss.stop();
  const peak = Math.max(rss.max(), mem.hwm);
  const peakRss = { sampled: rss.max(), hwm: mem.hwm, peak, tree: treeHwm(s.npm.pid!) - mem.hwm + peak, treeOnce: treeOnce(s.npm.pid!, s.pid, peak) };
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
  log(`restarted: first answer ${fmt(coldStartSeconds, 2)} s after spawn`);
  // Each page as the first one opened: a restart for each, its requests asked as soon as it listens.
  const pages: OursRun['pages'] = {};
  for (const [page, requests] of Object.entries(pageRequests(fnProject, edgeProject))) {
    const again = await serve(dataDir);
    pages[page] = await pageAnswers(again.port, KEY, requests);
    await stop(again);
  }
  log(`pages after a restart: ${Object.entries(pages).map(([p, a]) => `${p} ${fmt(a.first, 0)}/${fmt(a.second, 0)} ms`).join(', ')}`);
  if (!values.keep) fs.rmSync(dataDir, { recursive: true, force: true });

  return {
    imports,
    pages,
    fnProject,
    edgeProject,
    importFnSeconds: imports.fnSeconds,
    importEdgeSeconds: imports.edgeSeconds,
    reports: [...imports.reports, saved.report],
    duringImport: { ...imports.logsAllDuringEdge, failures: imports.logsAllDuringEdge.failures },
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
    explorer,
  };
}

// ---- DuckDB, in processes of its own ----

function duckChild(mode: 'run' | 'restart' | 'fields', args: DuckArgs | DuckFieldArgs): { child: ChildProcess; result: Promise<unknown> } {
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
    endpointRuns: ENDPOINT_RUNS,
    explorer: { deep: ours.explorer.deep },
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

/** The explorer's answers: histogram buckets and classes exactly, facet tops, page rows in order. */
function compareExplorer(label: string, ours: ExplorerAnswer, duck: ExplorerAnswer): string[] {
  const problems: string[] = [];
  if (ours.kind === 'histogram' && duck.kind === 'histogram') {
    // Ours lists every bucket and class with zeros; DuckDB only those it saw.
    const shown = (bs: typeof ours.buckets) =>
      bs.filter((b) => b.count > 0).map((b) => ({ timestamp: b.timestamp, count: b.count, by: Object.fromEntries(Object.entries(b.by).filter(([, n]) => n > 0).sort()) }));
    const [o, d] = [shown(ours.buckets), shown(duck.buckets)];
    const total = (bs: typeof o) => bs.reduce((n, b) => n + b.count, 0);
    if (total(o) !== total(d)) problems.push(`${label}: ${total(o)} records in all, DuckDB ${total(d)}`);
    if (o.length !== d.length) problems.push(`${label}: ${o.length} non-empty buckets, DuckDB ${d.length}`);
    for (let i = 0; i < Math.min(o.length, d.length) && problems.length < 5; i++) {
      if (JSON.stringify(o[i]) !== JSON.stringify(d[i])) problems.push(`${label} bucket ${i}: ours ${JSON.stringify(o[i])}, DuckDB ${JSON.stringify(d[i])}`);
    }
  } else if (ours.kind === 'facets' && duck.kind === 'facets') {
    // The built-in fields, or the field inside the records a case asks for.
    for (const f of Object.keys(duck.facets)) {
      const [o, d] = [ours.facets[f] ?? [], duck.facets[f] ?? []];
      if (JSON.stringify(o.map((v) => v.count)) !== JSON.stringify(d.map((v) => v.count))) {
        problems.push(`${label} ${f}: top counts ours ${JSON.stringify(o.map((v) => v.count))}, DuckDB ${JSON.stringify(d.map((v) => v.count))}`);
        continue;
      }
      // Values tied with the tenth count may differ by tie order; every other value must agree.
      const cut = o[o.length - 1]?.count;
      const key = (vs: typeof o) => vs.filter((v) => v.count !== cut).map((v) => `${v.value}=${v.count}`).sort().join(' ');
      if (key(o) !== key(d)) problems.push(`${label} ${f}: ours ${key(o)}, DuckDB ${key(d)}`);
    }
  } else if (ours.kind === 'page' && duck.kind === 'page') {
    // Ties on the instant go by row number in ours and by id in DuckDB: compare them by id.
    const norm = (rs: typeof ours.rows) => [...rs].sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const [o, d] = [norm(ours.rows), norm(duck.rows)];
    if (o.length !== d.length) problems.push(`${label}: ${o.length} rows, DuckDB ${d.length}`);
    for (let i = 0; i < Math.min(o.length, d.length) && problems.length < 5; i++) {
      if (JSON.stringify(o[i]) !== JSON.stringify(d[i])) problems.push(`${label} row ${i}: ours ${JSON.stringify(o[i]).slice(0, 200)}, DuckDB ${JSON.stringify(d[i]).slice(0, 200)}`);
    }
  } else {
    problems.push(`${label}: answers of different kinds`);
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

function lines(files: { fn: BenchFile; edge: BenchFile }, o: OursRun, d: Duck, otherOrders: ImportRun[]): Line[] {
  const rate = (bytes: number, s: number) => mib(bytes) / s;
  const atMost = (limit: number, v: number | null, text = `≤ ${fmt(limit, limit % 1 ? 1 : 0)}`) => ({ goal: text, met: v !== null && v <= limit });
  const GiB = 1024;
  const out: Line[] = [];
  const add = (figure: string, ours: number | null, duck: number | null, goal?: { goal: string; met?: boolean }) =>
    out.push({ figure, ours, duck, goal: goal?.goal ?? '–', met: goal?.met });

  const fnRate = [rate(files.fn.bytes, o.importFnSeconds), rate(files.fn.bytes, d.importFnSeconds)] as const;
  const edgeRate = [rate(files.edge.bytes, o.importEdgeSeconds), rate(files.edge.bytes, d.importEdgeSeconds)] as const;
  if (o.alone) {
    const alone = [rate(files.fn.bytes, o.alone.fnSeconds), rate(files.edge.bytes, o.alone.edgeSeconds)] as const;
    add(`${o.imports.order} first: import alone, function edge NDJSON (MiB/s)`, alone[0], fnRate[1], { goal: '≥ DuckDB', met: alone[0] >= fnRate[1] });
    add(`${o.imports.order} first: import alone, edge NDJSON (MiB/s)`, alone[1], edgeRate[1], { goal: '≥ DuckDB', met: alone[1] >= edgeRate[1] });
  }
  add(`${o.imports.order} first: import, function edge NDJSON, every page probed meanwhile (MiB/s)`, ...fnRate);
  add(`${o.imports.order} first: import, edge NDJSON, every page probed meanwhile (MiB/s)`, ...edgeRate);
  add('peak RSS, whole run (MiB)', mib(o.peakRss.peak), mib(d.peakRss), atMost(GiB, mib(o.peakRss.peak)));
  add('peak RSS of the process tree: npm, its shell, the launcher and the server, each process summed (MiB)', mib(o.peakRss.tree), mib(d.peakRss));
  add('peak RSS of the process tree, each page once (node\'s executable shared) (MiB)', mib(o.peakRss.treeOnce), mib(d.peakRss), atMost(GiB, mib(o.peakRss.treeOnce)));
  add('RSS after restart, first answer (MiB)', mib(o.restart.rssAfterFirstAnswer), mib(d.restart.rssAfterFirstAnswer), atMost(GiB, mib(o.restart.rssAfterFirstAnswer)));
  add('RSS after restart + one round of every endpoint (MiB)', mib(o.restart.rssAfterRound), mib(d.restart.rssAfterRound), atMost(GiB, mib(o.restart.rssAfterRound)));
  add('peak RSS of the restarted server, start + one round (MiB)', mib(o.restart.peakRss), mib(d.restart.peakRss));
  // Every page's default request asked every 50 ms during both imports, per record order.
  for (const run of [o.imports, ...otherOrders]) {
    const w = Object.values(run.waits);
    const longest = Math.max(...w.map((x) => x.max));
    const p99 = Math.max(...w.map((x) => x.p99));
    if (run !== o.imports) {
      add(`${run.order} first: import, function edge NDJSON, every page probed meanwhile (MiB/s)`, rate(files.fn.bytes, run.fnSeconds), rate(files.fn.bytes, d.importFnSeconds));
      add(`${run.order} first: import, edge NDJSON, every page probed meanwhile (MiB/s)`, rate(files.edge.bytes, run.edgeSeconds), rate(files.edge.bytes, d.importEdgeSeconds));
    }
    add(`${run.order} first: longest wait of any page during the imports (ms)`, longest, null, atMost(250, longest));
    add(`${run.order} first: p99 wait of the slowest page during the imports (ms)`, p99, null, atMost(50, p99));
  }
  for (const [page, a] of Object.entries(o.pages)) {
    add(`after a restart: ${page}, first answer (ms)`, a.first, null, atMost(1000, a.first));
    add(`after a restart: ${page}, second answer (ms)`, a.second, null);
  }
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
  for (const c of explorerCases(o.edgeProject)) {
    const [oc, dc] = [o.explorer.cases[c.label]!, d.explorer[c.label]!];
    if (c.coldGoalMs !== undefined) add(`${c.label}, cold: first complete answer (ms)`, oc.first, dc.first, atMost(c.coldGoalMs, oc.first));
    add(`${c.label}, ${c.coldGoalMs !== undefined ? 'warm' : 'uncached'} p50 (ms)`, oc.uncached.p50, dc.uncached.p50, atMost(c.goalMs, oc.uncached.p50));
    add(`${c.label}, ${c.coldGoalMs !== undefined ? 'warm' : 'uncached'} p99 (ms)`, oc.uncached.p99, dc.uncached.p99, atMost(c.goalMs, oc.uncached.p99));
  }
  const se = o.explorer.search;
  if (se) {
    add(`${se.label}: rows on that first page`, se.firstPageRows, 100);
    add(`${se.label.replace(', first page', '')}: 100 rows following next, p50 (ms)`, se.hundredRows.p50, d.explorer[se.label]!.uncached.p50, atMost(300, se.hundredRows.p50));
    add(`${se.label.replace(', first page', '')}: 100 rows following next, p99 (ms)`, se.hundredRows.p99, d.explorer[se.label]!.uncached.p99, atMost(300, se.hundredRows.p99));
  }
  // Raw records searched per second: the edge file's bytes over the time to page through them all.
  const MB = 1e6;
  const scanRate = [files.edge.bytes / MB / o.explorer.nomatch.seconds, files.edge.bytes / MB / (d.nomatch.p50 / 1000)] as const;
  add('explorer search, whole store, no match (MB/s of raw records)', ...scanRate, { goal: '≥ 500', met: scanRate[0] >= 500 });
  add('explorer search, whole store, no match (s)', o.explorer.nomatch.seconds, d.nomatch.p50 / 1000);
  add('peak RSS during the explorer cases (MiB)', mib(o.explorer.rss.peak), null, atMost(GiB, mib(o.explorer.rss.peak)));
  add('store on disk (MiB)', mib(o.storeBytes), mib(d.fileBytes), { goal: '≤ DuckDB', met: o.storeBytes <= d.fileBytes });
  return out;
}

function printTable(n: number, rows: Line[], problems: string[], notes: string[]): void {
  const num = (v: number | null, figure: string) => (v === null ? '–' : fmt(v, (figure.includes('(MiB') && !figure.includes('/s')) || figure.includes('rows on') ? 0 : v < 10 ? 2 : 1));
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
  for (const note of notes) console.log(`note: ${note}`);
  if (problems.length) {
    console.log(`\n!!! MISMATCH: DuckDB's answers differ from ours (${problems.length}):`);
    for (const p of problems) console.log(`!!!   ${p}`);
  } else {
    console.log("DuckDB's answers equal ours on every case at BENCH_NOW (counts exactly, p95/p99 within 1%).");
  }
}

/** Explorer answers in the JSON: totals and tops, not the pages' records. */
function summarize<T extends { answer: ExplorerAnswer | null }>(cases: Record<string, T>) {
  return Object.fromEntries(
    Object.entries(cases).map(([k, { answer, ...v }]) => {
      const summary = !answer
        ? null
        : answer.kind === 'histogram'
          ? { records: answer.buckets.reduce((n, b) => n + b.count, 0), buckets: answer.buckets.length }
          : answer.kind === 'facets'
            ? answer.facets
            : { rows: answer.rows.length, newest: answer.rows[0]?.timestamp ?? null, oldest: answer.rows[answer.rows.length - 1]?.timestamp ?? null };
      return [k, { ...v, summary }];
    }),
  );
}

// ---- --settled: text searches and fields inside the records, on a settled store ----

/**
 * Waits until the server's background builder (columns files and their field index) has had no
 * step for `quietMs`, from its activity log; its steps' count and busy time since `from`.
 */
async function backgroundSettled(activityFile: string, from: number, quietMs = 5000): Promise<{ steps: number; busyMs: number }> {
  const now = () => performance.timeOrigin + performance.now();
  let last = { steps: -1, busyMs: 0 };
  let since = now();
  for (;;) {
    await new Promise((res) => setTimeout(res, 1000));
    const step = stageTotals(activityFile, from, now())['background: columns step'] ?? { count: 0, ms: 0 };
    if (step.count !== last.steps) {
      last = { steps: step.count, busyMs: step.ms };
      since = now();
    } else if (now() - since >= quietMs) return last;
  }
}

/** Asks `p` until its answer is complete (a walk answers with its progress first); ms to that answer. */
async function completeAnswer(client: Client, p: string): Promise<{ ms: number; a: Answer }> {
  const t = performance.now();
  let a = await client.request('GET', p);
  while (a.status === 200 && (JSON.parse(a.body) as { scanned?: { complete: boolean } }).scanned?.complete === false) a = await client.request('GET', p);
  if (a.status !== 200) throw new Error(`${p}: ${a.status} ${a.body.slice(0, 300)}`);
  return { ms: performance.now() - t, a };
}

/**
 * The search and field cases alone: a fresh folder, the edge file imported, the background
 * builder left to finish (the field index and the record texts are built after the import's
 * commit: its time is a figure), then per
 * case a server just restarted: its first complete answer (cold), then RUNS answers (warm: the
 * columns counted again each time; a walk's are read from the finished walk, kept 60 s). DuckDB
 * loads the same file with `metadata` as JSON and answers with json_extract_string.
 */
async function runSettled(n: number): Promise<boolean> {
  const { edge } = await benchFiles(n);
  const dataDir = path.join(BENCH_DIR, `ours-${n}-fields`);
  const activity = activityFileOf(dataDir);
  fs.rmSync(dataDir, { recursive: true, force: true });
  setAsideActivity(activity);
  const log = (msg: string) => console.error(`[${n} fields] ${msg}`);
  const loadStart = os.loadavg();
  const s = await serve(dataDir, activity);
  const imported = await postFile(s.port, KEY, edge);
  if (imported.report.imported !== edge.records) throw new Error(`import of ${edge.path}: ${JSON.stringify(imported.report)}`);
  const importedAt = performance.timeOrigin + performance.now();
  log(`edge imported in ${fmt(imported.seconds, 1)} s`);
  const built = await backgroundSettled(activity, importedAt);
  const buildSeconds = (performance.timeOrigin + performance.now() - importedAt - 5000) / 1000;
  log(`background build done ${fmt(buildSeconds, 1)} s after the import (${built.steps} steps, ${fmt(built.busyMs / 1000, 1)} s busy)`);
  await stop(s);
  const storeBytes = await duBytes(dataDir);

  const cases: Record<string, { first: number; uncached: Percentiles; answer: ExplorerAnswer; path: string; walked: boolean }> = {};
  // The first answer of a process pays for its start (code compiled, dictionaries and catalog
  // read): the 7-day histogram without a field, on a server just restarted too, says how much.
  const baseline = explorerCases(DEMO_PROJECTS[0]!.ref).find((c) => c.label === 'explorer histogram 7d')!;
  for (const c of [baseline, ...settledCases()]) {
    const r = await serve(dataDir);
    const p = explorerPath(c);
    const first = await completeAnswer(r.client, p);
    const runs: number[] = [];
    for (let k = 0; k < RUNS; k++) runs.push((await completeAnswer(r.client, p)).ms);
    await stop(r);
    cases[c.label] = { first: first.ms, uncached: percentiles(runs), answer: explorerAnswer(c, first.a.body), path: p, walked: 'scanned' in (JSON.parse(first.a.body) as object) };
    log(`${c.label}: cold ${fmt(first.ms, 1)} ms, warm p50 ${fmt(cases[c.label]!.uncached.p50, 1)} ms`);
  }
  if (!values.keep) fs.rmSync(dataDir, { recursive: true, force: true });

  const dbFile = path.join(BENCH_DIR, `duckdb-${n}-fields.duckdb`);
  const duck = (await duckChild('fields', { dbFile, edgeFile: edge.path, runs: RUNS }).result) as DuckFieldRun;
  const duckBytes = await duBytes(dbFile);
  if (!values.keep) for (const f of [dbFile, `${dbFile}.wal`]) fs.rmSync(f, { force: true });
  const problems = settledCases().flatMap((c) => compareExplorer(c.label, cases[c.label]!.answer, duck.explorer[c.label]!.answer));
  if (duck.records !== n) problems.push(`DuckDB imported ${duck.records} records, expected ${n}`);

  console.log(`\n### text searches and fields inside the records on a settled store, ${n.toLocaleString('en-US')} edge records, ${new Date().toISOString().slice(0, 16)} UTC`);
  console.log(`load average ${loadStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the end; server: npm run serve in ${SERVER_DIR}\n`);
  console.log('| figure | ours | DuckDB | ratio | goal |');
  console.log('|---|---|---|---|---|');
  const row = (figure: string, ours: number, d: number | null, goal = '–') => {
    const ratio = d ? `${fmt(ours / d, ours / d < 0.1 ? 3 : 2)}x` : '–';
    console.log(`| ${figure} | ${fmt(ours, ours < 10 ? 2 : 1)} | ${d === null ? '–' : fmt(d, d < 10 ? 2 : 1)} | ${ratio} | ${goal} |`);
  };
  row('import, edge NDJSON (s)', imported.seconds, duck.importSeconds);
  row('background build (field index, record texts) done, after the import (s of wall time; busy s)', buildSeconds, null, `${fmt(built.busyMs / 1000, 1)} s busy`);
  row('store on disk (MiB)', mib(storeBytes), mib(duckBytes));
  const b = cases[baseline.label]!;
  row(`${baseline.label} (no field: a process's first answer), cold (ms)`, b.first, null);
  row(`${baseline.label} (no field), warm p50 (ms)`, b.uncached.p50, null);
  for (const c of settledCases()) {
    const [o, d] = [cases[c.label]!, duck.explorer[c.label]!];
    const how = c.field || c.fieldFacet ? (c.indexed ? 'indexed' : 'not indexed') : 'text';
    row(`${c.label} (${how}${o.walked ? ', walked' : ''}), cold (ms)`, o.first, d.first, `≤ ${c.coldGoalMs} ${o.first <= c.coldGoalMs! ? '✓' : '✗'}`);
    row(`${c.label} (${how}), warm p50 (ms)`, o.uncached.p50, d.uncached.p50, `≤ ${c.goalMs} ${o.uncached.p50 <= c.goalMs ? '✓' : '✗'}`);
    row(`${c.label} (${how}), warm p99 (ms)`, o.uncached.p99, d.uncached.p99);
  }
  console.log('\nratio = ours / DuckDB. DuckDB runs in-process (no HTTP); ours is timed over loopback HTTP, cold on a server just restarted.');
  if (problems.length) {
    console.log(`\n!!! MISMATCH: DuckDB's answers differ from ours (${problems.length}):`);
    for (const pr of problems) console.log(`!!!   ${pr}`);
  } else console.log("DuckDB's answers equal ours on every case.");
  const result = {
    records: n,
    at: new Date().toISOString(),
    serverDir: SERVER_DIR,
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memBytes: os.totalmem(), node: process.version, loadavg: { start: loadStart, end: os.loadavg() } },
    importSeconds: imported.seconds,
    fieldIndex: { seconds: buildSeconds, ...built },
    storeBytes,
    mismatches: problems,
    ours: summarize(cases),
    duckdb: { ...duck, explorer: summarize(duck.explorer), fileBytes: duckBytes },
  };
  fs.writeFileSync(path.join(BENCH_DIR, `results-settled-${n}.json`), `${JSON.stringify(result, null, 2)}\n`);
  return problems.length === 0;
}

// ---- main ----

let failed = false;
if (values.settled) {
  for (const n of sizes) failed ||= !(await runSettled(n));
  if (failed) process.exitCode = 1;
  process.exit();
}
for (const n of sizes) {
  const generated = await benchFiles(n);
  const filesIn = (order: RecordOrder) => ({ fn: orderedFile(generated.fn, order), edge: orderedFile(generated.edge, order) });
  const files = filesIn(ORDER_LIST[0]!);
  const small = await saveFile();
  const ours = await runOurs(n, files, small, ORDER_LIST[0]!);
  ours.alone = await runImportsAlone(n, files);
  const otherOrders: ImportRun[] = [];
  for (const order of ORDER_LIST.slice(1)) otherOrders.push(await runImportsOnly(n, filesIn(order), order));
  const duck = await runDuck(n, files, small, ours);
  if (duck.records.fn !== n || duck.records.edge !== n) console.log(`!!! DuckDB imported ${JSON.stringify(duck.records)} records, expected ${n} each`);
  const problems = [
    ...Object.keys(ours.cases).flatMap((label) => compare(label, ours.cases[label]!.rows, duck.cases[label]!.rows)),
    ...Object.keys(ours.explorer.cases).flatMap((label) => {
      const answer = ours.explorer.cases[label]!.answer;
      return answer ? compareExplorer(label, answer, duck.explorer[label]!.answer) : [];
    }),
  ];
  if (duck.nomatch.count !== 0) problems.push(`DuckDB found ${duck.nomatch.count} records holding ${EXPLORER_NOMATCH}`);
  failed ||= problems.length > 0;
  const rows = lines(files, ours, duck, otherOrders);
  printTable(n, rows, problems, ours.explorer.notes);
  const strip = <T extends { rows: Row[] }>(cases: Record<string, T>) => Object.fromEntries(Object.entries(cases).map(([k, { rows: _rows, ...v }]) => [k, v]));
  const result = {
    records: n,
    at: new Date().toISOString(),
    serverDir: SERVER_DIR,
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memBytes: os.totalmem(), node: process.version, loadavg: os.loadavg() },
    files: { fn: files.fn.bytes, edge: files.edge.bytes, save: small.bytes },
    table: rows,
    mismatches: problems,
    ours: { ...ours, cases: strip(ours.cases), explorer: { ...ours.explorer, cases: summarize(ours.explorer.cases) }, otherOrders },
    duckdb: { ...duck, cases: strip(duck.cases), explorer: summarize(duck.explorer) },
  };
  fs.writeFileSync(path.join(BENCH_DIR, `results-${n}.json`), `${JSON.stringify(result, null, 2)}\n`);
}
if (failed) process.exitCode = 1;
