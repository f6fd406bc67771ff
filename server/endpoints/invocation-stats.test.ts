import { afterEach, describe, expect, it } from 'vitest';
import { DAY, HOUR, MIN, NOW, SEC, at, fnRecord, importRecords, makeTestApp, rows, type TestApp } from '../testing/fixtures.ts';
import type { InvocationStatsRow } from '../../contract/api-types.ts';

const P = 'projaaaaaaaaaaaaaaaa';
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const stats = (params: Record<string, string>) => rows<InvocationStatsRow>(t!, 'functions.invocation-stats', { project: P, ...params });

describe('functions.invocation-stats buckets', () => {
  // now = 2026-11-22T10:30:45.123456Z
  const cases: Array<[string, number, number, number, number]> = [
    // interval, buckets, unit, first bucket, last bucket (computed by hand from now)
    ['5min', 301, SEC, at('2026-11-22T10:25:45Z'), at('2026-11-22T10:30:45Z')],
    ['15min', 16, MIN, at('2026-11-22T10:15:00Z'), at('2026-11-22T10:30:00Z')],
    ['1hr', 61, MIN, at('2026-11-22T09:30:00Z'), at('2026-11-22T10:30:00Z')],
    ['1day', 25, HOUR, at('2026-11-21T10:00:00Z'), at('2026-11-22T10:00:00Z')],
    ['7day', 8, DAY, at('2026-11-15T00:00:00Z'), at('2026-11-22T00:00:00Z')],
  ];
  for (const [interval, n, unit, first, last] of cases) {
    it(`${interval} gives ${n} ascending buckets one unit apart, from trunc(now - span) to trunc(now)`, async () => {
      t = await makeTestApp({ fn: [fnRecord(NOW - 1)] });
      const r = await stats({ interval });
      expect(r).toHaveLength(n);
      expect(r[0]!.timestamp).toBe(first);
      expect(r[n - 1]!.timestamp).toBe(last);
      for (let i = 1; i < n; i++) expect(r[i]!.timestamp - r[i - 1]!.timestamp).toBe(unit);
    });
  }

  it('an unknown interval behaves as 1day', async () => {
    t = await makeTestApp({ fn: [fnRecord(NOW - 1)] });
    expect(await stats({ interval: 'fortnight' })).toEqual(await stats({ interval: '1day' }));
  });

  it('empty buckets are rows with count 0, error_count 0 and null aggregates', async () => {
    t = await makeTestApp({ fn: [fnRecord(NOW - 1)] });
    const r = await stats({ interval: '15min' });
    expect(r[0]).toEqual({
      timestamp: at('2026-11-22T10:15:00Z'),
      min_execution_time: null,
      max_execution_time: null,
      avg_execution_time: null,
      p95_execution_time: null,
      p99_execution_time: null,
      count: 0,
      error_count: 0,
    });
  });

  it('a record exactly at the first bucket counts; 1 µs earlier does not; past the last bucket does not', async () => {
    const first = at('2026-11-22T09:30:00Z');
    t = await makeTestApp({
      fn: [fnRecord(first), fnRecord(first - 1), fnRecord(at('2026-11-22T10:30:59.999999Z')), fnRecord(at('2026-11-22T10:31:00Z'))],
    });
    const r = await stats({ interval: '1hr' });
    expect(r[0]!.count).toBe(1);
    expect(r[60]!.count).toBe(1);
    expect(r.reduce((s, x) => s + x.count, 0)).toBe(2);
  });

  it('records land in the bucket of their timestamp truncated to the unit', async () => {
    t = await makeTestApp({
      fn: [fnRecord(at('2026-11-22T10:29:00Z')), fnRecord(at('2026-11-22T10:29:59.999999Z')), fnRecord(at('2026-11-22T10:30:00Z'))],
    });
    const r = await stats({ interval: '15min' });
    const byTs = new Map(r.map((x) => [x.timestamp, x.count]));
    expect(byTs.get(at('2026-11-22T10:29:00Z'))).toBe(2);
    expect(byTs.get(at('2026-11-22T10:30:00Z'))).toBe(1);
  });
});

