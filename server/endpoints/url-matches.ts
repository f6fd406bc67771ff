/**
 * Which dictionary URLs a pattern matches, remembered per pattern: the regex runs once per
 * distinct URL, and later queries only test URLs added since. URL ids only grow, except when a
 * failed import rolls the dictionary back, which the store signals with `urlEpoch`.
 */
import { QueryTimeout } from '../store/db.ts';
import type { LogStore } from '../store/log-store.ts';
import { re2Tester } from './re2.ts';

interface Memo {
  epoch: number;
  checkedUpTo: number;
  ids: number[];
  json: string | null;
  bitmap: Uint8Array | null;
}

const MAX_PATTERNS = 32;
/** URLs tested between two yields of `prepare` (a few ms of work). */
const PREPARE_SLICE = 2000;

export class UrlMatches {
  private memo = new Map<string, Memo>();

  constructor(private store: LogStore) {}

  /** The ids of matching URLs as a JSON array (what SQL's json_each reads). */
  idsJson(pattern: string): string {
    const m = this.update(pattern);
    return (m.json ??= JSON.stringify(m.ids));
  }

  /** Matching URL ids as a bitmap indexed by id (1 = matches). */
  bitmap(pattern: string): Uint8Array {
    const m = this.update(pattern);
    if (!m.bitmap) {
      m.bitmap = new Uint8Array(m.checkedUpTo + 1);
      for (const id of m.ids) m.bitmap[id] = 1;
    }
    return m.bitmap;
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
      const fresh = this.store.urls.slice(m.checkedUpTo, PREPARE_SLICE);
      this.test(m, pattern, fresh);
      if (fresh.length < PREPARE_SLICE) break;
      if (performance.now() > deadline) throw new QueryTimeout();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (this.memo.get(pattern) !== m) {
      if (this.memo.size >= MAX_PATTERNS) this.memo.delete(this.memo.keys().next().value!);
      this.memo.set(pattern, m);
    }
  }

  private memoOf(pattern: string): Memo {
    let m = this.memo.get(pattern);
    if (!m || m.epoch !== this.store.urlEpoch) {
      m = { epoch: this.store.urlEpoch, checkedUpTo: 0, ids: [], json: null, bitmap: null };
      if (this.memo.size >= MAX_PATTERNS) this.memo.delete(this.memo.keys().next().value!);
      this.memo.set(pattern, m);
    }
    return m;
  }

  private update(pattern: string): Memo {
    const m = this.memoOf(pattern);
    const fresh = this.store.urls.slice(m.checkedUpTo, Number.MAX_SAFE_INTEGER);
    this.test(m, pattern, fresh);
    return m;
  }

  private test(m: Memo, pattern: string, fresh: Array<{ id: number; text: string }>): void {
    if (fresh.length) {
      const test = re2Tester(pattern);
      for (const r of fresh) if (test(r.text)) m.ids.push(r.id);
      m.checkedUpTo = fresh[fresh.length - 1]!.id;
      m.json = null;
      m.bitmap = null;
    }
  }
}
