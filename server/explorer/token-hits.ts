/**
 * A text search decided from a partition's record words (store/record-tokens.ts): the records
 * that can match, found by looking the search's words up in each segment's dictionary, without
 * reading a record or its text. A plain search made only of word characters is answered
 * exactly; any other search (spaces, punctuation, a pattern's literal parts) is narrowed to its
 * candidates, which the walk then tests by their texts (text-hits.ts) or records.
 */
import type { LogStore } from '../store/log-store.ts';
import type { Partition } from '../store/partition.ts';
import { markWords, type RecordTokens, type WordPart } from '../store/record-tokens.ts';
import { readHere, wordMarksOffThread, type SearchJob } from '../store/search-worker.ts';
import type { WordMarks } from '../store/record-tokens.ts';
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
 * The records of a partition matching `plan` by its record words, every segment read now on
 * this thread (markWords). A segment that fails its check leaves its records UNKNOWN (searched
 * by their texts or records), and `damaged` is told where it starts, once.
 */
export function wordHits(tokens: RecordTokens, plan: WordPlan, damaged: (blk: number) => void): WordHits {
  readHere();
  const { records, of, damagedAt } = markWords(tokens, plan.parts);
  if (damagedAt !== null) damaged(damagedAt);
  return { records, of, exact: plan.exact, whole: damagedAt === null };
}

/** Partitions ahead of the walk whose words the worker is asked for while the walk counts the current one. */
const AHEAD = 16;
/**
 * Past this many of them not started by the worker, the walk reads the furthest one itself: the
 * worker is behind (words are most of a search for digits), and the two threads share the
 * week's words in the ratio that keeps both busy.
 */
const BACKLOG = 10;

/** A walk's word search: each partition's WordHits, read on the search worker ahead of the walk. */
export interface WordSearch {
  /** Partition `p`'s hits (null: it has no words yet); the walk goes on to walked[next], walked[next + 1]... */
  hits(p: Partition, walked: readonly Partition[], next: number): Promise<WordHits | null>;
  /** Whether the worker is reading partition `p`'s words now (asked, started, not answered): the walk would wait for them. */
  busy(p: Partition): boolean;
  /** The walk is over: the partitions asked that the worker has not started are taken back. */
  close(): void;
}

export function wordSearch(store: LogStore, plan: WordPlan): WordSearch {
  // Per partition asked: the worker's job, or its hits read here while the walk waited for the worker (null: no words when asked).
  const jobs = new Map<Partition, SearchJob<WordMarks> | WordHits | null>();
  // Jobs the worker has answered.
  const answered = new WeakSet<SearchJob<WordMarks>>();
  const here = (p: Partition) => {
    const t = store.recordTokens(p);
    return t?.size ? wordHits(t, plan, (blk) => store.tokensDamaged(p, blk)) : null;
  };
  const ask = (p: Partition) => {
    if (jobs.has(p)) return;
    const t = store.recordTokens(p);
    const job = t?.size ? wordMarksOffThread(t.listing(), plan.parts) : null;
    void job?.answer.then(() => answered.add(job));
    jobs.set(p, job);
  };
  return {
    async hits(p, walked, next) {
      ask(p);
      const last = Math.min(next + AHEAD, walked.length);
      for (let k = next; k < last; k++) ask(walked[k]!);
      const job = jobs.get(p)!;
      jobs.delete(p);
      if (job === null) return here(p);
      if (!('takeBack' in job)) return job;
      // A job the worker has not started is read here at once, not waited for.
      if (job.takeBack()) return here(p);
      // When the worker is behind (more than BACKLOG asked and not started), this thread reads the furthest of them itself.
      let backlog = 0;
      for (let k = next; k < last; k++) {
        const other = jobs.get(walked[k]!);
        if (other && 'takeBack' in other && !other.started()) backlog++;
      }
      for (let k = last - 1; k >= next && backlog > BACKLOG; k--) {
        const q = walked[k]!;
        const other = jobs.get(q);
        if (other && 'takeBack' in other && other.takeBack()) {
          jobs.set(q, here(q));
          break;
        }
      }
      const marks = await job.answer;
      // Words listed when the job was asked may have grown since: the rows past them are decided by their texts.
      if (marks && marks.damagedAt === null) return { records: marks.records, of: marks.of, exact: plan.exact, whole: true };
      // No worker, or a segment failed its check there: read here, where damage is reported.
      return here(p);
    },
    busy(p) {
      const job = jobs.get(p);
      return !!job && 'takeBack' in job && job.started() && !answered.has(job);
    },
    close() {
      for (const job of jobs.values()) if (job && 'takeBack' in job) job.takeBack();
      jobs.clear();
    },
  };
}
