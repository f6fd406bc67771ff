import { describe, expect, it } from 'vitest';
import { finderOf } from './search-worker.ts';

describe("the search worker's finders", () => {
  const places = (text: string, bytes: string) => {
    const out: number[] = [];
    finderOf(text)(Buffer.from(bytes, 'latin1'), (at) => {
      out.push(at);
      return false;
    });
    return out.sort((a, b) => a - b);
  };

  it('keep what a finder learnt from one job for the next job of the same text (a dense text is searched the dense way from its second chunk on)', () => {
    // Overlapping places come only from the sparse way (block-search.ts): the way a finder is in shows.
    expect(places('aa', `aaa${' '.repeat(2000)}`)).toEqual([0, 1]);
    places('aa', 'a'.repeat(2000));
    expect(places('aa', 'aaa')).toEqual([0]);
    // Another text has a finder of its own, which starts the sparse way.
    expect(places('bb', 'bbb')).toEqual([0, 1]);
    expect(places('aa', 'aaa')).toEqual([0]);
  });

  it('keep a few texts, the least recently used dropped first', () => {
    const first = finderOf('kept-0');
    for (let i = 1; i < 8; i++) finderOf(`kept-${i}`);
    expect(finderOf('kept-0')).toBe(first);
    for (let i = 8; i < 16; i++) finderOf(`kept-${i}`);
    expect(finderOf('kept-0')).not.toBe(first);
  });
});
