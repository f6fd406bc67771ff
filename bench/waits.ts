/**
 * What a user waits for while the server works: every page's default request asked every 50 ms
 * during an import (each wait kept with its start), the waits over 100 ms lined up with what the
 * server's thread was doing meanwhile (its activity log, see server/activity.ts), and the first
 * and second answer of each page's default request after a restart.
 */
import fs from 'node:fs';
import http from 'node:http';
import { formatIsoMicros } from '../server/time.ts';
import { DEMO_PROJECTS } from '../server/demo/generate.ts';
import { BENCH_NOW, escapeRegex, fmt, percentiles, postFile, type BenchFile, type ImportReport, type Percentiles } from './data.ts';
import type { RecordOrder } from './order.ts';

const HOUR = 3_600_000_000;

export interface PageRequest {
  page: string;
  path: string;
}

/**
 * Each page's default requests (what it asks first when opened, together), by the bench's
 * busiest projects.
 */
export function pageRequests(fnProject: string, edgeProject: string): Record<string, PageRequest[]> {
  const hour = new URLSearchParams({ source: 'edge_logs', project: edgeProject, start: formatIsoMicros(BENCH_NOW - HOUR), end: formatIsoMicros(BENCH_NOW) });
  const one = (page: string, path: string) => [{ page, path }];
  return {
    'Functions 1 day': one('Functions 1 day', `/api/endpoints/functions.invocation-stats?${new URLSearchParams({ project: fnProject, interval: '1day' })}`),
    'Logs explorer 1 hour': [
      { page: 'explorer page', path: `/api/logs?${hour}` },
      { page: 'explorer histogram', path: `/api/logs/histogram?${hour}&buckets=60` },
      { page: 'explorer facets', path: `/api/logs/facets?${hour}&fields=status,method,path` },
    ],
    'logs.all PRO': one('logs.all PRO', `/api/endpoints/logs.all?${new URLSearchParams({ project: edgeProject, project_tier: 'PRO' })}`),
    'API usage daily': one('API usage daily', `/api/endpoints/usage.api-counts?${new URLSearchParams({ project: escapeRegex(edgeProject), interval: 'daily' })}`),
    Data: one('Data', '/api/sources'),
  };
}

/** One request's wait: when it started (epoch ms) and how long it took. */
export interface Wait {
  start: number;
  ms: number;
  ok: boolean;
}

function ask(agent: http.Agent, port: number, key: string, p: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, headers: { 'X-API-KEY': key }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
      res.on('error', () => resolve(false));
    });
    req.on('error', () => resolve(false));
    req.setTimeout(120_000, () => req.destroy());
    req.end();
  });
}

/** Asks each path every `everyMs` (the next right after a slower answer) until stopped. */
export function probeEvery(port: number, key: string, requests: PageRequest[], everyMs = 50): { stop: () => Promise<Map<string, Wait[]>> } {
  let running = true;
  const out = new Map<string, Wait[]>();
  const loops = requests.map(async (r) => {
    const agent = new http.Agent({ keepAlive: true });
    const waits: Wait[] = [];
    out.set(r.page, waits);
    while (running) {
      const t = performance.now();
      const ok = await ask(agent, port, key, r.path);
      const ms = performance.now() - t;
      waits.push({ start: performance.timeOrigin + t, ms, ok });
      if (ms < everyMs) await new Promise((res) => setTimeout(res, everyMs - ms));
    }
    agent.destroy();
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return out;
    },
  };
}

export interface WaitSummary extends Percentiles {
  count: number;
  failures: number;
}

export function summarizeWaits(waits: Map<string, Wait[]>): Record<string, WaitSummary> {
  return Object.fromEntries([...waits].map(([page, w]) => [page, { ...percentiles(w.map((x) => x.ms)), count: w.length, failures: w.filter((x) => !x.ok).length }]));
}

interface Span {
  what: string;
  start: number;
  ms: number;
  /** A worker thread's span (its garbage collections): it did not hold the requests up. */
  thread?: string;
}

