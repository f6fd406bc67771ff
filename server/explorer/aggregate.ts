/**
 * Histogram, facets and counts over the explorer's query: GROUP BY on each partition's hot
 * columns when there is no text search, a walk over the matching rows when there is one (the
 * record decides). Exact either way.
 */
import { AppError, badParam } from '../errors.ts';
import { pathOfUrl } from '../ingest/normalize.ts';
import type { LogStore } from '../store/log-store.ts';
import { MICROS } from '../time.ts';
import { EXPLORER_FIELDS, fieldsOf, functionTexts, partitionsOf, scanRows, splitOf, whereOf, type ExplorerFieldName, type ExplorerQuery, type ScanRow } from './query.ts';

/** Round bucket widths; a histogram takes the narrowest that covers its range in about N buckets. */
export const BUCKET_WIDTHS: readonly number[] = [
  MICROS.second, 5 * MICROS.second, 10 * MICROS.second, 30 * MICROS.second,
  MICROS.minute, 5 * MICROS.minute, 10 * MICROS.minute, 15 * MICROS.minute, 30 * MICROS.minute,
  MICROS.hour, 3 * MICROS.hour, 6 * MICROS.hour, 12 * MICROS.hour, MICROS.day, 7 * MICROS.day,
];
export const DEFAULT_BUCKETS = 60;
export const MAX_BUCKETS = 500;
export const FACET_TOP = 10;

export function bucketWidth(start: number, end: number, buckets: number): number {
  const span = Math.max(1, end - start);
  return BUCKET_WIDTHS.find((w) => span / w <= buckets) ?? BUCKET_WIDTHS[BUCKET_WIDTHS.length - 1]!;
}

/** The key a row counts under in the histogram's `by`. */
function statusClass(status: number | null): string {
  return status !== null && status >= 100 && status <= 599 ? `${Math.floor(status / 100)}xx` : 'none';
}

export interface HistogramBucket {
  timestamp: number;
  count: number;
  by: Record<string, number>;
}

