/**
 * `npm run serve -- [--data-dir DIR] [--port N] [--api-key KEY] [--now ISO] [--import FILE...] [--sync-calls-per-minute N]`
 * `npm run check -- [--data-dir DIR]` (`serve --check`): verifies every file of the folder and exits (1 if a committed file is damaged).
 * Runs as the esbuild bundle dist/server/main.mjs (scripts/run-server.mjs) or under tsx.
 * Without --data-dir it opens the data folder every mode shares (store/data-dir.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadDemoData } from './demo/load-demo.ts';
import { ImportFailure, importFile } from './ingest/import.ts';
import { startServer } from './server.ts';
import { defaultDataDir } from './store/data-dir.ts';
import { DataFolderLocked } from './store/data-lock.ts';
import { checkStore, formatCheckReport } from './store/check.ts';
import { parseIsoMicros } from './time.ts';

export const DEFAULT_PORT = 4100;

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    port: { type: 'string' },
    'api-key': { type: 'string' },
    now: { type: 'string' },
    import: { type: 'string', multiple: true },
    source: { type: 'string' },
    project: { type: 'string' },
    renderer: { type: 'string' },
    check: { type: 'boolean' },
    // The app's budget of calls to remote projects (docs/sync.md); the sync bench lifts it to measure the sync itself.
    'sync-calls-per-minute': { type: 'string' },
  },
  allowPositionals: false,
});

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

/** The checkout's root: the parent of server/ under tsx, of dist/server/ in the bundle. */
function repoRoot(): string {
  for (let dir = path.dirname(import.meta.dirname); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(import.meta.dirname, '..');
  }
}

if (values.check) {
  // Reads every file of the folder and reports; changes nothing, starts no server.
  const report = await checkStore(defaultDataDir({ dir: values['data-dir'] }));
  for (const line of formatCheckReport(report)) console.log(line);
  process.exit(report.ok ? 0 : 1);
}

const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be a port number, not ${values.port}`);
const now = values.now === undefined ? undefined : parseIsoMicros(values.now);
if (values.now !== undefined && now === undefined) fail(`--now must be an ISO 8601 timestamp, not ${values.now}`);
const callsPerMinute = values['sync-calls-per-minute'] === undefined ? undefined : Number(values['sync-calls-per-minute']);
if (callsPerMinute !== undefined && !(Number.isSafeInteger(callsPerMinute) && callsPerMinute >= 1)) fail(`--sync-calls-per-minute must be a whole number of at least 1, not ${values['sync-calls-per-minute']}`);
const envKey = process.env.LOG_EXPLORER_API_KEY;
const apiKey = values['api-key'] ?? (envKey ? envKey : undefined);

let server;
try {
  server = await startServer({
    dataDir: defaultDataDir({ dir: values['data-dir'] }),
    lockKind: 'serve',
    port,
    apiKey,
    now,
    rendererDir: values.renderer ?? path.join(repoRoot(), 'dist', 'renderer'),
    loadDemo: loadDemoData,
    ...(callsPerMinute !== undefined ? { sync: { callsPerMinute } } : {}),
  });
} catch (err) {
  if (err instanceof DataFolderLocked) {
    // Quoted: the per-OS folders have spaces in their names.
    const api = err.holder.url ? `\nIts API is at ${err.holder.url}; \`npm run import -- --data-dir "${err.dir}" FILE...\` imports through it.` : '';
    fail(`cannot start: ${err.message}${api}`);
  }
  const code = (err as NodeJS.ErrnoException).code;
  fail(code === 'EADDRINUSE' ? `port ${port} is in use; pick another with --port (0 = any free port)` : `cannot start: ${(err as Error).message}`);
}

for (const file of values.import ?? []) {
  try {
    console.log(JSON.stringify(await importFile(server.store, file, { source: values.source, project: values.project })));
  } catch (err) {
    console.log(JSON.stringify({ file, failed: true, reason: err instanceof ImportFailure ? err.message : String(err) }));
  }
}

if (!apiKey) console.log(`API key: ${server.apiKey}`);
console.log(`Listening on ${server.url}`);

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: saving and shutting down`);
  try {
    await server.close();
  } catch (err) {
    // One line, no stack: what was committed before stays, and the next start opens it.
    console.error(`could not save on shutdown: ${(err as Error).message}`);
    process.exit(1);
  }
  process.exit(0);
};
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
