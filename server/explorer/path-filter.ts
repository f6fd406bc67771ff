/**
 * Which of the store's path ids a `path` filter lets through, as a table indexed by id: a path
 * is tested once per distinct path (in the store-wide path dictionary), not once per row or per
 * partition. Remembered per filter; later requests test only the paths added since. Path ids
 * never go back, except when the dictionary starts again under a new epoch.
 */
import type { LogStore } from '../store/log-store.ts';
import type { ExplorerQuery } from './query-types.ts';

interface Memo {
  epoch: string;
  /** pass[id] = 1 when path id passes; ids up to `checkedUpTo` tested. */
  pass: Uint8Array;
  checkedUpTo: number;
}

const MAX_FILTERS = 16;
/** Paths read from the dictionary at a time. */
const SLICE = 50_000;

const memos = new WeakMap<LogStore, Map<string, Memo>>();

/** Whether a path passes the filter: starts with an included prefix (if any), with no excluded one. */
export function pathPasses(f: ExplorerQuery['path'], text: string): boolean {
  return (!f.include.length || f.include.some((p) => text.startsWith(p))) && !f.exclude.some((p) => text.startsWith(p));
}

/**
 * The pass table of the query's path filter, or null without one. An id past its end (a path
 * added after it was made) is decided by its text (`passesId`).
 */
export function pathFilterTable(store: LogStore, q: ExplorerQuery): { pass: Uint8Array; passesId: (id: number) => boolean } | null {
  const f = q.path;
  if (!f.include.length && !f.exclude.length) return null;
  const key = JSON.stringify([f.include, f.exclude]);
  let byFilter = memos.get(store);
  if (!byFilter) memos.set(store, (byFilter = new Map()));
  const epoch = store.paths.epoch;
  let m = byFilter.get(key);
  if (!m || m.epoch !== epoch) {
    m = { epoch, pass: new Uint8Array(0), checkedUpTo: 0 };
    if (byFilter.size >= MAX_FILTERS) byFilter.delete(byFilter.keys().next().value!);
  } else byFilter.delete(key); // moved to the end: most recently used
  byFilter.set(key, m);
  const count = store.paths.size();
  if (count > m.checkedUpTo) {
    const pass = new Uint8Array(count + 1);
    pass.set(m.pass);
    for (let after = m.checkedUpTo; after < count; after += SLICE) {
      for (const { id, text } of store.paths.slice(after, Math.min(SLICE, count - after))) pass[id] = pathPasses(f, text) ? 1 : 0;
    }
    m.pass = pass;
    m.checkedUpTo = count;
  }
  const table = m.pass;
  return { pass: table, passesId: (id) => (id < table.length ? table[id] === 1 : pathPasses(f, store.paths.get(id))) };
}
