import { afterEach, describe, expect, it } from 'vitest';
import type { FunctionBucketsAnswer, InvocationStatsRow } from '../../contract/api-types.ts';
import { at, DAY, fnRecord, HOUR, makeTestApp, MIN, NOW, rows, SEC, type TestApp } from '../testing/fixtures.ts';

const P = 'projaaaaaaaaaaaaaaaa';
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function buckets(params: Record<string, string>): Promise<FunctionBucketsAnswer> {
  const res = await t!.request(`/api/functions/buckets?${new URLSearchParams({ project: P, ...params })}`);
  const body = (await res.json()) as FunctionBucketsAnswer;
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
  return body;
}

const call = (ts: number, functionId: string, exec: number | null, status = 200) => fnRecord(ts, { functionId, exec, status });

const EMPTY = { min_execution_time: null, max_execution_time: null, avg_execution_time: null, p95_execution_time: null, p99_execution_time: null, count: 0, error_count: 0 };

describe('GET /api/functions/buckets: an explicit window, counted as functions.invocation-stats counts', () => {
  // Two days before the test clock's now, so no interval of the endpoint reaches it.
  const H0 = at('2026-11-20T00:00:00Z');

  /**
   * 00:00–01:00: fn-a 10, 20, 30, 40 ms (200, 500, 200, 404) and one untimed 503; fn-b 5 ms.
   * 01:00–02:00: nothing. 02:00–03:00: fn-b 1..20 ms, the 7 ms one answered 429.
   * Outside: 1 µs before 00:00 and at 03:00 exactly (999 ms, 500).
   */
  function hourFixture() {
    return [
      ...[10, 20, 30, 40].map((exec, i) => call(H0 + i * MIN, 'fn-a', exec, [200, 500, 200, 404][i]!)),
      call(H0 + 10 * MIN, 'fn-a', null, 503),
      call(H0 + 59 * MIN + 59 * SEC, 'fn-b', 5),
      ...Array.from({ length: 20 }, (_, i) => call(H0 + 2 * HOUR + i * SEC, 'fn-b', i + 1, i + 1 === 7 ? 429 : 200)),
      call(H0 - 1, 'fn-a', 999, 500),
      call(H0 + 3 * HOUR, 'fn-a', 999, 500),
    ];
  }

  it('hour buckets: every bucket of [start, end) a row, counts, errors and nearest-rank p95/p99 worked out by hand', async () => {
    t = await makeTestApp({ fn: hourFixture() });
    const answer = await buckets({ start: '2026-11-20T00:00:00Z', end: '2026-11-20T03:00:00Z', width: 'hour' });
    expect(answer.window).toEqual({ start: H0, end: H0 + 3 * HOUR, width: HOUR, startIso: '2026-11-20T00:00:00.000000Z', endIso: '2026-11-20T03:00:00.000000Z' });
    expect(answer.result).toEqual<InvocationStatsRow[]>([
      // 6 calls, 3 errors (500, 404, 503); timed 5, 10, 20, 30, 40: p95 at rank ceil(0.95·5) = 5.
      { timestamp: H0, count: 6, error_count: 3, min_execution_time: 5, max_execution_time: 40, avg_execution_time: 21, p95_execution_time: 40, p99_execution_time: 40 },
      { timestamp: H0 + HOUR, ...EMPTY },
      // 1..20: p95 at rank 19, p99 at rank 20; one 429.
      { timestamp: H0 + 2 * HOUR, count: 20, error_count: 1, min_execution_time: 1, max_execution_time: 20, avg_execution_time: 10.5, p95_execution_time: 19, p99_execution_time: 20 },
    ]);
  });

  it('function_id narrows to one function; an unknown one or an unknown project gives empty buckets', async () => {
    t = await makeTestApp({ fn: hourFixture() });
    const window = { start: '2026-11-20T00:00:00Z', end: '2026-11-20T03:00:00Z', width: 'hour' };
    const a = await buckets({ ...window, function_id: 'fn-a' });
    // fn-a: 5 calls, 3 errors; timed 10, 20, 30, 40: p95 at rank ceil(3.8) = 4.
    expect(a.result[0]).toEqual({ timestamp: H0, count: 5, error_count: 3, min_execution_time: 10, max_execution_time: 40, avg_execution_time: 25, p95_execution_time: 40, p99_execution_time: 40 });
    expect(a.result.slice(1).map((r) => r.count)).toEqual([0, 0]);
    expect((await buckets({ ...window, function_id: 'fn-zzz' })).result).toEqual([0, 1, 2].map((i) => ({ timestamp: H0 + i * HOUR, ...EMPTY })));
    const other = await t.request(`/api/functions/buckets?${new URLSearchParams({ ...window, project: 'projzzzzzzzzzzzzzzzz' })}`);
    expect(((await other.json()) as FunctionBucketsAnswer).result.every((r) => r.count === 0)).toBe(true);
  });

  it('second buckets are exact: 100 values 1..100 give p95 95 and p99 99', async () => {
    const s = at('2026-11-20T10:00:01Z');
    t = await makeTestApp({ fn: Array.from({ length: 100 }, (_, i) => call(s + i * 1000, i % 2 ? 'fn-b' : 'fn-a', 100 - i)) });
    const answer = await buckets({ start: '2026-11-20T10:00:00Z', end: '2026-11-20T10:00:03Z', width: 'second' });
    expect(answer.result.map((r) => r.count)).toEqual([0, 100, 0]);
    expect(answer.result[1]).toMatchObject({ timestamp: s, min_execution_time: 1, max_execution_time: 100, avg_execution_time: 50.5, p95_execution_time: 95, p99_execution_time: 99 });
    // fn-a holds the even values 2..100: 50 of them, p95 at rank ceil(47.5) = 48 -> 96, p99 at rank 50 -> 100.
    const a = await buckets({ start: '2026-11-20T10:00:00Z', end: '2026-11-20T10:00:03Z', width: 'second', function_id: 'fn-a' });
    expect(a.result[1]).toMatchObject({ count: 50, p95_execution_time: 96, p99_execution_time: 100 });
  });

  it('one function’s minute buckets come from the records; day buckets from the day rollups', async () => {
    const m = at('2026-11-20T10:05:00Z');
    t = await makeTestApp({
      fn: [call(m, 'fn-a', 3), call(m + 59 * SEC, 'fn-a', 1, 500), call(m + MIN, 'fn-a', 2), call(m, 'fn-b', 50), call(at('2026-11-18T12:00:00Z'), 'fn-a', 8, 404)],
    });
    const mins = await buckets({ start: '2026-11-20T10:05:00Z', end: '2026-11-20T10:07:00Z', width: 'minute', function_id: 'fn-a' });
    expect(mins.result).toEqual([
      { timestamp: m, count: 2, error_count: 1, min_execution_time: 1, max_execution_time: 3, avg_execution_time: 2, p95_execution_time: 3, p99_execution_time: 3 },
      { timestamp: m + MIN, count: 1, error_count: 0, min_execution_time: 2, max_execution_time: 2, avg_execution_time: 2, p95_execution_time: 2, p99_execution_time: 2 },
    ]);
    const days = await buckets({ start: '2026-11-18T00:00:00Z', end: '2026-11-21T00:00:00Z', width: 'day' });
    expect(days.result.map((r) => [r.count, r.error_count, r.p95_execution_time])).toEqual([
      [1, 1, 8],
      [0, 0, null],
      [4, 1, 50],
    ]);
  });
});

