/**
 * Histogram, facets and counts over the explorer's query, exact. Without a text search they
 * are counted from each partition's columns (store/scan-columns.ts): whole hours from its hour
 * counts where no path or field inside the records is involved, the rest row by row over the
 * typed arrays, fields inside the records from the partitions' field indexes (field-index.ts)
 * when every partition of the window has the paths asked for. With a text search, or a field
 * some partition would have to read from its records, the matching rows are walked (scanRows,
 * shared by the three answers: search-summary.ts). Paths are counted by the store's path id in
 * one array; only the top ones are read as text.
 */
import { badParam } from '../errors.ts';
import type { LogStore } from '../store/log-store.ts';
import { HOUR_MICROS, NONE, type ColumnName, type HourCounts, type ScanColumns } from '../store/scan-columns.ts';
import { bucketWidth, MAX_BUCKETS } from './buckets.ts';
import { isFieldPath, MAX_FIELD_FACETS } from '../../contract/fields.ts';
import { FILTER_FIELDS, type FilterField } from '../../contract/filters.ts';
import { checkStop, fieldsOf, functionTexts, partitionsOf, scanRows, sourceWatch, splitOf, type ExplorerQuery } from './query.ts';
import { countFieldRows, countFieldWhole, fieldRowTest } from './field-index.ts';
import type { Partition } from '../store/partition.ts';
import type { TextDictionary } from '../store/text-dictionary.ts';
import { pathFilterTable } from './path-filter.ts';
import { CLASS_KEYS, statusClass, statusClassIndex } from './status-class.ts';
import { IdCounts } from './id-counts.ts';
import { fineFits, SEARCH_WAIT_MS, searchTallies, type SearchProgress } from './search-summary.ts';
import { columnOfField, EVERY_ROW, filterColumns, rowFilter, windowRange, type FilterTarget } from './row-filter.ts';

export const FACET_TOP = 10;

export interface HistogramBucket {
  timestamp: number;
  count: number;
  by: Record<string, number>;
}

/** Per key, a count per bucket. */
class Tally {
  readonly byKey = new Map<string, Float64Array>();
  constructor(readonly buckets: number) {}
  key(k: string): Float64Array {
    let a = this.byKey.get(k);
    if (!a) this.byKey.set(k, (a = new Float64Array(this.buckets)));
    return a;
  }
}

/** Rows of (start, end] counted with `sign`: +1 adds them, -1 takes them out of whole hours. */
interface RowPiece {
  start: number;
  end: number;
  sign: 1 | -1;
}

/**
 * How to count (start, end] from the hour counts: the hours [from, to), corrected by rows at the
 * edges: the part of an edge hour inside the window is added, or (when it is most of the hour)
 * the hour is counted whole and the part outside taken away. Null when that is no better than
 * counting rows (a window within one hour).
 */
function wholeHours(start: number, end: number): { from: number; to: number; edges: RowPiece[] } | null {
  const H = HOUR_MICROS;
  const edges: RowPiece[] = [];
  const first = Math.floor((start + 1) / H) * H;
  let from = first;
  if (first !== start + 1) {
    // [first, start] is outside the window, (start, first + H) inside.
    if (start + 1 - first < H / 2) edges.push({ start: first - 1, end: start, sign: -1 });
    else {
      from = first + H;
      edges.push({ start, end: Math.min(end, first + H - 1), sign: 1 });
    }
  }
  const last = Math.floor(end / H) * H;
  let to = last + H;
  if (end !== last + H - 1) {
    // [last, end] is inside, (end, last + H) outside.
    if (last + H - 1 - end < H / 2) edges.push({ start: end, end: last + H - 1, sign: -1 });
    else {
      to = last;
      edges.push({ start: Math.max(start, last - 1), end, sign: 1 });
    }
  }
  return to > from ? { from, to, edges } : null;
}

const involvesPath = (q: ExplorerQuery) => q.path.include.length > 0 || q.path.exclude.length > 0;
/** Hour counts know neither paths nor fields inside the records: such a query counts rows. */
const countsRows = (q: ExplorerQuery) => involvesPath(q) || q.fields.length > 0;

