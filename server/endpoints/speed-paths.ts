/**
 * The endpoints answered over the partitioned store without their SQL: each reads only the
 * partitions (or catalog rollups) its window overlaps and computes exactly what its .sql file
 * defines (p95/p99 of minute, hour and day buckets within the 1% the endpoint rules allow).
 * A registry entry names its speed path; the property tests hold both forms to one reference.
 * Windows, retention and the row cut come from the bound values the SQL receives too (the
 * registry entry's rules, bound by validateParams), so neither form restates them.
 */
import { ERROR_RULE, type SpeedPathName } from '../../queries/registry.ts';
import type { InvocationStatsRow } from '../../contract/api-types.ts';
import { API_FAMILIES } from '../../contract/registry.ts';
import { gauge } from '../activity.ts';
import { canonicalRecord } from '../ingest/normalize.ts';
import { forEachTriple } from '../store/api-hours.ts';
import type { LogStore } from '../store/log-store.ts';
import type { SqlValue } from '../store/db.ts';
import type { Partition } from '../store/partition.ts';
import type { ColumnName, ScanColumns } from '../store/scan-columns.ts';
import { compareRecordIds } from '../store/record.ts';
import { addRollupRow, ALL_FUNCTIONS, countRecord, DAY_GRAIN, emptyExecStats, HOUR_GRAIN, MINUTE_GRAIN, ROLLUP_COLUMNS, type ExecStats } from '../store/rollups.ts';
import { formatDatetime, MICROS } from '../time.ts';
import { RULE_BINDS, type ValidParams } from './params.ts';
import { keepRowJson, type ResultRow } from './row-json.ts';
import { nearestRank } from './sql-functions.ts';
import { RowColumnsCache } from './row-columns.ts';
import { matchesId, UrlMatches } from './url-matches.ts';

export type SpeedPath = (store: LogStore, params: ValidParams, now: number) => ResultRow[];

const trunc = (ts: number, unit: number) => ts - (ts % unit);

/** A rule's bound value (RULE_BINDS), exactly as the SQL receives it. */
function rule(params: ValidParams, name: string): number {
  const v = params.bind[name];
  if (typeof v !== 'number') throw new Error(`the rule value ${name} is not bound (validateParams binds the registry entry's rules)`);
  return v;
}

/** Per-store helpers the speed paths share. */
export interface StoreHelpers {
  urlMatches: UrlMatches;
  /** Canonical records recently returned by logs.all, by partition and row. */
  recent: Map<string, { id: string; row: ResultRow }>;
  /** Edge partitions' ts, URL id and family bits: api-counts' partial hours. */
  edgeRows: RowColumnsCache;
  /** Function edge partitions' ts, project, function, exec and status: invocation-stats' exact buckets. */
  functionRows: RowColumnsCache;
  /**
   * An hour rollup's counts per API family for the URLs a pattern matches, by the hour's packed counts
   * (a new array whenever the hour changes) and `<url epoch>:<pattern>`: within an epoch a URL id
   * names one URL, so its match never changes.
   */
  hourFamilies: WeakMap<Uint8Array, Map<string, HourFamilies>>;
}

/** One hour's matched counts per API family, and whether any URL of the hour matched. */
interface HourFamilies {
  counts: number[];
  matched: boolean;
}

/** Patterns remembered per hour (the usage page asks for one or two). */
const HOUR_PATTERNS = 8;

const helpers = new WeakMap<LogStore, StoreHelpers>();

export function helpersOf(store: LogStore): StoreHelpers {
  let h = helpers.get(store);
  if (!h) {
    helpers.set(
      store,
      (h = {
        urlMatches: new UrlMatches(store),
        recent: new Map(),
        edgeRows: new RowColumnsCache('edge_logs', ['ts', 'url', 'families']),
        functionRows: new RowColumnsCache('function_edge_logs', ['ts', 'project', 'function', 'exec', 'status']),
        hourFamilies: new WeakMap(),
      }),
    );
    const held = h;
    gauge('rowColumns', () => held.edgeRows.heldBytes() + held.functionRows.heldBytes());
  }
  return h;
}

// ---- functions.invocation-stats ----

/** A bucket: rollup aggregates, or the exact execution times when read from the records. */
interface Bucket extends ExecStats {
  execs?: number[];
}

