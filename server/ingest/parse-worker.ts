/**
 * The import parse worker's entry: runs parse jobs (parse-job.ts) for the thread that owns the
 * store, each on the MessagePort that comes with it. parse-host.ts starts it and keeps it for
 * the next import.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { runParseJob } from './parse-job.ts';
import type { ParseJob } from './parse-protocol.ts';

if (!parentPort) throw new Error('parse-worker runs as a worker thread');
const host = parentPort;
host.on('message', (m: { type: 'job'; job: ParseJob; port: MessagePort }) => {
  // Anything else breaks the protocol: crash loudly, the host fails the import.
  if (m?.type !== 'job') throw new Error(`parse worker: unexpected message ${JSON.stringify(m?.type)}`);
  // A job reports its own failures; a rejection here is a bug, and crashing the worker tells the host.
  runParseJob(m.job, m.port).catch((err: unknown) =>
    setImmediate(() => {
      throw err;
    }),
  );
});
host.postMessage({ type: 'ready' });