/**
 * Rows of partitions without the field index for a path (unsaved rows, not built yet, capped
 * there) that the columns path reads from their records in line (about 10-50 µs a record, with
 * no turn for other requests); a query with more takes the walk, which answers with progress.
 */
const RECORD_ROWS_IN_LINE = 5_000;

/**
 * Whether an aggregate reads records (the shared walk, with its progress) rather than counting
 * the columns: with a text search, or a field condition or record facet (`facetPaths`) on a
 * path the source does not index, or that partitions of the window holding more than
 * RECORD_ROWS_IN_LINE rows have no field index for. Reads each partition's field index header.
 */
async function walksRecords(store: LogStore, q: ExplorerQuery, facetPaths: readonly string[], stop: Stop): Promise<boolean> {
  if (q.q !== null) return true;
  const paths = [...new Set([...q.fields.map((f) => f.path), ...facetPaths])];
  if (!paths.length) return false;
  const turn = { at: performance.now() };
  const stillThere = sourceWatch(store, q);
  let unindexed = 0;
  for (const p of partitionsOf(store, q)) {
    stillThere();
    const c = store.committedColumns(p);
    const fx = c?.fieldIndex();
    if (c && !(fx && paths.every((path) => fx.has(path))) && (unindexed += c.n) > RECORD_ROWS_IN_LINE) return true;
    checkStop(stop.deadline, stop.signal);
    await maybeYield(turn);
  }
  return false;
}

export async function histogram(store: LogStore, q: ExplorerQuery, buckets: number, deadline: number, signal?: AbortSignal): Promise<{ buckets: HistogramBucket[]; width: number; split: 'status' | 'level'; scanned?: SearchProgress }> {
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > MAX_BUCKETS) throw badParam('buckets', `buckets must be an integer from 1 to ${MAX_BUCKETS}`);
  const width = bucketWidth(q.start, q.end, buckets);
  const split = splitOf(q.source);
  // Buckets are aligned to the epoch; the first holds the instant just after start (start is exclusive).
  const first = Math.floor((q.start + 1) / width) * width;
  const n = Math.floor((q.end - first) / width) + 1;
  const tally = new Tally(n);
  const bucketOf = (ts: number) => Math.floor((ts - first) / width);
  let scanned: SearchProgress | undefined;
  const walk = await walksRecords(store, q, [], { deadline, signal });
  const shared = walk ? await searchTallies(store, q, SEARCH_WAIT_MS, signal) : null;
  if (shared && fineFits(shared, width)) {
    // Summed from the search's shared walk: its fine bins lie each within one bucket.
    for (const [k, bins] of shared.fine.byKey) {
      const into = tally.key(k);
      for (let b = 0; b < bins.length; b++) if (bins[b]) into[bucketOf(shared.fine.first + b * shared.fine.width)]! += bins[b]!;
    }
    scanned = { through: shared.through, complete: shared.complete };
  } else if (walk) {
    // Buckets narrower than the shared walk's bins: a walk of its own.
    await scanRows(store, q, (row) => void (tally.key(split === 'status' ? statusClass(row.status) : (row.level ?? 'none'))[bucketOf(row.ts)]! += 1), { deadline, signal, tiesInAnyOrder: true });
  } else {
    const hours = width % HOUR_MICROS === 0 && !countsRows(q) ? wholeHours(q.start, q.end) : null;
    const pieces: RowPiece[] = hours ? hours.edges : [{ start: q.start, end: q.end, sign: 1 }];
    for (const { start, end, sign } of pieces) {
      await eachPartition(store, { ...q, start, end }, { deadline, signal }, ['ts', split === 'status' ? 'status' : 'level'], (c, pass, from, to) => {
        const { ts } = c;
        if (split === 'status') {
          const { status } = c;
          const byClass = CLASS_KEYS.map((k) => tally.key(k));
          for (let i = from; i < to; i++) if (pass(i)) byClass[statusClassIndex(status[i]!)]![bucketOf(ts[i]!)]! += sign;
        } else {
          const { level } = c;
          const byLevel = c.dicts.level.map((k) => tally.key(k));
          const none = tally.key('none');
          for (let i = from; i < to; i++) if (pass(i)) (level[i] === NONE ? none : byLevel[level[i]!]!)[bucketOf(ts[i]!)]! += sign;
        }
      });
    }
    if (hours) {
      await eachHourCount(store, q, hours, { deadline, signal }, (c, h, pass) => {
        const byLevel = split === 'level' ? c.dicts.level.map((k) => tally.key(k)) : [];
        for (let j = 0; j < h.m; j++) {
          if (!pass(j)) continue;
          const b = bucketOf(h.hour[j]! * HOUR_MICROS);
          const key = split === 'status' ? tally.key(CLASS_KEYS[statusClassIndex(h.status[j]!)]!) : h.level[j] === NONE ? tally.key('none') : byLevel[h.level[j]!]!;
          key[b]! += h.count[j]!;
        }
      });
    }
  }
  // Every class or level seen anywhere is a key of every bucket (stacked charts line up).
  const keys = [...tally.byKey].filter(([, a]) => a.some((v) => v > 0)).map(([k]) => k);
  if (split === 'status') for (const k of ['2xx', '3xx', '4xx', '5xx']) if (!keys.includes(k)) keys.push(k);
  const out: HistogramBucket[] = [];
  for (let b = 0; b < n; b++) {
    const by: Record<string, number> = {};
    let count = 0;
    for (const k of keys) {
      const v = tally.byKey.get(k)?.[b] ?? 0;
      by[k] = v;
      count += v;
    }
    out.push({ timestamp: first + b * width, count, by });
  }
  return { buckets: out, width, split, ...(scanned ? { scanned } : {}) };
}

