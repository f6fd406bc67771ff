/**
 * Turns between the server's own long work (an import's insert slices and staging steps, a
 * sync's batches) and the requests pages send. A turn used to be one pass of the event loop, so
 * a request that awaited ten times (each partition of a walk, each file read) waited for ten
 * slices of the import. Now a turn waits until no read is being answered, for at most
 * MAX_TURN_WAIT_MS (a steady stream of requests must not stop an import): a request waits for
 * the slice that was running when it came, then for nothing but itself.
 */

/** The longest a turn waits for the reads being answered (ms). */
export const MAX_TURN_WAIT_MS = 50;

let answering = 0;
let waiting: Array<() => void> = [];

/** A read is being answered (the app's middleware); call the result when its answer is ready. */
export function answeringStarted(): () => void {
  answering++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    answering--;
    if (answering === 0 && waiting.length) {
      const resume = waiting;
      waiting = [];
      // After this turn of the loop: the answer is written first.
      setImmediate(() => {
        for (const r of resume) r();
      });
    }
  };
}

/** Reads being answered now. */
export function readsAnswering(): number {
  return answering;
}

/** Resolves once no read is being answered, or after `maxMs`. */
export function readsAnswered(maxMs: number): Promise<void> {
  if (answering === 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      waiting = waiting.filter((r) => r !== done);
      resolve();
    }, maxMs);
    waiting.push(done);
  });
}

/** A turn for requests: one pass of the event loop, then until no read is being answered (at most `maxMs`). */
export async function turnForRequests(maxMs = MAX_TURN_WAIT_MS): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await readsAnswered(maxMs);
}
