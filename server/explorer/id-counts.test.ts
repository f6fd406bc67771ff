import { describe, expect, it } from 'vitest';
import { IdCounts } from './id-counts.ts';

describe('IdCounts', () => {
  it('counts ids of any size as a Map would, drains each once, and starts empty again', () => {
    const ids = Int32Array.from([3, -1, 5000, 3, 70000, -1, 5000, 3, 0]);
    const pass = (i: number) => i !== 7;
    const want = new Map<number, number>();
    ids.forEach((v, i) => v !== -1 && pass(i) && want.set(v, (want.get(v) ?? 0) + 2));
    const c = new IdCounts(4);
    c.addRows(ids, 0, ids.length, pass, 2, -1);
    const got = new Map<number, number>();
    c.drain((id, n) => got.set(id, (got.get(id) ?? 0) + n));
    expect(got).toEqual(want);
    c.drain(() => expect.unreachable('drained twice'));
    // A count that returns to zero is not reported; one added after is, once.
    c.add(9, 1);
    c.add(9, -1);
    c.add(9, 1);
    c.add(2);
    const again: Array<[number, number]> = [];
    c.drain((id, n) => again.push([id, n]));
    expect(again.sort((a, b) => a[0] - b[0])).toEqual([
      [2, 1],
      [9, 1],
    ]);
    expect(c.counts.every((n) => n === 0)).toBe(true);
  });
});