function invocationStats(store: LogStore, params: ValidParams, now: number): ResultRow[] {
  const span = rule(params, RULE_BINDS.spanUs);
  const unit = rule(params, RULE_BINDS.unitUs);
  // Errors are counted with ERROR_RULE (countRecord), as the stored rollups were at import.
  if (rule(params, RULE_BINDS.errorStatusAtLeast) !== ERROR_RULE.statusAtLeast) throw new Error('the rollups count errors with ERROR_RULE only');
  return invocationBuckets(store, {
    project: String(params.bind.project),
    functionId: params.bind.function_id ? String(params.bind.function_id) : '',
    first: trunc(now - span, unit),
    last: trunc(now, unit),
    unit,
  });
}

/** The buckets invocationBuckets answers: bucket starts `first` … `last` (multiples of `unit`), µs. */
export interface BucketSeries {
  project: string;
  /** One function id; '' = all functions. */
  functionId: string;
  first: number;
  last: number;
  unit: number;
}

/**
 * functions.invocation-stats' rows for any run of buckets, one row each (empty ones too),
 * ascending: the endpoint answers the run that ends at now, and the Functions page's compared
 * period (GET /api/functions/buckets) an earlier one, by the same reading of records and rollups.
 */
export function invocationBuckets(store: LogStore, { project: projectRef, functionId: fnText, first, last, unit }: BucketSeries): Array<InvocationStatsRow & ResultRow> {
  const buckets = new Map<number, Bucket>();
  const bucket = (b: number) => {
    let x = buckets.get(b);
    if (!x) buckets.set(b, (x = emptyExecStats()));
    return x;
  };
  const project = store.projects.find(projectRef);
  const fn = fnText ? store.functions.find(fnText) : undefined;
  if (project !== undefined && (!fnText || fn !== undefined)) {
    if (unit < MICROS.minute || (unit < MICROS.hour && fnText)) {
      // Second buckets, and one function's minute buckets: exact, from the records (the
      // partitions' rows as arrays: the window is the newest hour or two, asked again and again).
      // All functions: every record of the project, those without a function id (stored as 0) too.
      const only = fnText ? fn! : undefined;
      const end = last + unit;
      const { functionRows } = helpersOf(store);
      for (const p of store.partitionsWithProject('deno-relay-logs', project, first, end - 1)) {
        const rows = functionRows.of(store, p);
        const [ts, proj, fnOf, exec, status] = rows.cols as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
        for (const minute of rows.rowsOfMinutes(Math.max(first, p.start), Math.min(end, p.end))) {
          for (const i of minute) {
            const t = ts[i]!;
            if (t < first || t >= end || proj[i] !== project || (only !== undefined && fnOf[i] !== only)) continue;
            const b = bucket(trunc(t, unit));
            const e = exec[i]!;
            const s = status[i]!;
            if (countRecord(b, Number.isNaN(e) ? null : e, Number.isNaN(s) ? null : s)) (b.execs ??= []).push(e);
          }
        }
      }
    } else {
      // Rollups of the bucket's width: per minute in the overlapping partitions (all functions
      // only), per hour and per day in the catalog; each has a row for all functions.
      const g = unit >= DAY_GRAIN.unit ? DAY_GRAIN : unit >= HOUR_GRAIN.unit ? HOUR_GRAIN : MINUTE_GRAIN;
      const f = fnText ? fn! : ALL_FUNCTIONS;
      if (g === MINUTE_GRAIN) {
        for (const p of store.partitionsWithProject('deno-relay-logs', project, first, last + unit - 1)) {
          const rows = store.use(p).rows(`SELECT ${g.column}, ${ROLLUP_COLUMNS} FROM ${g.table} WHERE project = ? AND function = ? AND ${g.column} >= ? AND ${g.column} < ?`, [
            project,
            f,
            first,
            last + unit,
          ]);
          for (const [at, ...rest] of rows) addRollupRow(bucket(trunc(at as number, unit)), rest);
        }
      } else {
        for (const [at, , ...rest] of store.rollups.rows(g, project, [f], first, last + unit)) addRollupRow(bucket(trunc(at as number, unit)), rest);
      }
    }
  }
  const out: Array<InvocationStatsRow & ResultRow> = [];
  for (let ts = first; ts <= last; ts += unit) {
    const b: Bucket = buckets.get(ts) ?? emptyExecStats();
    let p95: number | null = null;
    let p99: number | null = null;
    if (b.execs) {
      b.execs.sort((x, y) => x - y);
      p95 = nearestRank(b.execs, 95);
      p99 = nearestRank(b.execs, 99);
    } else if (b.sketch) {
      [p95, p99] = b.sketch.quantiles([95, 99], b.min, b.max) as [number | null, number | null];
    }
    out.push({
      timestamp: ts,
      min_execution_time: b.min,
      max_execution_time: b.max,
      avg_execution_time: b.n ? b.sum / b.n : null,
      p95_execution_time: p95,
      p99_execution_time: p99,
      count: b.count,
      error_count: b.errors,
    });
  }
  return out;
}

