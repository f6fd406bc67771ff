/**
 * A text search's reads of files done off the thread that answers requests, so that a search
 * uses both cores. Three kinds of job, each plain data, each answered by the function this
 * thread would run itself:
 * - a partition's record words (record-tokens.ts `markWords`): inflating a week's word lists and
 *   walking them is most of a search for digits at 10M records, and needs nothing but the
 *   partition's tokens file. The job is its listing (the file, its seed and its segments, as
 *   this thread read them within the committed record bytes) and the search's word parts;
 * - a range of urls.log's lines (text-dictionary.ts `linesFound`): a search the URLs decide
 *   (url-hits.ts) looks for its text in every URL of the store once (1.6M URLs, 164 MB at 10M);
 * - the CRC of a dictionary's first bytes, which its saved line offsets are checked by after a
 *   start (text-dictionary.ts `loadInSteps`);
 * - a partition's row arrays from its columns file, each checked against its CRC
 *   (scan-columns.ts `readAhead`): a week's search counts 9M rows from their columns, about
 *   300 MB read and checksummed, which the walk asks for a few partitions ahead of itself.
 *
 * Each job has a shared state word (as block-packer.ts's): one the worker has not started can be
 * taken back by the caller, who then does it itself, so a walk that catches up with the worker
 * never waits on a queue. A worker that is missing, dies or fails a job answers null and the
 * caller does the job itself: the worker costs time, never an answer. It is started from outside
 * the store (parse-host.ts provides how, as for block-packer.ts), kept while jobs come and ended
 * after IDLE_MS without any.
 */
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { addTotal } from '../activity.ts';
import { adaptiveTextFinder } from './block-search.ts';
import { countSegmentsRead, markWords, tokenSegmentsRead, tokensOfListing, type TokensListing, type WordMarks, type WordPart } from './record-tokens.ts';
import { linesFound, scratchBuffer, type FileLines, type LinesFound } from './text-dictionary.ts';
import { startWorker } from './worker-start.ts';

/** An array of a columns file: its name, where it starts, its length and its CRC-32. */
export interface ArrayRead {
  name: string;
  at: number;
  bytes: number;
  crc: number;
}

/** Arrays read from a columns file whole and matching their CRCs (one that did not is left out: the caller reads it and reports it). */
export type ArraysRead = Array<{ name: string; buffer: ArrayBuffer }>;

type Job =
  | { kind: 'words'; listing: TokensListing; parts: readonly WordPart[] }
  | { kind: 'lines'; lines: FileLines; text: string }
  | { kind: 'crc'; file: string; bytes: number }
  | { kind: 'arrays'; file: string; reads: readonly ArrayRead[] };

interface JobMessage {
  id: number;
  /** The job's state word (shared): queued, taken by the worker, or taken back by the caller. */
  memory: SharedArrayBuffer;
  job: Job;
}

type Answer = { kind: 'words'; marks: WordMarks; segments: number } | { kind: 'lines'; found: LinesFound } | { kind: 'crc'; crc: number } | { kind: 'arrays'; arrays: ArraysRead };
type ResultMessage = { id: number; answer: Answer } | { id: number; error: string };

const QUEUED = 0;
const TAKEN = 1;
const TAKEN_BACK = 2;

/** Bytes read at a time for a CRC. */
const CRC_CHUNK = 8 * 1024 * 1024;