interface Totals {
  what: 'totals';
  at: number;
  thread: string;
  totals: Record<string, [number, number]>;
}

function readLines(file: string): Array<Span | Totals> {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Span | Totals);
}

const isTotals = (l: Span | Totals): l is Totals => l.what === 'totals';

/** The answering thread's spans. */
function readActivity(file: string): Span[] {
  return readLines(file).filter((l): l is Span => !isTotals(l) && l.thread === undefined);
}

/**
 * Where the server's time went between two instants (epoch ms), by stage: each thread's totals
 * at `to` less its totals at `from` (the log's totals are cumulative, written every 200 ms).
 */
export function stageTotals(file: string, from: number, to: number): Record<string, { count: number; ms: number }> {
  const last = new Map<string, { before?: Totals; atEnd?: Totals }>();
  for (const l of readLines(file)) {
    if (!isTotals(l)) continue;
    const e = last.get(l.thread) ?? {};
    if (l.at <= from) e.before = l;
    if (l.at <= to) e.atEnd = l;
    last.set(l.thread, e);
  }
  const out: Record<string, { count: number; ms: number }> = {};
  for (const { before, atEnd } of last.values()) {
    if (!atEnd) continue;
    for (const [what, [count, ms]] of Object.entries(atEnd.totals)) {
      const [c0, m0] = before?.totals[what] ?? [0, 0];
      const e = (out[what] ??= { count: 0, ms: 0 });
      e.count += count - c0;
      e.ms += ms - m0;
    }
  }
  return out;
}

/** "insert 12,345 ms, compress 2,345 ms, …", most time first. */
export function describeStages(stages: Record<string, { count: number; ms: number }>): string {
  return Object.entries(stages)
    .filter(([, e]) => e.count > 0)
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(([what, e]) => `${what} ${fmt(e.ms, 0)} ms`)
    .join(', ');
}

export interface StallBreakdown {
  /** Waits over the threshold, over every probed page. */
  stalls: number;
  /** Per kind of work: ms of it overlapping those waits (summed over waits), and in how many of them it ran. */
  byWhat: Record<string, { ms: number; waits: number }>;
  /** The longest waits, each with the work that overlapped it. */
  longest: Array<{ page: string; ms: number; during: string }>;
}

/** The server's work during each wait longer than `overMs`, from its activity log. */
export function stallBreakdown(waits: Map<string, Wait[]>, activityFile: string, overMs = 100): StallBreakdown {
  const spans = readActivity(activityFile).sort((a, b) => a.start - b.start);
  const byWhat: StallBreakdown['byWhat'] = {};
  const all: Array<{ page: string; w: Wait; during: Map<string, number> }> = [];
  for (const [page, list] of waits) {
    for (const w of list) {
      if (w.ms <= overMs) continue;
      const during = new Map<string, number>();
      const end = w.start + w.ms;
      for (const s of spans) {
        if (s.start >= end) break;
        const overlap = Math.min(end, s.start + s.ms) - Math.max(w.start, s.start);
        if (overlap > 0) during.set(s.what, (during.get(s.what) ?? 0) + overlap);
      }
      for (const [what, ms] of during) {
        const e = (byWhat[what] ??= { ms: 0, waits: 0 });
        e.ms += ms;
        e.waits++;
      }
      all.push({ page, w, during });
    }
  }
  all.sort((a, b) => b.w.ms - a.w.ms);
  const describe = (d: Map<string, number>) =>
    [...d]
      .sort((a, b) => b[1] - a[1])
      .map(([what, ms]) => `${what} ${fmt(ms, 0)} ms`)
      .join(', ') || 'nothing logged';
  return { stalls: all.length, byWhat, longest: all.slice(0, 5).map((x) => ({ page: x.page, ms: x.w.ms, during: describe(x.during) })) };
}

/** One line per kind, most time first: "commit 1,234 ms in 12 waits". */
export function describeStalls(b: StallBreakdown): string {
  if (!b.stalls) return 'no wait over 100 ms';
  const kinds = Object.entries(b.byWhat)
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(([what, e]) => `${what} ${fmt(e.ms, 0)} ms in ${e.waits}`)
    .join('; ');
  return `${b.stalls} waits over 100 ms; during them: ${kinds || 'nothing logged'}`;
}

