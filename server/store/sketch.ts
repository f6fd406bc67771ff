/**
 * A mergeable quantile sketch with relative accuracy (DDSketch's idea): values fall into
 * logarithmic buckets of ratio γ = (1+α)/(1-α), so any quantile read back is within α of the
 * exact value at that rank. With α = 0.5% it meets the endpoint rule's "within 1%" for
 * p95/p99, and per-minute or per-hour sketches merge into any coarser bucket. While it holds
 * at most EXACT_VALUES values it keeps them as they are, so small buckets answer exactly.
 */

export const SKETCH_ALPHA = 0.005;
/** Up to this many values are kept exactly (a minute of one function is often fewer). */
export const EXACT_VALUES = 128;
const GAMMA = (1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA);
const LOG_GAMMA = Math.log(GAMMA);

export class QuantileSketch {
  /** Bucket index -> count, for values > 0. */
  readonly buckets = new Map<number, number>();
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
    else {
      const i = Math.ceil(Math.log(value) / LOG_GAMMA);
      this.buckets.set(i, (this.buckets.get(i) ?? 0) + times);
    }
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
    for (const [i, c] of other.buckets) this.buckets.set(i, (this.buckets.get(i) ?? 0) + c);
  }

  /**
   * The value at nearest rank ceil(p/100 * n), within α, clamped to the exact [min, max]
   * when known (so a one-value bucket answers exactly).
   */
  quantile(p: number, min?: number | null, max?: number | null): number | null {
    if (this.n === 0) return null;
    const rank = Math.max(1, Math.ceil((p / 100) * this.n));
    if (this.exact) return [...this.exact].sort((a, b) => a - b)[rank - 1] ?? null;
    let value = 0;
    if (rank > this.zeros) {
      let seen = this.zeros;
      const indexes = [...this.buckets.keys()].sort((a, b) => a - b);
      for (const i of indexes) {
        seen += this.buckets.get(i)!;
        if (seen >= rank) {
          value = (2 * GAMMA ** i) / (GAMMA + 1);
          break;
        }
      }
    }
    if (min != null && value < min) value = min;
    if (max != null && value > max) value = max;
    return value;
  }

  /**
   * Folded: [zeros, n, i0, c0, i1, c1, ...] as little-endian int32. Exact: [-1, n] as int32
   * followed by the n values as float64.
   */
  encode(): Uint8Array {
    if (this.exact) {
      const out = new Uint8Array(8 + this.exact.length * 8);
      const view = new DataView(out.buffer);
      view.setInt32(0, -1, true);
      view.setInt32(4, this.exact.length, true);
      this.exact.forEach((v, i) => view.setFloat64(8 + i * 8, v, true));
      return out;
    }
    const out = new Int32Array(2 + this.buckets.size * 2);
    out[0] = this.zeros;
    out[1] = this.n;
    let k = 2;
    for (const [i, c] of this.buckets) {
      out[k++] = i;
      out[k++] = c;
    }
    return new Uint8Array(out.buffer);
  }

  static decode(bytes: Uint8Array): QuantileSketch {
    const s = new QuantileSketch();
    // Copy: sql.js hands out views whose offset may not be 4-byte aligned.
    const copy = Uint8Array.from(bytes);
    const view = new DataView(copy.buffer);
    if (view.getInt32(0, true) === -1) {
      const n = view.getInt32(4, true);
      for (let i = 0; i < n; i++) s.exact!.push(view.getFloat64(8 + i * 8, true));
      s.n = n;
      return s;
    }
    s.exact = null;
    const ints = new Int32Array(copy.buffer);
    s.zeros = ints[0] ?? 0;
    s.n = ints[1] ?? 0;
    for (let k = 2; k + 1 < ints.length; k += 2) s.buckets.set(ints[k]!, ints[k + 1]!);
    return s;
  }
}
