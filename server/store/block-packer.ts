/**
 * Packing a record block (record-blocks.ts) off the thread that answers requests: brotli, the
 * block's header and CRC, and its block index bits (block-grams.ts) are computed on a worker
 * thread: about 3 ms of CPU per 256 KiB block on the project's machine (brotli 0.9 ms, the
 * trigram pass 2 ms) that the importing thread no longer spends.
 *
 * The thread that owns the store gathers a block's records straight into shared memory, hands it
 * to the worker (no copy: the worker reads the same bytes) and goes on inserting; it writes the
 * packed block when it needs the block's end (record-blocks.ts `settle`). The bytes are exactly
 * those packing on the thread itself gives (`packBlock` is the one function for both), and the
 * file is still written by this thread, in block order, so the commit protocol is unchanged.
 *
 * Each job has a state word in its shared memory: queued, taken by the worker, packed here, or
 * done. When this thread needs a block the worker has not started, it takes the job back and
 * packs it itself; one the worker is packing it waits for (at most 10 ms, then it packs it itself
 * too and the worker's late answer is dropped). So this thread never waits long on the worker, and
 * a worker that is slow, stuck or dead costs time, never a block. A worker that stops after it
 * started fails the imports running then (import-transaction.ts checks `blockWorkerDeaths`):
 * something is badly wrong (memory, a bug), and a failed import leaves the store as it was.
 *
 * The worker is started from outside the store (parse-host.ts provides how: it is the import's
 * worker entry, in another role), so a store without that (a test, a conversion) packs inline.
 */
import { receiveMessageOnPort, MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import zlib from 'node:zlib';
import { addTotal, span } from '../activity.ts';
import { blockBits } from './block-grams.ts';
import { startWorker } from './worker-start.ts';

/** `[u32 compressed length | CHECKED][u32 raw length]`, then the CRC-32 of the raw bytes, then the compressed bytes. */
export const BLOCK_HEADER = 8;
export const BLOCK_CRC_BYTES = 4;
/** Set in a block's first word when a CRC-32 of its raw bytes follows the header. */
export const BLOCK_CHECKED = 0x80000000;

const BROTLI_PARAMS = { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT };

export interface PackedBlock {
  /** The block's bytes as the file holds them (header, CRC, compressed bytes). */
  block: Uint8Array;
  /** Its block index bits (block-grams.ts). */
  bits: Int32Array;
}

/**
 * A block's file bytes and index bits, from its raw bytes and its file's CRC seed: the same on
 * any thread. The results own their ArrayBuffers (so the worker can transfer them).
 */
export function packBlock(raw: Uint8Array, seed: number): PackedBlock {
  const packed = zlib.brotliCompressSync(raw, { params: { ...BROTLI_PARAMS, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length } });
  const block = Buffer.allocUnsafeSlow(BLOCK_HEADER + BLOCK_CRC_BYTES + packed.length);
  block.writeUInt32LE((packed.length | BLOCK_CHECKED) >>> 0, 0);
  block.writeUInt32LE(raw.length, 4);
  block.writeUInt32LE(zlib.crc32(raw, seed), BLOCK_HEADER);
  packed.copy(block, BLOCK_HEADER + BLOCK_CRC_BYTES);
  return { block, bits: blockBits(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)) };
}

// A job's state word (the first Int32 of its shared memory).
const QUEUED = 0;
const TAKEN = 1;
const MINE = 2;
const DONE = 3;
/** Where a job's raw bytes start in its shared memory (after the state word, 8-aligned). */
const RAW_AT = 8;
/** How long the store's thread waits for a block the worker is packing before packing it itself (ms: a few packs on a busy machine). */
const WAIT_MS = 10;
/** A worker without jobs for this long is ended (the next block starts another). */
const IDLE_MS = 30_000;

/** Store thread -> worker, on the jobs port. */
interface JobMessage {
  id: number;
  memory: SharedArrayBuffer;
  length: number;
  seed: number;
}

/** Worker -> store thread. */
type ResultMessage = { id: number; block: Uint8Array; bits: Int32Array } | { id: number; error: string };

