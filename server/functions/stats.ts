/**
 * Invocation figures per function over a whole functions.invocation-stats window (not per
 * bucket): what the Functions page's table ranks by. Short windows (5min, 15min, 1hr) are read
 * from the records, so p95/p99 are exact nearest rank; 1day and 7day merge the catalog's hour
 * and day rollups, whose sketches give p95/p99 within 0.5% (docs/ARCHITECTURE.md, "Endpoint
 * rules and where they live"). Counting, the error rule and the rollup merge are the ones the
 * invocation-stats speed path uses (server/store/rollups.ts), so the figures add up the same.
 */
import { nearestRank } from '../endpoints/sql-functions.ts';
import { STATS_INTERVALS } from '../endpoints/windows.ts';
import type { LogStore } from '../store/log-store.ts';
import { addRollupRow, ALL_FUNCTIONS, countRecord, DAY_GRAIN, emptyExecStats, HOUR_GRAIN, type ExecStats } from '../store/rollups.ts';
import { sourceInfo, type SourceName } from '../sources.ts';
import { formatIsoMicros, truncMicros } from '../time.ts';
import { functionSlugs } from './slugs.ts';
import type { FunctionPeriodStats, FunctionStatsRow, FunctionWindow, PercentileKind } from '../../contract/api-types.ts';

const FUNCTION_EDGE: SourceName = 'deno-relay-logs';
/** Function dictionary id 0: records that carry no function id (counted in the total only). */
const NO_FUNCTION = 0;

/**
 * The span functions.invocation-stats covers for an interval: from its first bucket's start,
 * trunc(now − span, unit), to its last bucket's end, trunc(now, unit) + unit.
 */
export function statsWindow(interval: string, now: number): { start: number; end: number; unit: number } {
  const w = STATS_INTERVALS[interval];
  if (!w) throw new Error(`no window for interval ${interval}`);
  return { start: truncMicros(now - w.span, w.unit), end: truncMicros(now, w.unit) + w.unit, unit: w.unit };
}

/** Exact where the rules read records (buckets under an hour), approximate where rollups answer. */
export function percentileKind(unit: number): PercentileKind {
  return unit < HOUR_GRAIN.unit ? 'exact' : 'approximate';
}

interface Acc extends ExecStats {
  /** Exact execution times (records path only). */
  execs?: number[];
}

function period(s: Acc, kind: PercentileKind): FunctionPeriodStats {
  let p95: number | null = null;
  let p99: number | null = null;
  if (s.execs) {
    const sorted = s.execs.sort((a, b) => a - b);
    p95 = nearestRank(sorted, 95);
    p99 = nearestRank(sorted, 99);
  } else if (s.sketch) {
    [p95, p99] = s.sketch.quantiles([95, 99], s.min, s.max) as [number | null, number | null];
  }
  return {
    invocations: s.count,
    errors: s.errors,
    errorRate: s.count > 0 ? s.errors / s.count : null,
    avgMs: s.n > 0 ? s.sum / s.n : null,
    p95Ms: p95,
    p99Ms: p99,
    minMs: s.min,
    maxMs: s.max,
    percentiles: kind,
  };
}

export interface FunctionStats {
  rows: FunctionStatsRow[];
  /** Every invocation of the project in the window, records without a function id included. */
  total: FunctionPeriodStats;
  percentiles: PercentileKind;
  start: number;
  end: number;
}

