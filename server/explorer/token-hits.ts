/**
 * A text search decided from a partition's record words (store/record-tokens.ts): the records
 * that can match, found by looking the search's words up in each segment's dictionary, without
 * reading a record or its text. A plain search made only of word characters is answered
 * exactly; any other search (spaces, punctuation, a pattern's literal parts) is narrowed to its
 * candidates, which the walk then tests by their texts (text-hits.ts) or records.
 */
import type { RecordTokens, WordPart } from '../store/record-tokens.ts';
import type { ExplorerQuery } from './query-types.ts';
import { requiredLiterals } from './regex-literals.ts';
import { isPrintableAscii } from './text-hits.ts';

type Search = NonNullable<ExplorerQuery['q']>;

/** What a search needs of the words: every part matched by some word of the record's. */
export interface WordPlan {
  parts: WordPart[];
  /** Records holding the parts match (no test of their texts is needed). */
  exact: boolean;
}


/**
 * The words a printable ASCII text (lower case) needs, or null when it has no word character.
 * A run of word characters with something else before it starts a word, with something else
 * after it ends one: `wp-login.php` needs a word ending in `wp`, the word `login` and a word
 * starting with `php`.
 */
export function partsOf(text: string): WordPart[] | null {
  const parts: WordPart[] = [];
  for (const m of text.matchAll(/[a-z0-9_]+/g)) {
    const before = m.index > 0;
    const after = m.index + m[0].length < text.length;
    parts.push({ word: m[0], mode: before && after ? 'exact' : before ? 'prefix' : after ? 'suffix' : 'contains' });
  }
  return parts.length ? parts : null;
}

/** How the record words answer a search, or null when they cannot narrow it (no word character in it, or text that is not printable ASCII). */
export function wordPlan(search: Search): WordPlan | null {
  if (search.re) {
    // Every match holds each literal; a match lies within the message or within the URL, so each literal's words are in the record's.
    const parts = requiredLiterals(search.text)
      .filter(isPrintableAscii)
      .flatMap((l) => partsOf(l.toLowerCase()) ?? []);
    return parts.length ? { parts, exact: false } : null;
  }
  if (!isPrintableAscii(search.lower)) return null;
  const parts = partsOf(search.lower);
  if (!parts) return null;
  return { parts, exact: parts.length === 1 && parts[0]!.mode === 'contains' };
}

/** Per record of a partition's record file: not a match, a match (or candidate, unless exact), or not known from the words. */
export const NO_MATCH = 0;
export const MATCH = 1;
export const UNKNOWN = 2;

/** A partition's text search by its record words: record r (row r + 1) as NO_MATCH, MATCH or UNKNOWN. */
export interface WordHits {
  /** Records the words cover: rows past this many are not known from them. */
  readonly records: number;
  readonly of: Uint8Array;
  readonly exact: boolean;
  /** No record is UNKNOWN (every segment read whole). */
  readonly whole: boolean;
}

/**
 * The records of a partition matching `plan` by its record words, every segment read now (the
 * word lists of the classes the parts can be in, and the postings of the words they match). A segment that fails its check leaves its records UNKNOWN
 * (searched by their texts or records), and `damaged` is told where it starts, once.
 */
export function wordHits(tokens: RecordTokens, plan: WordPlan, damaged: (blk: number) => void): WordHits {
  const of = new Uint8Array(tokens.records);
  let told = false;
  for (let j = 0; j < tokens.size; j++) {
    const first = tokens.firstOf(j);
    const n = tokens.recordsOf(j);
    const seg = tokens.segment(j);
    let acc: Uint8Array | null = null;
    for (const part of plan.parts) {
      const one = new Uint8Array(n);
      if (!seg.mark(part, one)) {
        acc = null;
        break;
      }
      if (acc) for (let r = 0; r < n; r++) acc[r]! &= one[r]!;
      else acc = one;
    }
    if (acc) {
      of.set(acc, first);
      continue;
    }
    of.fill(UNKNOWN, first, first + n);
    if (!told) {
      told = true;
      damaged(tokens.startOf(j));
    }
  }
  return { records: tokens.records, of, exact: plan.exact, whole: !told };
}