describe('GET /api/functions/buckets over the endpoint’s own window equals functions.invocation-stats', () => {
  const WIDTH_NAMES = new Map<number, string>([
    [SEC, 'second'],
    [MIN, 'minute'],
    [HOUR, 'hour'],
    [DAY, 'day'],
  ]);
  for (const interval of ['5min', '15min', '1hr', '1day', '7day']) {
    it(`${interval}, all functions and each one`, async () => {
      const fns: Array<ReturnType<typeof call>> = [];
      // Spread over 8 days, denser near now, so every window holds some and misses some.
      for (let i = 0; i < 400; i++) {
        const back = i < 200 ? i * 1.7 * SEC : (i - 200) * 55 * MIN;
        fns.push(call(NOW - Math.round(back), ['fn-a', 'fn-b', 'fn-c'][i % 3]!, i % 7 === 0 ? null : 1 + (i % 37), i % 5 === 0 ? 500 : 200));
      }
      t = await makeTestApp({ fn: fns });
      for (const function_id of ['', 'fn-a', 'fn-b']) {
        const expected = await rows<InvocationStatsRow>(t, 'functions.invocation-stats', { project: P, interval, function_id });
        expect(expected.reduce((n, r) => n + r.count, 0)).toBeGreaterThan(0);
        const unit = expected[1]!.timestamp - expected[0]!.timestamp;
        const iso = (us: number) => new Date(us / 1000).toISOString();
        const answer = await buckets({ start: iso(expected[0]!.timestamp), end: iso(expected[expected.length - 1]!.timestamp + unit), width: WIDTH_NAMES.get(unit)!, function_id });
        expect(answer.result).toEqual(expected);
      }
    });
  }
});

