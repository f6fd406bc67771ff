/**
 * The records of the sync bench (bench/sync.ts): N edge records over the 7 days before
 * BENCH_NOW, in time order, written once as NDJSON (`bench/data/sync-edge_logs-<N>.ndjson`, the
 * file DuckDB reads too) and served to the fake Management API from that file: a FakeTable that
 * keeps only each row's offset, instant and id in memory (a million records are ~1.7 GB of
 * text) and reads a page's lines when it is asked for.
 */
import fs from 'node:fs';
import path from 'node:path';
import { edgeMaker } from '../server/demo/edge.ts';
import type { DemoRecord } from '../server/demo/generate.ts';
import { Rng } from '../server/demo/random.ts';
import { writeExport } from '../server/demo/write-export.ts';
import type { FakeRecord, FakeTable } from '../server/testing/fake-management-api.ts';
import { MICROS } from '../server/time.ts';
import { BENCH_DIR, BENCH_NOW } from './data.ts';

export const SYNC_DAYS = 7;
/** The first instant of the records; they end before BENCH_NOW (a whole minute). */
export const SYNC_FROM = BENCH_NOW - SYNC_DAYS * MICROS.day;

/**
 * `count` edge records, oldest first: record i at a uniform draw within the i-th of `count`
 * equal slices of the 7 days, so instants strictly increase (for counts up to 6e11) and the
 * file's order is the (timestamp, id) order the remote pages in. The demo generator's edge
 * records (realistic paths, statuses, clients, ~1.7 KB a line); same seed, same bytes.
 */
function* syncRecords(count: number, seed: number): Generator<DemoRecord> {
  const times = new Rng(seed, 0x5bd1e995);
  const make = edgeMaker(new Rng(seed, 1));
  const step = (SYNC_DAYS * MICROS.day) / count;
  for (let i = 0; i < count; i++) yield make(SYNC_FROM + Math.floor((i + times.next()) * step));
}

/** The NDJSON file of `count` records, written once and reused. */
export async function syncFile(count: number, seed = 9): Promise<{ path: string; bytes: number; generatedSeconds: number | null }> {
  const file = path.join(BENCH_DIR, `sync-edge_logs-${count}.ndjson`);
  let generatedSeconds: number | null = null;
  if (!fs.existsSync(file)) {
    fs.mkdirSync(BENCH_DIR, { recursive: true });
    const t = performance.now();
    await writeExport(`${file}.tmp`, syncRecords(count, seed), { source: 'cloudflare.logs.prod', format: 'ndjson' });
    fs.renameSync(`${file}.tmp`, file);
    generatedSeconds = (performance.now() - t) / 1000;
  }
  return { path: file, bytes: fs.statSync(file).size, generatedSeconds };
}

/** The start of each line as writeExport writes it: the id (a UUID, unescaped), then the instant. */
const LINE_START = /^\{"id":"([^"\\]*)","timestamp":(\d+),/;
const CHUNK = 16 << 20;

/** The rows of an NDJSON file of records in (timestamp, id) order, read from the file by position. */
export class NdjsonTable implements FakeTable {
  private constructor(
    private readonly fd: number,
    /** Where each line starts; one more: the file's end. */
    private readonly offsets: Float64Array,
    private readonly instants: Float64Array,
    private readonly ids: string[],
  ) {}

  /** Indexes the file (each line's offset, instant and id); throws on a line out of order. */
  static open(file: string): NdjsonTable {
    const fd = fs.openSync(file, 'r');
    const offsets: number[] = [];
    const instants: number[] = [];
    const ids: string[] = [];
    const buf = Buffer.allocUnsafe(CHUNK);
    let carry = Buffer.alloc(0);
    let base = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, 0, CHUNK, base + carry.length);
      if (n === 0) break;
      const data = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      let start = 0;
      for (let nl = data.indexOf(10, start); nl !== -1; nl = data.indexOf(10, start)) {
        const m = LINE_START.exec(data.toString('utf8', start, Math.min(nl, start + 200)));
        if (!m) throw new Error(`${file}: line ${ids.length + 1} does not start with {"id":"...","timestamp":<µs>,`);
        const ts = Number(m[2]);
        const prev = ids.length - 1;
        if (prev >= 0 && (ts < instants[prev]! || (ts === instants[prev]! && m[1]! <= ids[prev]!))) throw new Error(`${file}: line ${ids.length + 1} is out of (timestamp, id) order`);
        offsets.push(base + start);
        instants.push(ts);
        ids.push(m[1]!);
        start = nl + 1;
      }
      base += start;
      carry = Buffer.from(data.subarray(start));
    }
    if (carry.length) {
      fs.closeSync(fd);
      throw new Error(`${file}: the last line has no line break (a file still being written?)`);
    }
    offsets.push(base);
    return new NdjsonTable(fd, Float64Array.from(offsets), Float64Array.from(instants), ids);
  }

  get length(): number {
    return this.ids.length;
  }

  timestamp(i: number): number {
    return this.instants[i]!;
  }

  id(i: number): string {
    return this.ids[i]!;
  }

  rows(from: number, to: number): FakeRecord[] {
    if (to <= from) return [];
    const start = this.offsets[from]!;
    const buf = Buffer.allocUnsafe(this.offsets[to]! - start);
    fs.readSync(this.fd, buf, 0, buf.length, start);
    return buf
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as FakeRecord);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}
