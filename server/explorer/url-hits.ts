/**
 * A text search decided by an edge record's URL: a record whose request URL holds the search
 * (or a match of the pattern) matches without its text being read, since a match within the URL
 * is one (text-hits.ts). The URL is a hot column (an id into store.urls), so each distinct URL
 * is tested once per search, not once per record: `/rest/v1/` is in a third of the edge
 * records of a week but in far fewer distinct URLs, and those records' texts are then never
 * inflated. A record whose URL does not match is left to its text (its message may hold it).
 */
import type { LogStore } from '../store/log-store.ts';
import { linesFoundOffThread, type SearchJob } from '../store/search-worker.ts';
import type { LinesFound, LinesJob } from '../store/text-dictionary.ts';
import type { ExplorerQuery } from './query-types.ts';
import { adaptiveTextFinder } from '../store/block-search.ts';
import { requiredLiterals } from './regex-literals.ts';
import { asciiLower, isRawSafe, textTest } from './text-hits.ts';

type Search = NonNullable<ExplorerQuery['q']>;

/** A URL id's verdict: not tested yet, no match, a match, or being tested by a walk. */
const UNTESTED = 0;
const NO = 1;
const YES = 2;
const TESTING = 3;
/** The verdicts UrlHits.tested gives (any other value: not tested). */
export const URL_NO_MATCH = NO;
export const URL_MATCH = YES;

/** URL ids tested per step: a walk yields between steps. */
const STEP = 50_000;
/** Reading all of urls.log pays when the URLs to test average fewer bytes of it than this each (a read of one costs about this much). */
const BYTES_PER_LOOKUP = 2_000;
/** Searches whose verdicts are kept (a page, its histogram and its facets ask the same one). */
const KEPT = 8;

/** A range of URL ids (after, upTo] searched in urls.log's bytes: here, or on the search worker (`there`) unless taken back. */
interface Chunk {
  after: number;
  upTo: number;
  lines: LinesJob;
  there: SearchJob<LinesFound> | null;
  /** Its verdicts are set. */
  done: boolean;
}

/** The verdicts of one search over the store's URLs, as far as they have been tested. */
class Verdicts {
  of = new Uint8Array(0);
  /** URLs looked up one by one so far: once they would have cost a read of the whole file, the file is read. */
  lookedUp = 0;
  /** The end of the reading of the file asked for: ids up to it are tested or in a chunk of `pending`. */
  scanEnd = 0;
  /** The chunks of a reading of the file not all done yet, in id order: each is done when the worker answers it, or by the walk that needs it. */
  pending: Chunk[] = [];
  constructor(readonly epoch: number) {}
  grow(id: number): void {
    if (id < this.of.length) return;
    const more = new Uint8Array(Math.max(id + 1, this.of.length * 2));
    more.set(this.of);
    this.of = more;
  }
}

const kept = new WeakMap<LogStore, Map<string, Verdicts>>();

function verdictsOf(store: LogStore, search: Search): Verdicts {
  let byStore = kept.get(store);
  if (!byStore) kept.set(store, (byStore = new Map()));
  const key = `${search.re ? 're' : 'text'}:${search.text}`;
  let v = byStore.get(key);
  // URL ids name other texts once urls.log was cut (an edge source deleted): test again.
  if (!v || v.epoch !== store.urlEpoch) v = new Verdicts(store.urlEpoch);
  byStore.delete(key);
  byStore.set(key, v);
  if (byStore.size > KEPT) byStore.delete(byStore.keys().next().value!);
  return v;
}