describe('functions.invocation-stats aggregates', () => {
  const bucket = at('2026-11-22T10:20:00Z');

  it('p95 and p99 are nearest-rank over 1..100 ms (95 and 99), with min 1, max 100, avg 50.5', async () => {
    t = await makeTestApp({ fn: Array.from({ length: 100 }, (_, i) => fnRecord(bucket + i * 1000, { exec: 100 - i })) });
    const r = (await stats({ interval: '1hr' })).find((x) => x.timestamp === bucket)!;
    expect(r).toMatchObject({ count: 100, min_execution_time: 1, max_execution_time: 100, avg_execution_time: 50.5 });
    expect(r.p95_execution_time).toBe(95);
    expect(r.p99_execution_time).toBe(99);
  });

  it('nearest rank on 20 values picks rank ceil(0.95*20)=19 and ceil(0.99*20)=20', async () => {
    const values = [7, 3, 19, 1, 12, 5, 20, 2, 15, 9, 4, 18, 6, 11, 8, 14, 10, 16, 13, 17];
    t = await makeTestApp({ fn: values.map((v, i) => fnRecord(bucket + i, { exec: v })) });
    const r = (await stats({ interval: '1hr' })).find((x) => x.timestamp === bucket)!;
    expect(r.p95_execution_time).toBe(19);
    expect(r.p99_execution_time).toBe(20);
  });

  it('a single value is every percentile', async () => {
    t = await makeTestApp({ fn: [fnRecord(bucket, { exec: 42.5 })] });
    const r = (await stats({ interval: '1hr' })).find((x) => x.timestamp === bucket)!;
    expect(r).toMatchObject({ count: 1, min_execution_time: 42.5, max_execution_time: 42.5, avg_execution_time: 42.5, p95_execution_time: 42.5, p99_execution_time: 42.5 });
  });

  it('records without execution time count but stay out of min/max/avg/percentiles', async () => {
    t = await makeTestApp({ fn: [fnRecord(bucket, { exec: 10 }), fnRecord(bucket + 1, { exec: null }), fnRecord(bucket + 2, { exec: 30 })] });
    const r = (await stats({ interval: '1hr' })).find((x) => x.timestamp === bucket)!;
    expect(r).toMatchObject({ count: 3, min_execution_time: 10, max_execution_time: 30, avg_execution_time: 20, p95_execution_time: 30 });
  });

  it('a bucket whose records all lack execution time has a count and null aggregates', async () => {
    t = await makeTestApp({ fn: [fnRecord(bucket, { exec: null })] });
    const r = (await stats({ interval: '1hr' })).find((x) => x.timestamp === bucket)!;
    expect(r).toMatchObject({ count: 1, min_execution_time: null, avg_execution_time: null, p95_execution_time: null });
  });

  it('error_count counts status_code >= 400 only', async () => {
    const statuses = [200, 201, 301, 399, 400, 404, 499, 500, 503];
    t = await makeTestApp({ fn: statuses.map((s, i) => fnRecord(bucket + i, { status: s })) });
    const r = (await stats({ interval: '1hr' })).find((x) => x.timestamp === bucket)!;
    expect(r.count).toBe(9);
    expect(r.error_count).toBe(5);
  });

  it('function_id narrows to one function; empty means all; unknown gives all-zero buckets', async () => {
    t = await makeTestApp({
      fn: [fnRecord(bucket, { functionId: 'fn-a' }), fnRecord(bucket, { functionId: 'fn-a' }), fnRecord(bucket, { functionId: 'fn-b' })],
    });
    const count = async (p: Record<string, string>) => (await stats({ interval: '1hr', ...p })).reduce((s, x) => s + x.count, 0);
    expect(await count({ function_id: 'fn-a' })).toBe(2);
    expect(await count({ function_id: 'fn-b' })).toBe(1);
    expect(await count({ function_id: '' })).toBe(3);
    expect(await count({})).toBe(3);
    const unknown = await stats({ interval: '1hr', function_id: 'fn-zzz' });
    expect(unknown).toHaveLength(61);
    expect(unknown.every((x) => x.count === 0)).toBe(true);
  });

  it("another project's invocations are not counted", async () => {
    t = await makeTestApp({ fn: [fnRecord(bucket), fnRecord(bucket, { project: 'projbbbbbbbbbbbbbbbb' })] });
    expect((await stats({ interval: '1hr' })).reduce((s, x) => s + x.count, 0)).toBe(1);
  });
});