/** Reads bytes [start, end) of `file` through `into` (its length at a time), handing each filled part to `take`. */
function readRange(file: string, start: number, end: number, into: Buffer, take: (bytes: Buffer) => void): void {
  const fd = fs.openSync(file, 'r');
  try {
    for (let at = start; at < end; ) {
      const want = Math.min(into.length, end - at);
      let got = 0;
      while (got < want) {
        const n = fs.readSync(fd, into, got, want - got, at + got);
        if (n === 0) throw new Error(`${file} ends before byte ${end}`);
        got += n;
      }
      take(into.subarray(0, want));
      at += want;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** An idle worker is ended after this long. */
const IDLE_MS = 30_000;

/** The worker's side: answers each job on `port` (parse-worker.ts calls it in its `words` role). */
export function serveSearchJobs(port: MessagePort): void {
  port.on('message', (m: JobMessage) => {
    // Read by the caller meanwhile: it reached the partition before this thread did.
    if (Atomics.compareExchange(new Int32Array(m.memory), 0, QUEUED, TAKEN) !== QUEUED) return;
    const started = performance.now();
    try {
      const answer = run(m.job);
      const buffers = answer.kind === 'words' ? [answer.marks.of.buffer] : answer.kind === 'lines' ? [answer.found.plain.buffer] : answer.kind === 'arrays' ? answer.arrays.map((a) => a.buffer) : [];
      port.postMessage({ id: m.id, answer } satisfies ResultMessage, buffers as ArrayBuffer[]);
    } catch (err) {
      port.postMessage({ id: m.id, error: (err as Error)?.message ?? String(err) } satisfies ResultMessage);
    }
    addTotal(`search: ${m.job.kind} on the worker`, performance.now() - started);
  });
}

function run(job: Job): Answer {
  if (job.kind === 'words') {
    const before = tokenSegmentsRead();
    const marks = markWords(tokensOfListing(job.listing), job.parts);
    return { kind: 'words', marks, segments: tokenSegmentsRead() - before };
  }
  if (job.kind === 'crc') {
    let crc = 0;
    const chunk = Buffer.allocUnsafe(CRC_CHUNK);
    readRange(job.file, 0, job.bytes, chunk, (bytes) => (crc = zlib.crc32(bytes, crc)));
    return { kind: 'crc', crc };
  }
  if (job.kind === 'arrays') return { kind: 'arrays', arrays: readArrays(job.file, job.reads) };
  const { file, start, end, starts, first } = job.lines;
  const bytes = scratchBuffer(end - start);
  readRange(file, start, end, bytes, () => undefined);
  return { kind: 'lines', found: linesFound(bytes, starts, first, finderOf(job.text)) };
}

/** Texts whose finders the worker keeps. */
const FINDERS_KEPT = 8;
const finders = new Map<string, ReturnType<typeof adaptiveTextFinder>>();

/**
 * The worker's finder of `text`, kept across jobs: a search asks for urls.log in dozens of
 * chunks, and a finder made afresh for each looked for a common text place by place (the
 * sparse way) in every chunk before it learnt to take the dense way; that doubled the worker's
 * time for `/rest/v1/` (0.78 s against 0.43 s for the whole file at 10M records).
 */
export function finderOf(text: string): ReturnType<typeof adaptiveTextFinder> {
  let f = finders.get(text);
  if (f) finders.delete(text);
  else if (finders.size >= FINDERS_KEPT) finders.delete(finders.keys().next().value!);
  finders.set(text, (f ??= adaptiveTextFinder(text)));
  return f;
}

/** The arrays of `file` that are there whole and match their CRCs. */
export function readArrays(file: string, reads: readonly ArrayRead[]): ArraysRead {
  const out: ArraysRead = [];
  const fd = fs.openSync(file, 'r');
  try {
    for (const r of reads) {
      const buffer = new ArrayBuffer(r.bytes);
      const view = new Uint8Array(buffer);
      let got = 0;
      while (got < r.bytes) {
        const n = fs.readSync(fd, view, got, r.bytes - got, r.at + got);
        if (n === 0) break;
        got += n;
      }
      if (got === r.bytes && zlib.crc32(view) === r.crc) out.push({ name: r.name, buffer });
    }
  } finally {
    fs.closeSync(fd);
  }
  return out;
}

export type SearchWorkerFactory = () => Worker | undefined;

let factory: SearchWorkerFactory | undefined;
let mode: 'worker' | 'inline' = process.env.LOG_EXPLORER_SEARCH_WORKER === 'inline' ? 'inline' : 'worker';
let worker: Worker | null = null;
let port: MessagePort | null = null;
let unavailable: string | undefined;
let nextId = 1;
const waiting = new Map<number, (answer: Answer | null) => void>();
let idleTimer: NodeJS.Timeout | undefined;
/** Partitions' words read by the worker and here (no worker, taken back, or failed there), since the process started. */
const done = { worker: 0, here: 0 };

/** How to start the worker (parse-host.ts). Without it, every search reads its words here. */
export function provideSearchWorker(start: SearchWorkerFactory): void {
  factory = start;
}

/** `inline` reads every search's words on the calling thread (tests compare both; LOG_EXPLORER_SEARCH_WORKER=inline sets it). */
export function setSearchWorker(next: 'worker' | 'inline'): void {
  mode = next;
  if (next === 'inline') retire();
}

/** Why searches read their words here in this process (the worker could not start), if they do. */
export function searchWorkerUnavailable(): string | undefined {
  return unavailable;
}

/** Partitions' words read by the worker and here so far (tests, benches). */
export function wordJobsDone(): { worker: number; here: number } {
  return { ...done };
}

/** The worker searching words now, if any (tests end it on purpose). */
export function activeSearchWorker(): Worker | null {
  return worker;
}

function start(): MessagePort | null {
  if (port) return port;
  if (mode === 'inline' || !factory || unavailable !== undefined) return null;
  const w = startWorker(factory, 'this build has no worker to search');
  if (typeof w === 'string') {
    unavailable = w;
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
    if (!ready) unavailable = `the search worker stopped at start (exit code ${code})`;
    forget();
  });
  port.on('message', (m: ResultMessage) => {
    const resolve = waiting.get(m.id);
    if (!resolve) return;
    waiting.delete(m.id);
    resolve('answer' in m ? m.answer : null);
    if (!waiting.size) idle();
  });
  // Kept running only while a job waits for it.
  port.unref();
  self.postMessage({ type: 'search', port: channel.port2 }, [channel.port2]);
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

/** A job asked of the worker. */
export interface SearchJob<T> {
  /** The worker's answer; null when there is no worker or it failed (the caller does the job itself). */
  readonly answer: Promise<T | null>;
  /**
   * True when the worker had not started the job: it never will, and the caller does it itself
   * (so that a walk that catches up with the worker never waits for a queue).
   */
  takeBack(): boolean;
  /** Whether the worker has started it (or it was taken back). */
  started(): boolean;
}

const NO_JOB: SearchJob<never> = { answer: Promise.resolve(null), takeBack: () => true, started: () => true };

function ask(job: Job): SearchJob<Answer> {
  const p = start();
  if (!p) return NO_JOB;
  const id = nextId++;
  const memory = new SharedArrayBuffer(4);
  const state = new Int32Array(memory);
  clearTimeout(idleTimer);
  let settle!: (answer: Answer | null) => void;
  const answer = new Promise<Answer | null>((resolve) => (settle = resolve));
  waiting.set(id, settle);
  p.ref();
  p.postMessage({ id, memory, job } satisfies JobMessage);
  return {
    answer,
    takeBack() {
      if (Atomics.compareExchange(state, 0, QUEUED, TAKEN_BACK) !== QUEUED) return false;
      waiting.delete(id);
      settle(null);
      if (!waiting.size) idle();
      return true;
    },
    started: () => Atomics.load(state, 0) !== QUEUED,
  };
}

/** `markWords(listing's tokens, parts)` asked of the worker. */
export function wordMarksOffThread(listing: TokensListing, parts: readonly WordPart[]): SearchJob<WordMarks> {
  const job = ask({ kind: 'words', listing, parts });
  return {
    answer: job.answer.then((a) => {
      if (a?.kind !== 'words') return null;
      done.worker++;
      countSegmentsRead(a.segments);
      return a.marks;
    }),
    takeBack: () => job.takeBack(),
    started: () => job.started(),
  };
}

/** `linesFound` of `lines` (read from its file there) for printable ASCII `text`, lower case, asked of the worker. */
export function linesFoundOffThread(lines: FileLines, text: string): SearchJob<LinesFound> {
  const job = ask({ kind: 'lines', lines, text });
  return { answer: job.answer.then((a) => (a?.kind === 'lines' ? a.found : null)), takeBack: () => job.takeBack(), started: () => job.started() };
}

/** `readArrays(file, reads)` asked of the worker. */
export function arraysOffThread(file: string, reads: readonly ArrayRead[]): SearchJob<ArraysRead> {
  const job = ask({ kind: 'arrays', file, reads });
  return { answer: job.answer.then((a) => (a?.kind === 'arrays' ? a.arrays : null)), takeBack: () => job.takeBack(), started: () => job.started() };
}

/** A partition's words were read on this thread (no worker, or its answer was not used). */
export function readHere(): void {
  done.here++;
}

/** The CRC-32 of `file`'s first `bytes` bytes, computed on the worker; null without one. */
export function crcOffThread(file: string, bytes: number): Promise<number | null> {
  return ask({ kind: 'crc', file, bytes }).answer.then((a) => (a?.kind === 'crc' ? a.crc : null));
}
