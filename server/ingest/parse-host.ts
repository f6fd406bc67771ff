/**
 * The importing thread's side of an import's parser: starts the parse worker (or runs the parser
 * inline where worker threads cannot start), forwards stream input to it with flow control, and
 * hands the batches it posts to the import one at a time.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MessageChannel, Worker, type WorkerOptions } from 'node:worker_threads';
import { provideBlockWorker } from '../store/block-packer.ts';
import { provideSearchWorker } from '../store/search-worker.ts';
import { ContentTooLarge, FormatError } from './formats.ts';
import { runParseJob } from './parse-job.ts';
import type { BatchMessage, FromParser, ParseJob, StartMessage, ToParser } from './parse-protocol.ts';

export type ParserMode = 'worker' | 'inline';

export type ImportInput = AsyncIterable<Buffer | Uint8Array | string> | Iterable<Buffer | Uint8Array | string>;

/** Nothing could be imported: the parser said why before anything was written. */
export class ParserFailure extends Error {}

/** The import's signal was aborted (its client went away): the parser was stopped at once. */
export class ImportCancelled extends Error {}

/** A worker that is not ready by then is given up on (imports run inline from then on). */
const READY_TIMEOUT_MS = 30_000;
/** An idle worker is kept this long for the next import, then ended. */
const IDLE_MS = 30_000;
/** Stream input forwarded but not yet taken by the parser; forwarding pauses above it. */
const WINDOW_BYTES = 8 * 1024 * 1024;
/** Small chunks (HTTP bodies come in 16-64 KiB) are gathered into messages of up to this size. */
const STAGE_BYTES = 1024 * 1024;

/**
 * How to start the parse worker, or undefined when this build has none.
 * A bundle (dist/server/main.mjs, dist/electron/server-process.cjs) has parse-worker.mjs next to
 * it. The source tree (tsx, vitest) has parse-worker.ts: on Node 20, tsx 4 installs its loader
 * on the main thread only (a worker started with `--import tsx` loads tsx, which then registers
 * nothing), so a small bootstrap registers tsx's loader inside the worker and imports the entry.
 */