export interface FacetValue {
  value: string | number;
  count: number;
}

/** Top values of each asked field with exact counts, and how many other values there are. */
export async function facets(store: LogStore, q: ExplorerQuery, fieldsText: string | undefined, deadline: number, signal?: AbortSignal): Promise<{ result: Record<string, FacetValue[]>; others: Record<string, number>; scanned?: SearchProgress }> {
  const available = fieldsOf(q.source);
  const asked = fieldsText === undefined ? available : fieldsText.split(',').map((f) => f.trim()).filter(Boolean);
  const seen = new Set<string>();
  // A name that is not one of the built-in fields is a field inside the records (a dotted path).
  const recordFields: string[] = [];
  for (const f of asked) {
    // Counted once per listing, a field listed twice would show every count doubled.
    if (seen.has(f)) throw badParam('fields', `fields lists ${f} more than once`, 'duplicate');
    seen.add(f);
    if (!(FILTER_FIELDS as readonly string[]).includes(f)) {
      if (!isFieldPath(f)) throw badParam('fields', `fields takes ${FILTER_FIELDS.join(', ')} or a dotted path inside the records (e.g. request.headers.cf_ipcountry), not ${f.slice(0, 40)}`);
      if (recordFields.length >= MAX_FIELD_FACETS) throw badParam('fields', `fields takes at most ${MAX_FIELD_FACETS} paths inside the records`);
      recordFields.push(f);
      continue;
    }
    if (!available.includes(f as FilterField)) throw badParam('fields', `${q.source.alias} records have no ${f}`);
  }
  const fields = asked.filter((f) => !recordFields.includes(f)) as FilterField[];
  const counts = new Map<FilterField, Map<string | number, number>>(fields.map((f) => [f, new Map()]));
  let pathCounts = new IdCounts();
  const fnText = functionTexts(store);
  const bump = (f: FilterField, v: string | number | null, n: number) => {
    if (v === null || v === undefined) return;
    const m = counts.get(f)!;
    m.set(v, (m.get(v) ?? 0) + n);
  };
  let scanned: SearchProgress | undefined;
  let recordCounts: Map<string, Map<string | number, number>> | null = null;
  if (await walksRecords(store, q, recordFields, { deadline, signal })) {
    // From the shared walk of the query's records, which counts every field of the source (and
    // the fields inside the records asked for).
    const shared = await searchTallies(store, q, SEARCH_WAIT_MS, signal, recordFields);
    for (const f of fields) {
      // The walk's own path counts (read before the next await).
      if (f === 'path') pathCounts = shared.paths;
      else for (const [v, n] of shared.values.get(f) ?? []) bump(f, v, n);
    }
    recordCounts = shared.values;
    scanned = { through: shared.through, complete: shared.complete };
  } else {
    /** Adds the counts of one array of values (rows, or hour counts with their `weights`). */
    const countValues = (f: FilterField, c: ScanColumns, values: Int32Array, from: number, to: number, pass: (i: number) => boolean, weights?: Int32Array, sign = 1) => {
      if (f === 'path') throw new Error('paths are counted by path id, not here');
      const numeric = f === 'status' || f === 'function_id';
      // Status codes and function ids are small numbers; dictionary ids index the partition's dictionary.
      const counts = new IdCounts(numeric ? 1024 : c.dicts[f].length);
      const none = f === 'function_id' ? 0 : NONE;
      if (!weights) counts.addRows(values, from, to, pass === EVERY_ROW ? null : pass, sign, none);
      else for (let i = from; i < to; i++) if (values[i] !== none && pass(i)) counts.add(values[i]!, weights[i]!);
      counts.drain((v, n) => bump(f, f === 'status' ? v : f === 'function_id' ? fnText(v) : c.dicts[f][v]!, n));
    };
    const counted = fields.filter((f) => f !== 'path');
    // Paths and fields inside the records are not in the hour counts: with a filter on them, the other fields are counted row by row.
    const hours = countsRows(q) ? null : wholeHours(q.start, q.end);
    const pieces: RowPiece[] = hours ? hours.edges : [{ start: q.start, end: q.end, sign: 1 }];
    for (const { start, end, sign } of counted.length ? pieces : []) {
      await eachPartition(store, { ...q, start, end }, { deadline, signal }, counted.map(columnOfField), (c, pass, from, to) => {
        for (const f of counted) countValues(f, c, c[columnOfField(f)], from, to, pass, undefined, sign);
      });
    }
    if (hours && counted.length) {
      await eachHourCount(store, q, hours, { deadline, signal }, (c, h, pass) => {
        for (const f of counted) countValues(f, c, h[columnOfField(f) as 'status' | 'method' | 'level' | 'fn'], 0, h.m, pass, h.count);
      });
    }
    if (fields.includes('path')) {
      // Partitions the window covers whole, filtered by project and path at most, from their
      // path counts; the rest row by row.
      const byCounts = filterColumns(q).every((c) => c === 'project' || c === 'path') && !q.fields.length;
      const table = pathFilterTable(store, q);
      const wholeFrom = (c: ScanColumns) => {
        if (!byCounts) return false;
        let pc: ScanColumns['pathCounts'];
        try {
          pc = c.pathCounts;
        } catch {
          // Damaged in its file (it fails its CRC): counted from the rows instead, which carry their own.
          return false;
        }
        for (let j = 0; j < pc.k; j++) {
          if (q.project !== null && pc.project[j] !== q.project) continue;
          const v = pc.path[j]!;
          if (table && !(v < table.pass.length ? table.pass[v] === 1 : table.passesId(v))) continue;
          pathCounts.add(v, pc.count[j]!);
        }
        return true;
      };
      await eachPartition(store, q, { deadline, signal }, ['path'], (c, pass, from, to) => pathCounts.addRows(c.path, from, to, pass === EVERY_ROW ? null : pass, 1, NONE), wholeFrom);
    }
    if (recordFields.length) {
      // Fields inside the records, from the field indexes: the partitions the window covers
      // whole, filtered by project at most, from their counts per (project, value); the rest
      // row by row.
      recordCounts = new Map(recordFields.map((f) => [`record:${f}`, new Map<string | number, number>()]));
      const into = new Map(recordFields.map((f) => [f, recordCounts!.get(`record:${f}`)!]));
      const byCounts = filterColumns(q).every((c) => c === 'project') && !q.fields.length;
      await eachPartition(
        store,
        q,
        { deadline, signal },
        [],
        (c, pass, from, to, p) => countFieldRows(store, p, c, recordFields, from, to, pass, into),
        byCounts ? (c) => countFieldWhole(c, recordFields, q.project, into) : undefined,
      );
    }
  }
  const result: Record<string, FacetValue[]> = {};
  const others: Record<string, number> = {};
  for (const f of fields) {
    if (f === 'path') {
      const { top, distinct } = topPaths(pathCounts.counts, FACET_TOP, store.paths);
      result[f] = top;
      others[f] = Math.max(0, distinct - FACET_TOP);
      continue;
    }
    const all = counts.get(f)!;
    // A value whose whole-hour count the edge rows took back entirely is not there.
    for (const [v, n] of all) if (n === 0) all.delete(v);
    result[f] = topValues(all, FACET_TOP);
    others[f] = Math.max(0, all.size - FACET_TOP);
  }
  // In the order asked, with the built-in ones.
  for (const f of recordFields) {
    const all = recordCounts?.get(`record:${f}`) ?? new Map<string | number, number>();
    result[f] = topValues(all, FACET_TOP);
    others[f] = Math.max(0, all.size - FACET_TOP);
  }
  const ordered: Record<string, FacetValue[]> = {};
  const orderedOthers: Record<string, number> = {};
  for (const f of asked) {
    ordered[f] = result[f]!;
    orderedOthers[f] = others[f]!;
  }
  return { result: ordered, others: orderedOthers, ...(scanned ? { scanned } : {}) };
}