/**
 * The first and second answer of one page's default requests, asked together as the page does,
 * on a server just restarted for it (each page is measured as the first one a user opens).
 */
export async function pageAnswers(port: number, key: string, requests: PageRequest[]): Promise<{ first: number; second: number }> {
  const agent = new http.Agent({ keepAlive: true });
  const together = async () => {
    const t = performance.now();
    const oks = await Promise.all(requests.map((r) => ask(agent, port, key, r.path)));
    if (oks.includes(false)) throw new Error(`${requests.map((r) => r.page).join(', ')}: not 200 after the restart`);
    return performance.now() - t;
  };
  try {
    const first = await together();
    return { first, second: await together() };
  } finally {
    agent.destroy();
  }
}

/** Both imports of a bench run, every page probed meanwhile: times, reports, waits, stalls and stages. */
export interface ImportRun {
  order: RecordOrder;
  fnSeconds: number;
  edgeSeconds: number;
  reports: ImportReport[];
  /** Per page request, over both imports. */
  waits: Record<string, WaitSummary>;
  /** logs.all PRO during the edge import alone (the figure earlier runs reported). */
  logsAllDuringEdge: WaitSummary;
  stalls: StallBreakdown;
  /** Where the server's time went during each import, by stage (the activity log's totals). */
  stages: { fn: Record<string, { count: number; ms: number }>; edge: Record<string, { count: number; ms: number }> };
}

/** Imports both files into a running server with every page probed meanwhile. */
export async function importUnderProbes(port: number, key: string, files: { fn: BenchFile; edge: BenchFile }, order: RecordOrder, activityFile: string, log: (msg: string) => void): Promise<ImportRun> {
  // The busiest project of the generator (the bench's projects are only known after the imports).
  const ref = DEMO_PROJECTS[0]!.ref;
  const requests = Object.values(pageRequests(ref, ref)).flat();
  const now = () => performance.timeOrigin + performance.now();
  const flushed = () => new Promise((res) => setTimeout(res, 500)); // the activity log is written every 200 ms
  let prober = probeEvery(port, key, requests);
  const fnFrom = now();
  const fn = await postFile(port, key, files.fn);
  const fnTo = now();
  const duringFn = await prober.stop();
  await flushed();
  const fnStages = stageTotals(activityFile, fnFrom, fnTo + 400);
  log(`${order}: function edge imported in ${fmt(fn.seconds, 2)} s; ${describeStages(fnStages)}`);
  prober = probeEvery(port, key, requests);
  const edgeFrom = now();
  const edge = await postFile(port, key, files.edge);
  const edgeTo = now();
  const duringEdge = await prober.stop();
  await flushed();
  const edgeStages = stageTotals(activityFile, edgeFrom, edgeTo + 400);
  log(`${order}: edge imported in ${fmt(edge.seconds, 2)} s; ${describeStages(edgeStages)}`);
  for (const [file, r] of [[files.fn, fn.report], [files.edge, edge.report]] as const) {
    if (r.imported !== file.records || r.rejected !== 0) throw new Error(`import of ${file.path}: ${JSON.stringify(r)}`);
  }
  const both = new Map([...duringFn].map(([page, w]) => [page, [...w, ...(duringEdge.get(page) ?? [])]]));
  const stalls = stallBreakdown(both, activityFile);
  log(`${order}: ${describeStalls(stalls)}`);
  return {
    order,
    fnSeconds: fn.seconds,
    edgeSeconds: edge.seconds,
    reports: [fn.report, edge.report],
    waits: summarizeWaits(both),
    stages: { fn: fnStages, edge: edgeStages },
    logsAllDuringEdge: summarizeWaits(new Map([['logs.all PRO', duringEdge.get('logs.all PRO') ?? []]]))['logs.all PRO']!,
    stalls,
  };
}
