import { afterEach, describe, expect, it } from 'vitest';
import type { InvocationStatsRow } from '../../contract/api-types.ts';
import { computeFunctionStats } from '../functions/stats.ts';
import { normalizeRecord } from '../ingest/normalize.ts';
import { sourceInfo } from '../sources.ts';
import { DAY, HOUR, MIN, NOW, fnRecord, makeTestApp, rows, type TestApp } from '../testing/fixtures.ts';
import { ImportWriter } from './log-store.ts';
import { HOUR_GRAIN } from './rollups.ts';

const P = 'projaaaaaaaaaaaaaaaa';
const FNS = ['fn-a', 'fn-b', 'fn-c'];
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Records over the last 30 hours, a few per 7 minutes, in time order; some errors, some without exec. */
function records(seed: number) {
  let x = seed;
  const rand = () => ((x = (x * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
  const out: Array<ReturnType<typeof fnRecord>> = [];
  for (let ts = NOW - 30 * HOUR; ts < NOW; ts += 7 * MIN + Math.floor(rand() * MIN)) {
    for (let k = 0; k < 3; k++) {
      const exec = rand() < 0.1 ? null : Math.round(rand() * 5000) / 10;
      out.push(fnRecord(ts + k, { functionId: FNS[Math.floor(rand() * FNS.length)], status: rand() < 0.2 ? 500 : 200, exec }));
    }
  }
  return out;
}

/** count, errors, min, max, avg per bucket of `unit` from the records themselves. */
function expected(recs: Array<ReturnType<typeof fnRecord>>, from: number, unit: number, fn?: string) {
  const out = new Map<number, { count: number; errors: number; execs: number[] }>();
  for (const r of recs) {
    const m = r.metadata as { function_id: string; response: { status_code: number }; execution_time_ms?: number };
    if (r.timestamp < from || (fn && m.function_id !== fn)) continue;
    const b = r.timestamp - (r.timestamp % unit);
    const e = out.get(b) ?? { count: 0, errors: 0, execs: [] };
    e.count++;
    if (m.response.status_code >= 500) e.errors++;
    if (m.execution_time_ms !== undefined) e.execs.push(m.execution_time_ms);
    out.set(b, e);
  }
  return out;
}

function check(got: InvocationStatsRow[], want: ReturnType<typeof expected>): void {
  let seen = 0;
  for (const row of got) {
    const w = want.get(row.timestamp);
    if (!w) {
      expect(row.count).toBe(0);
      continue;
    }
    seen++;
    expect([row.count, row.error_count]).toEqual([w.count, w.errors]);
    expect(row.min_execution_time).toBe(w.execs.length ? Math.min(...w.execs) : null);
    expect(row.max_execution_time).toBe(w.execs.length ? Math.max(...w.execs) : null);
    if (w.execs.length) expect(row.avg_execution_time).toBeCloseTo(w.execs.reduce((a, b) => a + b, 0) / w.execs.length, 9);
  }
  expect(seen).toBe(want.size);
}

describe('hour and day rollups while an import adds to them', () => {
  it('answer every record written so far, in batches, before and after the save, as the catalog has them after it', async () => {
    t = await makeTestApp();
    const info = sourceInfo('deno-relay-logs');
    const recs = records(3);
    const writer = new ImportWriter(t.store, info);
    const stats = (interval: string, fn?: string) =>
      rows<InvocationStatsRow>(t!, 'functions.invocation-stats', { project: P, interval, ...(fn ? { function_id: fn } : {}) });
    const from1day = NOW - DAY - (NOW % HOUR);
    const from7day = NOW - 7 * DAY - (NOW % DAY);
    // Small batches: cells of earlier hours settle and are written while later ones stay open.
    for (let i = 0; i < recs.length; i += 40) {
      const batch = recs.slice(i, i + 40);
      expect(writer.write(batch.map((r) => normalized(r, info)))).toEqual({ imported: batch.length, duplicates: 0 });
      if (i % 200 === 0 || i + 40 >= recs.length) {
        const sofar = recs.slice(0, i + 40);
        check(await stats('1day'), expected(sofar, from1day, HOUR));
        check(await stats('7day'), expected(sofar, from7day, DAY));
        check(await stats('1day', 'fn-b'), expected(sofar, from1day, HOUR, 'fn-b'));
      }
    }
    const before = await stats('1day');
    const page = computeFunctionStats(t.store, P, '1day', NOW);
    expect(page.total.invocations).toBe(recs.filter((r) => r.timestamp >= page.start && r.timestamp < page.end).length);
    await t.store.save();
    // Every cell is in the catalog now, one row per (project, function, hour) and nothing open.
    const stored = t.store.catalog.rows(`SELECT count(*), sum(count) FROM ${HOUR_GRAIN.table} WHERE function = -1`)[0]!;
    expect(stored[1]).toBe(recs.length);
    expect(t.store.rollups.rows(HOUR_GRAIN, 1, [-1], 0, Number.MAX_SAFE_INTEGER)).toHaveLength(stored[0] as number);
    expect(await stats('1day')).toEqual(before);
    expect(computeFunctionStats(t.store, P, '1day', NOW)).toEqual(page);
  });

  it('a failed import leaves none of its cells in the answers', async () => {
    const recs = records(5);
    t = await makeTestApp({ fn: recs.slice(0, 30) });
    const want = await rows<InvocationStatsRow>(t, 'functions.invocation-stats', { project: P, interval: '1day' });
    const lines = recs.slice(30).map((r) => JSON.stringify(r) + '\n');
    const { importStream } = await import('../ingest/import.ts');
    let counted = 0;
    const allFunctions = () => t!.store.rollups.rows(HOUR_GRAIN, 1, [-1], 0, Number.MAX_SAFE_INTEGER).reduce((n, r) => n + (r[2] as number), 0);
    async function* failing() {
      // Chunks with time between them: their batches go in (and open their cells) before the upload fails.
      for (let i = 0; i < lines.length; i += 50) {
        yield Buffer.from(lines.slice(i, i + 50).join(''));
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      for (let tries = 0; tries < 100 && allFunctions() < recs.length / 2; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
      counted = allFunctions();
      throw new Error('the upload was cut');
    }
    await expect(importStream(t.store, failing(), { source: 'function_edge_logs' })).rejects.toThrow(/the upload was cut/);
    expect(counted).toBeGreaterThan(recs.length / 2);
    expect(await rows<InvocationStatsRow>(t, 'functions.invocation-stats', { project: P, interval: '1day' })).toEqual(want);
  });
});

function normalized(r: ReturnType<typeof fnRecord>, info: ReturnType<typeof sourceInfo>) {
  const n = normalizeRecord(r, info, undefined);
  if ('error' in n) throw new Error(n.error);
  return n.record;
}