/** Tied paths whose texts are read one by one; more are found in one pass over the dictionary. */
const TIE_READS = 4096;

/**
 * The top `k` paths by count (ties: the smaller text) and how many paths have a count. Only the
 * texts of those above the k-th count and of those tied with it are read.
 */
export function topPaths(counts: Float64Array, k: number, paths: TextDictionary): { top: FacetValue[]; distinct: number } {
  // The k largest counts (descending), to find the k-th.
  const best: number[] = [];
  let distinct = 0;
  for (let id = 0; id < counts.length; id++) {
    const n = counts[id]!;
    if (n === 0) continue;
    distinct++;
    keepTop(best, k, n, (a, b) => a > b);
  }
  if (!distinct) return { top: [], distinct };
  const kth = best.length < k ? 0 : best[k - 1]!;
  const sure: number[] = [];
  const tied: number[] = [];
  for (let id = 0; id < counts.length; id++) {
    const n = counts[id]!;
    if (n !== 0 && n > kth) sure.push(id);
    else if (n !== 0 && n === kth) tied.push(id);
  }
  const top = sure.map((id) => ({ value: paths.get(id), count: counts[id]! })).sort((a, b) => (before(a, b) ? -1 : 1));
  const need = k - top.length;
  if (need > 0 && tied.length) {
    let texts: string[];
    if (tied.length <= TIE_READS) texts = tied.map((id) => paths.get(id));
    else {
      // Many paths share the k-th count (most paths are seen once): one pass over the
      // dictionary keeps the `need` smallest texts among them.
      const mark = new Uint8Array(counts.length);
      for (const id of tied) mark[id] = 1;
      texts = [];
      const total = paths.size();
      for (let after = 0; after < total; after += 50_000) {
        for (const { id, text } of paths.slice(after, 50_000)) {
          if (id < mark.length && mark[id]) keepTop(texts, need, text, (a, b) => a < b);
        }
      }
    }
    texts.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const text of texts.slice(0, need)) top.push({ value: text, count: kth });
  }
  return { top, distinct };
}

