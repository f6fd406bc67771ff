/**
 * `npm start`: builds what is missing or stale, then opens the desktop app when Electron's
 * binary is installed, else serves the same UI in browser mode and prints the URL to open.
 * Options: --data-dir DIR, --port N (browser mode; default 4100, 0 = any free port), --browser.
 * Both modes open the same data folder: --data-dir, else the one every mode shares
 * (server/store/data-dir.ts).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { findElectronBinary, launchElectron, defaultMainFile } from '../electron/launch.ts';
import { loadDemoData } from '../server/demo/load-demo.ts';
import { startServer } from '../server/server.ts';
import { defaultDataDir } from '../server/store/data-dir.ts';
import { DataFolderLocked } from '../server/store/data-lock.ts';
import { SERVER_MEMORY_ENV } from '../server/memory-env.ts';
import { startAgainWith } from './run-server.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const RENDERER_OUT = path.join(ROOT, 'dist', 'renderer');
const FIRST_START_MARK = '.first-start-done';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    port: { type: 'string', default: '4100' },
    browser: { type: 'boolean', default: false },
  },
});

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

/** Runs a build step when its output is missing or older than its sources. */
function ensureBuilt(label: string, output: string, sources: string[], command: string[]): void {
  const built = fs.existsSync(output) ? fs.statSync(output).mtimeMs : 0;
  const newest = Math.max(...sources.map((s) => (fs.existsSync(s) ? newestMtime(s) : 0)));
  if (built >= newest) return;
  console.log(`Building ${label}…`);
  const r = spawnSync(process.execPath, command, { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`Building ${label} failed.`);
    process.exit(1);
  }
}

ensureBuilt('the UI', path.join(RENDERER_OUT, 'index.html'), [path.join(ROOT, 'renderer')], [
  path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'),
  'build',
  '--config',
  'renderer/vite.config.ts',
  '--logLevel',
  'warn',
]);

const electron = values.browser ? { ok: false as const, reason: '--browser was given' } : findElectronBinary();
if (electron.ok) {
  ensureBuilt('the desktop shell', defaultMainFile(), ['electron', 'server', 'queries'].map((d) => path.join(ROOT, d)), ['--import', 'tsx', 'electron/build.ts']);
  // The app resolves the shared default itself (and adopts an earlier store), as browser mode does below.
  const child = launchElectron({ binary: electron.path, ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}) });
  child.on('exit', (code) => process.exit(code ?? 0));
} else if (!startAgainWith(SERVER_MEMORY_ENV)) {
  // (Started again, on Linux, with the environment the desktop app gives its server: server/memory-env.ts.)
  console.log(`Browser mode: ${electron.reason}`);
  const dataDir = defaultDataDir({ dir: values['data-dir'] });
  const port = Number(values.port);
  let server;
  try {
    try {
      server = await startServer({ dataDir, lockKind: 'serve', port, rendererDir: RENDERER_OUT, loadDemo: loadDemoData });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      console.log(`Port ${port} is in use; using a free port instead.`);
      server = await startServer({ dataDir, lockKind: 'serve', port: 0, rendererDir: RENDERER_OUT, loadDemo: loadDemoData });
    }
  } catch (err) {
    if (!(err instanceof DataFolderLocked)) throw err;
    // Another server on this folder already serves the same UI: say where, and leave it be.
    console.error(err.message);
    if (err.holder.url) {
      console.error(`It serves this folder at ${err.holder.url} (the key is in ${path.join(err.dir, 'LOCK')}); \`npm run import -- --data-dir "${err.dir}" FILE...\` imports through it.`);
    }
    process.exit(2);
  }
  const mark = path.join(dataDir, FIRST_START_MARK);
  const empty = server.store.summary().every((s) => s.count === 0);
  if (empty && !fs.existsSync(mark)) {
    process.stdout.write('First start: loading the embedded demo data… ');
    const reports = await loadDemoData(server.store, server.clock.now());
    console.log(`${reports.reduce((n, r) => n + r.imported, 0).toLocaleString('en-US')} records (clear them on the Data page).`);
  }
  fs.writeFileSync(mark, new Date().toISOString(), { mode: 0o600 });
  console.log(`Data folder: ${dataDir}`);
  console.log(`Open ${server.url}/#key=${server.apiKey}`);
  // Once: a Ctrl-C reaches this process both from the terminal and from the one that started it again.
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}
