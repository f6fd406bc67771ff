/**
 * Which dictionary URLs a pattern matches, remembered per pattern: the regex runs once per
 * distinct URL, and later queries only test URLs added since. URL ids only grow, except when a
 * failed import rolls the dictionary back, which the store signals with `urlEpoch`.
 *
 * Two things keep the first answer after a restart short (every distinct URL: 2M at 10M records):
 * a pattern made only of literal characters (a project ref, the usage page's default) is looked
 * for in urls.log's bytes, not decoded and tested URL by URL (TextDictionary.idsContaining); and
 * what the patterns asked last match is kept in `urls.log.matches` (url-match-file.ts), read
 * back instead of matching again, written a moment after a pattern's committed matches grow.
 */
import fs from 'node:fs';
import path from 'node:path';
import { span } from '../activity.ts';
import { QueryTimeout } from '../store/db.ts';
import type { LogStore } from '../store/log-store.ts';
import { URL_MATCHES_FILE } from '../store/store-files.ts';
import { readUrlMatches, writeUrlMatches, type PersistedMatches } from '../store/url-match-file.ts';
import { literalOf, re2Tester } from './re2.ts';

interface Memo {
  epoch: number;
  /** URL ids 1…checkedUpTo are tested. */
  checkedUpTo: number;
  /** Bit `id` set when URL `id` matches. */
  bits: Uint8Array;
  /** What the file holds for this pattern: its committed ids and where they end in urls.log. */
  kept: { count: number; bytes: number } | null;
}

const MAX_PATTERNS = 32;
/** Patterns kept in the file (the most recently asked): 250 KB each at 2M URLs. */
const MAX_KEPT = 16;
/** URLs tested between two yields of `prepare` (a few ms of work): decoded for the RE2 port, or looked for as bytes. */
const PREPARE_SLICE = 2000;
const LITERAL_SLICE = 32_768;
/** The file is written this long after the last change, so a burst of queries writes it once (ms). */
const WRITE_DELAY_MS = 1000;

/** Whether bit `id` of a matches bitmap is set. */
export function matchesId(bits: Uint8Array, id: number): boolean {
  return ((bits[id >> 3] ?? 0) & (1 << (id & 7))) !== 0;
}

