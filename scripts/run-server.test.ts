/**
 * `npm run serve` / `npm run import` run an esbuild bundle of the server, rebuilt only when the
 * sources changed: the bundle finds its queries and node_modules, the parse worker (when it
 * exists) sits next to it, and the stamp notices every kind of change.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
function listen(args: string[]) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, LOG_EXPLORER_API_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Listening on (http:\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  return { child, url, exited };
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
    // The parse worker joins the entries (and the stamp) once it exists.
    expect(Object.keys(serverEntries(root))).toEqual(['main', 'import']);
    fs.writeFileSync(path.join(root, 'server', 'ingest', 'parse-worker.ts'), '');
    expect(serverEntries(root)).toEqual({ main: 'server/main.ts', import: 'server/ingest/cli.ts', 'parse-worker': 'server/ingest/parse-worker.ts' });
    expect(sourceStamp(root)).not.toBe(s1);
  });
});

describe('buildServer', () => {
  let outDir: string;
  let entries: Record<string, string>;

  beforeAll(async () => {
    outDir = path.join(work, 'out');
    const workerEntry = path.join(work, 'parse-worker.ts');
    fs.writeFileSync(workerEntry, `import { parentPort } from 'node:worker_threads';\nparentPort!.postMessage(import.meta.url);\n`);
    entries = { ...serverEntries(), 'parse-worker': workerEntry };
    await buildServer({ outDir, entries });
  });

  it('writes the entries as .mjs, the queries next to them and a stamp that makes them fresh', () => {
    const files = fs.readdirSync(outDir).sort();
    const queries = fs.readdirSync(path.join(ROOT, 'queries')).filter((f) => f.endsWith('.sql'));
    expect(files).toEqual(expect.arrayContaining(['main.mjs', 'import.mjs', 'parse-worker.mjs', '.stamp', ...queries]));
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

  it('leaves packages to node_modules and keeps server code inside', () => {
    const code = fs.readFileSync(path.join(outDir, 'main.mjs'), 'utf8');
    const imports = [...code.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]!);
    expect(imports.filter((i) => i.startsWith('.'))).toEqual([]);
    expect(imports).toEqual(expect.arrayContaining(['hono', '@hono/node-server']));
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

it('node scripts/run-server.mjs serve builds dist/server when needed and serves', async () => {
  const s = listen(['scripts/run-server.mjs', 'serve', '--data-dir', path.join(work, 'data-run'), '--port', '0', '--api-key', 'k']);
  const url = await s.url;
  expect((await fetch(`${url}/api/sources`, { headers: { 'X-API-KEY': 'k' } })).status).toBe(200);
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