export async function histogram(store: LogStore, q: ExplorerQuery, buckets: number, deadline: number): Promise<{ buckets: HistogramBucket[]; width: number; split: 'status' | 'level' }> {
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > MAX_BUCKETS) throw badParam('buckets', `buckets must be an integer from 1 to ${MAX_BUCKETS}`);
  const width = bucketWidth(q.start, q.end, buckets);
  const split = splitOf(q.source);
  // Buckets are aligned to the epoch; the first holds the instant just after start (start is exclusive).
  const first = Math.floor((q.start + 1) / width) * width;
  const out: HistogramBucket[] = [];
  for (let t = first; t <= q.end; t += width) out.push({ timestamp: t, count: 0, by: {} });
  const add = (ts: number, key: string, n: number) => {
    const b = out[Math.floor((ts - first) / width)];
    if (!b) return;
    b.count += n;
    b.by[key] = (b.by[key] ?? 0) + n;
  };
  if (q.q) {
    await scanRows(store, q, (row) => add(row.ts, split === 'status' ? statusClass(row.status) : (row.level ?? 'none'), 1), { deadline });
  } else {
    const where = whereOf(store, q);
    const key = split === 'status' ? "CASE WHEN status BETWEEN 100 AND 599 THEN (status / 100) || 'xx' ELSE 'none' END" : "coalesce(level, 'none')";
    for (const p of partitionsOf(store, q)) {
      // sql.js binds numbers past 32 bits as REAL: without the cast every instant is its own group.
      const rows = store.use(p).rows(`SELECT CAST((ts - ?) / ? AS INTEGER) AS b, ${key} AS k, count(*) FROM ${q.source.alias} WHERE ${where.sql} GROUP BY b, k`, [first, width, ...where.params]);
      for (const [b, k, n] of rows) add(first + (b as number) * width, k as string, n as number);
      checkDeadline(deadline);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  // Every class or level seen anywhere is a key of every bucket, so stacked charts line up.
  const keys = new Set<string>();
  for (const b of out) for (const k of Object.keys(b.by)) keys.add(k);
  if (split === 'status') for (const k of ['2xx', '3xx', '4xx', '5xx']) keys.add(k);
  for (const b of out) for (const k of keys) b.by[k] ??= 0;
  return { buckets: out, width, split };
}

export interface FacetValue {
  value: string | number;
  count: number;
}

/** Top values of each asked field with exact counts, and how many other values there are. */
/** Past the deadline a request fails with a 503, as the endpoints do at their limit. */
function checkDeadline(deadline: number): void {
  if (performance.now() > deadline) {
    throw new AppError('unavailable', 'the request ran longer than its time limit and was stopped; narrow the range or the filters');
  }
}

export async function facets(store: LogStore, q: ExplorerQuery, fieldsText: string | undefined, deadline: number): Promise<{ result: Record<string, FacetValue[]>; others: Record<string, number> }> {
  const available = fieldsOf(q.source);
  const asked = fieldsText === undefined ? available : fieldsText.split(',').map((f) => f.trim()).filter(Boolean);
  for (const f of asked) {
    if (!(EXPLORER_FIELDS as readonly string[]).includes(f)) throw badParam('fields', `fields takes ${EXPLORER_FIELDS.join(', ')}, not ${f.slice(0, 40)}`);
    if (!available.includes(f as ExplorerFieldName)) throw badParam('fields', `${q.source.alias} records have no ${f}`);
  }
  const fields = asked as ExplorerFieldName[];
  const counts = new Map<ExplorerFieldName, Map<string | number, number>>(fields.map((f) => [f, new Map()]));
  const fnText = functionTexts(store);
  const bump = (f: ExplorerFieldName, v: string | number | null, n: number) => {
    if (v === null || v === undefined) return;
    const m = counts.get(f)!;
    m.set(v, (m.get(v) ?? 0) + n);
  };
  // One dictionary read per URL per request, however many partitions name it.
  const paths = new Map<number, string>();
  const urlPath = (id: number) => {
    let p = paths.get(id);
    if (p === undefined) paths.set(id, (p = pathOfUrl(store.urls.get(id))));
    return p;
  };
  const valueOf = (f: ExplorerFieldName, row: ScanRow): string | number | null => {
    if (f === 'function_id') return fnText(row.function);
    if (f === 'path') return q.source.hot === 'edge' ? (row.url ? urlPath(row.url) : null) : row.path;
    return row[f];
  };
  if (q.q) {
    await scanRows(
      store,
      q,
      (row) => {
        for (const f of fields) bump(f, valueOf(f, row), 1);
      },
      { deadline },
    );
  } else {
    const where = whereOf(store, q);
    const columnOf = (f: ExplorerFieldName) => (f === 'function_id' ? 'function' : f === 'path' && q.source.hot === 'edge' ? 'url' : f);
    for (const p of partitionsOf(store, q)) {
      const db = store.use(p);
      for (const f of fields) {
        const col = columnOf(f);
        for (const [v, n] of db.rows(`SELECT ${col}, count(*) FROM ${q.source.alias} WHERE ${where.sql} AND ${col} IS NOT NULL GROUP BY ${col}`, where.params)) {
          const value = f === 'function_id' ? fnText(v as number) : f === 'path' && q.source.hot === 'edge' ? urlPath(v as number) : (v as string | number);
          bump(f, value, n as number);
        }
      }
      checkDeadline(deadline);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  const result: Record<string, FacetValue[]> = {};
  const others: Record<string, number> = {};
  for (const f of fields) {
    const all = [...counts.get(f)!].map(([value, count]) => ({ value, count }));
    all.sort((a, b) => b.count - a.count || String(a.value).localeCompare(String(b.value)));
    result[f] = all.slice(0, FACET_TOP);
    others[f] = Math.max(0, all.length - FACET_TOP);
  }
  return { result, others };
}

/** How many records match, and about how large an export of them is. */
export async function countMatches(store: LogStore, q: ExplorerQuery, deadline: number): Promise<{ count: number; bytes: number }> {
  let count = 0;
  let bytes = 0;
  if (q.q) {
    await scanRows(
      store,
      q,
      (row) => {
        count++;
        bytes += row.len;
      },
      { deadline },
    );
  } else {
    const where = whereOf(store, q);
    for (const p of partitionsOf(store, q)) {
      const [n, b] = store.use(p).rows(`SELECT count(*), coalesce(sum(len), 0) FROM ${q.source.alias} WHERE ${where.sql}`, where.params)[0]!;
      count += n as number;
      bytes += b as number;
      checkDeadline(deadline);
    }
  }
  // Records go out in the query shape, a little larger than stored (the wrappers of nested records).
  return { count, bytes: Math.round(bytes * 1.1) };
}