/** The worker's side: packs the jobs that arrive on `port` that the store's thread has not taken back. */
export function serveBlockJobs(port: MessagePort): void {
  port.on('message', (m: JobMessage) => {
    const state = new Int32Array(m.memory, 0, 1);
    if (Atomics.compareExchange(state, 0, QUEUED, TAKEN) !== QUEUED) return; // packed by the store's thread meanwhile
    const started = performance.now();
    try {
      const { block, bits } = packBlock(new Uint8Array(m.memory, RAW_AT, m.length), m.seed);
      port.postMessage({ id: m.id, block, bits } satisfies ResultMessage, [block.buffer as ArrayBuffer, bits.buffer as ArrayBuffer]);
      // This thread's own totals (activity.ts): not a span, since it makes no request wait.
      addTotal('blocks: pack on the worker', performance.now() - started);
    } catch (err) {
      port.postMessage({ id: m.id, error: (err as Error)?.message ?? String(err) } satisfies ResultMessage);
    }
    // After the answer is posted: once the store's thread sees DONE, receiveMessageOnPort has it.
    Atomics.store(state, 0, DONE);
    Atomics.notify(state, 0);
  });
}

/** One block being packed: its raw bytes (kept: the decompressed-block cache holds them once written). */
export interface PackJob {
  readonly raw: Buffer;
  readonly seed: number;
  /** Null while the worker may still be packing it. */
  result: PackedBlock | null;
  readonly id: number;
  readonly state: Int32Array | null;
}

export type BlockWorkerFactory = () => Worker | undefined;

let factory: BlockWorkerFactory | undefined;
let mode: 'worker' | 'inline' = process.env.LOG_EXPLORER_BLOCK_PACKING === 'inline' ? 'inline' : 'worker';
let worker: Worker | null = null;
let port: MessagePort | null = null;
/** The worker said it runs: a death from then on fails the running imports (before, it is only unavailable). */
let ready = false;
let unavailable: string | undefined;
let deaths = 0;
let lastDeath = '';
let nextId = 1;
const jobs = new Map<number, PackJob>();
let idleTimer: NodeJS.Timeout | undefined;
/** Blocks packed by the worker and on the calling thread since the process started. */
const packed = { worker: 0, here: 0 };
let readyWaiters: Array<(ready: boolean) => void> = [];

function settleWaiters(value: boolean): void {
  const waiters = readyWaiters;
  readyWaiters = [];
  for (const w of waiters) w(value);
}

/**
 * How to start the worker (parse-host.ts: the import's worker entry, which serves block jobs
 * when it is sent a `blocks` message with a port). Without it, blocks are packed inline.
 */
export function provideBlockWorker(start: BlockWorkerFactory): void {
  factory = start;
}

/** `inline` packs every block on the calling thread (tests compare both; LOG_EXPLORER_BLOCK_PACKING=inline sets it). */
export function setBlockPacking(next: 'worker' | 'inline'): void {
  mode = next;
  if (next === 'inline') retire();
}

/** Worker deaths since the process started, and the last one's cause (an import fails when the count moves under it). */
export function blockWorkerDeaths(): { count: number; cause: string } {
  return { count: deaths, cause: lastDeath };
}

/** The worker packing blocks now, if any (tests end it on purpose). */
export function activeBlockWorker(): Worker | null {
  return worker;
}

/** Blocks packed by the worker and on the calling thread so far (tests, benches). */
export function blocksPacked(): { worker: number; here: number } {
  return { ...packed };
}

/** Starts the worker if it is not running and resolves once it runs (true), or could not start (false). */
export function blockWorkerReady(): Promise<boolean> {
  warmBlockWorker();
  if (ready) return Promise.resolve(true);
  if (!worker) return Promise.resolve(false);
  return new Promise((resolve) => readyWaiters.push(resolve));
}

/** Why blocks are packed inline in this process (the worker could not start), if they are. */
export function blockWorkerUnavailable(): string | undefined {
  return unavailable;
}

/** Starts the worker ahead of the blocks it will pack (an import begins): its start takes a while. */
export function warmBlockWorker(): void {
  start();
  keepAlive();
}

function start(): MessagePort | null {
  if (port) return port;
  if (mode === 'inline' || !factory || unavailable !== undefined) return null;
  const w = startWorker(factory, 'this build has no worker to pack blocks');
  if (typeof w === 'string') {
    unavailable = w;
    return null;
  }
  const channel = new MessageChannel();
  const self = w;
  worker = self;
  port = channel.port1;
  ready = false;
  // Never started: answers are taken with receiveMessageOnPort, on this thread's schedule.
  port.unref();
  self.unref();
  self.on('message', (m: { type?: string }) => {
    if (m?.type !== 'ready' || worker !== self) return;
    ready = true;
    settleWaiters(true);
  });
  // Without a listener a worker's error would be thrown on this thread; its exit follows.
  self.on('error', (err: Error) => {
    if (worker === self) lastDeath = err.message;
  });
  self.once('exit', (code: number) => {
    if (worker !== self) return; // retired on purpose
    if (ready) {
      deaths++;
      lastDeath = `the record block worker stopped (exit code ${code})${lastDeath ? `: ${lastDeath}` : ''}`;
    } else unavailable = `the record block worker stopped at start (exit code ${code})`;
    forget();
  });
  self.postMessage({ type: 'blocks', port: channel.port2 }, [channel.port2]);
  return port;
}