/** Computes the figures of every function of a project (those with no invocation in the window get zeros). */
export function computeFunctionStats(store: LogStore, projectRef: string, interval: string, now: number): FunctionStats {
  const { start, end, unit } = statsWindow(interval, now);
  const kind = percentileKind(unit);
  const project = store.projects.find(projectRef);
  if (project === undefined) return { rows: [], total: period(emptyExecStats(), kind), percentiles: kind, start, end };
  const fns = store.functionsOf(FUNCTION_EDGE, project);
  const accs = new Map<number, Acc>(fns.map((f) => [f, kind === 'exact' ? { ...emptyExecStats(), execs: [] } : emptyExecStats()]));
  const total: Acc = kind === 'exact' ? { ...emptyExecStats(), execs: [] } : emptyExecStats();
  const table = sourceInfo(FUNCTION_EDGE).alias;
  if (kind === 'exact') {
    // One range of the (project, function, ts) key per function, as the speed path reads it.
    for (const p of store.partitionsWithProject(FUNCTION_EDGE, project, start, end - 1)) {
      const rows = store
        .use(p)
        .rows(`SELECT function, exec, status FROM ${table} WHERE project = ? AND function IN (SELECT value FROM json_each(?)) AND ts >= ? AND ts < ?`, [
          project,
          JSON.stringify(fns),
          start,
          end,
        ]);
      for (const [fn, exec, status] of rows) {
        const e = exec as number | null;
        const acc = accs.get(fn as number);
        if (acc && countRecord(acc, e, status as number | null)) acc.execs!.push(e);
        if (countRecord(total, e, status as number | null)) total.execs!.push(e);
      }
    }
  } else {
    // The rollup grain of the window's buckets; the all-functions row gives the total.
    const g = unit >= DAY_GRAIN.unit ? DAY_GRAIN : HOUR_GRAIN;
    for (const [, fn, ...rest] of store.rollups.rows(g, project, [...fns, ALL_FUNCTIONS], start, end)) {
      const acc = fn === ALL_FUNCTIONS ? total : accs.get(fn as number);
      if (acc) addRollupRow(acc, rest);
    }
  }
  const named = fns.filter((f) => f !== NO_FUNCTION);
  const ids = new Map(
    store.catalog.rows('SELECT id, function_id FROM functions WHERE id IN (SELECT value FROM json_each(?))', [JSON.stringify(named)]).map(([id, text]) => [id as number, text as string]),
  );
  const slugs = functionSlugs(store, project, named);
  const out: FunctionStatsRow[] = [];
  for (const f of named) {
    const functionId = ids.get(f);
    if (functionId === undefined) continue;
    out.push({ functionId, slug: slugs.get(f) ?? null, ...period(accs.get(f)!, kind) });
  }
  // Busiest first; ties by name, so the order is stable.
  const name = (r: FunctionStatsRow) => r.slug ?? r.functionId;
  out.sort((a, b) => b.invocations - a.invocations || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0) || (a.functionId < b.functionId ? -1 : 1));
  return { rows: out, total: period(total, kind), percentiles: kind, start, end };
}

interface Memo {
  dataVersion: number;
  answers: Map<string, FunctionStats>;
}

/** Answers kept per store: the table and the headline ask for the same window together. */
const MEMO_ENTRIES = 16;
const memos = new WeakMap<LogStore, Memo>();

/**
 * computeFunctionStats, remembered until the data changes. The key is the window, not the
 * clock: the same data over the same window gives the same figures.
 */
export function functionStats(store: LogStore, projectRef: string, interval: string, now: number): FunctionStats {
  let memo = memos.get(store);
  if (!memo || memo.dataVersion !== store.dataVersion) memos.set(store, (memo = { dataVersion: store.dataVersion, answers: new Map() }));
  const key = `${projectRef}\u0000${interval}\u0000${statsWindow(interval, now).start}`;
  let hit = memo.answers.get(key);
  if (hit) {
    memo.answers.delete(key);
  } else {
    hit = computeFunctionStats(store, projectRef, interval, now);
    if (memo.answers.size >= MEMO_ENTRIES) memo.answers.delete(memo.answers.keys().next().value!);
  }
  memo.answers.set(key, hit);
  return hit;
}

/** The answer's window description. */
export function windowOf(interval: string, now: number, stats: Pick<FunctionStats, 'start' | 'end'>): FunctionWindow {
  return { interval, start: stats.start, end: stats.end, startIso: formatIsoMicros(stats.start), endIso: formatIsoMicros(stats.end), now };
}
