/**
 * `node scripts/run-server.mjs serve|import ARGS...`: what `npm run serve` and `npm run import`
 * run. Plain JavaScript, so starting needs no TypeScript compiler: it runs an esbuild bundle of
 * the server, rebuilt first (about 0.3 s) only when the sources changed.
 *
 *   dist/server/main.mjs          server/main.ts          (npm run serve)
 *   dist/server/import.mjs        server/ingest/cli.ts    (npm run import)
 *   dist/server/memory-env.mjs    server/memory-env.ts: the environment the server runs with; on
 *                                 Linux this script starts again with it when it is missing
 *   dist/server/parse-worker.mjs  server/ingest/parse-worker.ts, when that file exists; the
 *                                 import code finds it with new URL('./parse-worker.mjs', import.meta.url)
 *   dist/server/*.sql             the endpoint queries, which server/endpoints/sql-files.ts reads
 *                                 next to the bundle (import.meta.url is the bundle's URL)
 *
 * ESM for Node 20 with the packages inside, but sql.js, which stays in node_modules and finds
 * its wasm through require.resolve as under tsx (tsx and esbuild too, which the server only
 * looks for when it runs from source). Node's loader resolving and reading each package's
 * modules one by one was 70-95 ms of every start; CommonJS packages inside the bundle get a
 * `require` made with createRequire for the built-in modules they ask for. "Changed" means the list of files under
 * server/, queries/ and contract/ (tests aside) with their sizes and mtimes, or this script, differs from
 * the one recorded in dist/server/.stamp when the bundle was built: edits, reverts to an
 * older mtime, added and deleted files all count.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
export const SERVER_OUT_DIR = path.join(ROOT, 'dist', 'server');
const STAMP = '.stamp';
const SOURCE_DIRS = ['server', 'queries', 'contract'];
const COMMANDS = { serve: 'main.mjs', import: 'import.mjs' };
/** Packages the bundles leave to node_modules. */
const BUNDLE_EXTERNAL = ['sql.js', 'tsx', 'esbuild'];

/** Bundle name → entry, relative to the root; the worker only once it exists. */
export function serverEntries(root = ROOT) {
  const entries = { main: 'server/main.ts', import: 'server/ingest/cli.ts', 'memory-env': 'server/memory-env.ts' };
  if (fs.existsSync(path.join(root, 'server', 'ingest', 'parse-worker.ts'))) entries['parse-worker'] = 'server/ingest/parse-worker.ts';
  return entries;
}

/** A digest of what the bundle is built from. */
export function sourceStamp(root = ROOT, entries = serverEntries(root)) {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(entries));
  const self = fs.statSync(import.meta.filename);
  hash.update(`run-server.mjs ${self.size} ${self.mtimeMs}\n`);
  const walk = (dir) => {
    const list = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of list) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (!/\.test\.tsx?$/.test(e.name)) {
        const s = fs.statSync(p);
        hash.update(`${path.relative(root, p)} ${s.size} ${s.mtimeMs}\n`);
      }
    }
  };
  for (const d of SOURCE_DIRS) if (fs.existsSync(path.join(root, d))) walk(path.join(root, d));
  return hash.digest('hex');
}

/** True when every bundle exists and was built from the current sources. */
export function bundleIsFresh({ outDir = SERVER_OUT_DIR, root = ROOT, entries = serverEntries(root) } = {}) {
  let stamp;
  try {
    stamp = fs.readFileSync(path.join(outDir, STAMP), 'utf8');
  } catch {
    return false;
  }
  return stamp === sourceStamp(root, entries) && Object.keys(entries).every((name) => fs.existsSync(path.join(outDir, `${name}.mjs`)));
}

/**
 * Builds the bundles into a temp folder and renames them into outDir one by one, the stamp
 * last: two starts building at once each write whole files, and a build that dies midway
 * leaves a stamp that no longer matches.
 */
export async function buildServer({ outDir = SERVER_OUT_DIR, root = ROOT, entries = serverEntries(root) } = {}) {
  const { build, stop } = await import('esbuild');
  const stamp = sourceStamp(root, entries);
  const tmp = `${outDir}.tmp-${process.pid}-${Date.now()}`;
  try {
    await build({
      absWorkingDir: root,
      entryPoints: entries,
      outdir: tmp,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: BUNDLE_EXTERNAL,
      banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
      sourcemap: 'linked',
      logLevel: 'error',
    });
    for (const f of fs.readdirSync(path.join(root, 'queries'))) {
      if (f.endsWith('.sql')) fs.copyFileSync(path.join(root, 'queries', f), path.join(tmp, f));
    }
    fs.writeFileSync(path.join(tmp, STAMP), stamp);
    fs.mkdirSync(outDir, { recursive: true });
    const files = fs.readdirSync(tmp).filter((f) => f !== STAMP);
    for (const f of [...files, STAMP]) fs.renameSync(path.join(tmp, f), path.join(outDir, f));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    // esbuild's service process otherwise lives as long as this one (31 MB beside the server).
    await stop();
  }
  return { outDir, entries };
}

/**
 * On Linux, when the environment lacks a key of `env` (glibc reads its malloc settings at
 * start only): starts this same command again with `env` added, passes SIGINT, SIGTERM and
 * SIGHUP on to it, exits with its code, and returns true. Otherwise returns false.
 */
export function startAgainWith(env) {
  if (process.platform !== 'linux' || Object.keys(env).every((k) => k in process.env)) return false;
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, ...env } });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1)));
  return true;
}

async function main() {
  const [command, ...args] = process.argv.slice(2);
  const bundle = COMMANDS[command];
  if (!bundle) {
    console.error(`usage: node scripts/run-server.mjs ${Object.keys(COMMANDS).join('|')} [ARGS...]`);
    process.exit(2);
  }
  if (!bundleIsFresh()) {
    try {
      await buildServer();
    } catch (err) {
      console.error(`building the server bundle (dist/server) failed: ${err.message}`);
      process.exit(1);
    }
  }
  // The server runs with the environment the desktop app gives it (server/memory-env.ts): this
  // process starts again with it (same arguments, signals passed on) unless it has it already.
  const { SERVER_MEMORY_ENV } = await import(pathToFileURL(path.join(SERVER_OUT_DIR, 'memory-env.mjs')).href);
  if (startAgainWith(SERVER_MEMORY_ENV)) return;
  // Stack traces of internal errors point into server/*.ts rather than the bundle.
  process.setSourceMapsEnabled(true);
  const file = path.join(SERVER_OUT_DIR, bundle);
  // The bundle parses its own arguments (node:util parseArgs reads process.argv from index 2).
  process.argv = [process.argv[0], file, ...args];
  await import(pathToFileURL(file).href);
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) await main();
