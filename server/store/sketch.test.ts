import { describe, expect, it } from 'vitest';
import { EXACT_VALUES, QuantileSketch, SKETCH_ALPHA } from './sketch.ts';

/** Nearest rank ceil(p/100 n) of the values, computed apart from the sketch. */
function nearestRank(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]!;
}

/** A seeded stream of execution-time-like values: zeros, tiny, typical and a long tail. */
function valuesOf(seed: number, n: number): number[] {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  return Array.from({ length: n }, () => {
    const u = next();
    if (u < 0.03) return 0;
    if (u < 0.1) return next() * 2;
    if (u < 0.95) return 5 + next() * 400;
    return 400 + next() ** 3 * 60_000;
  });
}

const PS = [1, 50, 90, 95, 99, 99.9, 100];

describe('QuantileSketch', () => {
  it('answers every quantile exactly while it keeps the values, and within α once folded; several at once as one at a time', () => {
    for (const [seed, n] of [
      [1, 1],
      [2, 7],
      [3, EXACT_VALUES],
      [4, EXACT_VALUES + 1],
      [5, 5_000],
      [6, 40_000],
    ] as const) {
      const values = valuesOf(seed, n);
      const s = new QuantileSketch();
      for (const v of values) s.add(v);
      const all = s.quantiles(PS);
      PS.forEach((p, i) => {
        const want = nearestRank(values, p);
        expect(s.quantile(p), `n=${n} p${p}`).toBe(all[i]);
        if (n <= EXACT_VALUES) expect(all[i], `n=${n} p${p}`).toBe(want);
        else if (want === 0) expect(all[i]).toBe(0);
        else expect(Math.abs(all[i]! - want) / want, `n=${n} p${p}: ${all[i]} against ${want}`).toBeLessThanOrEqual(SKETCH_ALPHA + 1e-12);
      });
    }
  });

  it('merged sketches answer as one over all their values; min and max clamp; an empty one answers null', () => {
    const a = valuesOf(10, 3_000);
    const b = valuesOf(11, 50);
    const sa = new QuantileSketch();
    const sb = new QuantileSketch();
    for (const v of a) sa.add(v);
    for (const v of b) sb.add(v);
    const merged = QuantileSketch.decode(sa.encode());
    merged.merge(QuantileSketch.decode(sb.encode()));
    const all = [...a, ...b];
    const [p95, p99] = merged.quantiles([95, 99]);
    for (const [got, p] of [[p95, 95], [p99, 99]] as const) {
      const want = nearestRank(all, p);
      expect(Math.abs(got! - want) / want).toBeLessThanOrEqual(SKETCH_ALPHA + 1e-12);
    }
    expect(merged.quantiles([95, 99], 10, 20)).toEqual([20, 20]);
    expect(merged.quantiles([0.001], 3, null)[0]).toBe(3);
    expect(new QuantileSketch().quantiles([95, 99])).toEqual([null, null]);
    expect(() => merged.quantiles([99, 95])).toThrow(/ascending/);
  });

  it('reads a folded sketch whose buckets were written in any order (stores written before they were sorted)', () => {
    // zeros 1, n 6: one value in bucket 700, three in 5, one in -3 (below 1 ms), written out of order.
    const bytes = new Uint8Array(Int32Array.from([1, 6, 700, 1, -3, 1, 5, 3]).buffer);
    const s = QuantileSketch.decode(bytes);
    const mid = (i: number) => (2 * ((1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA)) ** i) / ((1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA) + 1);
    expect(s.quantiles([10, 30, 50, 80, 100])).toEqual([0, mid(-3), mid(5), mid(5), mid(700)]);
    // Written back sorted, it reads the same.
    expect(QuantileSketch.decode(s.encode()).quantiles([10, 30, 50, 80, 100])).toEqual(s.quantiles([10, 30, 50, 80, 100]));
    // Packed, by hand: int32 -3; zeros 1, n 6, 3 buckets; -3 zigzag 5 with 1; +8 (5) with 3; +695 (700) with 1.
    expect(Array.from(s.encode())).toEqual([0xfd, 0xff, 0xff, 0xff, 1, 6, 3, 5, 1, 8, 3, 0xb7, 0x05, 1]);
  });

  it('packs exact whole-number values in a byte or two each, and reads them back as they were', () => {
    const values = [0, 1, -1, 127, 128, -129, 2 ** 51, -(2 ** 51), 42, 42];
    const s = new QuantileSketch();
    for (const v of values) s.add(v);
    const bytes = s.encode();
    // int32 -2, n (one byte), then the zigzag varints, by hand: 1+1+1+2+2+2+8+8+1+1 bytes.
    expect(bytes.length).toBe(4 + 1 + 27);
    expect(Array.from(bytes.subarray(0, 5))).toEqual([0xfe, 0xff, 0xff, 0xff, values.length]);
    const back = QuantileSketch.decode(bytes);
    expect(back.exact).toEqual(values);
    expect(back.n).toBe(values.length);
  });

  it('keeps exact values with fractions as float64, and reads the older float64 form of whole numbers', () => {
    const s = new QuantileSketch();
    for (const v of [1.5, 2, 1e-9]) s.add(v);
    expect(new DataView(s.encode().buffer).getInt32(0, true)).toBe(-1);
    expect(QuantileSketch.decode(s.encode()).exact).toEqual([1.5, 2, 1e-9]);
    const older = new Uint8Array(8 + 2 * 8);
    const view = new DataView(older.buffer);
    view.setInt32(0, -1, true);
    view.setInt32(4, 2, true);
    view.setFloat64(8, 30, true);
    view.setFloat64(16, 7, true);
    expect(QuantileSketch.decode(older).quantiles([50, 100])).toEqual([7, 30]);
  });

  it('a folded sketch reads back the same counts, packed in under half the bytes of int32 pairs', () => {
    for (const seed of [21, 22, 23]) {
      const s = new QuantileSketch();
      for (const v of valuesOf(seed, 5_000)) s.add(v);
      s.add(0, 7);
      const bytes = s.encode();
      const back = QuantileSketch.decode(bytes);
      const ps = [1, 5, 25, 50, 75, 95, 99, 99.9, 100];
      expect(back.quantiles(ps), `seed ${seed}`).toEqual(s.quantiles(ps));
      expect(back.n).toBe(s.n);
      expect(back.zeros).toBe(s.zeros);
      const buckets = new Set(valuesOf(seed, 5_000).filter((v) => v > 0).map((v) => Math.ceil(Math.log(v) / Math.log((1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA))))).size;
      expect(bytes.length, `seed ${seed}: ${buckets} buckets`).toBeLessThan((8 + 8 * buckets) / 2);
    }
  });
});
