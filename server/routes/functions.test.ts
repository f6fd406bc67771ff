import { afterEach, describe, expect, it } from 'vitest';
import type { InvocationStatsRow, FunctionListAnswer, FunctionStatsRow, FunctionTotal } from '../../contract/api-types.ts';
import { at, DAY, fnRecord, HOUR, importRecords, makeTestApp, MIN, NOW, rows, SEC, type TestApp } from '../testing/fixtures.ts';

const P = 'projaaaaaaaaaaaaaaaa';
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A function edge record: exec (ms, or null for none), status, and the URL it was called at. */
function call(ts: number, functionId: string | null, exec: number | null, status: number, url = 'https://projaaaaaaaaaaaaaaaa.supabase.co/functions/v1/hello') {
  const r = fnRecord(ts, { functionId: functionId ?? undefined, exec, status });
  const meta = r.metadata as Record<string, unknown>;
  (meta.request as Record<string, unknown>).url = url;
  if (functionId === null) delete meta.function_id;
  return r;
}

async function list(params: Record<string, string>): Promise<FunctionListAnswer> {
  const res = await t!.request(`/api/functions?${new URLSearchParams(params)}`);
  const body = (await res.json()) as FunctionListAnswer;
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
  return body;
}

const byId = (answer: FunctionListAnswer) => new Map(answer.result.map((r) => [r.functionId, r]));

// now = 2026-11-22T10:30:45.123456Z; the 5min window is [10:25:45, 10:30:46) (second buckets
// 10:25:45 … 10:30:45, the last one running past now).
const START_5MIN = at('2026-11-22T10:25:45Z');
const END_5MIN = at('2026-11-22T10:30:46Z');

/**
 * Three functions plus one record without a function id:
 * - fn-a (`alpha`, supabase.co form): 10, 20, 30, 40, 50 ms; statuses 200, 200, 500, 200, 404.
 * - fn-b (`beta`, functions host form): 1..20 ms, exec 7 answered 429, plus one untimed 200.
 * - fn-c (`gamma`): only outside the window (1 µs before it, and at its end).
 * - no function id: 5 ms, 200 (in the project's total only).
 */
function smallFixture() {
  const a = [10, 20, 30, 40, 50].map((exec, i) =>
    call(START_5MIN + i * SEC, 'fn-a', exec, [200, 200, 500, 200, 404][i]!, 'https://projaaaaaaaaaaaaaaaa.supabase.co/functions/v1/alpha?id=7'),
  );
  const b = Array.from({ length: 20 }, (_, i) => call(NOW - 100 * SEC + i * SEC, 'fn-b', i + 1, i + 1 === 7 ? 429 : 200, 'https://projaaaaaaaaaaaaaaaa.functions.supabase.co/beta'));
  // The window's last instant counts (after now, within the last bucket), as invocation-stats counts it.
  b.push(call(END_5MIN - 1, 'fn-b', null, 200, 'https://projaaaaaaaaaaaaaaaa.functions.supabase.co/beta'));
  const c = [call(START_5MIN - 1, 'fn-c', 999, 500, 'https://projaaaaaaaaaaaaaaaa.supabase.co/functions/v1/gamma'), call(END_5MIN, 'fn-c', 999, 500, 'https://projaaaaaaaaaaaaaaaa.supabase.co/functions/v1/gamma')];
  return [...a, ...b, ...c, call(NOW - 10 * SEC, null, 5, 200)];
}

