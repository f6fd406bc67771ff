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
    expect(Array.from(new Int32Array(s.encode().buffer))).toEqual([1, 6, -3, 1, 5, 3, 700, 1]);
  });
});
