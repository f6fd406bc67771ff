/**
 * What the server's one thread was busy with, for finding stalls: when `LOG_EXPLORER_ACTIVITY`
 * names a file, each span of background or import work (a commit, a day split, a columns build
 * step, a catalog export, a parse batch) and each garbage collection is appended to it as one
 * JSON line: `{"what": "commit", "start": <epoch ms>, "ms": <duration>}`. The bench lines these
 * up with the requests that waited, to say what ran during each long wait. Off by default: then
 * a span costs one comparison.
 */
import fs from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const file = process.env.LOG_EXPLORER_ACTIVITY || null;
/** Shorter spans are not written (a line costs more than they tell). */
const MIN_MS = 2;
let pending: string[] = [];

function write(what: string, startPerf: number, ms: number): void {
  if (ms < MIN_MS) return;
  pending.push(JSON.stringify({ what, start: performance.timeOrigin + startPerf, ms: Math.round(ms * 100) / 100 }));
  // Written in batches, off the measured spans: appending is itself work on the thread.
  if (pending.length === 1) setTimeout(flush, 200).unref();
}

function flush(): void {
  if (!file || !pending.length) return;
  const lines = `${pending.join('\n')}\n`;
  pending = [];
  try {
    fs.appendFileSync(file, lines);
  } catch {
    // A diagnostic: never a reason to fail the work it describes.
  }
}

if (file) {
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) write('gc', e.startTime, e.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  process.on('exit', flush);
}

/** Whether spans are being written. */
export const activityLogged = file !== null;

/** Starts a span of `what`; the function it returns ends it. */
export function span(what: string): () => void {
  if (!file) return noop;
  const start = performance.now();
  return () => write(what, start, performance.now() - start);
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