describe('GET /api/functions/buckets parameters', () => {
  const bad = async (query: string) => {
    const res = await t!.request(`/api/functions/buckets?${query}`);
    return { status: res.status, errors: ((await res.json()) as { error: { errors: Array<{ reason: string; location?: string }> } }).error.errors };
  };
  const ok = `project=${P}&start=2026-11-20T00:00:00Z&end=2026-11-20T03:00:00Z&width=hour`;

  it('every problem is a 400 naming its parameter', async () => {
    t = await makeTestApp({ fn: [call(NOW - 1, 'fn-a', 1)] });
    let r = await bad('');
    expect(r.status).toBe(400);
    expect(r.errors.map((e) => [e.reason, e.location])).toEqual([
      ['required', 'project'],
      ['required', 'width'],
      ['required', 'start'],
      ['required', 'end'],
    ]);
    r = await bad(ok.replace('width=hour', 'width=week'));
    expect(r.errors).toEqual([expect.objectContaining({ reason: 'invalid', location: 'width' })]);
    r = await bad(ok.replace('start=2026-11-20T00:00:00Z', 'start=yesterday'));
    expect(r.errors).toEqual([expect.objectContaining({ reason: 'invalid', location: 'start' })]);
    r = await bad(ok.replace('start=2026-11-20T00:00:00Z', 'start=2500-01-01T00:00:00Z'));
    expect(r.errors).toEqual([expect.objectContaining({ reason: 'invalid', location: 'start' })]);
    // Bounds must be bucket boundaries of the width.
    r = await bad(ok.replace('end=2026-11-20T03:00:00Z', 'end=2026-11-20T03:30:00Z'));
    expect(r.errors).toEqual([expect.objectContaining({ reason: 'invalid', location: 'end' })]);
    r = await bad(ok.replace('end=2026-11-20T03:00:00Z', 'end=2026-11-20T00:00:00Z'));
    expect(r.errors).toEqual([expect.objectContaining({ location: 'end', message: 'end must be after start' })]);
    // An hour of second buckets is 3,600 rows: more than the endpoint answers.
    r = await bad(ok.replace('end=2026-11-20T03:00:00Z', 'end=2026-11-20T01:00:00Z').replace('width=hour', 'width=second'));
    expect(r.errors).toEqual([expect.objectContaining({ location: 'end' })]);
    expect((await t.request(`/api/functions/buckets?${ok.replace('end=2026-11-20T03:00:00Z', 'end=2026-11-20T00:16:40Z').replace('width=hour', 'width=second')}`)).status).toBe(200);
    r = await bad(`${ok}&width=hour`);
    expect(r.errors).toEqual([expect.objectContaining({ reason: 'duplicate', location: 'width' })]);
    r = await bad(`${ok}&function_id=${'f'.repeat(257)}`);
    expect(r.errors).toEqual([expect.objectContaining({ location: 'function_id' })]);
  });

  it('needs the key; other methods are a 405; HEAD is answered', async () => {
    t = await makeTestApp({ fn: [call(NOW - 1, 'fn-a', 1)] });
    expect((await t.request(`/api/functions/buckets?${ok}`, { headers: { 'x-api-key': 'wrong' } })).status).toBe(401);
    const res = await t.request(`/api/functions/buckets?${ok}`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect((await t.request(`/api/functions/buckets?${ok}`, { method: 'HEAD' })).status).toBe(200);
  });
});
