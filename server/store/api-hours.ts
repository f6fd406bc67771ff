/**
 * Per-hour request counts of edge logs by (URL id, family bits), for usage.api-counts: one
 * catalog row per hour holding `[url, families, count]` triples as int32. A 7-day window reads
 * 168 rows of a few thousand triples instead of every record; the partial first hour of a
 * window is counted from its partition's records. Decoded once, then kept in step by imports.
 */
import type { Db } from './db.ts';

/** hour (µs) -> Map<url * 16 + families, count>, the changes of one batch. */
export type ApiHourBatch = Map<number, Map<number, number>>;

export function addToApiBatch(batch: ApiHourBatch, hour: number, url: number, families: number): void {
  let m = batch.get(hour);
  if (!m) batch.set(hour, (m = new Map()));
  const key = url * 16 + families;
  m.set(key, (m.get(key) ?? 0) + 1);
}

function encode(m: Map<number, number>): Int32Array {
  const out = new Int32Array(m.size * 3);
  let i = 0;
  for (const [key, n] of m) {
    out[i++] = Math.floor(key / 16);
    out[i++] = key % 16;
    out[i++] = n;
  }
  return out;
}

function decode(blob: Uint8Array): Int32Array {
  // Copy: sql.js hands out views whose offset may not be 4-byte aligned.
  return new Int32Array(Uint8Array.from(blob).buffer);
}

export class ApiHours {
  private hours: Map<number, Int32Array> | null = null;

  constructor(private catalog: () => Db) {}

  /** Every hour's triples, decoded on first use. */
  all(): Map<number, Int32Array> {
    if (!this.hours) {
      this.hours = new Map();
      for (const [hour, blob] of this.catalog().rows('SELECT hour, counts FROM api_hours')) this.hours.set(hour as number, decode(blob as Uint8Array));
    }
    return this.hours;
  }

  /** Adds one batch's counts; runs inside the catalog transaction. */
  merge(batch: ApiHourBatch): void {
    const hours = this.all();
    for (const [hour, add] of batch) {
      const merged = new Map<number, number>();
      const old = hours.get(hour);
      if (old) for (let i = 0; i < old.length; i += 3) merged.set(old[i]! * 16 + old[i + 1]!, old[i + 2]!);
      for (const [key, n] of add) merged.set(key, (merged.get(key) ?? 0) + n);
      const packed = encode(merged);
      this.catalog().run('INSERT OR REPLACE INTO api_hours (hour, counts) VALUES (?, ?)', [hour, new Uint8Array(packed.buffer)]);
      hours.set(hour, packed);
    }
  }

  /** Forgets the decoded copy (the catalog was restored or rows deleted). */
  reset(): void {
    this.hours = null;
  }
}