/** The literal a pattern matches, when idsContaining can look for it (no quote, no backslash). */
function byteLiteral(pattern: string): string | null {
  const literal = literalOf(pattern);
  return literal !== null && !/["\\]/.test(literal) ? literal : null;
}

export class UrlMatches {
  /** Least recently asked first. */
  private memo = new Map<string, Memo>();
  /** The URL epoch the file was last read for (-1: not yet). */
  private readEpoch = -1;
  private writeTimer: NodeJS.Timeout | null = null;
  private readonly file: string;

  constructor(private store: LogStore) {
    this.file = path.join(store.dataDir, URL_MATCHES_FILE);
  }

  /** Matching URL ids as a bitmap (see matchesId). */
  bitmap(pattern: string): Uint8Array {
    const m = this.memoOf(pattern);
    while (this.extend(m, pattern) === this.sliceOf(pattern));
    this.noteChange(m);
    return m.bits;
  }

  /**
   * Tests the URLs this pattern has not seen, a slice at a time with a yield between slices,
   * so a costly pattern over many distinct URLs never holds the event loop; the query that
   * follows finds the work done. Throws QueryTimeout once `deadline` (performance.now()) passes.
   */
  async prepare(pattern: string, deadline = Infinity): Promise<void> {
    // Work on this memo even if other patterns push it out of the map meanwhile (many new
    // patterns at once would otherwise evict each other and start over forever).
    let m = this.memoOf(pattern);
    for (;;) {
      if (m.epoch !== this.store.urlEpoch) m = this.memoOf(pattern);
      if (this.extend(m, pattern) < this.sliceOf(pattern)) break;
      if (performance.now() > deadline) throw new QueryTimeout();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (this.memo.get(pattern) !== m) this.remember(pattern, m);
    this.noteChange(m);
  }

  /** Writes the file now if a change waits (tests; the server writes it after WRITE_DELAY_MS). */
  flush(): void {
    if (this.writeTimer) clearTimeout(this.writeTimer);
    this.writeTimer = null;
    this.write();
  }

  private sliceOf(pattern: string): number {
    return byteLiteral(pattern) !== null ? LITERAL_SLICE : PREPARE_SLICE;
  }

  /** The pattern's memo, most recently asked now: from the file after a start or a rollback, else new. */
  private memoOf(pattern: string): Memo {
    if (this.readEpoch !== this.store.urlEpoch) this.read();
    let m = this.memo.get(pattern);
    if (!m || m.epoch !== this.store.urlEpoch) m = { epoch: this.store.urlEpoch, checkedUpTo: 0, bits: new Uint8Array(0), kept: null };
    this.remember(pattern, m);
    return m;
  }

  private remember(pattern: string, m: Memo): void {
    this.memo.delete(pattern);
    if (this.memo.size >= MAX_PATTERNS) this.memo.delete(this.memo.keys().next().value!);
    this.memo.set(pattern, m);
  }

  /** Takes the file's sections that still describe urls.log as the memos (a start, a rollback). */
  private read(): void {
    const done = span('api-counts: read urls.log.matches');
    this.readEpoch = this.store.urlEpoch;
    this.memo.clear();
    fs.rmSync(`${this.file}.tmp`, { force: true });
    for (const s of readUrlMatches(this.file, this.store.urls)) {
      this.memo.set(s.pattern, { epoch: this.readEpoch, checkedUpTo: s.count, bits: s.bits, kept: { count: s.count, bytes: s.bytes } });
    }
    done();
  }

  /** Tests the next slice of URLs the memo has not seen; returns how many it tested. */
  private extend(m: Memo, pattern: string): number {
    const from = m.checkedUpTo;
    // Up to date (a pattern read from the file): urls.log is not even loaded.
    if (from >= this.store.urls.textCount) return 0;
    const done = span('api-counts: match URLs');
    const literal = byteLiteral(pattern);
    let found: number[];
    if (literal !== null) {
      const r = this.store.urls.idsContaining(literal, from, LITERAL_SLICE);
      found = r.ids;
      m.checkedUpTo = r.last;
    } else {
      const fresh = this.store.urls.slice(from, PREPARE_SLICE);
      if (!fresh.length) return 0;
      const test = re2Tester(pattern);
      found = fresh.filter((r) => test(r.text)).map((r) => r.id);
      m.checkedUpTo = fresh[fresh.length - 1]!.id;
    }
    if (m.checkedUpTo >> 3 >= m.bits.length) {
      const grown = new Uint8Array(Math.max((m.checkedUpTo >> 3) + 1, m.bits.length * 2));
      grown.set(m.bits);
      m.bits = grown;
    }
    for (const id of found) m.bits[id >> 3] = m.bits[id >> 3]! | (1 << (id & 7));
    done();
    return m.checkedUpTo - from;
  }

  /** Has the file written soon when this memo covers committed URLs the file does not hold. */
  private noteChange(m: Memo): void {
    if (m.epoch !== this.store.urlEpoch || this.writeTimer) return;
    const committed = this.store.urls.committedState;
    if (m.checkedUpTo < committed.count || m.kept?.count === committed.count) return;
    this.writeTimer = setTimeout(() => {
      this.writeTimer = null;
      this.write();
    }, WRITE_DELAY_MS);
    this.writeTimer.unref();
  }

  /**
   * Writes the most recently asked patterns' committed matches: those that cover every committed
   * URL as of now, the others as the file already held them. Best effort: a failure (a full disk,
   * a damaged urls.log) leaves the file to the next write, and the answers do not depend on it.
   */
  private write(): void {
    if (this.readEpoch !== this.store.urlEpoch || this.store.closed) return;
    const committed = this.store.urls.committedState;
    const sections: PersistedMatches[] = [];
    const kept: Array<[Memo, { count: number; bytes: number }]> = [];
    for (const [pattern, m] of [...this.memo].slice(-MAX_KEPT)) {
      if (m.epoch !== this.store.urlEpoch) continue;
      const at = m.checkedUpTo >= committed.count ? committed : m.kept;
      if (!at) continue;
      sections.push({ pattern, count: at.count, bytes: at.bytes, bits: m.bits });
      kept.push([m, at]);
    }
    try {
      writeUrlMatches(this.file, this.store.urls, sections);
      for (const [m, at] of kept) m.kept = at;
    } catch {
      // Written again after the next change.
    }
  }
}
