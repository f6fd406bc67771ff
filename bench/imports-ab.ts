/**
 * `npx tsx bench/imports-ab.ts --dirs A,B [--sizes 300000] [--order newest,oldest,shuffled] [--rounds 2]`:
 * the imports of `npm run bench` alone (function edge then edge, every page's default request
 * asked every 50 ms meanwhile, the waits over 100 ms lined up with the server's activity log),
 * for two checkouts' `npm run serve` in turn: per round and record order, A then B (B then A in
 * the next round), each on a fresh folder. On a shared machine whose load moves by the minute,
 * runs minutes apart compare; two full benches half an hour apart do not. Prints one line per
 * run and writes bench/data/imports-ab-<N>.json. Only HTTP, as bench/scale.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { formatIsoMicros } from '../server/time.ts';
import { BENCH_DIR, BENCH_NOW, benchFiles, exited, fmt, waitForLine, type BenchFile } from './data.ts';
import { orderedFile, readOrders, type RecordOrder } from './order.ts';
import { describeStalls, importUnderProbes, type StallBreakdown, type WaitSummary } from './waits.ts';

const { values } = parseArgs({
  options: {
    dirs: { type: 'string' },
    sizes: { type: 'string', default: '300000' },
    order: { type: 'string', default: 'newest,oldest,shuffled' },
    rounds: { type: 'string', default: '2' },
  },
});
const DIRS = (values.dirs ?? '').split(',').map((d) => path.resolve(d));
if (DIRS.length !== 2) throw new Error('--dirs takes two checkouts, A,B');
const N = Number(values.sizes);
const ROUNDS = Number(values.rounds);
const ORDERS = readOrders(values.order!);
const KEY = 'bench';

interface Served {
  child: ChildProcess;
  port: number;
}

/** The checkout's server (its bundle, as `npm run serve` runs it), until it listens. */
async function serve(dir: string, dataDir: string, activityFile: string): Promise<Served> {
  const args = ['scripts/run-server.mjs', 'serve', '--data-dir', dataDir, '--port', '0', '--api-key', KEY, '--now', formatIsoMicros(BENCH_NOW)];
  const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LOG_EXPLORER_ACTIVITY: activityFile } });
  const m = await waitForLine(child, /Listening on http:\/\/127\.0\.0\.1:(\d+)/);
  child.stdout!.resume();
  return { child, port: Number(m[1]) };
}

interface Run {
  dir: string;
  order: string;
  round: number;
  load: { before: number[]; after: number[] };
  fnSeconds: number;
  edgeSeconds: number;
  /** The longest wait of any page, and the p99 of the slowest page (ms). */
  longest: number;
  p99: number;
  waits: Record<string, WaitSummary>;
  stalls: StallBreakdown;
  stages: { fn: Record<string, { count: number; ms: number }>; edge: Record<string, { count: number; ms: number }> };
}

async function importRun(dir: string, files: { fn: BenchFile; edge: BenchFile }, order: RecordOrder, round: number): Promise<Run> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lx-ab-'));
  const activity = `${dataDir}.activity.ndjson`;
  const load = { before: os.loadavg(), after: [] as number[] };
  const s = await serve(dir, dataDir, activity);
  try {
    const run = await importUnderProbes(s.port, KEY, files, order, activity, () => undefined);
    load.after = os.loadavg();
    return {
      dir,
      order,
      round,
      load,
      fnSeconds: run.fnSeconds,
      edgeSeconds: run.edgeSeconds,
      longest: Math.max(...Object.values(run.waits).map((w) => w.max)),
      p99: Math.max(...Object.values(run.waits).map((w) => w.p99)),
      waits: run.waits,
      stalls: run.stalls,
      stages: run.stages,
    };
  } finally {
    s.child.kill('SIGTERM');
    await exited(s.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(activity, { force: true });
  }
}

const base = await benchFiles(N);
const runs: Run[] = [];
const out = path.join(BENCH_DIR, `imports-ab-${N}.json`);
for (let round = 1; round <= ROUNDS; round++) {
  for (const order of ORDERS) {
    const files = { fn: orderedFile(base.fn, order), edge: orderedFile(base.edge, order) };
    for (const dir of round % 2 ? DIRS : [...DIRS].reverse()) {
      const r = await importRun(dir, files, order, round);
      runs.push(r);
      const label = dir === DIRS[0] ? 'A' : 'B';
      console.log(
        `round ${round} ${order} ${label}: longest ${fmt(r.longest, 0)} ms, p99 ${fmt(r.p99, 0)} ms; imports ${fmt(r.fnSeconds, 1)} + ${fmt(r.edgeSeconds, 1)} s; load ${r.load.before.map((x) => x.toFixed(1)).join(' ')} -> ${r.load.after.map((x) => x.toFixed(1)).join(' ')}; ${describeStalls(r.stalls)}`,
      );
      fs.writeFileSync(out, JSON.stringify({ dirs: DIRS, records: N, runs }, null, 1));
    }
  }
}