// ---- logs.all ----

/** Canonical records kept for logs.all (about 2 KB each): paging and refreshes ask again. */
const RECENT_RECORDS = 2000;
/** What logs.all reads of a saved partition's columns file. */
const LOGS_ALL_COLUMNS: readonly ColumnName[] = ['ts', 'rid', 'project', 'blk', 'boff', 'len'];

/**
 * A project's newest `need` rows in (lower, upper] of a saved partition, as rid, ts, blk, boff,
 * len, and every other row at the last one's instant (ties there are decided by id): the columns
 * are newest first, so this reads from the top and stops, where sql.js stepped row by row.
 */
function newestFromColumns(c: ScanColumns, project: number, lower: number, upper: number, need: number): SqlValue[][] {
  const { ts, project: proj, rid, blk, boff, len } = c;
  const out: SqlValue[][] = [];
  for (let k = 0; k < c.n; k++) {
    const t = ts[k]!;
    if (t > upper) continue;
    if (t <= lower || (out.length >= need && t !== out[out.length - 1]![1])) break;
    if (proj[k] === project) out.push([rid[k]!, t, blk[k]!, boff[k]!, len[k]!]);
  }
  return out;
}

/** Partitions logs.all looks up first (the newest), before the whole window's. */
const FIRST_PARTITIONS = 4;

function logsAll(store: LogStore, params: ValidParams, now: number): ResultRow[] {
  const retention = rule(params, RULE_BINDS.retentionUs);
  const cut = rule(params, RULE_BINDS.rows);
  const start = typeof params.bind.start === 'number' ? params.bind.start : -Infinity;
  // (lower, upper]: the later of the retention cutoff and the start, and the end.
  const lower = Math.max(now - retention, start);
  const upper = typeof params.bind.end === 'number' ? params.bind.end : Number.MAX_SAFE_INTEGER;
  const projectRef = String(params.bind.project);
  const project = store.projects.find(projectRef);
  if (project === undefined || lower >= upper) return [];
  const { recent } = helpersOf(store);
  const picked: Array<{ ts: number; id: string; row: ResultRow }> = [];
  const cols = 'rid, ts, blk, boff, len';
  // Partitions are disjoint hours, newest first: once `cut` rows are in hand, older ones cannot
  // displace them (ties at one instant never span two partitions). The newest few nearly always
  // hold them: the whole list (a week of hours) is asked for only when they do not.
  let parts = store.partitionsWithProject('cloudflare.logs.prod', project, lower + 1, upper, FIRST_PARTITIONS);
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    const need = cut - picked.length;
    let rows: SqlValue[][];
    // The newest saved partitions from their columns (the explorer reads the same ones). Not
    // older ones: a project with few records would have every partition of the window loaded
    // and scanned whole, where the database's (project, ts) index goes straight to its rows.
    // Nor rows not saved yet, nor a partition whose columns file is not built yet (an import's
    // newest, right after it): building columns for this answer would hold every page up.
    const ready = i < FIRST_PARTITIONS ? store.readyColumns(p, LOGS_ALL_COLUMNS) : null;
    if (ready) rows = newestFromColumns(ready, project, lower, upper, need);
    else {
      const db = store.use(p);
      rows = db.rows(`SELECT ${cols} FROM edge_logs WHERE project = ? AND ts > ? AND ts <= ? ORDER BY ts DESC LIMIT ?`, [project, lower, upper, need]);
      if (rows.length === need) {
        // Every row at the cut instant is a candidate: ties there are decided by id.
        const last = rows[rows.length - 1]![1] as number;
        rows = [...rows.filter((r) => (r[1] as number) > last), ...db.rows(`SELECT ${cols} FROM edge_logs WHERE project = ? AND ts = ?`, [project, last])];
      }
    }
    for (const [rid, ts, blk, boff, len] of rows) {
      // The width tells a day partition from the hour partition of its split that starts with it.
      const key = `${p.source.code}:${p.start}:${p.row.width}:${store.urlEpoch}:${rid as number}`;
      let hit = recent.get(key);
      if (!hit) {
        const text = canonicalRecord(store.readRecord(p, { blk: blk as number, boff: boff as number, len: len as number }).toString('utf8'), p.source, projectRef, ts as number);
        const record = JSON.parse(text) as Record<string, unknown>;
        // The row as answered, its JSON kept: paging and refreshes ask for the same rows.
        const row = keepRowJson({ id: record.id, timestamp: ts as number, event_message: record.event_message, metadata: record.metadata });
        hit = { id: String(record.id), row };
        if (recent.size >= RECENT_RECORDS) recent.delete(recent.keys().next().value!);
        recent.set(key, hit);
      }
      picked.push({ ts: ts as number, ...hit });
    }
    if (picked.length >= cut) break;
    // The same order, so the newest FIRST_PARTITIONS come first again (no await in between).
    if (i === FIRST_PARTITIONS - 1) parts = store.partitionsWithProject('cloudflare.logs.prod', project, lower + 1, upper);
  }
  picked.sort((a, b) => b.ts - a.ts || compareRecordIds(a.id, b.id));
  return picked.slice(0, cut).map(({ row }) => row);
}

