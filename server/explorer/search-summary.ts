/**
 * One walk of a text search shared by its count, histogram and facets. The page asks for the
 * three at once; each used to walk every record of the window itself, so they read the same
 * blocks three times and timed out together. Now the first request of a search (same source,
 * window, filters and text, same stored data) starts one walk that tallies everything the three
 * answer: the count and export size, every facet field, and a fine histogram that any round
 * bucket width the API takes is summed from. Requests wait for it up to a moment, then answer
 * with what it has counted so far and how far back it got (`scanned`), instead of a 503; the
 * walk goes on while someone keeps asking, and a finished one is kept for a minute.
 */
import type { LogStore } from '../store/log-store.ts';
import { metadataOfRecord } from '../store/record.ts';
import { NONE, type ColumnName, type ScanColumns } from '../store/scan-columns.ts';
import { fineWidth } from './buckets.ts';
import { fieldsOf, functionTexts, scanRows, splitOf, type ExplorerQuery } from './query.ts';
import { CLASS_KEYS, statusClass, statusClassIndex } from './status-class.ts';
import { IdCounts } from './id-counts.ts';
import { columnOfField } from './row-filter.ts';
import type { FilterField } from '../../contract/filters.ts';
import { fieldText, valueAt } from '../../contract/fields.ts';

/** How long a request waits for the walk before it answers with the part counted so far (ms). */
export const SEARCH_WAIT_MS = 1_500;
/** A walk nobody has asked about for this long stops (ms). */
const ABANDON_MS = 15_000;
/** How long a finished walk is kept for the same search (ms). */
const KEEP_MS = 60_000;
/** Walks kept at once (running or finished), least recently asked first out. */
const MAX_SEARCHES = 8;

/** How far a walk got: newest first, every record after `through` looked at. */
export interface SearchProgress {
  /** µs: records at or after this instant are counted (the window's start once complete). */
  through: number;
  complete: boolean;
}

/** What a search's walk has counted so far. */
export interface SearchTallies extends SearchProgress {
  count: number;
  bytes: number;
  /** Fine histogram: bins of `width` from `first` (aligned to the epoch), per class or level. */
  fine: { first: number; width: number; bins: number; byKey: Map<string, Float64Array> };
  /** Per facet field, value -> count (`record:<path>` for a field inside the records, as text); paths by the store's path id. */
  values: Map<string, Map<string | number, number>>;
  /**
   * Paths by the store's id: the walk's own counts, not a copy, even while it runs (a week's
   * hundreds of thousands of paths took 150 ms to copy, for each partial answer): read them
   * before the next await. Counted by id in an array, not a Map: adding each partition's paths
   * to a Map was a fifth of a common phrase's counting over a week at 10M records.
   */
  paths: IdCounts;
}

interface Walk {
  tallies: SearchTallies;
  done: Promise<void>;
  /** The walk failed (not a timeout: a damaged file, a deletion): every request for it gets this. */
  error: unknown;
  lastAsked: number;
  finishedAt: number | null;
  stop: AbortController;
  /** The stored data it counts (store.dataVersion when it began). */
  version: number;
}

/** Walks per store (a store reopened on the same folder starts its own). */
const stores = new WeakMap<LogStore, Map<string, Walk>>();
const walksOf = (store: LogStore) => {
  let m = stores.get(store);
  if (!m) {
    const walks: Map<string, Walk> = (m = new Map());
    stores.set(store, walks);
    // A finished walk of data that changed answers nobody again, and a week's holds tens of MB
    // (its paths): dropped at the change, not at the next search (an import that follows a
    // search would otherwise carry them to its end); one that finishes after it, as it finishes.
    // Running ones stop at the next search.
    store.onChange(() => dropStale(store));
  }
  return m;
};

/** Drops the finished walks of data that has changed since they began (see walksOf). */
function dropStale(store: LogStore): void {
  const walks = walksOf(store);
  for (const [k, w] of walks) if (w.finishedAt !== null && w.version !== store.dataVersion) walks.delete(k);
}

/** What makes two searches the same walk. */
function keyOf(store: LogStore, q: ExplorerQuery, recordFields: readonly string[]): string {
  return JSON.stringify([
    store.dataVersion,
    store.urlEpoch,
    q.source.name,
    q.project,
    q.start,
    q.end,
    q.q?.text,
    q.q?.re !== null && q.q?.re !== undefined,
    q.fields.map((f) => f.path + ':' + JSON.stringify(f.test)),
    recordFields,
    q.status,
    q.method,
    q.path,
    q.level,
    q.function,
  ]);
}


/** Whether a histogram of `width` can be summed from a walk's fine bins. */
export function fineFits(t: SearchTallies, width: number): boolean {
  return width >= t.fine.width && width % t.fine.width === 0;
}

