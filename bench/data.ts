/**
 * Shared by the bench scripts: the input files (realistic exports from the demo generator,
 * generated once and reused), the endpoint windows of the spec, percentiles, /proc readers
 * and number formatting. Nothing here imports the server's store or endpoints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { generateRecords } from '../server/demo/generate.ts';
import { writeExport } from '../server/demo/write-export.ts';
import type { SourceName } from '../server/sources.ts';
import { MICROS } from '../server/time.ts';

export const BENCH_NOW = Date.UTC(2026, 10, 22, 12, 0, 0) * 1000;
export const BENCH_DIR = path.resolve(import.meta.dirname, 'data');
export const REPO_DIR = path.resolve(import.meta.dirname, '..');
/** Edge records of the small import whose save pause is measured. */
export const SAVE_RECORDS = 10_000;

export interface BenchFile {
  source: SourceName;
  path: string;
  records: number;
  bytes: number;
}

async function ensureFile(source: SourceName, file: string, count: number, seed: number): Promise<BenchFile> {
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const t = performance.now();
    await writeExport(`${file}.tmp`, generateRecords(source, { now: BENCH_NOW, count, seed }), { source, format: 'ndjson' });
    fs.renameSync(`${file}.tmp`, file);
    console.error(`generated ${file} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  return { source, path: file, records: count, bytes: fs.statSync(file).size };
}

/** `function_edge_logs-<n>.ndjson` and `edge_logs-<n>.ndjson` (seed 7), written once, reused. */
export async function benchFiles(records: number): Promise<{ fn: BenchFile; edge: BenchFile }> {
  return {
    fn: await ensureFile('deno-relay-logs', path.join(BENCH_DIR, `function_edge_logs-${records}.ndjson`), records, 7),
    edge: await ensureFile('cloudflare.logs.prod', path.join(BENCH_DIR, `edge_logs-${records}.ndjson`), records, 7),
  };
}

/** The small edge file (other seed, so other ids) imported to measure the pause of a save. */
export function saveFile(): Promise<BenchFile> {
  return ensureFile('cloudflare.logs.prod', path.join(BENCH_DIR, `edge_logs-save-${SAVE_RECORDS}.ndjson`), SAVE_RECORDS, 8);
}

// ---- the endpoints' windows (shared/reference/endpoints-spec.md) ----

export const STATS_INTERVALS = {
  '5min': { span: 5 * MICROS.minute, unit: MICROS.second },
  '15min': { span: 15 * MICROS.minute, unit: MICROS.minute },
  '1hr': { span: MICROS.hour, unit: MICROS.minute },
  '1day': { span: MICROS.day, unit: MICROS.hour },
  '7day': { span: 7 * MICROS.day, unit: MICROS.day },
} as const;
export const API_INTERVALS = {
  minutely: { span: MICROS.hour, unit: MICROS.minute },
  hourly: { span: MICROS.hour, unit: MICROS.hour },
  daily: { span: 7 * MICROS.day, unit: MICROS.day },
} as const;
export const TIER_RETENTION = { FREE: MICROS.day, PRO: 7 * MICROS.day } as const;

/** One measured endpoint call: its name, query parameters and the row label. */
export interface BenchCase {
  label: string;
  endpoint: 'functions.invocation-stats' | 'usage.api-counts' | 'logs.all';
  params: Record<string, string>;
}

/** The cases of the latency rows: every interval of the two bucketed endpoints, logs.all FREE and PRO. */
export function benchCases(fnProject: string, edgeProject: string): BenchCase[] {
  return [
    ...Object.keys(STATS_INTERVALS).map((interval): BenchCase => ({ label: `invocation-stats ${interval}`, endpoint: 'functions.invocation-stats', params: { project: fnProject, interval } })),
    ...Object.keys(API_INTERVALS).map((interval): BenchCase => ({ label: `api-counts ${interval}`, endpoint: 'usage.api-counts', params: { project: escapeRegex(edgeProject), interval } })),
    ...Object.keys(TIER_RETENTION).map((tier): BenchCase => ({ label: `logs.all ${tier}`, endpoint: 'logs.all', params: { project: edgeProject, project_tier: tier } })),
  ];
}

// ---- the explorer's cases, edge_logs only ----

/** The text searched for on the first page: a bot probe's path, in ~0.4% of edge records. */
export const EXPLORER_SEARCH = 'wp-login.php';
/** Searched over the whole store to measure the scan rate: no record holds it. */
export const EXPLORER_NOMATCH = 'zq-no-such-text-xj';
export const EXPLORER_BUCKETS = 60;
export const EXPLORER_FACETS = ['status', 'method', 'path'] as const;
/** A deep page starts this many matching rows into the window (or half of them, if fewer). */
export const EXPLORER_DEEP_ROWS = 100_000;
/** The whole store: every generated record is within 90 days of BENCH_NOW. */
export const EXPLORER_ALL_SPAN = 91 * MICROS.day;

/**
 * The histogram's buckets as the API describes them (the narrowest round width that covers the
 * range in at most `buckets` buckets, aligned to the epoch, the first holding the instant just
 * after start); DuckDB's query uses these, and ours' answers are checked against them.
 */
export function explorerBuckets(start: number, end: number, buckets = EXPLORER_BUCKETS): { width: number; first: number } {
  const s = MICROS.second;
  const widths = [s, 5 * s, 10 * s, 30 * s, 60 * s, 300 * s, 600 * s, 900 * s, 1800 * s, 3600 * s, 3 * 3600 * s, 6 * 3600 * s, 12 * 3600 * s, MICROS.day, 7 * MICROS.day];
  const width = widths.find((w) => Math.max(1, end - start) / w <= buckets) ?? widths[widths.length - 1]!;
  return { width, first: Math.floor((start + 1) / width) * width };
}

/** One measured explorer request; `start`/`end` are µs (start exclusive, end inclusive, as the API reads them). */
export interface ExplorerCase {
  label: string;
  kind: 'histogram' | 'facets' | 'page';
  start: number;
  end: number;
  project?: string;
  q?: string;
  /** `q` is an RE2 pattern (`regex=1`). */
  regex?: boolean;
  /** A condition on a field inside the records: `field=<path>:<value>` (equality). */
  field?: { path: string; value: string };
  /** Facets of a field inside the records (`fields=<path>`), instead of EXPLORER_FACETS. */
  fieldFacet?: string;
  /** The field's path is one the edge source indexes (server/store/field-columns.ts). */
  indexed?: boolean;
  /** A goal for the first (cold) answer, ms: the search aggregates' walk. */
  coldGoalMs?: number;
  /** `status=5xx`: rows with a status from 500 to 599. */
  status5xx?: boolean;
  /** Continue from a cursor found by paging `deepRows` rows into the window. */
  deep?: boolean;
  /** The latency goal, ms. */
  goalMs: number;
}

/** Histogram and facets over 7 days (all projects and the busiest), pages and a search over the last 24 h. */
export function explorerCases(edgeProject: string): ExplorerCase[] {
  const week = { start: BENCH_NOW - 7 * MICROS.day, end: BENCH_NOW };
  const day = { start: BENCH_NOW - MICROS.day, end: BENCH_NOW };
  return [
    { label: 'explorer histogram 7d', kind: 'histogram', ...week, goalMs: 100 },
    { label: 'explorer histogram 7d, one project', kind: 'histogram', ...week, project: edgeProject, goalMs: 100 },
    { label: 'explorer facets 7d', kind: 'facets', ...week, goalMs: 100 },
    { label: 'explorer facets 7d, one project', kind: 'facets', ...week, project: edgeProject, goalMs: 100 },
    { label: `explorer search "${EXPLORER_SEARCH}" 24h, first page`, kind: 'page', ...day, q: EXPLORER_SEARCH, goalMs: 300 },
    { label: 'explorer page 24h, first', kind: 'page', ...day, goalMs: 10 },
    { label: 'explorer page 24h, deep', kind: 'page', ...day, deep: true, goalMs: 10 },
    { label: 'explorer page 24h status=5xx, first', kind: 'page', ...day, status5xx: true, goalMs: 10 },
    { label: 'explorer page 24h status=5xx, deep', kind: 'page', ...day, status5xx: true, deep: true, goalMs: 10 },
    ...searchCases(day, week),
  ];
}

/** A common text (in most edge messages: the browsers' user agent) and a pattern with a literal part. */
export const EXPLORER_COMMON = 'Mozilla';
export const EXPLORER_PATTERN = 'wp-(login|admin)';
/** A phrase that most edge messages hold (not a word alone: the record words narrow it to candidates, their texts decide). */
export const EXPLORER_PHRASE = '/rest/v1/';

/**
 * Text searches and field conditions answered by the shared walk (count, histogram and facets
 * of one search from one walk): cold is the first answer, complete; warm the later ones.
 */
function searchCases(day: { start: number; end: number }, week: { start: number; end: number }): ExplorerCase[] {
  const out: ExplorerCase[] = [];
  for (const [span, w] of [['24h', day], ['7d', week]] as const) {
    for (const [what, q, regex] of [[`rare "${EXPLORER_SEARCH}"`, EXPLORER_SEARCH, false], [`common "${EXPLORER_COMMON}"`, EXPLORER_COMMON, false], [`regex /${EXPLORER_PATTERN}/`, EXPLORER_PATTERN, true], [`common phrase "${EXPLORER_PHRASE}"`, EXPLORER_PHRASE, false]] as const) {
      for (const kind of ['histogram', 'facets'] as const) out.push({ label: `explorer search ${what} ${span}, ${kind}`, kind, ...w, q, regex, goalMs: 300, coldGoalMs: 2000 });
    }
  }
  out.push(...fieldCases(week));
  return out;
}

/** The search and field cases alone (`--settled`), over the same windows as in the whole run. */
export function settledCases(): ExplorerCase[] {
  return searchCases({ start: BENCH_NOW - MICROS.day, end: BENCH_NOW }, { start: BENCH_NOW - 7 * MICROS.day, end: BENCH_NOW });
}

/**
 * Fields inside the records over 7 days: conditions (histograms) and facets on paths the field
 * index holds (server/store/field-columns.ts: every path with few values per partition, answered
 * from the columns files), and a condition on a path it leaves out (a ray changes with every
 * request: every record of the window parsed, by the shared walk).
 */
export function fieldCases(week = { start: BENCH_NOW - 7 * MICROS.day, end: BENCH_NOW }): ExplorerCase[] {
  return [
    { label: 'explorer field request.headers.cf_ipcountry=DE 7d, histogram', kind: 'histogram', ...week, field: { path: 'request.headers.cf_ipcountry', value: 'DE' }, indexed: true, goalMs: 100, coldGoalMs: 1000 },
    { label: 'explorer field facet request.cf.country 7d', kind: 'facets', ...week, fieldFacet: 'request.cf.country', indexed: true, goalMs: 100, coldGoalMs: 1000 },
    { label: 'explorer field request.method=POST 7d, histogram', kind: 'histogram', ...week, field: { path: 'request.method', value: 'POST' }, indexed: true, goalMs: 100, coldGoalMs: 1000 },
    { label: 'explorer field facet request.cf.colo 7d', kind: 'facets', ...week, fieldFacet: 'request.cf.colo', indexed: true, goalMs: 100, coldGoalMs: 1000 },
    { label: 'explorer field request.headers.cf_ray=fb5f* 7d, histogram', kind: 'histogram', ...week, field: { path: 'request.headers.cf_ray', value: 'fb5f*' }, goalMs: 300, coldGoalMs: 2000 },
  ];
}

export const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// ---- measuring ----

export interface Percentiles {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

/** Nearest-rank p50 and p99 (with 21 samples p99 is the largest). */
export function percentiles(samples: number[]): Percentiles {
  const s = [...samples].sort((a, b) => a - b);
  const rank = (q: number) => s[Math.max(0, Math.ceil(q * s.length) - 1)] ?? NaN;
  return { p50: rank(0.5), p99: rank(0.99), max: s[s.length - 1] ?? NaN, n: s.length };
}

/** VmRSS and VmHWM (the kernel's peak) of a process, bytes; undefined once it has exited. */
export function procMemory(pid: number): { rss: number; hwm: number } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/**
 * What a process holds resident, split as the kernel counts it: its own pages (RssAnon +
 * RssShmem: heaps, stacks, anonymous maps) and, per file it maps, the file's pages it has in
 * memory (a mapping's Rss less its Anonymous pages, summed per path): pages of a file are in
 * memory once however many processes map them (npm, the launcher and the server all map node's
 * executable).
 */
export function residentParts(pid: number): { own: number; files: Map<string, number> } | undefined {
  let status: string;
  let smaps: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    smaps = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  const files = new Map<string, number>();
  let file: string | null = null;
  let rss = 0;
  const close = () => {
    if (file) files.set(file, (files.get(file) ?? 0) + rss);
  };
  for (const line of smaps.split('\n')) {
    // A mapping's head: address range, perms, offset, device, inode, then its path if any.
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (head) {
      close();
      file = head[1] !== '0' && head[2]!.startsWith('/') ? head[2]! : null;
      rss = 0;
      continue;
    }
    const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (field) rss += (field[1] === 'Rss' ? 1 : -1) * Number(field[2]) * 1024;
  }
  close();
  return { own: kb('RssAnon') + kb('RssShmem'), files };
}

/** Samples VmRSS of a process every `everyMs` and keeps the largest. */
export function sampleRss(pid: number, everyMs = 100): { max: () => number; stop: () => void } {
  let max = 0;
  const tick = () => (max = Math.max(max, procMemory(pid)?.rss ?? 0));
  tick();
  const timer = setInterval(tick, everyMs);
  return { max: () => max, stop: () => clearInterval(timer) };
}

/** Bytes a folder or file takes on disk, as `du -sb` counts them. */
export async function duBytes(target: string): Promise<number> {
  const { stdout } = await runCommand('du', ['-sb', target]);
  return Number(stdout.split('\t')[0]);
}

function runCommand(cmd: string, args: string[]): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve({ stdout }) : reject(new Error(`${cmd} exited ${code}`))));
  });
}

/** Resolves with the first stdout line matching `re` (rejects if the process exits first). */
export function waitForLine(child: ChildProcess, re: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = re.exec(buf);
      if (m) {
        child.stdout!.off('data', onData);
        resolve(m);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`process exited (${code}) before printing ${re}; output:\n${buf}`)));
  });
}

/** Resolves when the process has exited, with its code. */
export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export const mib = (bytes: number) => bytes / 1024 / 1024;
export const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** What an import's answer reports (contract/api-types.ts has the whole shape). */
export interface ImportReport {
  imported: number;
  duplicates: number;
  rejected: number;
}

/** POST /api/imports with the file streamed as the raw body; seconds until the answer. */
export function postFile(port: number, key: string, file: BenchFile): Promise<{ seconds: number; report: ImportReport }> {
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
        headers: { 'X-API-KEY': key, 'Content-Type': 'application/x-ndjson', 'Content-Length': file.bytes },
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
