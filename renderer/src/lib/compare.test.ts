import { describe, expect, it } from 'vitest';
import { compareOffset, comparedBuckets, facetChange, facetChangeOf, facetChangeText, shiftRange, withCompare, type CompareChoice } from './compare.ts';
import { MICROS } from '../../../contract/instants.ts';

describe('compared period', () => {
  it('the previous period is the window’s own length back; 1 day and 1 week are fixed', () => {
    expect(compareOffset('prev', 3 * MICROS.hour)).toBe(3 * MICROS.hour);
    expect(compareOffset('1d', 3 * MICROS.hour)).toBe(86_400_000_000);
    expect(compareOffset('7d', 3 * MICROS.hour)).toBe(604_800_000_000);
    expect(shiftRange({ start: 100, end: 200 }, 100)).toEqual({ start: 0, end: 100 });
    expect(shiftRange({ end: 200 }, 50)).toEqual({ end: 150 });
  });
});

describe('facetChange', () => {
  const prev = [
    { value: 200, count: 40 },
    { value: 404, count: 10 },
    { value: 500, count: 4 },
  ];
  it('a value listed before: the difference and the ratio', () => {
    expect(facetChange(50, 200, prev, 0)).toEqual({ kind: 'change', diff: 10, previous: 40, ratio: 0.25 });
    expect(facetChangeText(facetChange(50, 200, prev, 0))).toBe('+25%');
    expect(facetChangeText(facetChange(5, 404, prev, 0))).toBe('−50%');
    expect(facetChangeText(facetChange(4, 500, prev, 0))).toBe('±0');
  });
  it('a value the earlier answer did not list: new when it listed every value, else at most its smallest count', () => {
    expect(facetChange(3, 503, prev, 0)).toEqual({ kind: 'new' });
    expect(facetChangeText(facetChange(3, 503, prev, 0))).toBe('new');
    expect(facetChange(3, 503, prev, 7)).toEqual({ kind: 'unknown', atMost: 4 });
  });
  it('a change from zero has no percentage: the count is shown', () => {
    expect(facetChangeText(facetChange(3, 'x', [{ value: 'x', count: 0 }], 0))).toBe('+3');
  });
  it('records without the field (null) compare with null', () => {
    expect(facetChange(6, null, [{ value: null, count: 3 }], 0)).toMatchObject({ kind: 'change', diff: 3, ratio: 1 });
  });
});

describe('comparedBuckets', () => {
  it('pairs each bucket with the earlier one exactly the offset before it; none where the earlier answer has none', () => {
    const current = [{ timestamp: 1000 }, { timestamp: 1010 }, { timestamp: 1020 }];
    const previous = [
      { timestamp: 990, count: 7 },
      { timestamp: 1000, count: 3 },
      { timestamp: 1005, count: 9 },
    ];
    // Offset 10: 990 stands under 1000 and 1000 under 1010; 1005 falls between buckets, 1020 has none.
    expect(comparedBuckets(current, previous, 10)).toEqual([{ timestamp: 990, count: 7 }, { timestamp: 1000, count: 3 }, null]);
    expect(comparedBuckets([], previous, 10)).toEqual([]);
  });
});

describe('withCompare', () => {
  it('sets the compared period, or takes the key out so the URL leaves it off', () => {
    const state: { interval: string; compare?: CompareChoice } = { interval: '1day' };
    expect(withCompare(state, '7d')).toEqual({ interval: '1day', compare: '7d' });
    const off = withCompare({ ...state, compare: 'prev' }, undefined);
    expect(off).toEqual({ interval: '1day' });
    expect('compare' in off).toBe(false);
  });
});

describe('facetChangeOf', () => {
  it('no compared answer yet: no change; else the value’s change in that field', () => {
    const v = { value: 'DE', count: 6 };
    expect(facetChangeOf(undefined, 'country', v)).toBeNull();
    expect(facetChangeOf({ result: { country: [{ value: 'DE', count: 4 }] }, others: {} }, 'country', v)).toEqual({ kind: 'change', diff: 2, previous: 4, ratio: 0.5 });
    // A field the compared answer does not hold listed nothing and had no others: the value is new.
    expect(facetChangeOf({ result: {}, others: {} }, 'country', v)).toEqual({ kind: 'new' });
  });
});
