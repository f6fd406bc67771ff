/**
 * The parser side of one import: input -> format detection and reader (formats.ts) -> the
 * source of each record and its shape (route-record.ts) -> normalizeRecord -> packed batches,
 * one per source, posted on the job's port. It runs on the parse worker
 * (parse-worker.ts), or on the importing thread itself in inline mode, with the same messages.
 * It never touches the store: the host only inserts what arrives.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { isMainThread, type MessagePort } from 'node:worker_threads';
import { addTotal } from '../activity.ts';
import { sourceInfo, type SourceInfo, type SourceName } from '../sources.ts';
import type { StoredRecord } from '../store/record.ts';
import { ContentTooLarge, FormatError, openRecordStream, type RawItem, type RecordStream } from './formats.ts';
import { normalizeRecord } from './normalize.ts';
import { packBatch, type FromParser, type ParseJob, type Rejects, type ToParser } from './parse-protocol.ts';
import { importSources, routeRecord, type Routing } from './route-record.ts';

export const MAX_LISTED_ERRORS = 1000;
/**
 * A batch goes out at this many records or raw bytes, or once this much parse time went into it.
 * The host inserts one batch at a time and lets requests run in between, so the batch size
 * bounds how long a request can wait behind the import (10-30 ms of inserts for 1 MiB of edge
 * records); smaller batches cost the store more per record.
 */
const BATCH_RECORDS = 1000;
const BATCH_BYTES = 1024 * 1024;
const BATCH_MS = 20;
/** Batches posted but not yet written: enough to keep the host busy, few enough to bound memory. */
const MAX_UNACKED = 3;
/** Stream input: how often to tell the host how much was taken (it stops forwarding past a window). */
const CREDIT_BYTES = 1024 * 1024;

/** The input's own error, as the stream readers see it; the host rethrows the original. */
class InputError extends Error {}

class Stopped extends Error {
  constructor() {
    super('the import was stopped');
  }
}

const yieldNow = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs one job to its end; every outcome, failures included, is reported as a message. */
export async function runParseJob(job: ParseJob, port: MessagePort): Promise<void> {
  // The parser thread's busy time (reading, parsing, normalizing), for the activity log's stages.
  const busy = isMainThread ? null : performance.eventLoopUtilization();
  try {
    await runJob(job, port);
  } finally {
    if (busy) addTotal('parse: worker busy', performance.eventLoopUtilization(busy).active);
  }
}

