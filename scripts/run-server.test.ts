/**
 * `npm run serve` / `npm run import` run an esbuild bundle of the server, rebuilt only when the
 * sources changed: the bundle finds its queries and node_modules, the parse worker (when it
 * exists) sits next to it, and the stamp notices every kind of change.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LogStore } from '../server/store/log-store.ts';
import { edgeRecord, importRecords, NOW } from '../server/testing/fixtures.ts';
import { spawnListening } from '../server/testing/processes.ts';
import { bundleIsFresh, buildServer, serverEntries, sourceStamp } from './run-server.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
let work: string;

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'le-run-server-'));
  // The bundles leave packages to node_modules, which a checkout has above dist/server.
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(work, 'node_modules'), 'junction');
});
afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

/** Spawns a command until it prints "Listening on URL"; resolves the URL. */
function listen(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnListening(args, { cwd: ROOT, env: { ...process.env, LOG_EXPLORER_API_KEY: '', ...env } });
}

describe('sourceStamp', () => {
  it('changes with an edit, a revert to an older mtime, an added and a deleted file; not with a test file', () => {
    const root = path.join(work, 'stamp-root');
    fs.mkdirSync(path.join(root, 'server', 'ingest'), { recursive: true });
    fs.mkdirSync(path.join(root, 'queries'), { recursive: true });
    const a = path.join(root, 'server', 'a.ts');
    fs.writeFileSync(a, 'export const a = 1;\n');
    fs.writeFileSync(path.join(root, 'queries', 'q.sql'), 'SELECT 1');
    const s0 = sourceStamp(root);
    expect(sourceStamp(root)).toBe(s0);
    fs.writeFileSync(path.join(root, 'server', 'a.test.ts'), 'test');
    expect(sourceStamp(root)).toBe(s0);
    const old = new Date('2020-01-01T00:00:00Z');
    fs.utimesSync(a, old, old);
    const s1 = sourceStamp(root);
    expect(s1).not.toBe(s0);
    fs.writeFileSync(path.join(root, 'queries', 'q2.sql'), 'SELECT 2');
    const s2 = sourceStamp(root);
    expect(s2).not.toBe(s1);
    fs.rmSync(path.join(root, 'queries', 'q2.sql'));
    expect(sourceStamp(root)).toBe(s1);
    // The server bundles the shared contract too: a rule changed there is a change of the server.
    fs.mkdirSync(path.join(root, 'contract'));
    fs.writeFileSync(path.join(root, 'contract', 'rules.ts'), 'export const r = 1;\n');
    expect(sourceStamp(root)).not.toBe(s1);
    fs.rmSync(path.join(root, 'contract'), { recursive: true });
    expect(sourceStamp(root)).toBe(s1);
    // The parse worker joins the entries (and the stamp) once it exists.
    expect(Object.keys(serverEntries(root))).toEqual(['main', 'import', 'memory-env']);
    fs.writeFileSync(path.join(root, 'server', 'ingest', 'parse-worker.ts'), '');
    expect(serverEntries(root)).toEqual({ main: 'server/main.ts', import: 'server/ingest/cli.ts', 'memory-env': 'server/memory-env.ts', 'parse-worker': 'server/ingest/parse-worker.ts' });
    expect(sourceStamp(root)).not.toBe(s1);
  });
});

/** esbuild services (`--service`) this process has as children now. */
function esbuildServices(): string[] {
  return fs.readdirSync('/proc').filter((d) => {
    try {
      return /^\d+$/.test(d) && fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] === String(process.pid) && fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('--service');
    } catch {
      return false;
    }
  });
}

