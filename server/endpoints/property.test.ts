/**
 * The optimized paths (covering indexes, per-minute rollups with sketches, the URL dictionary,
 * tie handling) against a plain reference computation written here from the endpoint rules (queries/*.sql headers), on
 * random data across many seeds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiCountsRow, InvocationStatsRow, LogRow } from '../../contract/api-types.ts';
import { DAY, HOUR, MIN, NOW, SEC, edgeRecord, fnRecord, importRecords, makeTestApp, rows, type TestApp } from '../testing/fixtures.ts';
import { formatIsoMicros } from '../time.ts';
import { seededUniform } from '../demo/random.ts';
import { ENDPOINTS } from '../../queries/registry.ts';
import { validateParams } from './params.ts';
import { runEndpointSql } from './run.ts';


const PROJECTS = ['projaaaaaaaaaaaaaaaa', 'projbbbbbbbbbbbbbbbb'];
const FUNCTIONS = ['fn-a', 'fn-b', 'fn-c'];
const PATHS = ['/rest/v1/t', '/auth/v1/token', '/storage/v1/object/auth/x', '/realtime/v1/ws', '/graphql/v1', '/rest/v1/rpc/realtime_x'];
const INTERVALS: Record<string, { span: number; unit: number }> = {
  '5min': { span: 5 * MIN, unit: SEC },
  '15min': { span: 15 * MIN, unit: MIN },
  '1hr': { span: HOUR, unit: MIN },
  '1day': { span: DAY, unit: HOUR },
  '7day': { span: 7 * DAY, unit: DAY },
};

/** Timestamps clustered near now (most within minutes), a tail over 9 days, a few after now. */
function randomTs(r: () => number): number {
  const u = r();
  if (u < 0.3) return NOW - Math.floor(r() * 6 * MIN);
  if (u < 0.55) return NOW - Math.floor(r() * 2 * HOUR);
  if (u < 0.95) return NOW - Math.floor(r() * 9 * DAY);
  return NOW + Math.floor(r() * 2 * MIN);
}

const trunc = (ts: number, unit: number) => ts - (ts % unit);
const nearestRank = (sorted: number[], p: number) => sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]!;

interface Fn {
  project: string;
  functionId: string;
  ts: number;
  exec: number | null;
  status: number;
}

function referenceStats(recs: Fn[], project: string, functionId: string, interval: string) {
  const { span, unit } = INTERVALS[interval]!;
  const first = trunc(NOW - span, unit);
  const last = trunc(NOW, unit);
  const out = [];
  for (let b = first; b <= last; b += unit) {
    const inB = recs.filter((r) => r.project === project && (!functionId || r.functionId === functionId) && trunc(r.ts, unit) === b);
    const execs = inB.map((r) => r.exec).filter((e): e is number => e !== null).sort((x, y) => x - y);
    out.push({
      timestamp: b,
      count: inB.length,
      error_count: inB.filter((r) => r.status >= 400).length,
      execs,
      min: execs.length ? execs[0]! : null,
      max: execs.length ? execs[execs.length - 1]! : null,
      avg: execs.length ? execs.reduce((s, x) => s + x, 0) / execs.length : null,
    });
  }
  return out;
}

/** Within one rank of the nearest-rank value, or within 1% of it (the endpoint rules). */
function acceptablePercentile(got: number | null, sorted: number[], p: number): boolean {
  if (sorted.length === 0) return got === null;
  if (got === null) return false;
  const k = Math.max(1, Math.ceil((p / 100) * sorted.length));
  const exact = sorted[k - 1]!;
  const near = [sorted[k - 2], sorted[k - 1], sorted[k]].filter((v): v is number => v !== undefined);
  return near.includes(got) || Math.abs(got - exact) <= 0.01 * Math.abs(exact) + 1e-9;
}

const SEEDS = 12;