function startWalk(store: LogStore, q: ExplorerQuery, now: number, recordFields: readonly string[]): Walk {
  const width = fineWidth(q.start, q.end);
  const first = Math.floor((q.start + 1) / width) * width;
  const bins = Math.floor((q.end - first) / width) + 1;
  const fields = fieldsOf(q.source).filter((f) => f !== 'path');
  const tallies: SearchTallies = {
    through: q.end,
    complete: false,
    count: 0,
    bytes: 0,
    fine: { first, width, bins, byKey: new Map() },
    values: new Map([...fields, ...recordFields.map((f) => `record:${f}`)].map((f) => [f, new Map()])),
    paths: new IdCounts(),
  };
  const split = splitOf(q.source);
  const recordKeys = recordFields.map((f) => [`record:${f}`, f.split('.'), f] as const);
  const fnText = functionTexts(store);
  const stop = new AbortController();
  const bin = (key: string) => {
    let a = tallies.fine.byKey.get(key);
    if (!a) tallies.fine.byKey.set(key, (a = new Float64Array(bins)));
    return a;
  };
  const bump = (m: Map<string | number, number>, v: string | number | null) => {
    if (v !== null) m.set(v, (m.get(v) ?? 0) + 1);
  };
  const walk: Walk = { tallies, done: Promise.resolve(), error: null, lastAsked: now, finishedAt: null, stop, version: store.dataVersion };
  walk.done = scanRows(
    store,
    q,
    (row, record, indexed) => {
      tallies.count++;
      tallies.bytes += row.len;
      bin(split === 'status' ? statusClass(row.status) : (row.level ?? 'none'))[Math.floor((row.ts - first) / width)]! += 1;
      for (const f of fields) bump(tallies.values.get(f)!, f === 'function_id' ? fnText(row.function) : (row[f as 'status' | 'method' | 'level'] ?? null));
      if (recordFields.length) {
        // Fields inside the record: from the partition's field index where it holds them, else
        // from its metadata, read once for all of them.
        let metadata: unknown;
        let parsed = false;
        for (const [f, keys, path] of recordKeys) {
          let v = indexed(path);
          if (v === undefined) {
            if (!parsed) {
              parsed = true;
              metadata = metadataOfRecord(record().toString('utf8')).metadata;
            }
            v = fieldText(valueAt(metadata, keys));
          }
          bump(tallies.values.get(f)!, v);
        }
      }
      if (row.path !== NONE) tallies.paths.add(row.path);
    },
    {
      signal: stop.signal,
      tiesInAnyOrder: true,
      // Fields inside the records are read per row; without them a partition the words decide is counted from its columns.
      columns: recordFields.length ? undefined : (c, rows, count) => tallyColumns(tallies, c, rows, count, { split, fields, bin, fnText }),
      columnsRead: tallyColumnsRead(split, fields),
      onProgress: (last) => {
        tallies.through = Math.max(q.start, last.ts);
        if (performance.now() - walk.lastAsked > ABANDON_MS) stop.abort();
      },
    },
  ).then(
    () => {
      tallies.through = q.start;
      tallies.complete = true;
      walk.finishedAt = performance.now();
      dropStale(store);
    },
    (err: unknown) => {
      walk.error = err;
      walk.finishedAt = performance.now();
      dropStale(store);
    },
  );
  return walk;
}

/** Partitions counted from their columns by this process (tests). */
let columnTallies = 0;
export const partitionsTalliedFromColumns = (): number => columnTallies;

/** How tallyColumns counts: the histogram's split, the facet fields, a fine histogram's bins per key, function ids as text. */
interface TallyShape {
  split: 'status' | 'level';
  fields: readonly FilterField[];
  bin: (key: string) => Float64Array;
  fnText: (id: number | null) => string | null;
}

/** The row arrays tallyColumns reads for a split and facet fields. */
function tallyColumnsRead(split: 'status' | 'level', fields: readonly FilterField[]): ColumnName[] {
  return ['ts', 'len', 'path', split, ...fields.map(columnOfField)];
}

/**
 * Adds the rows of a partition's columns that are counted (the first `count` of `rows`) to the
 * tallies, as the walk's visit adds a row: the instants, sizes and split in one loop, each facet
 * field's array in a loop of its own (one loop doing everything per row took ~1.3x as long for
 * a common word's millions of rows a week), values counted per id in typed arrays (IdCounts),
 * then once per value.
 */
