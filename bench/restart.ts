/**
 * `npx tsx bench/restart.ts --data-dir DIR [--server-dir DIR] [--rounds N]`: each page's first and
 * second answer on a server just restarted for it, over a data folder already filled (a folder
 * kept by `npm run bench -- --keep`, or `npm run import`'s), as `npm run bench` measures them
 * after its imports, without importing again: at 10M records that is minutes instead of hours.
 * Each server runs with LOG_EXPLORER_ACTIVITY set, and what its thread did while the first
 * answer was awaited is printed beside it (spans of 2 ms or more; server/activity.ts).
 *
 * First a server answers every page once and runs 20 s (what the bench's run leaves behind: the
 * columns files built, the patterns' matches kept), then `--rounds` restarts per page (default 2).
 * Only HTTP, like bench/scale.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { formatIsoMicros } from '../server/time.ts';
import { BENCH_NOW, exited, fmt, REPO_DIR, waitForLine } from './data.ts';
import { pageAnswers, pageRequests } from './waits.ts';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    'server-dir': { type: 'string', default: REPO_DIR },
    rounds: { type: 'string', default: '2' },
  },
});
if (!values['data-dir']) throw new Error('usage: npx tsx bench/restart.ts --data-dir DIR [--server-dir DIR] [--rounds N]');
const DATA_DIR = path.resolve(values['data-dir']);
const SERVER_DIR = path.resolve(values['server-dir']!);
const ROUNDS = Number(values.rounds);
const KEY = 'bench';

interface Served {
  child: ChildProcess;
  port: number;
  activity: string;
}

async function serve(): Promise<Served> {
  const activity = path.join(os.tmpdir(), `le-restart-${process.pid}-${Date.now()}.ndjson`);
  const args = ['scripts/run-server.mjs', 'serve', '--data-dir', DATA_DIR, '--port', '0', '--api-key', KEY, '--now', formatIsoMicros(BENCH_NOW)];
  const child = spawn(process.execPath, args, { cwd: SERVER_DIR, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LOG_EXPLORER_ACTIVITY: activity } });
  const m = await waitForLine(child, /Listening on http:\/\/127\.0\.0\.1:(\d+)/);
  child.stdout!.resume();
  return { child, port: Number(m[1]), activity };
}

async function stop(s: Served): Promise<void> {
  s.child.kill('SIGTERM');
  const code = await exited(s.child);
  if (code !== 0) throw new Error(`the server exited ${code} after SIGTERM`);
}

/** "what 12 ms, …": the spans of the activity log overlapping [from, to] (epoch ms), most time first. */
function during(file: string, from: number, to: number): string {
  const by = new Map<string, number>();
  for (const line of fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : []) {
    if (!line) continue;
    const s = JSON.parse(line) as { what: string; start?: number; ms?: number };
    if (s.what === 'totals' || s.start === undefined || s.ms === undefined) continue;
    const overlap = Math.min(to, s.start + s.ms) - Math.max(from, s.start);
    if (overlap > 0) by.set(s.what, (by.get(s.what) ?? 0) + overlap);
  }
  return (
    [...by]
      .sort((a, b) => b[1] - a[1])
      .map(([what, ms]) => `${what} ${fmt(ms, 0)} ms`)
      .join(', ') || 'nothing logged'
  );
}

async function busiest(port: number): Promise<{ fn: string; edge: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/api/sources`, { headers: { 'X-API-KEY': KEY } });
  const sources = ((await res.json()) as { result: Array<{ source: string; projects: Array<{ ref: string; count: number }> }> }).result;
  const of = (name: string) => sources.find((s) => s.source === name)!.projects.reduce((a, b) => (b.count > a.count ? b : a)).ref;
  return { fn: of('deno-relay-logs'), edge: of('cloudflare.logs.prod') };
}

const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');
console.log(`${DATA_DIR}, server ${SERVER_DIR}, ${new Date().toISOString()}, load average ${load()}`);
const first = await serve();
const { fn, edge } = await busiest(first.port);
const pages = pageRequests(fn, edge);
for (const requests of Object.values(pages)) await pageAnswers(first.port, KEY, requests);
await new Promise((resolve) => setTimeout(resolve, 20_000));
await stop(first);
fs.rmSync(first.activity, { force: true });
for (let round = 1; round <= ROUNDS; round++) {
  for (const [page, requests] of Object.entries(pages)) {
    const s = await serve();
    const from = performance.timeOrigin + performance.now();
    const a = await pageAnswers(s.port, KEY, requests);
    // The server writes its activity log every 200 ms: stopped first, so it is whole.
    await stop(s);
    console.log(`round ${round}, ${page}: first ${fmt(a.first, 0)} ms, second ${fmt(a.second, 0)} ms; during the first: ${during(s.activity, from, from + a.first)}`);
    fs.rmSync(s.activity, { force: true });
  }
}
console.log(`load average ${load()}`);