/** Drops the worker (its jobs are packed here when needed). */
function forget(): void {
  port?.close();
  port = null;
  worker = null;
  ready = false;
  clearTimeout(idleTimer);
  settleWaiters(false);
}

function retire(): void {
  const w = worker;
  forget();
  void w?.terminate().catch(() => undefined);
}

function keepAlive(): void {
  if (!worker) return;
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    if (jobs.size) keepAlive();
    else retire();
  }, IDLE_MS).unref();
}

/**
 * A buffer for `length` raw bytes of a block to be packed: in shared memory when a worker packs
 * (the worker reads it there), else plain.
 */
export function blockBuffer(length: number): Buffer {
  if (!start()) return Buffer.allocUnsafeSlow(length);
  return Buffer.from(new SharedArrayBuffer(RAW_AT + length), RAW_AT, length);
}

/** Hands a block (raw bytes from `blockBuffer`) to the worker; packed here at once when there is none. */
export function submitBlock(raw: Buffer, seed: number): PackJob {
  const p = raw.buffer instanceof SharedArrayBuffer ? start() : null;
  if (!p) return { raw, seed, result: packHere(raw, seed), id: 0, state: null };
  const job: PackJob = { raw, seed, result: null, id: nextId++, state: new Int32Array(raw.buffer as SharedArrayBuffer, 0, 1) };
  jobs.set(job.id, job);
  p.postMessage({ id: job.id, memory: raw.buffer as SharedArrayBuffer, length: raw.length, seed } satisfies JobMessage);
  keepAlive();
  return job;
}

function packHere(raw: Uint8Array, seed: number): PackedBlock {
  const end = span('blocks: pack');
  packed.here++;
  try {
    return packBlock(raw, seed);
  } finally {
    end();
  }
}

/** Takes the answers the worker has posted so far (without waiting). */
export function pollBlocks(): void {
  if (!port) return;
  for (let m = receiveMessageOnPort(port); m; m = port && receiveMessageOnPort(port)) {
    const r = m.message as ResultMessage;
    const job = jobs.get(r.id);
    if (!job) continue; // packed here meanwhile
    jobs.delete(r.id);
    if ('error' in r) throw new Error(`the record block worker could not pack a block: ${r.error}`);
    job.result = { block: r.block, bits: r.bits };
    packed.worker++;
  }
}

/** The job's packed block, whether it is ready (no waiting). */
export function blockPacked(job: PackJob): boolean {
  if (!job.result && job.state) pollBlocks();
  return job.result !== null;
}

/**
 * The job's packed block: the worker's answer if it came, else packed here (a job the worker is
 * packing is waited for WAIT_MS first).
 */
export function takeBlock(job: PackJob): PackedBlock {
  if (blockPacked(job)) return job.result!;
  const state = job.state!;
  const was = Atomics.compareExchange(state, 0, QUEUED, MINE);
  if (was === TAKEN) {
    // Asleep, so the worker has the core (two cores, three busy threads): packing it here too
    // would be the same work twice, measured a third of an edge import's blocks when polled.
    const waited = span('blocks: wait for the worker');
    const until = performance.now() + WAIT_MS;
    for (let left = WAIT_MS; left > 0 && Atomics.load(state, 0) === TAKEN; left = until - performance.now()) Atomics.wait(state, 0, TAKEN, left);
    waited();
    if (blockPacked(job)) return job.result!;
  } else if (was === DONE && blockPacked(job)) return job.result!;
  // Not started by the worker (taken back), or late, or its worker gone: packed here, the same bytes.
  jobs.delete(job.id);
  job.result = packHere(job.raw, job.seed);
  return job.result;
}

/** Forgets a job whose block will not be written (a rolled-back import): the worker skips it if it has not started. */
export function dropBlock(job: PackJob): void {
  if (job.state) Atomics.compareExchange(job.state, 0, QUEUED, MINE);
  jobs.delete(job.id);
}
