/**
 * What the server's one thread was busy with, for finding stalls: when `LOG_EXPLORER_ACTIVITY`
 * names a file, each span of background or import work (a commit, a day split, a columns build
 * step, a catalog export, a parse batch) and each garbage collection is appended to it as one
 * JSON line: `{"what": "commit", "start": <epoch ms>, "ms": <duration>}` (a worker thread's also
 * name it, `"thread": "worker 3"`, and its collections are `gc on a worker`). The bench lines the
 * answering thread's spans up with the requests that waited, to say what ran during each long wait. Spans too short to
 * list are still added up: a `{"what": "totals", "thread": ..., "totals": {what: [count, ms]}}`
 * line with each batch says where an import's time went, stage by stage (parse, insert,
 * compress, index, commit). Off by default: then a span costs one comparison.
 */
import fs from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { isMainThread, threadId } from 'node:worker_threads';

const file = process.env.LOG_EXPLORER_ACTIVITY || null;
/** Spans of a worker thread name it: only the answering thread's spans say why a request waited. */
const thread = isMainThread ? 'main' : `worker ${threadId}`;
/** Shorter spans are not written (a line costs more than they tell). */
const MIN_MS = 2;
let pending: string[] = [];
const totals: Record<string, [count: number, ms: number]> = {};
let scheduled = false;
/** Sizes the log samples with each flush (at most once a second): registered name → the sizes it reads (name → bytes now). */
const gauges = new Map<string, () => Record<string, number>>();
let sampledAt = -Infinity;
const SAMPLE_MS = 1000;

function write(what: string, startPerf: number, ms: number): void {
  const t = (totals[what] ??= [0, 0]);
  t[0]++;
  t[1] += ms;
  if (ms >= MIN_MS) pending.push(JSON.stringify({ what, start: performance.timeOrigin + startPerf, ms: Math.round(ms * 100) / 100, ...(isMainThread ? {} : { thread }) }));
  // Written in batches, off the measured spans: appending is itself work on the thread.
  if (!scheduled) {
    scheduled = true;
    setTimeout(flush, 200).unref();
  }
}

function flush(): void {
  scheduled = false;
  if (!file) return;
  const now = performance.now();
  pending.push(JSON.stringify({ what: 'totals', at: performance.timeOrigin + now, thread, totals }));
  if (now - sampledAt >= SAMPLE_MS) {
    sampledAt = now;
    // rss is the process's (every thread); the heap figures are this thread's own isolate.
    const m = process.memoryUsage();
    const sizes: Record<string, number> = { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers };
    for (const read of gauges.values()) {
      try {
        Object.assign(sizes, read());
      } catch {
        // A gauge of something closed since (a store, its catalog): left out of this sample.
      }
    }
    pending.push(JSON.stringify({ what: 'memory', at: performance.timeOrigin + now, thread, sizes }));
  }
  const lines = `${pending.join('\n')}\n`;
  pending = [];
  try {
    fs.appendFileSync(file, lines);
  } catch {
    // A diagnostic: never a reason to fail the work it describes.
  }
}

if (file) {
  // A worker's collections pause that worker only: named apart, so that an import's stages and
  // the waits of requests count the answering thread's own as `gc`.
  const gcWhat = isMainThread ? 'gc' : 'gc on a worker';
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) write(gcWhat, e.startTime, e.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  process.on('exit', flush);
}

/** A size (bytes) to sample with the process's memory figures, when the log is on: where memory goes during an import. */
export function gauge(name: string, read: () => number): void {
  if (file) gauges.set(name, () => ({ [name]: read() }));
}

/** Several sizes read together (one pass over what they share), sampled like `gauge`'s; `key` names the group (a later one replaces it). */
export function gaugeGroup(key: string, read: () => Record<string, number>): void {
  if (file) gauges.set(key, read);
}

/** Whether spans are being written. */
export const activityLogged = file !== null;

/** Starts a span of `what`; the function it returns ends it. */
export function span(what: string): () => void {
  if (!file) return noop;
  const start = performance.now();
  return () => write(what, start, performance.now() - start);
}

/** Adds `ms` of `what` to the totals without listing it (time measured another way: a thread's busy time). */
export function addTotal(what: string, ms: number): void {
  if (!file) return;
  const t = (totals[what] ??= [0, 0]);
  t[0]++;
  t[1] += ms;
  if (!scheduled) {
    scheduled = true;
    setTimeout(flush, 200).unref();
  }
}

/** Ends a span of `what` that started at `start` (performance.now()). */
export function spanSince(what: string, start: number): void {
  if (file) write(what, start, performance.now() - start);
}

/** Runs `fn` as a span of `what` (its promise's end, for async work). */
export function spanOf<T>(what: string, fn: () => T): T {
  if (!file) return fn();
  const end = span(what);
  const out = fn();
  if (out instanceof Promise) return out.finally(end) as T;
  end();
  return out;
}

const noop = () => {};