/** Larger count first, then the smaller value (numbers by value, texts by code units). */
function before(a: FacetValue, b: FacetValue): boolean {
  if (a.count !== b.count) return a.count > b.count;
  return typeof a.value === 'number' && typeof b.value === 'number' ? a.value < b.value : String(a.value) < String(b.value);
}

/**
 * The first `k` values in that order, without sorting them all: a week of paths holds tens of
 * thousands of values, most seen once.
 */
export function topValues(counts: Map<string | number, number>, k: number): FacetValue[] {
  const top: FacetValue[] = [];
  for (const [value, count] of counts) keepTop(top, k, { value, count }, before);
  return top;
}

/** Puts `e` into `top` (at most `k` entries, ordered by `first`) if it belongs among them, without sorting. */
function keepTop<T>(top: T[], k: number, e: T, first: (a: T, b: T) => boolean): void {
  if (top.length === k && !first(e, top[k - 1]!)) return;
  let i = top.length < k ? top.push(e) - 1 : k - 1;
  for (; i > 0 && first(e, top[i - 1]!); i--) top[i] = top[i - 1]!;
  top[i] = e;
}

/** How many records match, and about how large an export of them is. */
export async function countMatches(store: LogStore, q: ExplorerQuery, deadline: number, signal?: AbortSignal): Promise<{ count: number; bytes: number; scanned?: SearchProgress }> {
  let count = 0;
  let bytes = 0;
  let scanned: SearchProgress | undefined;
  if (await walksRecords(store, q, [], { deadline, signal })) {
    const shared = await searchTallies(store, q, SEARCH_WAIT_MS, signal);
    count = shared.count;
    bytes = shared.bytes;
    scanned = { through: shared.through, complete: shared.complete };
  } else {
    await eachPartition(store, q, { deadline, signal }, ['len'], (c, pass, from, to) => {
      const { len } = c;
      for (let i = from; i < to; i++) {
        if (!pass(i)) continue;
        count++;
        bytes += len[i]!;
      }
    });
  }
  // Records go out in the query shape, a little larger than stored (the wrappers of nested records).
  return { count, bytes: Math.round(bytes * 1.1), ...(scanned ? { scanned } : {}) };
}