describe('buildServer', () => {
  let outDir: string;
  let entries: Record<string, string>;
  // Services another test file run earlier in this worker process left (vitest reuses it): not buildServer's.
  let before: string[] = [];

  beforeAll(async () => {
    if (process.platform === 'linux') before = esbuildServices();
    outDir = path.join(work, 'out');
    const workerEntry = path.join(work, 'parse-worker.ts');
    fs.writeFileSync(workerEntry, `import { parentPort } from 'node:worker_threads';\nparentPort!.postMessage(import.meta.url);\n`);
    entries = { ...serverEntries(), 'parse-worker': workerEntry };
    await buildServer({ outDir, entries });
  });

  it.skipIf(process.platform !== 'linux')('leaves no esbuild service running (it would live as long as the launcher, beside the server)', async () => {
    // esbuild's stop() sends the service SIGTERM and returns: on a busy machine it is still there a
    // moment later (a CI run saw it). Stopped means gone soon, not gone on the same tick.
    await vi.waitFor(() => expect(esbuildServices().filter((pid) => !before.includes(pid))).toEqual([]), { timeout: 10_000, interval: 50 });
  });

  it('writes the entries as .mjs, the queries next to them and a stamp that makes them fresh', () => {
    const files = fs.readdirSync(outDir).sort();
    const queries = fs.readdirSync(path.join(ROOT, 'queries')).filter((f) => f.endsWith('.sql'));
    expect(files).toEqual(expect.arrayContaining(['main.mjs', 'import.mjs', 'memory-env.mjs', 'parse-worker.mjs', '.stamp', ...queries]));
    expect(files.filter((f) => f.includes('.tmp'))).toEqual([]);
    expect(fs.readdirSync(work).filter((f) => f.startsWith('out.tmp'))).toEqual([]);
    expect(bundleIsFresh({ outDir, entries })).toBe(true);
    // The stamp covers the entry list: without the worker it is another build.
    expect(bundleIsFresh({ outDir })).toBe(false);
    expect(bundleIsFresh({ outDir: path.join(work, 'missing'), entries })).toBe(false);
    const stamp = fs.readFileSync(path.join(outDir, '.stamp'), 'utf8');
    fs.renameSync(path.join(outDir, 'import.mjs'), path.join(outDir, 'import.mjs.away'));
    expect(bundleIsFresh({ outDir, entries })).toBe(false);
    fs.renameSync(path.join(outDir, 'import.mjs.away'), path.join(outDir, 'import.mjs'));
    fs.writeFileSync(path.join(outDir, '.stamp'), 'stale');
    expect(bundleIsFresh({ outDir, entries })).toBe(false);
    fs.writeFileSync(path.join(outDir, '.stamp'), stamp);
  });

  it('keeps server code and packages inside, but sql.js, which stays in node_modules', () => {
    const code = fs.readFileSync(path.join(outDir, 'main.mjs'), 'utf8');
    const imports = [...code.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]!);
    // Node's built-in modules only (the packages' modules are not resolved one by one at each start).
    expect(imports.filter((i) => !isBuiltin(i))).toEqual([]);
    expect(code).not.toMatch(/from "hono|from "@hono\/node-server|from "zod|from "re2js|from "stream-json|from "csv-parse/);
    // sql.js is required at run time from node_modules (again after an engine trap), never inlined.
    expect(code).toMatch(/\.resolve\("sql\.js\/dist\/sql-wasm\.js"\)/);
    expect(code).not.toContain('initSqlJsPromise');
  });

  it('puts the worker where the import code looks: new URL("./parse-worker.mjs", the bundle URL)', async () => {
    const url = new URL('./parse-worker.mjs', pathToFileURL(path.join(outDir, 'main.mjs')));
    const worker = new Worker(url);
    try {
      expect(await new Promise((resolve, reject) => (worker.once('message', resolve), worker.once('error', reject)))).toBe(url.href);
    } finally {
      await worker.terminate();
    }
  });

  it('the bundled server runs from outside server/: reads its queries, serves the API, exits cleanly', async () => {
    const s = listen([path.join(outDir, 'main.mjs'), '--data-dir', path.join(work, 'data-built'), '--port', '0', '--api-key', 'k']);
    const url = await s.url;
    const res = await fetch(`${url}/api/endpoints/logs.all?project=proj&project_tier=FREE`, { headers: { 'X-API-KEY': 'k' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ result: [] });
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });
});

/** On Linux, `node scripts/run-server.mjs serve` starts the server again as its child (beside esbuild's, when it built): that child's pid. */
function serverPidOf(pid: number): number {
  const children = fs.readdirSync('/proc').filter((d) => {
    try {
      return /^\d+$/.test(d) && fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] === String(pid) && fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('run-server.mjs');
    } catch {
      return false;
    }
  });
  expect(children).toHaveLength(1);
  return Number(children[0]);
}

it('node scripts/run-server.mjs serve builds dist/server when needed and serves', async () => {
  const s = listen(['scripts/run-server.mjs', 'serve', '--data-dir', path.join(work, 'data-run'), '--port', '0', '--api-key', 'k']);
  const url = await s.url;
  expect((await fetch(`${url}/api/sources`, { headers: { 'X-API-KEY': 'k' } })).status).toBe(200);
  if (process.platform === 'linux') {
    // It started again with the server's environment (server/memory-env.ts): its child has it.
    const environ = fs.readFileSync(`/proc/${serverPidOf(s.child.pid!)}/environ`, 'utf8').split('\0');
    expect(environ).toContain('MALLOC_MMAP_THRESHOLD_=4194304');
    expect(environ).toContain('MALLOC_ARENA_MAX=2');
  }
  // SIGTERM to the process started reaches the server, which exits cleanly.
  s.child.kill('SIGTERM');
  expect(await s.exited).toBe(0);
  expect(bundleIsFresh()).toBe(true);
});

