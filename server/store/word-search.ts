/**
 * A text search's record words (record-tokens.ts) read off the thread that answers requests.
 * Inflating a week's word lists and walking them is most of a search for digits or a common
 * word at 10M records (a second of a 2-3 s search), and it needs nothing but the partition's
 * tokens file: a worker thread reads the next partitions' words while this thread counts the
 * current one's rows, so a search uses both cores.
 *
 * A job is a partition's listing (plain data: the file, its seed and its segments, as this
 * thread read them within the committed record bytes) and the search's word parts; the answer
 * is `markWords`' marks, the same function either side. A job the worker has not started when
 * the walk reaches its partition is taken back (a shared state word, as block-packer.ts does)
 * and read by the walk: the two threads share the week between them, and neither waits on a
 * queue. A worker that is missing, dies or fails a job answers null and the caller reads the
 * words itself, so the worker costs time, never an answer. The worker is started from outside the store (parse-host.ts provides how,
 * as for block-packer.ts), is kept while jobs come and ended after IDLE_MS without any.
 */
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { addTotal } from '../activity.ts';
import { countSegmentsRead, markWords, tokenSegmentsRead, tokensOfListing, type TokensListing, type WordMarks, type WordPart } from './record-tokens.ts';

interface JobMessage {
  id: number;
  /** The job's state word (shared): queued, taken by the worker, or taken back by the caller. */
  memory: SharedArrayBuffer;
  listing: TokensListing;
  parts: readonly WordPart[];
}

type ResultMessage = { id: number; marks: WordMarks; segments: number } | { id: number; error: string };

const QUEUED = 0;
const TAKEN = 1;
const TAKEN_BACK = 2;

/** An idle worker is ended after this long. */
const IDLE_MS = 30_000;

/** The worker's side: answers each job on `port` (parse-worker.ts calls it in its `words` role). */
export function serveWordJobs(port: MessagePort): void {
  port.on('message', (m: JobMessage) => {
    // Read by the caller meanwhile: it reached the partition before this thread did.
    if (Atomics.compareExchange(new Int32Array(m.memory), 0, QUEUED, TAKEN) !== QUEUED) return;
    const started = performance.now();
    const before = tokenSegmentsRead();
    try {
      const marks = markWords(tokensOfListing(m.listing), m.parts);
      port.postMessage({ id: m.id, marks, segments: tokenSegmentsRead() - before } satisfies ResultMessage, [marks.of.buffer as ArrayBuffer]);
    } catch (err) {
      port.postMessage({ id: m.id, error: (err as Error)?.message ?? String(err) } satisfies ResultMessage);
    }
    addTotal('words: search on the worker', performance.now() - started);
  });
}

export type WordWorkerFactory = () => Worker | undefined;

let factory: WordWorkerFactory | undefined;
let mode: 'worker' | 'inline' = process.env.LOG_EXPLORER_WORD_SEARCH === 'inline' ? 'inline' : 'worker';
let worker: Worker | null = null;
let port: MessagePort | null = null;
let unavailable: string | undefined;
let nextId = 1;
const waiting = new Map<number, (marks: WordMarks | null) => void>();
let idleTimer: NodeJS.Timeout | undefined;
/** Jobs answered by the worker and read here instead (none, failed, or no worker), since the process started. */
const done = { worker: 0, here: 0 };

/** How to start the worker (parse-host.ts). Without it, every search reads its words here. */
export function provideWordWorker(start: WordWorkerFactory): void {
  factory = start;
}

/** `inline` reads every search's words on the calling thread (tests compare both; LOG_EXPLORER_WORD_SEARCH=inline sets it). */
export function setWordSearch(next: 'worker' | 'inline'): void {
  mode = next;
  if (next === 'inline') retire();
}

/** Why searches read their words here in this process (the worker could not start), if they do. */
export function wordWorkerUnavailable(): string | undefined {
  return unavailable;
}

/** Partitions' words read by the worker and here so far (tests, benches). */
export function wordJobsDone(): { worker: number; here: number } {
  return { ...done };
}

/** The worker searching words now, if any (tests end it on purpose). */
export function activeWordWorker(): Worker | null {
  return worker;
}

function start(): MessagePort | null {
  if (port) return port;
  if (mode === 'inline' || !factory || unavailable !== undefined) return null;
  let w: Worker | undefined;
  try {
    w = factory();
  } catch (err) {
    unavailable = `worker threads cannot start: ${(err as Error).message}`;
  }
  if (!w) {
    unavailable ??= 'this build has no worker to search words';
    return null;
  }
  const self = w;
  const channel = new MessageChannel();
  worker = self;
  port = channel.port1;
  let ready = false;
  self.unref();
  self.on('message', (m: { type?: string }) => {
    if (m?.type === 'ready') ready = true;
  });
  // Without a listener a worker's error would be thrown on this thread; its exit follows.
  self.on('error', () => undefined);
  self.once('exit', (code: number) => {
    if (worker !== self) return; // retired on purpose
    if (!ready) unavailable = `the word search worker stopped at start (exit code ${code})`;
    forget();
  });
  port.on('message', (m: ResultMessage) => {
    const resolve = waiting.get(m.id);
    if (!resolve) return;
    waiting.delete(m.id);
    if ('marks' in m) countSegmentsRead(m.segments);
    resolve('marks' in m ? m.marks : null);
    if (!waiting.size) idle();
  });
  // Kept running only while a job waits for it.
  port.unref();
  self.postMessage({ type: 'words', port: channel.port2 }, [channel.port2]);
  return port;
}

function idle(): void {
  port?.unref();
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    if (!waiting.size) retire();
  }, IDLE_MS).unref();
}

/** Drops the worker: the jobs waiting on it are answered null (read here). */
function forget(): void {
  port?.close();
  port = null;
  worker = null;
  clearTimeout(idleTimer);
  const left = [...waiting.values()];
  waiting.clear();
  for (const resolve of left) resolve(null);
}

function retire(): void {
  const w = worker;
  forget();
  void w?.terminate().catch(() => undefined);
}

/** A partition's words asked of the worker. */
export interface WordJob {
  /** The worker's marks; null when there is no worker or it failed (the caller reads the words itself). */
  readonly marks: Promise<WordMarks | null>;
  /**
   * True when the worker had not started the job: it never will, and the caller reads the words
   * itself (so that a walk that catches up with the worker never waits for a queue).
   */
  takeBack(): boolean;
}

const NO_JOB: WordJob = { marks: Promise.resolve(null), takeBack: () => true };

/** `markWords(listing's tokens, parts)` asked of the worker. */
export function wordMarksOffThread(listing: TokensListing, parts: readonly WordPart[]): WordJob {
  const p = start();
  if (!p) return NO_JOB;
  const id = nextId++;
  const memory = new SharedArrayBuffer(4);
  const state = new Int32Array(memory);
  clearTimeout(idleTimer);
  let settle!: (marks: WordMarks | null) => void;
  const marks = new Promise<WordMarks | null>((resolve) => (settle = resolve));
  waiting.set(id, (m) => {
    if (m) done.worker++;
    settle(m);
  });
  p.ref();
  p.postMessage({ id, memory, listing, parts } satisfies JobMessage);
  return {
    marks,
    takeBack() {
      if (Atomics.compareExchange(state, 0, QUEUED, TAKEN_BACK) !== QUEUED) return false;
      waiting.delete(id);
      settle(null);
      if (!waiting.size) idle();
      return true;
    },
  };
}

/** A partition's words were read on this thread (no worker, or its answer was not used). */
export function readHere(): void {
  done.here++;
}
