/**
 * A mergeable quantile sketch with relative accuracy (DDSketch's idea): values fall into
 * logarithmic buckets of ratio γ = (1+α)/(1-α), so any quantile read back is within α of the
 * exact value at that rank. With α = 0.5% it meets the endpoint rule's "within 1%" for
 * p95/p99, and per-minute or per-hour sketches merge into any coarser bucket. While it holds
 * at most EXACT_VALUES values it keeps them as they are, so small buckets answer exactly.
 */

import { unzigzag, VarintReader, VarintWriter, zigzag } from './varint.ts';

export const SKETCH_ALPHA = 0.005;
/**
 * The first int32 of a packed exact or folded sketch (see encode): -1 is the float64 exact form,
 * and the older int32 folded form starts with its zeros count (never negative).
 */
const PACKED_EXACT = -2;
const PACKED_FOLDED = -3;
function header(form: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, form, true);
  return out;
}
/** Up to this many values are kept exactly (a minute of one function is often fewer). */
export const EXACT_VALUES = 128;
const GAMMA = (1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA);
const LOG_GAMMA = Math.log(GAMMA);

export class QuantileSketch {
  /**
   * Counts of values > 0 by bucket index, dense from index `lo` (a few thousand indexes cover
   * a microsecond to an hour): merging and reading quantiles walk an array, with no sort.
   */
  private counts = new Float64Array(0);
  private lo = 0;
  /** Values <= 0 (a 0 ms execution is exact). */
  zeros = 0;
  n = 0;
  /** The values themselves while there are few; null once folded into buckets. */
  exact: number[] | null = [];

  add(value: number, times = 1): void {
    if (this.exact) {
      for (let i = 0; i < times; i++) this.exact.push(value);
      this.n += times;
      if (this.exact.length > EXACT_VALUES) this.fold();
      return;
    }
    this.addToBuckets(value, times);
    this.n += times;
  }

  /** Moves exact values into the buckets (past EXACT_VALUES, or merging with a folded one). */
  private fold(): void {
    const values = this.exact;
    if (!values) return;
    this.exact = null;
    for (const v of values) this.addToBuckets(v, 1);
  }

  private addToBuckets(value: number, times: number): void {
    if (value <= 0) this.zeros += times;
    else this.addToIndex(Math.ceil(Math.log(value) / LOG_GAMMA), times);
  }

  private addToIndex(i: number, times: number): void {
    this.cover(i, i);
    this.counts[i - this.lo] = this.counts[i - this.lo]! + times;
  }

  /** Grows the dense counts to hold indexes from..to, with room to spare on the side that grew. */
  private cover(from: number, to: number): void {
    const hi = this.lo + this.counts.length - 1;
    if (this.counts.length && from >= this.lo && to <= hi) return;
    const lo = this.counts.length ? Math.min(this.lo, from - (from < this.lo ? 64 : 0)) : from - 16;
    const top = this.counts.length ? Math.max(hi, to + (to > hi ? 64 : 0)) : to + 16;
    const grown = new Float64Array(top - lo + 1);
    if (this.counts.length) grown.set(this.counts, this.lo - lo);
    this.counts = grown;
    this.lo = lo;
  }

  merge(other: QuantileSketch): void {
    if (this.exact && other.exact && this.exact.length + other.exact.length <= EXACT_VALUES) {
      this.exact.push(...other.exact);
      this.n += other.n;
      return;
    }
    this.fold();
    if (other.exact) {
      for (const v of other.exact) this.addToBuckets(v, 1);
      this.n += other.n;
      return;
    }
    this.zeros += other.zeros;
    this.n += other.n;
    if (!other.counts.length) return;
    this.cover(other.lo, other.lo + other.counts.length - 1);
    const at = other.lo - this.lo;
    for (let k = 0; k < other.counts.length; k++) this.counts[at + k] = this.counts[at + k]! + other.counts[k]!;
  }

  /**
   * The value at nearest rank ceil(p/100 * n), within α, clamped to the exact [min, max]
   * when known (so a one-value bucket answers exactly).
   */
  quantile(p: number, min?: number | null, max?: number | null): number | null {
    return this.quantiles([p], min, max)[0]!;
  }

