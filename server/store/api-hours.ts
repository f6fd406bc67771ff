/**
 * Per-hour request counts of edge logs by (URL id, family bits), for usage.api-counts: one
 * catalog row per hour holding its `[url, families, count]` triples (packed: packHour). A 7-day
 * window reads 168 rows of a few thousand triples instead of every record; the partial first hour of a
 * window is counted from its partition's records. Decoded once, and only from the earliest hour
 * a window asked for; the hours an import adds to stay decoded in memory until they are written
 * to the catalog (as they settle, or at the next save), and after that only if a window reaches them.
 */
import { span } from '../activity.ts';
import type { Db } from './db.ts';
import { VarintReader, VarintWriter } from './varint.ts';

/** hour (µs) -> Map<url * 16 + families, count>, the changes of one batch. */
export type ApiHourBatch = Map<number, Map<number, number>>;

export function addToApiBatch(batch: ApiHourBatch, hour: number, url: number, families: number): void {
  let m = batch.get(hour);
  if (!m) batch.set(hour, (m = new Map()));
  const key = url * 16 + families;
  m.set(key, (m.get(key) ?? 0) + 1);
}

/** An open hour no batch added to in this many merges is written before the save (flushSettled). */
const SETTLED_MERGES = 2;

/**
 * A stored hour starts with these bytes: read as an int32 (the first URL id of an hour stored as
 * plain int32 triples, as before) they are negative, which no URL id is.
 */
const PACKED = [0x00, 0x00, 0x00, 0x80] as const;

/**
 * An hour as stored: its counts sorted by URL id, each as two LEB128 varints (the URL id's step
 * from the one before, then count × 16 + families). An hour's URLs are mostly new ones, whose ids
 * follow each other, and most counts are 1: two or three bytes a triple where plain int32 triples
 * took 12 (33 of the catalog's 84 MiB at 10M edge records, copied at every save).
 */
export function packHour(m: Map<number, number>): Uint8Array {
  const keys = Float64Array.from(m.keys()).sort();
  const out = new VarintWriter(PACKED.length + keys.length * 3).bytes(PACKED);
  let url = 0;
  for (const key of keys) {
    const u = Math.floor(key / 16);
    out.put(u - url).put(m.get(key)! * 16 + (key % 16));
    url = u;
  }
  return out.done();
}

/** Whether a stored hour is packed (packHour), not plain int32 triples (written before). */
const isPacked = (blob: Uint8Array) => blob.length >= PACKED.length && PACKED.every((b, i) => blob[i] === b);

/**
 * Calls `visit` with each (url, families, count) of a stored hour, packed or plain, without
 * decoding the hour into an array first: a window sums a pattern it has not summed from the
 * packed hours (a week at 10M records is 2.2M triples: 75 ms to decode into arrays, 26 MB).
 */
export function forEachTriple(blob: Uint8Array, visit: (url: number, families: number, count: number) => void): void {
  if (!isPacked(blob)) {
    const t = unpackHour(blob);
    for (let k = 0; k < t.length; k += 3) visit(t[k]!, t[k + 1]!, t[k + 2]!);
    return;
  }
  const r = new VarintReader(blob, PACKED.length);
  let url = 0;
  while (r.more()) {
    url += r.take();
    const v = r.take();
    visit(url, v % 16, Math.floor(v / 16));
  }
}

/** A stored hour's triples, packed (packHour) or plain int32 triples (written before). */
export function unpackHour(blob: Uint8Array): Int32Array {
  // Copy: sql.js hands out views whose offset may not be 4-byte aligned.
  if (!isPacked(blob)) return new Int32Array(Uint8Array.from(blob).buffer);
  // Two numbers a triple, each ending with a byte under 0x80.
  let ends = 0;
  for (let i = PACKED.length; i < blob.length; i++) if (blob[i]! < 0x80) ends++;
  const out = new Int32Array((ends >> 1) * 3);
  let k = 0;
  forEachTriple(blob, (url, families, count) => {
    out[k++] = url;
    out[k++] = families;
    out[k++] = count;
  });
  return out;
}

export class ApiHours {
  /**
   * Hours read: every stored hour from `decodedFrom` on, and open hours packed again, each as
   * stored (packHour: two or three bytes a triple). Decoded triples are 12 bytes: a week of hours
   * held 25 MiB decoded at 10M + 10M records, and a window's answer needs them only to sum a
   * pattern it has not summed (server/endpoints/speed-paths.ts keeps the sums).
   */
  private hours = new Map<number, Uint8Array>();
  /** The earliest hour read so far: a window reads only its own hours (a week of 90 days). */
  private decodedFrom = Infinity;
  /** Hours an import is adding to, decoded; written to the catalog by `flush` (at a save). */
  private open = new Map<number, Map<number, number>>();
  /** Open hours whose packed counts in `hours` are out of date. */
  private stale = new Set<number>();
  /** Batches merged so far, and the last one that added to each open hour. */
  private merges = 0;
  private touched = new Map<number, number>();

