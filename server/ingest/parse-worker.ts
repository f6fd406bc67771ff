/**
 * The import's worker entry: runs parse jobs (parse-job.ts) for the thread that owns the
 * store, each on the MessagePort that comes with it. parse-host.ts starts it and keeps it for
 * the next import. Started with a `blocks` message instead, it packs the store's record blocks
 * (store/block-packer.ts) on the port that comes with it, and started with a `search` message it
 * reads files for text searches (store/search-worker.ts): one entry, so every build (tsx, the
 * server bundle, Electron's) has every worker.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { serveBlockJobs } from '../store/block-packer.ts';
import { serveSearchJobs } from '../store/search-worker.ts';
import { runParseJob } from './parse-job.ts';
import type { ParseJob } from './parse-protocol.ts';

if (!parentPort) throw new Error('parse-worker runs as a worker thread');
const host = parentPort;
host.on('message', (m: { type: 'job'; job: ParseJob; port: MessagePort } | { type: 'blocks' | 'search'; port: MessagePort }) => {
  if (m?.type === 'blocks') {
    serveBlockJobs(m.port);
    return;
  }
  if (m?.type === 'search') {
    serveSearchJobs(m.port);
    return;
  }
  // Anything else breaks the protocol: crash loudly, the host fails the import.
  if (m?.type !== 'job') throw new Error(`parse worker: unexpected message ${JSON.stringify((m as { type?: unknown })?.type)}`);
  // A job reports its own failures; a rejection here is a bug, and crashing the worker tells the host.
  runParseJob(m.job, m.port).catch((err: unknown) =>
    setImmediate(() => {
      throw err;
    }),
  );
});
host.postMessage({ type: 'ready' });