describe.each(Array.from({ length: SEEDS }, (_, i) => i + 1))('seed %i', (seed) => {
  let t: TestApp;
  let fns: Fn[];
  let edges: Array<{ id: string; project: string; ts: number; path: string; url: string }>;
  beforeAll(async () => {
    const r = seededUniform(seed);
    fns = Array.from({ length: 600 + Math.floor(r() * 600) }, () => ({
      project: PROJECTS[r() < 0.8 ? 0 : 1]!,
      functionId: FUNCTIONS[Math.floor(r() * FUNCTIONS.length)]!,
      ts: randomTs(r),
      exec: r() < 0.05 ? null : Math.round(Math.exp(r() * 8) * 100) / 100,
      status: [200, 200, 200, 201, 302, 400, 404, 500][Math.floor(r() * 8)]!,
    }));
    // Ties: some records share instants.
    for (let i = 0; i < 40; i++) fns.push({ ...fns[i]!, ts: fns[i]!.ts });
    edges = Array.from({ length: 400 + Math.floor(r() * 400) }, (_, i) => {
      const project = PROJECTS[r() < 0.7 ? 0 : 1]!;
      const path = PATHS[Math.floor(r() * PATHS.length)]!;
      return { id: `e-${seed}-${String(Math.floor(r() * 1e6)).padStart(6, '0')}-${i}`, project, ts: r() < 0.1 ? NOW - 3000 : randomTs(r), path, url: `https://${project}.supabase.co${path}?q=${Math.floor(r() * 5)}` };
    });
    const fnRecs = fns.map((f, i) => fnRecord(f.ts, { id: `f-${i}`, project: f.project, functionId: f.functionId, exec: f.exec, status: f.status }));
    const half = Math.floor(fnRecs.length / 2);
    t = await makeTestApp({ fn: fnRecs.slice(0, half), edge: edges.map((e) => edgeRecord(e.ts, { id: e.id, project: e.project, path: e.path, url: e.url })) });
    // A second import merges into rollup rows the first one wrote.
    await importRecords(t.store, 'function_edge_logs', fnRecs.slice(half));
  });
  afterAll(() => t.close());

  it('functions.invocation-stats matches the reference for every interval and function filter', async () => {
    for (const interval of Object.keys(INTERVALS)) {
      for (const functionId of ['', 'fn-b']) {
        const params = { project: PROJECTS[0]!, interval, function_id: functionId };
        const ref = referenceStats(fns, PROJECTS[0]!, functionId, interval);
        // The speed path over HTTP, and the SQL definition over the flat view: the same rules.
        const def = ENDPOINTS.find((e) => e.name === 'functions.invocation-stats')!;
        for (const [form, got] of [
          ['speed path', await rows<InvocationStatsRow>(t, 'functions.invocation-stats', params)],
          ['SQL', (await runEndpointSql(t.store, def, validateParams(def, params), NOW)) as unknown as InvocationStatsRow[]],
        ] as const) {
        expect(got.map((g) => g.timestamp), form).toEqual(ref.map((x) => x.timestamp));
        got.forEach((g, i) => {
          const x = ref[i]!;
          const where = `${form} ${interval} ${functionId || 'all'} bucket ${i}`;
          expect([g.count, g.error_count, g.min_execution_time, g.max_execution_time], where).toEqual([x.count, x.error_count, x.min, x.max]);
          if (x.avg === null) expect(g.avg_execution_time, where).toBeNull();
          else expect(Math.abs(g.avg_execution_time! - x.avg), where).toBeLessThan(1e-9 * Math.max(1, x.avg));
          // Second buckets and one function's minute buckets are exact; the rest come from
          // rollups with sketches.
          const exactPath = INTERVALS[interval]!.unit < MIN || (INTERVALS[interval]!.unit < HOUR && functionId !== '');
          if (exactPath) {
            expect([g.p95_execution_time, g.p99_execution_time], where).toEqual([x.execs.length ? nearestRank(x.execs, 95) : null, x.execs.length ? nearestRank(x.execs, 99) : null]);
          } else {
            expect(acceptablePercentile(g.p95_execution_time, x.execs, 95), `${where} p95 ${g.p95_execution_time}`).toBe(true);
            expect(acceptablePercentile(g.p99_execution_time, x.execs, 99), `${where} p99 ${g.p99_execution_time}`).toBe(true);
          }
        });
        }
      }
    }
  });

  it('usage.api-counts matches the reference for every interval', async () => {
    const windows: Record<string, [number, number]> = { hourly: [HOUR, HOUR], daily: [7 * DAY, DAY], minutely: [HOUR, MIN] };
    const pattern = `${PROJECTS[0]}\\.supabase`;
    for (const [interval, [span, unit]] of Object.entries(windows)) {
      const got = await rows<ApiCountsRow>(t, 'usage.api-counts', { project: pattern, interval });
      const buckets = new Map<number, [number, number, number, number]>();
      for (const e of edges) {
        if (!e.url.includes(`${PROJECTS[0]}.supabase`) || e.ts < NOW - span) continue;
        const b = trunc(e.ts, unit);
        const c = buckets.get(b) ?? [0, 0, 0, 0];
        ['/rest', '/storage', '/auth', '/realtime'].forEach((f, i) => {
          if (e.path.includes(f)) c[i]!++;
        });
        buckets.set(b, c);
      }
      const ref = [...buckets].sort((a, b) => a[0] - b[0]).map(([b, c]) => ({
        timestamp: formatIsoMicros(b).slice(0, 19),
        total_rest_requests: c[0],
        total_storage_requests: c[1],
        total_auth_requests: c[2],
        total_realtime_requests: c[3],
      }));
      expect(got, interval).toEqual(ref);
      // The SQL definition, without the in-memory accelerator, agrees too.
      const def = ENDPOINTS.find((e) => e.name === 'usage.api-counts')!;
      expect(await runEndpointSql(t.store, def, validateParams(def, { project: pattern, interval }), NOW), `${interval} (SQL)`).toEqual(ref);
    }
  });

  it('logs.all matches the reference for every tier and a range', async () => {
    const windows: Record<string, number> = { FREE: DAY, PRO: 7 * DAY, PAYG: 90 * DAY, ENTERPRISE: 90 * DAY, OTHER: DAY };
    for (const [tier, w] of Object.entries(windows)) {
      for (const range of [undefined, { start: NOW - 3 * DAY, end: NOW - 3000 }]) {
        const params: Record<string, string> = { project: PROJECTS[0]!, project_tier: tier };
        if (range) {
          params.iso_timestamp_start = formatIsoMicros(range.start);
          params.iso_timestamp_end = formatIsoMicros(range.end);
        }
        const got = await rows<LogRow>(t, 'logs.all', params);
        const def = ENDPOINTS.find((e) => e.name === 'logs.all')!;
        const sql = (await runEndpointSql(t.store, def, validateParams(def, params), NOW)) as unknown as LogRow[];
        // The SQL definition returns the same records, field for field.
        expect(sql, `${tier} ${JSON.stringify(range)} (SQL)`).toEqual(got);
        const ref = edges
          .filter((e) => e.project === PROJECTS[0] && e.ts > NOW - w && (!range || (e.ts > range.start && e.ts <= range.end)))
          .sort((a, b) => b.ts - a.ts || (a.id < b.id ? -1 : 1))
          .slice(0, 100)
          .map((e) => [e.id, e.ts]);
        expect(got.map((g) => [g.id, g.timestamp]), `${tier} ${JSON.stringify(range)}`).toEqual(ref);
      }
    }
  });
});