describe('GET /api/functions over records (exact percentiles)', () => {
  it('gives every function of the project, busiest first, with counts, rates and nearest-rank percentiles computed by hand', async () => {
    t = await makeTestApp({ fn: smallFixture() });
    const answer = await list({ project: P, interval: '5min' });
    expect(answer.percentiles).toBe('exact');
    expect(answer.window).toMatchObject({ interval: '5min', start: START_5MIN, end: END_5MIN, startIso: '2026-11-22T10:25:45.000000Z', endIso: '2026-11-22T10:30:46.000000Z', now: NOW });
    expect(answer.result.map((r) => r.functionId)).toEqual(['fn-b', 'fn-a', 'fn-c']);
    const rows = byId(answer);
    // fn-a: 5 calls, 2 errors (500, 404); nearest rank over 5 values: p95 = rank ceil(4.75) = 5 -> 50.
    expect(rows.get('fn-a')).toEqual<FunctionStatsRow>({
      functionId: 'fn-a',
      slug: 'alpha',
      invocations: 5,
      errors: 2,
      errorRate: 0.4,
      avgMs: 30,
      p95Ms: 50,
      p99Ms: 50,
      minMs: 10,
      maxMs: 50,
      percentiles: 'exact',
    });
    // fn-b: 21 calls (one untimed), 1 error; over 1..20: avg 10.5, p95 = rank 19 -> 19, p99 = rank 20 -> 20.
    expect(rows.get('fn-b')).toEqual<FunctionStatsRow>({
      functionId: 'fn-b',
      slug: 'beta',
      invocations: 21,
      errors: 1,
      errorRate: 1 / 21,
      avgMs: 10.5,
      p95Ms: 19,
      p99Ms: 20,
      minMs: 1,
      maxMs: 20,
      percentiles: 'exact',
    });
    // fn-c has no invocation in the window: listed with zeros, so the table is complete.
    expect(rows.get('fn-c')).toEqual<FunctionStatsRow>({
      functionId: 'fn-c',
      slug: 'gamma',
      invocations: 0,
      errors: 0,
      errorRate: null,
      avgMs: null,
      p95Ms: null,
      p99Ms: null,
      minMs: null,
      maxMs: null,
      percentiles: 'exact',
    });
    // The total: 27 calls (the record without a function id too), 3 errors; 26 timed values
    // 1..20, 5, 10, 20, 30, 40, 50 sum to 210 + 5 + 150 = 365; sorted, rank 25 is 40 and rank 26 is 50.
    expect(answer.total).toEqual({
      invocations: 27,
      errors: 3,
      errorRate: 3 / 27,
      avgMs: 365 / 26,
      p95Ms: 40,
      p99Ms: 50,
      minMs: 1,
      maxMs: 50,
      percentiles: 'exact',
    });
  });

  it('/api/functions/total answers the same total with its window', async () => {
    t = await makeTestApp({ fn: smallFixture() });
    const res = await t.request(`/api/functions/total?project=${P}&interval=5min`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-log-explorer-now')).toBe(String(NOW));
    const { result } = (await res.json()) as { result: FunctionTotal };
    const answer = await list({ project: P, interval: '5min' });
    expect(result).toEqual({ ...answer.total, window: answer.window });
  });

  it('15min and 1hr read records too: a function’s minute percentiles over the window are exact', async () => {
    // 15min: [10:15:00, 10:31:00); 1hr: [09:30:00, 10:31:00).
    const fns = [
      ...[3, 1, 2].map((exec) => call(at('2026-11-22T10:15:00Z'), 'fn-a', exec, 200)),
      call(at('2026-11-22T10:14:59.999999Z'), 'fn-a', 100, 500), // 1hr only
      call(at('2026-11-22T09:30:00Z'), 'fn-a', 200, 503), // 1hr only
      call(at('2026-11-22T09:29:59.999999Z'), 'fn-a', 300, 500), // neither
    ];
    t = await makeTestApp({ fn: fns });
    const q = byId(await list({ project: P, interval: '15min' })).get('fn-a')!;
    expect(q).toMatchObject({ invocations: 3, errors: 0, avgMs: 2, p95Ms: 3, p99Ms: 3, minMs: 1, maxMs: 3, percentiles: 'exact' });
    const h = await list({ project: P, interval: '1hr' });
    expect(h.percentiles).toBe('exact');
    // 1, 2, 3, 100, 200: rank ceil(4.75) = 5 -> 200; avg 306 / 5.
    expect(byId(h).get('fn-a')).toMatchObject({ invocations: 5, errors: 2, errorRate: 0.4, avgMs: 306 / 5, p95Ms: 200, p99Ms: 200, minMs: 1, maxMs: 200 });
  });
});

describe('GET /api/functions over rollups (approximate percentiles)', () => {
  it('1day merges hour rollups over [trunc(now − 1 day, hour), trunc(now, hour) + 1 hour)', async () => {
    // [2026-11-21T10:00, 2026-11-22T11:00)
    const fns = [
      call(at('2026-11-21T10:00:00Z'), 'fn-a', 4, 200),
      call(at('2026-11-21T09:59:59.999999Z'), 'fn-a', 1000, 500), // before the window
      call(at('2026-11-22T10:59:59.999999Z'), 'fn-a', 8, 404),
      call(at('2026-11-22T11:00:00Z'), 'fn-a', 1000, 500), // after it
      call(at('2026-11-22T03:00:00Z'), 'fn-b', 6, 200, 'https://projaaaaaaaaaaaaaaaa.functions.supabase.co/beta'),
    ];
    t = await makeTestApp({ fn: fns });
    const answer = await list({ project: P, interval: '1day' });
    expect(answer.percentiles).toBe('approximate');
    expect(answer.window).toMatchObject({ start: at('2026-11-21T10:00:00Z'), end: at('2026-11-22T11:00:00Z') });
    // Few values: the sketches still hold them exactly.
    expect(byId(answer).get('fn-a')).toEqual<FunctionStatsRow>({
      functionId: 'fn-a',
      slug: 'hello',
      invocations: 2,
      errors: 1,
      errorRate: 0.5,
      avgMs: 6,
      p95Ms: 8,
      p99Ms: 8,
      minMs: 4,
      maxMs: 8,
      percentiles: 'approximate',
    });
    expect(byId(answer).get('fn-b')).toMatchObject({ slug: 'beta', invocations: 1, errors: 0, p99Ms: 6 });
    expect(answer.total).toMatchObject({ invocations: 3, errors: 1, avgMs: 6, minMs: 4, maxMs: 8, percentiles: 'approximate' });
  });

  it('7day merges day rollups over [trunc(now − 7 days, day), trunc(now, day) + 1 day); p95/p99 of many values within 0.5%', async () => {
    // [2026-11-15T00:00, 2026-11-23T00:00). fn-a: 1..1000 ms spread over the days, every 10th a 500.
    const start = at('2026-11-15T00:00:00Z');
    const fns = Array.from({ length: 1000 }, (_, i) => call(start + (i % 8) * DAY + i * SEC, 'fn-a', i + 1, (i + 1) % 10 === 0 ? 500 : 200));
    fns.push(call(start - 1, 'fn-a', 5000, 500));
    t = await makeTestApp({ fn: fns });
    const answer = await list({ project: P, interval: '7day' });
    const a = byId(answer).get('fn-a')!;
    expect(answer.percentiles).toBe('approximate');
    expect(a).toMatchObject({ invocations: 1000, errors: 100, errorRate: 0.1, avgMs: 500.5, minMs: 1, maxMs: 1000 });
    // Nearest rank over 1..1000: p95 = 950, p99 = 990.
    expect(Math.abs(a.p95Ms! - 950) / 950).toBeLessThanOrEqual(0.005);
    expect(Math.abs(a.p99Ms! - 990) / 990).toBeLessThanOrEqual(0.005);
  });
});

describe('GET /api/functions agrees with functions.invocation-stats', () => {
  for (const interval of ['5min', '15min', '1hr', '1day', '7day']) {
    it(`${interval}: per function and in total, invocations and errors equal the sums of the endpoint’s buckets`, async () => {
      const fns: Array<ReturnType<typeof call>> = [];
      // Spread over 8 days, denser near now, so every window holds some and misses some.
      for (let i = 0; i < 400; i++) {
        const back = i < 200 ? i * 1.7 * SEC : (i - 200) * 55 * MIN;
        fns.push(call(NOW - Math.round(back), ['fn-a', 'fn-b', 'fn-c'][i % 3]!, i % 7 === 0 ? null : 1 + (i % 37), i % 5 === 0 ? 500 : 200));
      }
      t = await makeTestApp({ fn: fns });
      const answer = await list({ project: P, interval });
      const sum = (r: InvocationStatsRow[], k: 'count' | 'error_count') => r.reduce((n, x) => n + x[k], 0);
      const all = await rows<InvocationStatsRow>(t, 'functions.invocation-stats', { project: P, interval });
      expect(answer.total.invocations).toBe(sum(all, 'count'));
      expect(answer.total.errors).toBe(sum(all, 'error_count'));
      expect(answer.total.invocations).toBeGreaterThan(0);
      for (const row of answer.result) {
        const one = await rows<InvocationStatsRow>(t, 'functions.invocation-stats', { project: P, interval, function_id: row.functionId });
        expect(row.invocations).toBe(sum(one, 'count'));
        expect(row.errors).toBe(sum(one, 'error_count'));
      }
    });
  }
});

describe('GET /api/functions parameters and errors', () => {
  const bad = async (query: string) => {
    const res = await t!.request(`/api/functions${query}`);
    return { status: res.status, body: (await res.json()) as { error: { errors: Array<{ reason: string; location?: string }> } } };
  };

  it('a missing, repeated or unknown parameter value is a 400 naming the parameter', async () => {
    t = await makeTestApp({ fn: smallFixture() });
    let r = await bad('?interval=1day');
    expect(r.status).toBe(400);
    expect(r.body.error.errors).toEqual([expect.objectContaining({ reason: 'required', location: 'project' })]);
    r = await bad(`?project=${P}&interval=fortnight`);
    expect(r.status).toBe(400);
    expect(r.body.error.errors).toEqual([expect.objectContaining({ reason: 'invalid', location: 'interval' })]);
    r = await bad(`?project=${P}&project=${P}&interval=1day`);
    expect(r.body.error.errors).toEqual([expect.objectContaining({ reason: 'duplicate', location: 'project' })]);
    r = await bad('');
    expect(r.body.error.errors.map((e) => e.location)).toEqual(['project', 'interval']);
    r = await bad(`?project=${'p'.repeat(257)}&interval=1day`);
    expect(r.body.error.errors).toEqual([expect.objectContaining({ location: 'project' })]);
    r = await bad(`/total?project=${P}`);
    expect(r.status).toBe(400);
    expect(r.body.error.errors).toEqual([expect.objectContaining({ location: 'interval' })]);
  });

  it('an unknown project has no functions; the total is zero', async () => {
    t = await makeTestApp({ fn: smallFixture() });
    const answer = await list({ project: 'projzzzzzzzzzzzzzzzz', interval: '1hr' });
    expect(answer.result).toEqual([]);
    expect(answer.total).toMatchObject({ invocations: 0, errors: 0, errorRate: null, p99Ms: null });
  });

  it('needs the key; other methods are a 405 with Allow; HEAD is answered', async () => {
    t = await makeTestApp({ fn: smallFixture() });
    expect((await t.request(`/api/functions?project=${P}&interval=1day`, { headers: { 'x-api-key': 'wrong' } })).status).toBe(401);
    for (const path of ['/api/functions', '/api/functions/total']) {
      const res = await t.request(`${path}?project=${P}&interval=1day`, { method: 'POST' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
      expect((await t.request(`${path}?project=${P}&interval=1day`, { method: 'HEAD' })).status).toBe(200);
    }
  });

  it('an import changes the answer at once (nothing stale is kept)', async () => {
    t = await makeTestApp({ fn: smallFixture() });
    expect(byId(await list({ project: P, interval: '5min' })).get('fn-c')!.invocations).toBe(0);
    // One call in the window, and a newer one (past the window) naming a new slug.
    await importRecords(t.store, 'function_edge_logs', [
      call(NOW - SEC, 'fn-c', 7, 500, 'https://projaaaaaaaaaaaaaaaa.supabase.co/functions/v1/gamma'),
      call(NOW + HOUR, 'fn-c', 9, 200, 'https://projaaaaaaaaaaaaaaaa.supabase.co/functions/v1/gamma-2'),
    ]);
    const row = byId(await list({ project: P, interval: '5min' })).get('fn-c')!;
    expect(row).toMatchObject({ invocations: 1, errors: 1, errorRate: 1, p99Ms: 7, slug: 'gamma-2' });
  });
});

describe('windows follow the clock', () => {
  it('the 1hr window moves with a fixed clock set an hour later', async () => {
    t = await makeTestApp({ fn: [call(NOW - 30 * MIN, 'fn-a', 10, 200)] });
    expect(byId(await list({ project: P, interval: '1hr' })).get('fn-a')!.invocations).toBe(1);
    t.clock.set('fixed', NOW + 2 * HOUR);
    expect(byId(await list({ project: P, interval: '1hr' })).get('fn-a')!.invocations).toBe(0);
  });
});
