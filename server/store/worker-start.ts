/** Starting a worker thread the store uses (block-packer.ts, search-worker.ts) from the factory it was given. */
import type { Worker } from 'node:worker_threads';

/** The worker `factory` starts, or why there is none: `none` when the build has no worker entry. */
export function startWorker(factory: () => Worker | undefined, none: string): Worker | string {
  try {
    return factory() ?? none;
  } catch (err) {
    return `worker threads cannot start: ${(err as Error).message}`;
  }
}
