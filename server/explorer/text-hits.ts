/**
 * A text search decided from a partition's record texts (store/block-texts.ts) instead of its
 * records: each group of texts is read once, when the walk first reaches one of its records,
 * and every match in it is found in one pass (a plain text with Buffer.indexOf over the
 * group's text; a pattern by testing the records that hold its literal parts). The walk then
 * asks per record whether it matched.
 */
import type { BlockTexts, TextChunk, TextGroup } from '../store/block-texts.ts';
import { messageOf, urlOf } from '../store/block-texts.ts';
import type { ExplorerQuery } from './query-types.ts';
import { textFinder } from '../store/block-search.ts';
import { requiredLiterals } from './regex-literals.ts';

type Search = NonNullable<ExplorerQuery['q']>;

/** Printable ASCII: its bytes are its UTF-8 text, and ASCII letters fold as every search path folds them. */
export const isPrintableAscii = (text: string): boolean => /^[\x20-\x7e]*$/.test(text);
/** A text JSON writes as it is (printable ASCII without quotes or backslashes): found in a line's or record's bytes when its text holds it. */
export const isRawSafe = (text: string): boolean => isPrintableAscii(text) && !/["\\]/.test(text);

/** ASCII letters lower-cased, nothing else. */
export const asciiLower = (text: string): string => text.replace(/[A-Z]+/g, (s) => s.toLowerCase());

/**
 * Whether a text (a message, a URL) holds a match, by the one rule every way of searching
 * follows: a pattern as RE2 runs it (case-insensitive); a printable ASCII text with ASCII letters
 * folded alone, as the record texts, the words and the raw bytes are searched (so `kelvin` does
 * not match the Kelvin sign's `K`); any other text with both lower-cased.
 */
export function textTest(search: Search): (text: string) => boolean {
  const { re, lower } = search;
  if (re) return (text) => re.test(text);
  if (isPrintableAscii(lower)) return (text) => asciiLower(text).includes(lower);
  return (text) => text.toLowerCase().includes(lower);
}

/** A partition's text search by its record texts (see textHits). */
export interface TextHitTest {
  /** Whether the record numbered `record` in the record file (its row less one) matches; undefined when no usable group holds it (search its record). */
  test(record: number): boolean | undefined;
}

/**
 * The text search `search` read from a partition's `texts`: a group's matches are found when
 * the walk first reaches one of its records, in the chunks of its text holding a record that
 * `candidate` (the record's number in the record file) does not rule out (every record without
 * it). A group or chunk that fails its check leaves the group's records to be searched
 * themselves, and `damaged` is told where it starts. (Reading a walk's groups ahead on the
 * thread pool, several at once, was measured slower: 2.4-3.3 s against 1.5-2.3 s for a week
 * of a common word at 1M.)
 */
export function textHits(texts: BlockTexts, search: Search, damaged: (blk: number) => void, candidate?: (record: number) => boolean): TextHitTest {
  const groups = new Map<number, Uint8Array | null>();
  const matches = groupMatcher(search);
  let told = false;
  const settle = (j: number) => {
    const group = texts.group(j);
    let hits: Uint8Array | null = null;
    if (group) {
      const first = texts.firstOf(j);
      const needed = candidate ? (r: number) => candidate(first + r) : () => true;
      try {
        hits = matches(group, needed);
      } catch {
        // A chunk that fails its CRC, or is not its records' texts: the group is damaged.
        hits = null;
      }
    }
    // Once: the file is cut there, so the groups after it fail too.
    if (!hits && !told) {
      told = true;
      damaged(texts.startOf(j));
    }
    groups.set(j, hits);
    return hits;
  };
  let last: Uint8Array | null = null;
  let lastFrom = 0;
  let lastEnd = -1;
  return {
    test(record) {
      if (record < lastFrom || record >= lastEnd) {
        const j = texts.groupOfRecord(record);
        if (j < 0) return undefined;
        const g = groups.get(j);
        last = g === undefined ? settle(j) : g;
        lastFrom = texts.firstOf(j);
        lastEnd = lastFrom + texts.recordsOf(j);
      }
      return last ? last[record - lastFrom] === 1 : undefined;
    },
  };
}

/** The chunks of a group holding a record `needed` says may match, read together and inflated. */
function chunksNeeded(g: TextGroup, needed: (r: number) => boolean): TextChunk[] {
  const out: number[] = [];
  for (let k = 0; k < g.chunks; k++) {
    const [first, end] = g.recordsOf(k);
    for (let r = first; r < end; r++) {
      if (needed(r)) {
        out.push(k);
        break;
      }
    }
  }
  g.prefetch(out);
  return out.map((k) => g.chunk(k));
}

/** The test of a whole group: which of its records match (1) or not (0), looking only at the records `needed` says may. */
function groupMatcher(search: Search): (g: TextGroup, needed: (r: number) => boolean) => Uint8Array {
  if (search.re) {
    const re = search.re;
    // The longest literal every match holds narrows the records tested (none: every record).
    const literal = requiredLiterals(search.text)
      .filter(isPrintableAscii)
      .sort((a, b) => b.length - a.length)[0];
    const find = literal ? textFinder(literal.toLowerCase()) : null;
    return (g, needed) => {
      const out = new Uint8Array(g.n);
      for (const c of chunksNeeded(g, needed)) {
        const candidates = find ? recordsWith(c, find, literal!.length, false) : null;
        for (let i = 0; i < c.n; i++) {
          if ((candidates && !candidates[i]) || !needed(c.first + i)) continue;
          const url = urlOf(g, c.first + i);
          if (re.test(messageOf(g, c.first + i)) || (url !== null && re.test(url))) out[c.first + i] = 1;
        }
      }
      return out;
    };
  }
  const lower = search.lower;
  if (lower === '') return (g) => new Uint8Array(g.n).fill(1);
  if (isPrintableAscii(lower)) {
    const find = textFinder(lower);
    const length = Buffer.byteLength(lower, 'latin1');
    return (g, needed) => {
      const out = new Uint8Array(g.n);
      for (const c of chunksNeeded(g, needed)) {
        out.set(recordsWith(c, find, length, true), c.first);
      }
      return out;
    };
  }
  const test = textTest(search);
  return (g, needed) => {
    const out = new Uint8Array(g.n);
    for (let r = 0; r < g.n; r++) {
      if (!needed(r)) continue;
      const url = urlOf(g, r);
      if (test(messageOf(g, r)) || (url !== null && test(url))) out[r] = 1;
    }
    return out;
  };
}

/**
 * The records of a chunk whose text holds a match of `find` (`length` bytes long): within its
 * message or its URL when `withinPart` (a match across the two is not one), else anywhere in
 * the record's text (a candidate to test further).
 */
function recordsWith(c: TextChunk, find: (block: Buffer, visit: (at: number) => boolean) => void, length: number, withinPart: boolean): Uint8Array {
  const out = new Uint8Array(c.n);
  const { end, msgEnd, urlStart, urlEnd } = c;
  find(c.text, (at) => {
    // The record the match starts in: the first whose bytes end past `at`.
    let lo = 0;
    let hi = c.n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (end[mid]! > at) hi = mid;
      else lo = mid + 1;
    }
    const stop = at + length;
    if (!withinPart ? stop <= end[lo]! : stop <= msgEnd[lo]! || (at >= urlStart[lo]! && stop <= urlEnd[lo]!)) out[lo] = 1;
    return false;
  });
  return out;
}
