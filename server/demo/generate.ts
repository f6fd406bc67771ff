/**
 * Deterministic, seeded demo log records for the nine sources, in the ingest shape. The same
 * (source, now, count, seed) always yields the same records, byte for byte (the draws use only
 * integer arithmetic and V8's deterministic Math functions).
 *
 * Records come out newest first (as the log explorer lists and exports them), with timestamps
 * in (now - 90 days, now]: about half in the last 24 hours, ~90% within 7 days, a thin tail to
 * 90 days. Traffic is split unevenly across DEMO_PROJECTS (70% / 24% / 6%).
 */
import { sourceInfo, type SourceName } from '../sources.ts';
import { MICROS } from '../time.ts';
import type { DemoRecord, RecordMaker } from './common.ts';
import { edgeMaker } from './edge.ts';
import { functionEdgeMaker, functionEventMaker } from './functions.ts';
import { deepFreeze, Rng } from './random.ts';
import { gotrueMaker, pgbouncerMaker, postgresMaker, postgrestMaker, realtimeMaker, storageMaker } from './services.ts';

export type { DemoRecord } from './common.ts';
export { DEMO_PROJECTS, type DemoFunction, type DemoProject } from './projects.ts';

/** No generated record is this old or older (timestamps are > now - HISTORY_MICROS). */
export const HISTORY_DAYS = 90;
const HISTORY_MICROS = HISTORY_DAYS * MICROS.day;

export interface GenerateOptions {
  /** The instant records lead up to, integer microseconds UTC; no record is later. */
  now: number;
  count: number;
  seed: number;
}

/**
 * Age (µs before now) at quantile `q` of the age distribution: 50% uniformly within the last
 * day, 40% log-uniformly over days 1-7 (denser towards now), 10% log-uniformly over days 7-90.
 */
export function ageAtQuantile(q: number): number {
  const age =
    q < 0.5
      ? MICROS.day * (q / 0.5)
      : q < 0.9
        ? MICROS.day * Math.pow(7, (q - 0.5) / 0.4)
        : 7 * MICROS.day * Math.pow(HISTORY_DAYS / 7, (q - 0.9) / 0.1);
  return Math.min(Math.floor(age), HISTORY_MICROS - 1);
}

/**
 * `count` timestamps, newest first, drawn i.i.d. from the age distribution and emitted already
 * sorted: the descending order statistics of n uniforms are U(n) = V^(1/n), U(k) = U(k+1)·V^(1/k),
 * so sorting costs O(1) per record and no memory.
 */
function* timestampsNewestFirst(rng: Rng, now: number, count: number): Generator<number> {
  let u = 1;
  for (let k = count; k >= 1; k--) {
    u *= Math.pow(1 - rng.next(), 1 / k); // 1 - next() is in (0, 1]
    yield now - ageAtQuantile(1 - u);
  }
}

/** A 32-bit stream number from the source code, now and count (FNV-1a over their words). */
function streamOf(code: number, now: number, count: number): number {
  let h = 0x811c9dc5;
  for (const word of [code, now % 4294967296, Math.floor(now / 4294967296), count % 4294967296, Math.floor(count / 4294967296)]) {
    h = Math.imul(h ^ word, 0x01000193);
  }
  return h >>> 0;
}

/** Deep-freezes what a builder returns: records share sub-objects, so none may be changed. */
const freezing =
  (make: RecordMaker): RecordMaker =>
  (ts) =>
    deepFreeze(make(ts));

function makerFor(source: SourceName, rng: Rng, now: number): RecordMaker {
  switch (source) {
    case 'cloudflare.logs.prod':
      return edgeMaker(rng); // freezes its records itself, cheaper than walking them
    case 'deno-relay-logs':
      return freezing(functionEdgeMaker(rng, now));
    case 'deno-subhosting-events':
      return freezing(functionEventMaker(rng, now));
    case 'postgres.logs':
      return freezing(postgresMaker(rng));
    case 'gotrue.logs.prod':
      return freezing(gotrueMaker(rng));
    case 'realtime.logs.prod':
      return freezing(realtimeMaker(rng));
    case 'storage.logs.prod.2':
      return freezing(storageMaker(rng));
    case 'postgREST.logs.prod':
      return freezing(postgrestMaker(rng));
    case 'pgbouncer.logs.prod':
      return freezing(pgbouncerMaker(rng));
  }
}

/**
 * Yields `count` records of `source`, newest first. Deterministic for (source, now, count, seed);
 * each source draws from its own stream, so sources are independent under one seed. Records are
 * deeply frozen (they share sub-objects such as an edge client's `cf`); copy one to change it.
 * Edge records are PreSerializedRecord instances: they look and compare like plain objects but
 * carry their JSON text, which writeExport uses instead of stringifying again.
 */
export function* generateRecords(source: SourceName, opts: GenerateOptions): Generator<DemoRecord> {
  const { now, count, seed } = opts;
  if (!Number.isSafeInteger(now) || now <= HISTORY_MICROS) throw new Error(`now must be integer microseconds since the epoch, got ${now}`);
  if (!Number.isSafeInteger(count) || count < 0) throw new Error(`count must be a non-negative integer, got ${count}`);
  if (!Number.isSafeInteger(seed)) throw new Error(`seed must be an integer, got ${seed}`);
  // Every input picks the stream: sets made with another count or now share no ids, so
  // importing two of them never passes different records off as duplicates.
  const stream = streamOf(sourceInfo(source).code, now, count);
  // Separate streams for the timeline and the content: record content never shifts the clock.
  const times = timestampsNewestFirst(new Rng(seed, stream ^ 0x5bd1e995), now, count);
  const make = makerFor(source, new Rng(seed, stream), now);
  for (const ts of times) yield make(ts);
}
