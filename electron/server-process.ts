/**
 * The server process of the desktop app: an Electron utilityProcess (or, in tests, a Node
 * fork) running the same `startServer` as `npm run serve`, so a long import never blocks the
 * window or the menus. It talks to the supervisor with the messages of protocol.ts; its
 * console goes to the supervisor as `log` messages (kept for the crash report).
 */
import fs from 'node:fs';
import util from 'node:util';
import { loadDemoData } from '../server/demo/load-demo.ts';
import { ImportFailure, importFile } from '../server/ingest/import.ts';
import { startServer, type RunningServer } from '../server/server.ts';
import type { ImportFileOutcome, ImportFilesOptions } from './bridge.ts';
import { listenPreferring, preferredPort } from './port-choice.ts';
import { parseToServer, type FromServer, type LogLevel, type StartConfig } from './protocol.ts';

interface ParentLink {
  post(message: FromServer): void;
  onMessage(listener: (message: unknown) => void): void;
  onGone(listener: () => void): void;
}

/** Electron's parentPort when run as a utilityProcess, else Node's fork IPC channel. */
function connectParent(): ParentLink | undefined {
  type Port = { postMessage(m: unknown): void; on(e: 'message', l: (ev: { data: unknown }) => void): void };
  const port = (process as unknown as { parentPort?: Port }).parentPort;
  if (port) {
    return {
      post: (m) => port.postMessage(m),
      onMessage: (l) => port.on('message', (ev) => l(ev.data)),
      // A utility process dies with the app; there is no "parent gone" event to wait for.
      onGone: () => {},
    };
  }
  if (process.send) {
    return {
      post: (m) => {
        if (process.connected) process.send!(m);
      },
      onMessage: (l) => void process.on('message', l),
      onGone: (l) => void process.once('disconnect', l),
    };
  }
  return undefined;
}

const parent = connectParent();
if (!parent) {
  console.error('electron/server-process must be started by the desktop shell (utilityProcess or child_process.fork); for a standalone server use `npm run serve`.');
  process.exit(2);
}

const levels: Record<'log' | 'info' | 'warn' | 'error' | 'debug', LogLevel> = { log: 'info', info: 'info', warn: 'warn', error: 'error', debug: 'debug' };
for (const [method, level] of Object.entries(levels) as Array<[keyof typeof levels, LogLevel]>) {
  console[method] = (...args: unknown[]) => parent.post({ type: 'log', level, text: util.format(...args) });
}

let server: RunningServer | undefined;
let starting: Promise<RunningServer | undefined> | undefined;
let stopping = false;

async function start(config: StartConfig): Promise<RunningServer | undefined> {
  console.log(`server process ${process.pid}: opening the store in ${config.dataDir}`);
  try {
    // The port the app had before (the page's origin, where Chromium keeps its storage), else any.
    server = await listenPreferring(preferredPort(process.env), (port) =>
      startServer({
        dataDir: config.dataDir,
        lockKind: 'desktop',
        port,
        apiKey: config.apiKey,
        ...(config.rendererDir ? { rendererDir: config.rendererDir } : {}),
        // The embedded demo data (POST /api/demo; the shell asks for it on a first start).
        ...(config.demo ? { loadDemo: loadDemoData } : {}),
        // Connection tokens are stored sealed with the key main keeps in the system keychain.
        ...(config.tokenKey ? { tokenKey: Buffer.from(config.tokenKey, 'base64') } : {}),
      }),
    );
  } catch (err) {
    const message = `cannot start the server: ${(err as Error).message}`;
    console.error((err as Error).stack ?? message);
    parent!.post({ type: 'fatal', message });
    // Let the message leave before the process does.
    setTimeout(() => process.exit(1), 200);
    return undefined;
  }
  const records = server.store.summary().reduce((n, s) => n + s.count, 0);
  console.log(`listening on ${server.url} (${records} records stored)`);
  parent!.post({ type: 'ready', url: server.url, port: server.port });
  return server;
}

async function importFiles(id: number, files: string[], { source, project }: ImportFilesOptions): Promise<void> {
  const results: ImportFileOutcome[] = [];
  for (const [index, file] of files.entries()) {
    if (!server) {
      results.push({ file, ok: false, reason: 'the server is not running' });
      continue;
    }
    let totalBytes = 0;
    try {
      totalBytes = fs.statSync(file).size;
    } catch {
      // importFile reports the unreadable file
    }
    try {
      // The options of the upload route and `npm run import`: an unknown source fails this file (ImportFailure).
      const report = await importFile(server.store, file, {
        ...(source ? { source } : {}),
        ...(project ? { project } : {}),
        onProgress: (p) => parent!.post({ type: 'import-progress', id, file, index, count: files.length, bytes: p.bytes, totalBytes }),
      });
      console.log(`imported ${file}: ${report.imported} new, ${report.duplicates} duplicates, ${report.rejected} rejected (${report.source})`);
      results.push({ file, ok: true, report });
    } catch (err) {
      const reason = err instanceof ImportFailure ? err.message : `internal error: ${(err as Error).message}`;
      if (!(err instanceof ImportFailure)) console.error((err as Error).stack);
      console.warn(`import of ${file} failed: ${reason}`);
      results.push({ file, ok: false, reason });
    }
  }
  parent!.post({ type: 'import-done', id, results });
}

/** Stops listening, waits for running work, saves the store, exits. */
async function shutdown(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`${reason}: saving and shutting down`);
  const running = server ?? (await starting);
  try {
    await running?.close();
    process.exit(0);
  } catch (err) {
    console.error(`could not save the store: ${(err as Error).stack}`);
    process.exit(1);
  }
}

parent.onMessage((raw) => {
  const m = parseToServer(raw);
  if (!m) {
    console.warn(`ignored a malformed message: ${JSON.stringify(raw)?.slice(0, 200)}`);
    return;
  }
  switch (m.type) {
    case 'start':
      if (starting || stopping) return;
      starting = start(m.config);
      break;
    case 'import':
      void importFiles(m.id, m.files, { source: m.source, project: m.project });
      break;
    case 'shutdown':
      void shutdown('shutdown requested');
      break;
  }
});
parent.onGone(() => void shutdown('the supervisor went away'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
parent.post({ type: 'hello', pid: process.pid });