  /**
   * Several quantiles (`ps` ascending) from one walk of the counts: a folded sketch holds
   * hundreds of buckets, and sorting them for each quantile of each bucket of an answer was
   * most of a day of hourly buckets' time.
   */
  quantiles(ps: readonly number[], min?: number | null, max?: number | null): Array<number | null> {
    if (ps.some((p, i) => i > 0 && p < ps[i - 1]!)) throw new Error('quantiles are read in ascending order');
    if (this.n === 0) return ps.map(() => null);
    const ranks = ps.map((p) => Math.max(1, Math.ceil((p / 100) * this.n)));
    if (this.exact) {
      const sorted = Float64Array.from(this.exact).sort();
      return ranks.map((r) => sorted[r - 1] ?? null);
    }
    const out: number[] = [];
    let seen = this.zeros;
    let k = 0;
    for (const rank of ranks) {
      let value = 0;
      if (rank > this.zeros) {
        while (k < this.counts.length && seen < rank) seen += this.counts[k++]!;
        // The bucket that reached the rank is the last one added.
        if (seen >= rank) value = (2 * GAMMA ** (this.lo + k - 1)) / (GAMMA + 1);
      }
      if (min != null && value < min) value = min;
      if (max != null && value > max) value = max;
      out.push(value);
    }
    return out;
  }

  /**
   * Packed (the first int32 says which form; older forms are still read by decode):
   * - exact whole numbers: int32 PACKED_EXACT, varint n, each value zigzag-varint (an execution
   *   time in whole ms takes one or two bytes, where a float64 took eight);
   * - exact otherwise: int32 -1, int32 n, the n values as float64;
   * - folded: int32 PACKED_FOLDED, varints zeros, n and the bucket count, then per bucket its
   *   index (the first zigzag-varint, each next as its step from the one before) and its count
   *   (two or three bytes a bucket, where two int32s took eight).
   * At 10M function edge records the catalog's hour sketches took 17 MB as int32 and float64.
   */
  encode(): Uint8Array {
    if (this.exact) {
      if (this.exact.every((v) => Number.isInteger(v) && Math.abs(v) < 2 ** 52)) {
        const w = new VarintWriter(8 + this.exact.length * 2).bytes(header(PACKED_EXACT)).put(this.exact.length);
        for (const v of this.exact) w.put(zigzag(v));
        return w.done();
      }
      const out = new Uint8Array(8 + this.exact.length * 8);
      const view = new DataView(out.buffer);
      view.setInt32(0, -1, true);
      view.setInt32(4, this.exact.length, true);
      this.exact.forEach((v, i) => view.setFloat64(8 + i * 8, v, true));
      return out;
    }
    let used = 0;
    for (let k = 0; k < this.counts.length; k++) if (this.counts[k]) used++;
    const w = new VarintWriter(16 + used * 3).bytes(header(PACKED_FOLDED)).put(this.zeros).put(this.n).put(used);
    let prev: number | null = null;
    for (let k = 0; k < this.counts.length; k++) {
      if (!this.counts[k]) continue;
      const index = this.lo + k;
      w.put(prev === null ? zigzag(index) : index - prev);
      w.put(this.counts[k]!);
      prev = index;
    }
    return w.done();
  }

  static decode(bytes: Uint8Array): QuantileSketch {
    const s = new QuantileSketch();
    // Copy: sql.js hands out views whose offset may not be 4-byte aligned.
    const copy = Uint8Array.from(bytes);
    const view = new DataView(copy.buffer);
    const form = copy.length >= 4 ? view.getInt32(0, true) : 0;
    if (form === PACKED_EXACT) {
      const r = new VarintReader(copy, 4);
      const n = r.take();
      for (let i = 0; i < n; i++) s.exact!.push(unzigzag(r.take()));
      s.n = n;
      return s;
    }
    if (form === PACKED_FOLDED) {
      s.exact = null;
      const r = new VarintReader(copy, 4);
      s.zeros = r.take();
      s.n = r.take();
      const used = r.take();
      const pairs: number[] = [];
      let index = 0;
      for (let b = 0; b < used; b++) {
        index = b === 0 ? unzigzag(r.take()) : index + r.take();
        pairs.push(index, r.take());
      }
      if (pairs.length) s.cover(pairs[0]!, pairs[pairs.length - 2]!);
      for (let k = 0; k < pairs.length; k += 2) s.addToIndex(pairs[k]!, pairs[k + 1]!);
      return s;
    }
    if (form === -1) {
      const n = view.getInt32(4, true);
      for (let i = 0; i < n; i++) s.exact!.push(view.getFloat64(8 + i * 8, true));
      s.n = n;
      return s;
    }
    s.exact = null;
    const ints = new Int32Array(copy.buffer);
    s.zeros = ints[0] ?? 0;
    s.n = ints[1] ?? 0;
    // Pairs in any order (older files kept a map's order): the range first, then one array.
    let from = Infinity;
    let to = -Infinity;
    for (let k = 2; k + 1 < ints.length; k += 2) {
      from = Math.min(from, ints[k]!);
      to = Math.max(to, ints[k]!);
    }
    if (from <= to) s.cover(from, to);
    for (let k = 2; k + 1 < ints.length; k += 2) s.addToIndex(ints[k]!, ints[k + 1]!);
    return s;
  }
}