/** When a request must stop: its deadline (a 503), or its client leaving. */
interface Stop {
  deadline: number;
  signal?: AbortSignal;
}

/** A turn for other requests every 20 ms of counting. */
async function maybeYield(state: { at: number }): Promise<void> {
  if (performance.now() - state.at < 20) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  state.at = performance.now();
}

/**
 * Calls `work` with each partition's columns (the filters' and `needed` row arrays loaded), its
 * filter and the rows of the window, newest partition first; stops at the deadline. A partition
 * inside the window is first offered to `whole`, which may count it from its counts (true).
 * Field conditions are decided by the partition's field index (field-index.ts), or, for a path
 * it does not hold (a partition changed since walksRecords looked), by its records.
 */
async function eachPartition(
  store: LogStore,
  q: ExplorerQuery,
  stop: Stop,
  needed: readonly ColumnName[],
  work: (c: ScanColumns, pass: (i: number) => boolean, from: number, to: number, p: Partition) => void,
  whole?: (c: ScanColumns) => boolean,
): Promise<void> {
  const columns: ColumnName[] = [...filterColumns(q), ...needed];
  const turn = { at: performance.now() };
  await store.pathsChecked();
  const paths = pathFilterTable(store, q);
  const stillThere = sourceWatch(store, q);
  for (const p of partitionsOf(store, q)) {
    stillThere();
    // A partition inside the window is taken whole: its instants need not be read.
    const inside = p.start > q.start && p.end - 1 <= q.end;
    const head = inside && whole ? store.committedColumns(p) : null;
    if (head && whole!(head)) {
      checkStop(stop.deadline, stop.signal);
      await maybeYield(turn);
      continue;
    }
    const c = store.committedColumns(p, inside ? columns : ['ts', ...columns]);
    let pass = c && rowFilter(q, c, paths);
    if (c && pass && q.fields.length) pass = fieldRowTest(store, p, c, q.fields, pass);
    if (c && pass) {
      const [from, to] = inside ? [0, c.n] : windowRange(c, q.start, q.end, null);
      if (to > from) work(c, pass, from, to, p);
    }
    checkStop(stop.deadline, stop.signal);
    await maybeYield(turn);
  }
}

/** Calls `work` with the hour counts of each partition of the whole hours [from, to), and their filter. */
async function eachHourCount(store: LogStore, q: ExplorerQuery, hours: { from: number; to: number }, stop: Stop, work: (c: ScanColumns, h: HourCounts, pass: (j: number) => boolean) => void): Promise<void> {
  const turn = { at: performance.now() };
  const lo = hours.from / HOUR_MICROS;
  const hi = hours.to / HOUR_MICROS;
  const stillThere = sourceWatch(store, q);
  for (const p of partitionsOf(store, { ...q, start: hours.from - 1, end: hours.to - 1 })) {
    stillThere();
    const c = store.committedColumns(p);
    if (!c) continue;
    const h = c.hours;
    const target: FilterTarget = { project: h.project, status: h.status, method: h.method, level: h.level, fn: h.fn, dicts: c.dicts };
    const pass = rowFilter(q, target);
    if (pass) work(c, h, (j) => h.hour[j]! >= lo && h.hour[j]! < hi && pass(j));
    checkStop(stop.deadline, stop.signal);
    await maybeYield(turn);
  }
}