function workerSpec(): { filename: string | URL; options: WorkerOptions } | undefined {
  const isFile = (u: URL) => u.protocol === 'file:' && fs.existsSync(fileURLToPath(u));
  const bundled = new URL('./parse-worker.mjs', import.meta.url);
  if (isFile(bundled)) return { filename: bundled, options: { execArgv: [] } };
  const source = new URL('./parse-worker.ts', import.meta.url);
  if (!isFile(source)) return undefined;
  let tsxApi: string;
  try {
    // tsx's ESM API (its CommonJS build cannot register from a worker's eval'd script).
    const pkgFile = createRequire(import.meta.url).resolve('tsx/package.json');
    const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
    tsxApi = pathToFileURL(path.join(path.dirname(pkgFile), pkg.exports['./esm/api']!.import.default)).href;
  } catch {
    return undefined;
  }
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source.href)}); });`;
  return { filename: bootstrap, options: { eval: true, execArgv: [] } };
}

// The store packs record blocks and searches record words on workers of the same entry (parse-worker.ts, in its `blocks` and `search` roles).
const sameEntry = () => {
  const spec = workerSpec();
  return spec ? new Worker(spec.filename, spec.options) : undefined;
};
provideBlockWorker(sameEntry);
provideSearchWorker(sameEntry);

let unavailable: string | undefined;
let idle: Worker | undefined;
let idleTimer: NodeJS.Timeout | undefined;
const active = new Set<Worker>();

/** Why imports in this process parse inline (the worker could not start), if they do. */
export function parseWorkerUnavailable(): string | undefined {
  return unavailable;
}

/** The workers running an import now (tests crash one on purpose). */
export function activeParseWorkers(): ReadonlySet<Worker> {
  return active;
}

async function acquireWorker(): Promise<Worker | undefined> {
  if (idle) {
    const w = idle;
    idle = undefined;
    clearTimeout(idleTimer);
    w.ref();
    active.add(w);
    return w;
  }
  if (unavailable) return undefined;
  const spec = workerSpec();
  if (!spec) {
    unavailable = 'this build has no parse worker';
    return undefined;
  }
  let worker: Worker;
  try {
    worker = new Worker(spec.filename, spec.options);
  } catch (err) {
    unavailable = `worker threads cannot start: ${(err as Error).message}`;
    return undefined;
  }
  // Without a listener a worker's error would be thrown on this thread; sessions add their own.
  worker.on('error', () => undefined);
  worker.once('exit', () => {
    if (idle === worker) idle = undefined;
    active.delete(worker);
  });
  const why = await new Promise<string | undefined>((resolve) => {
    const done = (reason: string | undefined) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      resolve(reason);
    };
    const onMessage = (m: { type?: string }) => m?.type === 'ready' && done(undefined);
    const onError = (err: Error) => done(`the parse worker failed to start: ${err.message}`);
    const onExit = (code: number) => done(`the parse worker exited at start (code ${code})`);
    const timer = setTimeout(() => done(`the parse worker did not start within ${READY_TIMEOUT_MS / 1000} s`), READY_TIMEOUT_MS);
    worker.on('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
  });
  if (why !== undefined) {
    unavailable = why;
    worker.terminate().catch(() => undefined);
    return undefined;
  }
  active.add(worker);
  return worker;
}

function releaseWorker(worker: Worker, reusable: boolean): void {
  active.delete(worker);
  if (!reusable || idle) {
    worker.terminate().catch(() => undefined);
    return;
  }
  // Kept warm for the next import, without keeping the process alive.
  idle = worker;
  worker.unref();
  idleTimer = setTimeout(() => {
    if (idle !== worker) return;
    idle = undefined;
    worker.terminate().catch(() => undefined);
  }, IDLE_MS).unref();
}

export interface ParseSession {
  readonly mode: ParserMode;
  /** The format and source; rejects with ParserFailure when nothing can be imported. */
  readonly started: Promise<StartMessage>;
  /** The next batch (the last one has `done`); rejects once the parser failed. */
  next(): Promise<BatchMessage>;
  /** The batch taken last is written: the parser may send another. */
  ack(): void;
  /** Ends the session (and the job, if it still runs); a sound worker is kept for the next import. */
  close(): void;
}

/**
 * Starts parsing one import: the job's file, or `input` forwarded chunk by chunk. `auto` uses
 * the worker where it can start and the same parser inline where it cannot; `worker` insists.
 * Once `signal` is aborted, the session fails with ImportCancelled and the parser is stopped.
 */
export async function openParser(job: ParseJob, input: ImportInput | undefined, mode: ParserMode | 'auto', signal?: AbortSignal): Promise<ParseSession> {
  if (signal?.aborted) throw cancelled(signal);
  const worker = mode === 'inline' ? undefined : await acquireWorker();
  if (!worker && mode === 'worker') throw new Error(`the import parse worker cannot run here: ${unavailable}`);

  const { port1: port, port2 } = new MessageChannel();
  const post = (m: ToParser, transfer?: ArrayBuffer[]) => {
    if (!closed) port.postMessage(m, transfer);
  };
  let closed = false;
  let inputError: { err: unknown } | undefined;
  let failure: { err: unknown } | undefined;
  /** The worker crashed or hit a bug: it is not reused. */
  let broken = false;
  const inbox: BatchMessage[] = [];
  let waiting: { resolve: (m: BatchMessage) => void; reject: (err: unknown) => void } | undefined;
  let isStarted = false;
  let resolveStart!: (m: StartMessage) => void;
  let rejectStart!: (err: unknown) => void;
  const started = new Promise<StartMessage>((resolve, reject) => {
    resolveStart = resolve;
    rejectStart = reject;
  });
  started.catch(() => undefined);
  const fail = (err: unknown) => {
    if (failure) return;
    failure = { err };
    if (!isStarted) rejectStart(err);
    waiting?.reject(err);
    waiting = undefined;
  };
  const flow = { sent: 0, credited: 0, wake: undefined as (() => void) | undefined };
  const wakePump = () => {
    const w = flow.wake;
    flow.wake = undefined;
    w?.();
  };

  port.on('message', (m: FromParser) => {
    switch (m.type) {
      case 'start':
        isStarted = true;
        resolveStart(m);
        break;
      case 'fail':
        fail(m.tooLarge !== undefined ? new ContentTooLarge(m.tooLarge) : new ParserFailure(m.message));
        break;
      case 'batch':
        if (waiting) {
          // Handed over in the check phase, like every later batch (the import yields with
          // setImmediate): so timers and I/O always run between two inserts.
          const { resolve } = waiting;
          waiting = undefined;
          setImmediate(resolve, m);
        } else inbox.push(m);
        break;
      case 'error':
        if (m.kind === 'format') fail(new FormatError(m.message));
        else if (m.kind === 'too-large') fail(new ContentTooLarge(m.tooLarge ?? 0));
        else if (m.kind === 'input' && inputError) fail(inputError.err);
        else {
          broken = m.kind === 'internal';
          fail(Object.assign(new Error(m.message), { ...(m.stack ? { stack: m.stack } : {}), ...(m.code ? { code: m.code } : {}) }));
        }
        break;
      case 'credit':
        flow.credited += m.bytes;
        wakePump();
        break;
    }
  });

  let detach = () => {};
  if (worker) {
    const onError = (err: Error) => {
      broken = true;
      fail(new Error(`the import parse worker failed: ${err.message}`, { cause: err }));
    };
    const onExit = (code: number) => {
      broken = true;
      fail(new Error(`the import parse worker stopped (exit code ${code})`));
    };
    worker.on('error', onError);
    worker.once('exit', onExit);
    detach = () => {
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.postMessage({ type: 'job', job, port: port2 }, [port2]);
  } else {
    runParseJob(job, port2).catch(fail);
  }

  // Stream input: forwarded as copies (a caller's Buffer is never detached under it), small
  // chunks gathered, and paused while the parser has more than WINDOW_BYTES not yet taken.
  const pump = async (source: ImportInput) => {
    let stage: Buffer | undefined;
    let staged = 0;
    let scheduled = false;
    const send = (data: ArrayBuffer, length: number) => {
      flow.sent += length;
      post({ type: 'chunk', data, length }, [data]);
    };
    const flushStage = () => {
      scheduled = false;
      if (!stage || staged === 0) return;
      send(stage.buffer as ArrayBuffer, staged);
      stage = undefined;
      staged = 0;
    };
    const forward = (chunk: Uint8Array) => {
      if (chunk.byteLength >= STAGE_BYTES / 2) {
        flushStage();
        const copy = new Uint8Array(chunk);
        send(copy.buffer as ArrayBuffer, copy.byteLength);
        return;
      }
      if (stage && staged + chunk.byteLength > stage.length) flushStage();
      // Its own ArrayBuffer (not Buffer's pool), so it can be transferred.
      stage ??= Buffer.allocUnsafeSlow(STAGE_BYTES);
      stage.set(chunk, staged);
      staged += chunk.byteLength;
      // Sent once the chunks at hand are gathered, or when full.
      if (!scheduled) {
        scheduled = true;
        setImmediate(flushStage);
      }
    };
    const iterator: AsyncIterator<Buffer | Uint8Array | string> | Iterator<Buffer | Uint8Array | string> =
      Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
    try {
      for (;;) {
        while (!closed && flow.sent - flow.credited >= WINDOW_BYTES) await new Promise<void>((resolve) => (flow.wake = resolve));
        if (closed) return;
        const next = await iterator.next();
        if (closed) return;
        if (next.done) break;
        forward(typeof next.value === 'string' ? Buffer.from(next.value) : next.value);
      }
      flushStage();
      post({ type: 'end' });
    } catch (err) {
      if (closed) return;
      flushStage();
      inputError = { err };
      post({ type: 'input-error', message: (err as Error)?.message ?? String(err) });
    }
  };
  if (input) void pump(input);

  const close = () => {
    if (closed) return;
    closed = true;
    signal?.removeEventListener('abort', onAbort);
    wakePump();
    // Also stops the parser if it is still running (the import failed on this side).
    port.close();
    if (worker) {
      detach();
      releaseWorker(worker, !broken);
    }
  };
  // Stopped now, not when the import has rolled back: a small gzip can keep its parser busy
  // for minutes. The worker is ended rather than kept, whatever it was in the middle of.
  function onAbort() {
    broken = true;
    fail(cancelled(signal!));
    close();
  }
  signal?.addEventListener('abort', onAbort, { once: true });

  return {
    mode: worker ? 'worker' : 'inline',
    started,
    next() {
      if (failure) return Promise.reject(failure.err);
      const m = inbox.shift();
      if (m) return Promise.resolve(m);
      return new Promise<BatchMessage>((resolve, reject) => (waiting = { resolve, reject }));
    },
    ack() {
      post({ type: 'ack' });
    },
    close,
  };
}

function cancelled(signal: AbortSignal): ImportCancelled {
  const why = signal.reason instanceof Error ? signal.reason.message : typeof signal.reason === 'string' ? signal.reason : undefined;
  return new ImportCancelled(`the import was cancelled${why ? ` (${why})` : ''}; nothing from it was kept`);
}
