/**
 * Slow: autocannon against the real CLI server (its own process) holding the demo
 * data set (100k edge and 100k function edge records): 10 and 100 connections for 30 s each,
 * on cached and on uncached requests. Every request must succeed; p99 latency, request rate
 * and the server's memory are printed.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../testing/fixtures.ts';
import { ROOT, startCli, type Cli } from './helpers.ts';

const NOW_ISO = '2026-11-22T10:30:45Z';
const DURATION_S = Number(process.env.LE_LOAD_SECONDS ?? 30);
const KEY = 'load-key-0123456789abcdef';
const dir = tempDir('le-load-');
let cli: Cli;
let url: string;
let project = '';
let functionId = '';

const rssMiB = () => {
  const status = fs.readFileSync(`/proc/${cli.child.pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
};

beforeAll(async () => {
  const data = path.join(dir, 'demo');
  execFileSync(process.execPath, ['--import', 'tsx', 'server/demo/cli.ts', '--out', data, '--now', NOW_ISO, '--records', '100000'], { cwd: ROOT, stdio: 'pipe' });
  cli = startCli(
    ['--data-dir', path.join(dir, 'store'), '--port', '0', '--now', NOW_ISO, '--import', path.join(data, 'edge_logs.ndjson'), '--import', path.join(data, 'function_edge_logs.ndjson')],
    { LOG_EXPLORER_API_KEY: KEY },
  );
  url = await cli.listening;
  const sources = (await (await fetch(`${url}/api/sources`, { headers: { 'X-API-KEY': KEY } })).json()) as {
    result: Array<{ source: string; count: number; projects: Array<{ ref: string }>; functionIds: Array<{ functionId: string; project: string }> }>;
  };
  const fn = sources.result.find((s) => s.source === 'deno-relay-logs')!;
  const edge = sources.result.find((s) => s.source === 'cloudflare.logs.prod')!;
  expect(edge.count).toBe(100_000);
  expect(fn.count).toBe(100_000);
  project = fn.projects[0]!.ref;
  functionId = fn.functionIds.find((f) => f.project === project)!.functionId;
}, 300_000);

afterAll(async () => {
  if (cli && cli.child.exitCode === null) {
    cli.child.kill('SIGTERM');
    await cli.exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Figures {
  label: string;
  connections: number;
  requests: number;
  reqPerSec: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  non2xx: number;
  rssBefore: number;
  rssAfter: number;
}
const figures: Figures[] = [];

async function run(label: string, connections: number, paths: () => string): Promise<Figures> {
  const rssBefore = rssMiB();
  const errorCodes = new Map<string, number>();
  const instance = autocannon({
    url,
    connections,
    duration: DURATION_S,
    headers: { 'x-api-key': KEY },
    requests: [{ setupRequest: (req) => ({ ...req, path: paths() }) }],
  }) as unknown as Promise<autocannon.Result> & NodeJS.EventEmitter; // the tracker is both
  instance.on('reqError', (err: NodeJS.ErrnoException) => errorCodes.set(err.code ?? err.message, (errorCodes.get(err.code ?? err.message) ?? 0) + 1));
  const result = await instance;
  const f: Figures = {
    label,
    connections,
    requests: result.requests.total,
    reqPerSec: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors,
    non2xx: result.non2xx,
    rssBefore,
    rssAfter: rssMiB(),
  };
  figures.push(f);
  console.log(
    `${label.padEnd(9)} c=${String(connections).padStart(3)}: ${String(f.reqPerSec).padStart(6)} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, max ${f.max} ms, ` +
      `${f.requests} requests, ${f.errors} errors (${result.timeouts} timeouts${errorCodes.size ? `; ${[...errorCodes].map(([k, v]) => `${k}: ${v}`).join(', ')}` : ''}), ${f.non2xx} non-2xx; ` +
      `server RSS ${f.rssBefore} -> ${f.rssAfter} MiB`,
  );
  return f;
}

/** The same few parameter sets again and again: after the first round, cache hits. */
function cachedPaths(): () => string {
  const list = [
    `/api/endpoints/functions.invocation-stats?project=${project}&interval=1day`,
    `/api/endpoints/functions.invocation-stats?project=${project}&interval=7day&function_id=${functionId}`,
    `/api/endpoints/usage.api-counts?project=${project}&interval=daily`,
    `/api/endpoints/usage.api-counts?project=${project}&interval=hourly`,
  ];
  let i = 0;
  return () => list[i++ % list.length]!;
}

/** logs.all, which is never cached, each request with its own time range. */
function uncachedPaths(): () => string {
  let i = 0;
  const now = Date.parse(NOW_ISO);
  return () => `/api/endpoints/logs.all?project=${project}&project_tier=PRO&iso_timestamp_end=${new Date(now - (i++ % 86_400) * 1000).toISOString()}`;
}

/** The worst case: usage.api-counts with a pattern never seen before, so RE2 runs over every distinct URL. */
function newPatternPaths(): () => string {
  let i = 0;
  return () => `/api/endpoints/usage.api-counts?project=${encodeURIComponent(`${project}.*/v1/(rest|storage)|nomatch-${i++}`)}&interval=daily`;
}

for (const connections of [10, 100]) {
  it(`cached requests, ${connections} connections for ${DURATION_S} s: no errors`, async () => {
    const f = await run('cached', connections, cachedPaths());
    expect(f.errors).toBe(0);
    expect(f.non2xx).toBe(0);
    expect(f.requests).toBeGreaterThan(0);
  });

  it(`uncached requests, ${connections} connections for ${DURATION_S} s: no errors`, async () => {
    const f = await run('uncached', connections, uncachedPaths());
    expect(f.errors).toBe(0);
    expect(f.non2xx).toBe(0);
    expect(f.requests).toBeGreaterThan(0);
  });
}

it(`new-pattern requests (RE2 over every URL each time), 10 connections for ${DURATION_S} s: no errors`, async () => {
  const f = await run('new-regex', 10, newPatternPaths());
  expect(f.errors).toBe(0);
  expect(f.non2xx).toBe(0);
  expect(f.requests).toBeGreaterThan(0);
});

it('the server is still well after the runs, and its memory stayed bounded', async () => {
  const res = await fetch(`${url}/api/endpoints/logs.all?project=${project}&project_tier=FREE`, { headers: { 'X-API-KEY': KEY } });
  expect(res.status).toBe(200);
  const last = figures.at(-1)!;
  expect(last.rssAfter).toBeLessThan(1500);
  console.table(figures);
});
