import { describe, expect, it } from 'vitest';
import { combinedProgress, matchCountText, searchProgress } from './search-progress.ts';

describe('searchProgress', () => {
  const range = { start: 1_000, end: 2_000 };
  it('an answer without `scanned`, or one that says complete, is final', () => {
    expect(searchProgress(undefined, range)).toEqual({ complete: true, through: null, fraction: 1 });
    expect(searchProgress({ through: 1_500, complete: true }, range).complete).toBe(true);
  });
  it('a walk still running covers `through` to the end', () => {
    expect(searchProgress({ through: 1_750, complete: false }, range)).toEqual({ complete: false, through: 1_750, fraction: 0.25 });
  });
  // Regression: the API said it had scanned back to before the range's start and still called it incomplete.
  it('a walk that reached the range’s start is complete whatever its flag says', () => {
    expect(searchProgress({ through: 1_000, complete: false }, range).complete).toBe(true);
    expect(searchProgress({ through: 400, complete: false }, range).complete).toBe(true);
  });
  it('two answers together are as far as the lesser one', () => {
    const a = searchProgress({ through: 1_750, complete: false }, range);
    const b = searchProgress({ through: 1_250, complete: false }, range);
    expect(combinedProgress(a, b)).toBe(a);
    expect(combinedProgress(searchProgress(undefined, range), b)).toBe(b);
  });
});

describe('matchCountText', () => {
  const running = searchProgress({ through: 1_750, complete: false }, { start: 1_000, end: 2_000 });
  const done = searchProgress(undefined, {});
  // Regression: "0 matching records" above a table saying "No matches yet… Continue".
  it('never states a count as final while the search runs', () => {
    expect(matchCountText(0, running)).toBe('No matches so far');
    expect(matchCountText(1234, running)).toBe('At least 1,234 matching records so far');
  });
  it('exact once complete', () => {
    expect(matchCountText(0, done)).toBe('0 matching records');
    expect(matchCountText(1, done)).toBe('1 matching record');
  });
});