describe('functions.invocation-stats exact buckets over records that keep coming', () => {
  // 5min: second buckets from 10:25:45 to 10:30:45; the records' hour partition is 10:00-11:00.
  const s0 = at('2026-11-22T10:29:00Z');

  it('records added to the hour after an answer are counted in the next one, with their aggregates', async () => {
    t = await makeTestApp({ fn: [fnRecord(s0, { exec: 10 }), fnRecord(s0 + 1, { exec: 30, status: 500 })] });
    const first = (await stats({ interval: '5min' })).find((x) => x.timestamp === s0)!;
    expect(first).toMatchObject({ count: 2, error_count: 1, min_execution_time: 10, max_execution_time: 30, avg_execution_time: 20 });
    await importRecords(t.store, 'function_edge_logs', [fnRecord(s0 + 2, { exec: 2 }), fnRecord(s0 + SEC, { exec: 7, status: 404 }), fnRecord(s0 + 3, { exec: null })]);
    t.clock.set('fixed', NOW + 1);
    const r = await stats({ interval: '5min' });
    // By hand: s0 holds 10, 30, 2 and one without a time; s0 + 1 s holds 7.
    expect(r.find((x) => x.timestamp === s0)).toMatchObject({ count: 4, error_count: 1, min_execution_time: 2, max_execution_time: 30, avg_execution_time: 14, p95_execution_time: 30 });
    expect(r.find((x) => x.timestamp === s0 + SEC)).toMatchObject({ count: 1, error_count: 1, min_execution_time: 7, p99_execution_time: 7 });
    expect(r.reduce((n, x) => n + x.count, 0)).toBe(5);
  });

  it('one function\'s minute buckets (15min) follow new records too, and leave other functions out', async () => {
    const m = at('2026-11-22T10:20:00Z');
    t = await makeTestApp({ fn: [fnRecord(m, { functionId: 'fn-a', exec: 5 }), fnRecord(m, { functionId: 'fn-b', exec: 50 })] });
    expect((await stats({ interval: '15min', function_id: 'fn-a' })).find((x) => x.timestamp === m)).toMatchObject({ count: 1, max_execution_time: 5 });
    await importRecords(t.store, 'function_edge_logs', [fnRecord(m + MIN - 1, { functionId: 'fn-a', exec: 9 }), fnRecord(m + 5, { functionId: 'fn-b', exec: 99 })]);
    t.clock.set('fixed', NOW + 1);
    expect((await stats({ interval: '15min', function_id: 'fn-a' })).find((x) => x.timestamp === m)).toMatchObject({ count: 2, min_execution_time: 5, max_execution_time: 9, avg_execution_time: 7 });
  });

  it('for all functions, a record without a function id counts (as the endpoint SQL counts every record of the project)', async () => {
    const bare = fnRecord(s0 + 4, { exec: 1 }) as { metadata: Record<string, unknown> };
    delete bare.metadata.function_id;
    t = await makeTestApp({ fn: [fnRecord(s0, { exec: 3 }), bare] });
    expect((await stats({ interval: '5min' })).find((x) => x.timestamp === s0)).toMatchObject({ count: 2, min_execution_time: 1, max_execution_time: 3 });
    expect((await stats({ interval: '5min', function_id: 'fn-hello' })).find((x) => x.timestamp === s0)).toMatchObject({ count: 1, min_execution_time: 3 });
  });
});