async function runJob(job: ParseJob, port: MessagePort): Promise<void> {
  let stopped = false;
  const post = (msg: FromParser, transfer?: ArrayBuffer[]) => {
    if (!stopped) port.postMessage(msg, transfer);
  };
  let unacked = 0;
  // Waiting for input and for an ack can overlap (the CSV and JSON readers pull their input on
  // their own), so every message wakes every waiter and each checks its own condition again.
  let waiters: Array<() => void> = [];
  const waitForHost = () => new Promise<void>((resolve) => waiters.push(resolve));
  const poke = () => {
    const woken = waiters;
    waiters = [];
    for (const w of woken) w();
  };

  // Stream input: chunks queue up as they arrive; the host forwards within a credit window.
  const queue: Buffer[] = [];
  let queueEnded = false;
  let inputError: InputError | undefined;
  let uncredited = 0;
  const credit = () => {
    if (uncredited > 0) post({ type: 'credit', bytes: uncredited });
    uncredited = 0;
  };
  port.on('message', (m: ToParser) => {
    if (m.type === 'ack') unacked--;
    else if (m.type === 'chunk') queue.push(Buffer.from(m.data, 0, m.length));
    else if (m.type === 'end') queueEnded = true;
    else if (m.type === 'input-error') inputError = new InputError(m.message);
    poke();
  });
  // The host closes the port when the import ends, also when it fails on its side or is
  // cancelled: the signal stops decompression too, which may run long on little input (a bomb).
  const stop = new AbortController();
  port.once('close', () => {
    stopped = true;
    stop.abort(new Stopped());
    poke();
  });
  async function* fromHost(): AsyncGenerator<Buffer> {
    for (;;) {
      if (stopped) throw new Stopped();
      const chunk = queue.shift();
      if (chunk) {
        uncredited += chunk.length;
        if (uncredited >= CREDIT_BYTES) credit();
        yield chunk;
        continue;
      }
      if (inputError) throw inputError;
      if (queueEnded) return;
      credit();
      await waitForHost();
    }
  }

  const progress = { bytes: 0, records: 0 };
  async function* countBytes(input: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of input) {
      if (stopped) throw new Stopped();
      progress.bytes += chunk.length;
      yield chunk;
    }
  }

  const file = job.file === undefined ? undefined : fs.createReadStream(job.file, { highWaterMark: 1 << 20 });
  try {
    let stream: RecordStream;
    let first: IteratorResult<RawItem[]>;
    let iterator: AsyncIterator<RawItem[]>;
    try {
      stream = await openRecordStream(countBytes(file ?? fromHost()), { maxContentBytes: job.maxContentBytes, signal: stop.signal });
      iterator = stream.items[Symbol.asyncIterator]();
      first = await iterator.next();
    } catch (err) {
      if (stopped) return;
      if (err instanceof ContentTooLarge) post({ type: 'fail', message: err.message, tooLarge: err.limit });
      else post({ type: 'fail', message: err instanceof FormatError ? err.message : `cannot read the file: ${(err as Error).message}` });
      return;
    }
    const given = job.source ? sourceInfo(job.source) : undefined;
    const named = job.named ? sourceInfo(job.named) : undefined;
    const { primary: info, classic } = importSources(first.done ? [] : first.value, given, named);
    if (!info) {
      const why = first.done ? 'its name, and it held no records' : 'its name or its records';
      post({ type: 'fail', message: `cannot tell the source of this file from ${why}; give it explicitly (source name or alias)` });
      return;
    }
    const routing: Routing = { given, named, classic };
    post({ type: 'start', format: stream.format, source: info.name });

    const noRejects = (): Rejects => ({ rejected: 0, errors: [], omitted: 0, bySource: {} });
    /** Records waiting to be sent, per source (a file of the `logs` table may mix them), in input order. */
    const pending = new Map<SourceName, StoredRecord[]>();
    let batchRecords = 0;
    let batchBytes = 0;
    let batchStarted = performance.now();
    let listed = 0;
    let rejects = noRejects();
    /** `source`: where the rejection counts; the import's source when the record names none it knows. */
    const reject = (where: RawItem, reason: string, source: SourceInfo = info) => {
      rejects.rejected++;
      rejects.bySource![source.name] = (rejects.bySource![source.name] ?? 0) + 1;
      // A note about the whole file (a damaged archive) is listed even past the cap.
      if (listed < MAX_LISTED_ERRORS || where.whole) {
        listed++;
        rejects.errors.push({ ...(where.line !== undefined ? { line: where.line } : {}), ...(where.index !== undefined ? { index: where.index } : {}), reason });
      } else rejects.omitted++;
    };
    /** Posts what is pending, one message per source (the first carries the rejections, the last `done`); returns how many. */
    const send = (done?: { recoded?: RecordStream['recoded'] }): number => {
      const parts: Array<[SourceName, StoredRecord[]]> = [...pending];
      if (parts.length === 0) parts.push([info.name, []]);
      parts.forEach(([source, records], i) => {
        const packed = records.length ? packBatch(records) : undefined;
        const last = i === parts.length - 1;
        post(
          {
            type: 'batch',
            ...(packed ? { batch: packed.batch } : {}),
            ...(source !== info.name ? { source } : {}),
            rejects: i === 0 ? rejects : noRejects(),
            bytes: progress.bytes,
            records: progress.records,
            ...(done && last ? { done } : {}),
          },
          packed?.transfer,
        );
      });
      pending.clear();
      batchRecords = 0;
      batchBytes = 0;
      rejects = noRejects();
      return parts.length;
    };
    const flush = async () => {
      unacked += send();
      // Lets acks and input in (and, inline, the host's inserts and requests).
      await yieldNow();
      while (unacked >= MAX_UNACKED && !stopped) await waitForHost();
      if (stopped) throw new Stopped();
      batchStarted = performance.now();
    };
    const take = async (items: RawItem[]) => {
      for (const item of items) {
        if (item.error !== undefined) {
          reject(item, item.error);
          continue;
        }
        const routed = routeRecord(item.value, item.fromCsv === true, item.raw, routing);
        if ('error' in routed) {
          reject(item, routed.error, routed.source);
          continue;
        }
        const n = normalizeRecord(routed.value, routed.source, job.project, routed.fromCsv, routed.raw);
        if ('error' in n) {
          reject(item, n.error, routed.source);
          continue;
        }
        progress.records++;
        let batch = pending.get(routed.source.name);
        if (!batch) pending.set(routed.source.name, (batch = []));
        batch.push(n.record);
        batchRecords++;
        batchBytes += n.record.raw.length;
        if (batchRecords >= BATCH_RECORDS || batchBytes >= BATCH_BYTES || performance.now() - batchStarted > BATCH_MS) await flush();
      }
    };
    try {
      if (!first.done) await take(first.value);
      for (;;) {
        const next = await iterator.next();
        if (stopped) throw new Stopped();
        if (next.done) break;
        await take(next.value);
      }
      const recoded = stream.recoded;
      send({ ...(recoded && recoded.lines > 0 ? { recoded: { ...recoded } } : {}) });
    } catch (err) {
      if (err instanceof Stopped || stopped) return;
      if (err instanceof ContentTooLarge) {
        post({ type: 'error', kind: 'too-large', message: err.message, tooLarge: err.limit });
        return;
      }
      const e = err as NodeJS.ErrnoException;
      const kind = err instanceof FormatError ? 'format' : err instanceof InputError || e?.cause instanceof InputError ? 'input' : 'internal';
      post({ type: 'error', kind, message: e?.message ?? String(err), ...(e?.stack ? { stack: e.stack } : {}), ...(typeof e?.code === 'string' ? { code: e.code } : {}) });
    } finally {
      // Ends the reader chain (and its inflater) now rather than at garbage collection.
      void iterator.return?.(undefined)?.catch(() => undefined);
    }
  } finally {
    file?.destroy();
    port.removeAllListeners('message');
  }
}
