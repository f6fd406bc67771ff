/** Every bucket width a histogram of a window can take is summed from the search walk's fine bins. */
import { describe, expect, it } from 'vitest';
import { bucketWidth, fineWidth, MAX_BUCKETS } from './buckets.ts';

const S = 1_000_000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;

describe('fine bins of a search walk', () => {
  it('divide every width a histogram of the window can take, and are as wide as that allows', () => {
    // Window length -> the widest bin expected: the narrowest round width covering it in at most
    // 500 buckets, when every wider round width is a whole number of it (10 minutes is not: 15).
    const cases: Array<[number, number]> = [
      [MIN, S], // 0.12 s a bucket: 1 s
      [H, 10 * S], // 7.2 s: 10 s (30 s, 1 min... are multiples)
      [D, 5 * MIN], // 2.9 min: 5 min (10 and 15 min are multiples)
      [3 * D, 5 * MIN], // 8.6 min: 10 min, which 15 min is not a multiple of
      [7 * D, 30 * MIN], // 20.2 min: 30 min
      [30 * D, 3 * H], // 86 min: 3 h
      [365 * D, D], // 17.5 h: 1 day
      [20 * 365 * D, 7 * D],
    ];
    const start = Date.UTC(2026, 10, 1) * 1000 - 1;
    for (const [span, want] of cases) {
      const end = start + span;
      const fine = fineWidth(start, end);
      expect(fine, `${span / S} s`).toBe(want);
      for (let buckets = 1; buckets <= MAX_BUCKETS; buckets++) expect(bucketWidth(start, end, buckets) % fine, `${span / S} s, ${buckets} buckets`).toBe(0);
    }
    // A week's search counts 336 bins per key (120,960 at one per 5 seconds before).
    expect(Math.ceil((7 * D) / fineWidth(start, start + 7 * D))).toBe(336);
  });
});