/** The URL decisions of a search on the store's edge records. */
export interface UrlHits {
  /** Notes URL `id` (not 0) for the next `decide`, unless a walk tested or noted it already. */
  want(id: number): void;
  /**
   * Tests the URLs noted since the last call, in steps with a turn for others between them
   * (`check` after each: it throws to stop); then `matches` tells. `partitionsLeft`: a walk that
   * will go through this many more partitions (counting a week, say) is expected to want as many
   * URLs again for each, which may make reading the whole file the cheaper way at once.
   */
  decide(check: () => void, partitionsLeft?: number): Promise<void>;
  /** Whether URL `id` holds a match: false when untested (the record's text then decides). */
  matches(id: number): boolean;
  /**
   * The verdicts by URL id as far as they are tested (URL_MATCH, URL_NO_MATCH, anything else
   * untested; ids past its end untested), or null when urls.log was cut since: a walk that finds
   * every URL of a partition tested reads them in its one pass over the rows (query.ts), with
   * no note, no `decide` and no `settle`. Read it before the next await.
   */
  tested(): Uint8Array | null;
  /**
   * For rows [from, to): a record whose verdict (`of`, by record number rid - 1) is `byText` and
   * whose URL holds a match becomes `matches`; returns how many stay `byText`. One loop over the
   * verdicts' array, for the week of rows a search decides at once.
   */
  settle(url: Int32Array, rid: Int32Array, from: number, to: number, of: Uint8Array, byText: number, matches: number): number;
}