// ---- usage.api-counts ----

/** Adds `n` records of family bits `fam` to a bucket's counts (one per API family, in API_FAMILIES order). */
function countFamilies(c: number[], fam: number, n: number): void {
  for (let i = 0; i < API_FAMILIES.length; i++) if (fam & API_FAMILIES[i]!.bit) c[i] = c[i]! + n;
}

function apiCounts(store: LogStore, params: ValidParams, now: number): ResultRow[] {
  const w = { span: rule(params, RULE_BINDS.spanUs), unit: rule(params, RULE_BINDS.unitUs) };
  const h = helpersOf(store);
  const matches = h.urlMatches.bitmap(String(params.bind.project));
  const matched = (u: number) => matchesId(matches, u);
  const start = now - w.span;
  const buckets = new Map<number, number[]>();
  const bucket = (b: number) => {
    let c = buckets.get(b);
    if (!c) buckets.set(b, (c = API_FAMILIES.map(() => 0)));
    return c;
  };
  // Whole hours come from the catalog's hour rollups when the buckets are hours or days; the
  // rest of the window (its partial first hour, or every minute) from the partitions' records.
  const useHours = w.unit >= MICROS.hour;
  const firstWholeHour = start % MICROS.hour === 0 ? start : trunc(start, MICROS.hour) + MICROS.hour;
  const recordsFrom = trunc(start, MICROS.hour);
  const recordsTo = useHours ? firstWholeHour : Infinity;
  if (useHours) {
    // A week of hours holds hundreds of thousands of (URL, families, count) triples at 1M
    // records: each hour is summed once per pattern, and again only once it changes.
    const key = `${store.urlEpoch}:${String(params.bind.project)}`;
    for (const [hour, packed] of store.apiHours.since(firstWholeHour)) {
      let byPattern = h.hourFamilies.get(packed);
      if (!byPattern) h.hourFamilies.set(packed, (byPattern = new Map()));
      let sums = byPattern.get(key);
      if (!sums) {
        const fresh = { counts: API_FAMILIES.map(() => 0), matched: false };
        forEachTriple(packed, (url, families, count) => {
          if (!matched(url)) return;
          fresh.matched = true;
          countFamilies(fresh.counts, families, count);
        });
        if (byPattern.size >= HOUR_PATTERNS) byPattern.delete(byPattern.keys().next().value!);
        byPattern.set(key, (sums = fresh));
      }
      if (!sums.matched) continue;
      const c = bucket(trunc(hour, w.unit));
      for (let i = 0; i < c.length; i++) c[i] = c[i]! + sums.counts[i]!;
    }
  }
  for (const p of store.partitions('cloudflare.logs.prod')) {
    if (p.end <= recordsFrom || p.start >= recordsTo || p.row.rows === 0) continue;
    const rows = h.edgeRows.of(store, p);
    const [ts, url, fam] = rows.cols as [Float64Array, Float64Array, Float64Array];
    for (const minute of rows.rowsOfMinutes(Math.max(start, p.start), Math.min(recordsTo, p.end))) {
      for (const i of minute) {
        const t = ts[i]!;
        if (t < start || t >= recordsTo || !matched(url[i]!)) continue;
        countFamilies(bucket(trunc(t, w.unit)), fam[i]!, 1);
      }
    }
  }
  return [...buckets.keys()]
    .sort((a, b) => a - b)
    .map((b) => {
      const c = buckets.get(b)!;
      const row: ResultRow = { timestamp: formatDatetime(b) };
      API_FAMILIES.forEach((f, i) => (row[f.column] = c[i]!));
      return row;
    });
}

/** Every speed path a registry entry can name. */
export const SPEED_PATHS = {
  'partitioned-invocation-stats': invocationStats,
  'partitioned-logs-all': logsAll,
  'partitioned-api-counts': apiCounts,
} as const satisfies Record<SpeedPathName, SpeedPath>;
