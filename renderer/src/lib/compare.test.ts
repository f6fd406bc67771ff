import { describe, expect, it } from 'vitest';
import { compareOffset, facetChange, facetChangeText, shiftRange } from './compare.ts';
import { US } from './time.ts';

describe('compared period', () => {
  it('the previous period is the window’s own length back; 1 day and 1 week are fixed', () => {
    expect(compareOffset('prev', 3 * US.hour)).toBe(3 * US.hour);
    expect(compareOffset('1d', 3 * US.hour)).toBe(86_400_000_000);
    expect(compareOffset('7d', 3 * US.hour)).toBe(604_800_000_000);
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