/** URL decisions for `search` over `store` (kept for the next requests of the same search); `step`: URL ids a chunk of the file holds (tests make it small). */
export function urlHits(store: LogStore, search: Search, step = STEP): UrlHits {
  const test = textTest(search);
  const lower = search.re ? null : search.lower;
  // A pattern's longest literal: a URL without it cannot match (ASCII letters fold, as the pattern is case-insensitive).
  const literal = search.re
    ? requiredLiterals(search.text)
        .filter((l) => l !== '' && isRawSafe(l))
        .map((l) => l.toLowerCase())
        .sort((a, b) => b.length - a.length)[0]
    : undefined;
  const scanned = lower !== null && lower !== '' && isRawSafe(lower) ? lower : literal;
  const find = scanned !== undefined ? adaptiveTextFinder(scanned) : null;
  let v = verdictsOf(store, search);

  const holds = (t: string) => asciiLower(t).includes(scanned!);
  /** Every URL id in (after, last]: `found` (the lines holding `scanned`) decided, the rest ruled out. */
  const settleLines = (into: Verdicts, after: number, last: number, found: readonly number[] | Int32Array) => {
    for (let id = after + 1; id <= last; id++) if (into.of[id] === UNTESTED || into.of[id] === TESTING) into.of[id] = NO;
    if (lower !== null) for (const id of found) into.of[id] = YES;
    else lookUp(into, Array.from(found));
  };
  /** Decides `ids` by their texts. */
  const lookUp = (into: Verdicts, ids: readonly number[]) => {
    into.lookedUp += ids.length;
    for (const [id, url] of store.urls.getMany(ids)) into.of[id] = test(url) ? YES : NO;
  };

  /** Chunk `c`'s verdicts from the worker's answer, or (null: the worker had none) searched here. */
  const settleChunk = (into: Verdicts, c: Chunk, found: LinesFound | null) => {
    if (!found) return here(into, c);
    const ids: number[] = [];
    store.urls.testEscaped(found.escaped, holds, ids);
    store.urls.testPending(c.lines, holds, ids);
    done(into, c, ids.length ? [...found.plain, ...ids] : found.plain);
  };
  const here = (into: Verdicts, c: Chunk) => done(into, c, store.urls.idsIn(c.lines, find!, holds));
  const done = (into: Verdicts, c: Chunk, found: readonly number[] | Int32Array) => {
    c.done = true;
    // The file was cut since the chunk was asked: its lines are other URLs' now.
    if (into.epoch !== store.urlEpoch) return;
    settleLines(into, c.after, c.upTo, found);
    while (into.pending[0]?.done) into.pending.shift();
  };
  /** Asks the worker for every line of the file from `into`'s reading so far up to id `end`, in chunks that are done as its answers come. */
  const readFile = (into: Verdicts, end: number): Chunk[] => {
    into.grow(end);
    const chunks: Chunk[] = [];
    for (let after = into.scanEnd; after < end; after += step) {
      const upTo = Math.min(end, after + step);
      const lines = store.urls.linesJob(after, upTo - after);
      const c: Chunk = { after, upTo, lines, there: lines.lines ? linesFoundOffThread(lines.lines, scanned!) : null, done: false };
      // An answer settles its chunk when it comes (none: the chunk was taken back, or the worker failed and the walk that needs it searches it).
      void c.there?.answer.then((found) => {
        if (found && !c.done) settleChunk(into, c, found);
      });
      chunks.push(c);
    }
    into.pending.push(...chunks);
    into.scanEnd = end;
    return chunks;
  };

  let wanted: number[] = [];
  let top = 0;
  return {
    want(id) {
      if (id >= v.of.length) v.grow(id);
      if (v.of[id] !== UNTESTED) return;
      v.of[id] = TESTING;
      wanted.push(id);
      if (id > top) top = id;
    },
    async decide(check, partitionsLeft = 0) {
      const mine = v;
      const ids = wanted;
      const last = top;
      wanted = [];
      top = 0;
      if (!ids.length) return;
      // The chunks this walk asked for, taken back if it stops before the worker starts them (not read for nothing).
      let asked: Chunk[] = [];
      try {
        // URL ids name other texts since urls.log was cut (the edge records deleted): the walk stops at its next check.
        if (mine.epoch !== store.urlEpoch) return;
        // The file's saved line offsets may be being checked on the search worker (after a start): not checked again here.
        await store.urls.whenChecked();
        // Ids past the reading of the file asked for so far (all of them the first time).
        const beyond = ids.filter((id) => id > mine.scanEnd);
        if (beyond.length && find && (beyond.length * (1 + partitionsLeft) + mine.lookedUp) * BYTES_PER_LOOKUP > store.urls.bytes) {
          // Many URLs (a week's partitions each want thousands, so the ones looked up before
          // count too: at most twice the cost of reading the file at once): every line not
          // read yet (all of them the first time) read once, so that the next partitions find
          // their URLs tested. Every chunk is asked of the search worker at once, in id order;
          // this walk waits only for those holding the ids it wants now (taken back and searched
          // here where the worker has not started them), and the worker answers the others
          // while the walk goes on: a newest-first store's newest hour wants ids of the first
          // few chunks, the hours before it more and more (a week at 10M: 0.55 s of the first
          // partition's wait, both threads searching all of urls.log, before this).
          asked = readFile(mine, Math.max(last, store.urls.size()));
        } else if (beyond.length) {
          for (let k = 0; k < beyond.length; k += STEP) {
            lookUp(mine, beyond.slice(k, k + STEP));
            if (k + STEP < beyond.length) {
              await new Promise<void>((resolve) => setImmediate(resolve));
              check();
            }
          }
        }
        for (const c of [...mine.pending]) {
          if (c.after >= last) break;
          if (c.done) continue;
          if (!c.there || c.there.takeBack()) {
            c.there = null;
            here(mine, c);
            await new Promise<void>((resolve) => setImmediate(resolve));
          } else {
            const found = await c.there.answer;
            if (!c.done) settleChunk(mine, c, found);
          }
          check();
          if (mine.epoch !== store.urlEpoch) return;
        }
        asked = [];
      } finally {
        // Chunks taken back are dropped (each holds its lines' offsets): a later walk asks for them again.
        const back = asked.filter((c) => !c.done && c.there?.takeBack());
        if (back.length) {
          mine.pending = mine.pending.filter((c) => !back.includes(c));
          mine.scanEnd = Math.min(mine.scanEnd, ...back.map((c) => c.after));
        }
        // A walk stopped midway leaves its untested URLs to the next one.
        for (const id of ids) if (mine.of[id] === TESTING) mine.of[id] = UNTESTED;
      }
    },
    matches: (id) => v.of[id] === YES,
    tested: () => (v.epoch === store.urlEpoch ? v.of : null),
    settle(url, rid, from, to, of, byText, matches) {
      const known = v.of;
      let left = 0;
      for (let i = from; i < to; i++) {
        const r = rid[i]! - 1;
        if (of[r] !== byText) continue;
        if (known[url[i]!] === YES) of[r] = matches;
        else left++;
      }
      return left;
    },
  };
}
