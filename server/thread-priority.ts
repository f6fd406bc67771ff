/**
 * The import's parser's share of the CPU. An import keeps the parse worker and the block packer
 * busy beside the thread that answers requests; on two cores the three take turns, and a
 * request's answer waited whenever the scheduler ran the two workers. Linux keeps a nice value
 * per thread: the parse worker lowers its own, so the answering thread runs first and the parser
 * takes every cycle it leaves (alone on a machine it runs as fast as before). The block packer
 * keeps the default: when it falls behind, the answering thread packs the blocks itself.
 */
import fs from 'node:fs';
import os from 'node:os';

/** The parse worker's nice value (0 is the default; higher yields to others). */
export const WORKER_NICE = 10;

/** Lowers the calling thread's priority to WORKER_NICE where threads have their own (Linux); elsewhere nothing. */
export function yieldToAnsweringThread(): void {
  if (process.platform !== 'linux') return;
  try {
    // "<pid>/task/<tid>": the calling thread's id, which setpriority takes as a thread's.
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) os.setPriority(tid, WORKER_NICE);
  } catch {
    // A sandbox without /proc or one that forbids it: the workers keep the default.
  }
}