  constructor(private catalog: () => Db) {}

  /**
   * Every hour from `from` on (µs), in no order, packed (forEachTriple visits its triples; the same
   * array until the hour changes): the stored ones read on first use (only those of the window),
   * open hours packed again when they changed.
   */
  since(from: number): Iterable<[number, Uint8Array]> {
    if (from < this.decodedFrom) {
      const done = span('api-counts: read hours');
      const upTo = this.decodedFrom;
      const rows = Number.isFinite(upTo)
        ? this.catalog().rows('SELECT hour, counts FROM api_hours WHERE hour >= ? AND hour < ?', [from, upTo])
        : this.catalog().rows('SELECT hour, counts FROM api_hours WHERE hour >= ?', [from]);
      // An open hour's counts are its merged ones, not the stored row.
      for (const [hour, blob] of rows) if (!this.open.has(hour as number)) this.hours.set(hour as number, blob as Uint8Array);
      this.decodedFrom = from;
      done();
    }
    for (const hour of this.stale) this.hours.set(hour, packHour(this.open.get(hour)!));
    this.stale.clear();
    return [...this.hours].filter(([hour]) => hour >= from);
  }

  /** One stored hour's triples as the catalog has them (empty when it has none). */
  private stored(hour: number): Int32Array {
    const blob = hour >= this.decodedFrom ? this.hours.get(hour) : this.catalog().rows('SELECT counts FROM api_hours WHERE hour = ?', [hour])[0]?.[0];
    return blob ? unpackHour(blob as Uint8Array) : new Int32Array(0);
  }

  /**
   * Adds one batch's counts in memory: an hour of a busy day holds tens of thousands of
   * distinct URLs, too many to re-encode and rewrite for every batch.
   */
  merge(batch: ApiHourBatch): void {
    this.merges++;
    for (const [hour, add] of batch) {
      this.touched.set(hour, this.merges);
      let merged = this.open.get(hour);
      if (!merged) {
        merged = new Map<number, number>();
        const old = this.stored(hour);
        for (let i = 0; i < old.length; i += 3) merged.set(old[i]! * 16 + old[i + 1]!, old[i + 2]!);
        this.open.set(hour, merged);
      }
      for (const [key, n] of add) merged.set(key, (merged.get(key) ?? 0) + n);
      this.stale.add(hour);
    }
  }

  /** Writes the open hours to the catalog (before it is exported by a save). */
  flush(): void {
    for (const [hour, counts] of this.open) this.write(hour, counts);
  }

  /**
   * Writes the open hours no batch added to in the last SETTLED_MERGES, until `budgetMs` has
   * passed. The save writes every open hour in the one synchronous step that takes the images,
   * where the hours an import had added to since the last save took 85-160 ms at 300k edge
   * records; written as the import goes, only the hours still changing are left for it. An hour
   * that gets records again is read back from its triples, as after a save.
   */
  flushSettled(budgetMs: number): void {
    const until = performance.now() + budgetMs;
    for (const [hour, counts] of this.open) {
      if (this.merges - (this.touched.get(hour) ?? 0) < SETTLED_MERGES) continue;
      this.write(hour, counts);
      if (performance.now() > until) break;
    }
  }

  /**
   * One open hour to the catalog: it is closed, kept in memory only if a window asked for it
   * (from `decodedFrom` on). An import of 90 days at 10M records otherwise left every hour it
   * added in memory, which no answer reads until a window reaches back that far.
   */
  private write(hour: number, counts: Map<number, number>): void {
    const kept = this.hours.get(hour);
    // The array a window summed stays while it holds these counts: its sums stay good.
    const packed = kept && !this.stale.has(hour) ? kept : packHour(counts);
    if (hour >= this.decodedFrom) this.hours.set(hour, packed);
    else this.hours.delete(hour);
    this.stale.delete(hour);
    this.catalog().run('INSERT OR REPLACE INTO api_hours (hour, counts) VALUES (?, ?)', [hour, packed]);
    this.open.delete(hour);
    this.touched.delete(hour);
  }

  /** Bytes of the hours held (a gauge of the activity log). */
  heldBytes(): number {
    let total = 0;
    for (const t of this.hours.values()) total += t.byteLength;
    return total;
  }

  /** Forgets everything in memory (the catalog was restored or rows deleted). */
  reset(): void {
    this.hours = new Map();
    this.decodedFrom = Infinity;
    this.open.clear();
    this.stale.clear();
    this.touched.clear();
  }
}