function tallyColumns(t: SearchTallies, c: ScanColumns, rows: Int32Array, count: number, shape: TallyShape): void {
  columnTallies++;
  // Only the arrays tallyColumnsRead names are loaded: the split's, not the other one.
  const { ts, len, path } = c;
  const byStatus = shape.split === 'status';
  const splitColumn = byStatus ? c.status : c.level;
  const { first, width } = t.fine;
  let bytes = 0;
  // Per key of the split (status classes by index, levels by dictionary id and NONE last), made when first counted as the walk makes them.
  const keys = byStatus ? CLASS_KEYS : [...c.dicts.level, 'none'];
  const bins: Array<Float64Array | undefined> = [];
  const noneKey = keys.length - 1;
  // Rows come newest first, so a row is mostly in the bin of the one before: its bounds are
  // compared, and the bin worked out again only when it is not (a division per row before).
  let bin = 0;
  let binStart = Infinity;
  let binEnd = -Infinity;
  for (let k = 0; k < count; k++) {
    const i = rows[k]!;
    const at = ts[i]!;
    if (at < binStart || at >= binEnd) {
      bin = Math.floor((at - first) / width);
      binStart = first + bin * width;
      binEnd = binStart + width;
    }
    bytes += len[i]!;
    const s = splitColumn[i]!;
    const key = byStatus ? statusClassIndex(s) : s === NONE ? noneKey : s;
    (bins[key] ??= shape.bin(keys[key]!))[bin]! += 1;
  }
  // Status codes and function ids are small numbers; dictionary ids index the partition's dictionary.
  for (const f of shape.fields) {
    const col = c[columnOfField(f)];
    const skip = f === 'function_id' ? 0 : NONE;
    const ids = new IdCounts(f === 'status' || f === 'function_id' ? 1024 : c.dicts[f as 'method' | 'level'].length);
    for (let k = 0; k < count; k++) {
      const v = col[rows[k]!]!;
      if (v !== skip) ids.add(v);
    }
    const into = t.values.get(f)!;
    ids.drain((v, n) => {
      const value = f === 'status' ? v : f === 'function_id' ? shape.fnText(v) : c.dicts[f as 'method' | 'level'][v]!;
      if (value !== null) into.set(value, (into.get(value) ?? 0) + n);
    });
  }
  const paths = t.paths;
  for (let k = 0; k < count; k++) {
    const pid = path[rows[k]!]!;
    if (pid !== NONE) paths.add(pid);
  }
  t.count += count;
  t.bytes += bytes;
}

/** Drops walks of data that changed, finished ones past KEEP_MS, abandoned ones, and the least recently asked past MAX_SEARCHES. */
function prune(walks: Map<string, Walk>, now: number, keep: string, version: number): void {
  for (const [k, w] of walks) {
    if (k === keep) continue;
    // Walks of data that changed since (an import, a delete) answer nobody again.
    if (w.version !== version || (w.finishedAt !== null && now - w.finishedAt > KEEP_MS) || (w.finishedAt === null && now - w.lastAsked > ABANDON_MS)) {
      w.stop.abort();
      walks.delete(k);
    }
  }
  const byAge = [...walks].filter(([k]) => k !== keep).sort((a, b) => a[1].lastAsked - b[1].lastAsked);
  while (walks.size > MAX_SEARCHES && byAge.length) {
    const [k, w] = byAge.shift()!;
    w.stop.abort();
    walks.delete(k);
  }
}

/**
 * The tallies of a text search: from its walk (started if none runs for the same search), after
 * waiting up to `waitMs` for it to finish. A snapshot: counted up to `through`.
 */
export async function searchTallies(store: LogStore, q: ExplorerQuery, waitMs = SEARCH_WAIT_MS, signal?: AbortSignal, recordFields: readonly string[] = []): Promise<SearchTallies> {
  const now = performance.now();
  const fieldsAsked = [...recordFields].sort();
  const key = keyOf(store, q, fieldsAsked);
  const walks = walksOf(store);
  let walk = walks.get(key);
  // A walk that failed is not kept: the next request tries again (the error may have been a deletion).
  if (walk?.error) {
    walks.delete(key);
    walk = undefined;
  }
  if (!walk) {
    walk = startWalk(store, q, now, fieldsAsked);
    walks.set(key, walk);
  }
  walk.lastAsked = now;
  walks.delete(key);
  walks.set(key, walk);
  prune(walks, now, key, store.dataVersion);
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, waitMs);
    signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  await Promise.race([walk.done, gaveUp]);
  clearTimeout(timer);
  if (walk.error) {
    walks.delete(key);
    throw walk.error;
  }
  return snapshot(walk.tallies);
}

/**
 * A copy of the tallies as they are now (the walk goes on changing its own), but for the paths
 * (see SearchTallies.paths); a finished walk's own, which nothing changes any more (copying a
 * week's paths took 150 ms of each warm answer).
 */
function snapshot(t: SearchTallies): SearchTallies {
  if (t.complete) return t;
  return {
    ...t,
    fine: { ...t.fine, byKey: new Map([...t.fine.byKey].map(([k, a]) => [k, a.slice()])) },
    values: new Map([...t.values].map(([f, m]) => [f, new Map(m)])),
  };
}

/** Walks a store keeps now, running and finished (tests). */
export function searchWalksHeld(store: LogStore): { running: number; finished: number } {
  let running = 0;
  let finished = 0;
  for (const w of walksOf(store).values()) if (w.finishedAt === null) running++;
  else finished++;
  return { running, finished };
}

/** Stops every walk of a store (tests, shutdown). */
export function stopSearches(store: LogStore): void {
  const walks = walksOf(store);
  for (const w of walks.values()) w.stop.abort();
  walks.clear();
}