it('node scripts/run-server.mjs with an unknown command prints the usage and exits 2', async () => {
  const child = spawn(process.execPath, ['scripts/run-server.mjs', 'nope'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(2);
  expect(err).toBe('usage: node scripts/run-server.mjs serve|import [ARGS...]\n');
});

/**
 * A temp HOME (no XDG or data-folder variable set, so the default folder lives in it) whose
 * desktop app's old Linux store holds one edge record.
 */
async function homeWithOldStore(name: string, id: string): Promise<{ home: string; env: Record<string, string>; old: string }> {
  const home = path.join(work, name);
  const env = { HOME: home, XDG_DATA_HOME: '', XDG_CONFIG_HOME: '', LOG_EXPLORER_DATA_DIR: '' };
  const old = path.join(home, '.config', 'Log Explorer');
  const store = await LogStore.open(old);
  await importRecords(store, 'edge_logs', [edgeRecord(NOW - 1_000_000, { id })]);
  await store.close();
  return { home, env, old };
}

it.skipIf(process.platform !== 'linux')("npm run import and npm run serve without --data-dir use the one per-OS folder, the desktop app's old store adopted", async () => {
  const { home, env, old } = await homeWithOldStore('home', 'desktop-1');
  const file = path.join(work, 'edge_logs.ndjson');
  fs.writeFileSync(file, [2, 3].map((i) => JSON.stringify(edgeRecord(NOW - i * 1_000_000, { id: `cli-${i}` }))).join('\n'));

  const imported = spawnSync(process.execPath, ['scripts/run-server.mjs', 'import', file], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  expect(imported.status).toBe(0);
  const fresh = path.join(home, '.local', 'share', 'log-explorer');
  expect(imported.stderr).toContain(`Log Explorer now keeps its data in ${fresh}: moved the store there from ${old}`);
  expect(JSON.parse(imported.stdout.trim())).toMatchObject({ imported: 2 });

  const s = listen(['scripts/run-server.mjs', 'serve', '--port', '0', '--api-key', 'k'], env);
  const url = await s.url;
  const sources = (await (await fetch(`${url}/api/sources`, { headers: { 'X-API-KEY': 'k' } })).json()) as { result: Array<{ alias: string; count: number }> };
  expect(sources.result.find((x) => x.alias === 'edge_logs')?.count).toBe(3);
  s.child.kill('SIGTERM');
  expect(await s.exited).toBe(0);
});

it.skipIf(process.platform !== 'linux')("npm run serve without --data-dir, while another server holds the desktop app's old store: names it, moves nothing, exits 2", async () => {
  const { home, env, old } = await homeWithOldStore('home-held', 'held-1');
  const holder = listen(['scripts/run-server.mjs', 'serve', '--data-dir', old, '--port', '0', '--api-key', 'k1']);
  const holderUrl = await holder.url;
  try {
    const second = spawnSync(process.execPath, ['scripts/run-server.mjs', 'serve', '--port', '0', '--api-key', 'k2'], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
    expect(second.status).toBe(2);
    const fresh = path.join(home, '.local', 'share', 'log-explorer');
    // The server holding the folder is the one run-server.mjs started again (server/memory-env.ts).
    const held = serverPidOf(holder.child.pid!);
    expect(second.stderr).toContain(`Log Explorer now keeps its data in ${fresh}; the store in ${old} (where an earlier version of the desktop app kept it) moves there once the process using it (pid ${held},`);
    expect(second.stderr).toContain(`cannot start: the data folder ${old} is in use by another Log Explorer process (pid ${held}, npm run serve,`);
    expect(second.stderr).toContain(`Its API is at ${holderUrl}; \`npm run import -- --data-dir "${old}" FILE...\` imports through it.`);
    expect(second.stderr).not.toContain('k1');
    expect(fs.existsSync(path.join(old, 'catalog.sqlite'))).toBe(true);
    expect(fs.existsSync(path.join(fresh, 'catalog.sqlite'))).toBe(false);
  } finally {
    holder.child.kill('SIGTERM');
    expect(await holder.exited).toBe(0);
  }
});
