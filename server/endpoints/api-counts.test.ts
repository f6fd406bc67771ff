import { afterEach, describe, expect, it } from 'vitest';
import type { ApiCountsRow } from '../../contract/api-types.ts';
import { DAY, HOUR, NOW, at, edgeRecord, importRecords, makeTestApp, rows, type TestApp } from '../testing/fixtures.ts';

const P = 'projaaaaaaaaaaaaaaaa';
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const counts = (params: Record<string, string>) => rows<ApiCountsRow>(t!, 'usage.api-counts', { project: P, ...params });
const row = (timestamp: string, rest: number, storage: number, auth: number, realtime: number): ApiCountsRow => ({
  timestamp,
  total_rest_requests: rest,
  total_storage_requests: storage,
  total_auth_requests: auth,
  total_realtime_requests: realtime,
});

describe('usage.api-counts windows and buckets', () => {
  // now = 2026-11-22T10:30:45.123456Z
  it('hourly: the last hour (start inclusive), by hour, as DATETIME strings', async () => {
    t = await makeTestApp({
      edge: [
        edgeRecord(NOW - HOUR - 1, { path: '/rest/v1/a' }),
        edgeRecord(NOW - HOUR, { path: '/rest/v1/a' }),
        edgeRecord(at('2026-11-22T09:59:59.999999Z'), { path: '/auth/v1/token' }),
        edgeRecord(at('2026-11-22T10:00:00Z'), { path: '/storage/v1/object/x' }),
        edgeRecord(NOW - 1, { path: '/realtime/v1/websocket' }),
      ],
    });
    expect(await counts({ interval: 'hourly' })).toEqual([row('2026-11-22T09:00:00', 1, 0, 1, 0), row('2026-11-22T10:00:00', 0, 1, 0, 1)]);
  });

  it('daily: the last 7 days, by day; only buckets with records appear', async () => {
    t = await makeTestApp({
      edge: [
        edgeRecord(NOW - 7 * DAY - 1, { path: '/rest/v1/a' }),
        edgeRecord(NOW - 7 * DAY, { path: '/rest/v1/a' }),
        edgeRecord(at('2026-11-18T12:00:00Z'), { path: '/auth/v1/user' }),
        edgeRecord(at('2026-11-18T23:59:59Z'), { path: '/auth/v1/user' }),
        edgeRecord(NOW - 5, { path: '/storage/v1/object' }),
      ],
    });
    expect(await counts({ interval: 'daily' })).toEqual([
      row('2026-11-15T00:00:00', 1, 0, 0, 0),
      row('2026-11-18T00:00:00', 0, 0, 2, 0),
      row('2026-11-22T00:00:00', 0, 1, 0, 0),
    ]);
  });

  it('minutely: the last 60 minutes, by minute', async () => {
    t = await makeTestApp({
      edge: [
        edgeRecord(NOW - HOUR - 1, { path: '/rest/v1/a' }),
        edgeRecord(NOW - HOUR, { path: '/rest/v1/a' }),
        edgeRecord(at('2026-11-22T10:12:30Z'), { path: '/rest/v1/a' }),
        edgeRecord(at('2026-11-22T10:12:59Z'), { path: '/realtime/v1/x' }),
      ],
    });
    expect(await counts({ interval: 'minutely' })).toEqual([row('2026-11-22T09:30:00', 1, 0, 0, 0), row('2026-11-22T10:12:00', 1, 0, 0, 1)]);
  });

  it('any other interval is a 400 listing the allowed ones', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1)] });
    const res = await t.request(`/api/endpoints/usage.api-counts?project=${P}&interval=weekly`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; errors: Array<{ location: string }> } };
    expect(body.error.message).toBe('interval must be one of hourly, daily, minutely');
    expect(body.error.errors[0]!.location).toBe('interval');
  });
});

describe('usage.api-counts over hours that change', () => {
  it('an hour summed for one pattern is summed again once records join it, and apart for each pattern', async () => {
    const B = 'projbbbbbbbbbbbbbbbb';
    const day = at('2026-11-18T12:00:00Z');
    t = await makeTestApp({
      edge: [edgeRecord(day, { path: '/rest/v1/a' }), edgeRecord(day + 1, { path: '/auth/v1/user', project: B }), edgeRecord(at('2026-11-20T08:00:00Z'), { path: '/rest/v1/b', project: B })],
    });
    expect(await counts({ interval: 'daily' })).toEqual([row('2026-11-18T00:00:00', 1, 0, 0, 0)]);
    expect(await counts({ interval: 'daily', project: B })).toEqual([row('2026-11-18T00:00:00', 0, 0, 1, 0), row('2026-11-20T00:00:00', 1, 0, 0, 0)]);
    // The same hours gain records: one more for P and one for B in 12:00, a first for P on the 20th.
    await importRecords(t.store, 'edge_logs', [
      edgeRecord(day + 2, { path: '/storage/v1/object/x' }),
      edgeRecord(day + 3, { path: '/rest/v1/c', project: B }),
      edgeRecord(at('2026-11-20T08:30:00Z'), { path: '/realtime/v1/websocket' }),
    ]);
    t.clock.set('fixed', NOW + 1);
    expect(await counts({ interval: 'daily' })).toEqual([row('2026-11-18T00:00:00', 1, 1, 0, 0), row('2026-11-20T00:00:00', 0, 0, 0, 1)]);
    expect(await counts({ interval: 'daily', project: B })).toEqual([row('2026-11-18T00:00:00', 1, 0, 1, 0), row('2026-11-20T00:00:00', 1, 0, 0, 0)]);
    // A pattern both projects' URLs match.
    expect(await counts({ interval: 'daily', project: 'supabase' })).toEqual([row('2026-11-18T00:00:00', 2, 1, 1, 0), row('2026-11-20T00:00:00', 1, 0, 0, 1)]);
  });
});

describe('usage.api-counts families', () => {
  it('a path with several family strings counts in each; a path with none still makes its bucket appear', async () => {
    t = await makeTestApp({
      edge: [
        edgeRecord(NOW - 10, { path: '/storage/v1/object/auth/avatar.png' }),
        edgeRecord(NOW - 10, { path: '/rest/v1/rpc/realtime_stats' }),
        edgeRecord(NOW - 10, { path: '/graphql/v1' }),
      ],
    });
    expect(await counts({ interval: 'hourly' })).toEqual([row('2026-11-22T10:00:00', 1, 1, 1, 1)]);
    await t.close();
    t = await makeTestApp({ edge: [edgeRecord(NOW - 10, { path: '/graphql/v1' })] });
    expect(await counts({ interval: 'hourly' })).toEqual([row('2026-11-22T10:00:00', 0, 0, 0, 0)]);
  });

  it('families come from the path, not the query string', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 10, { path: '/functions/v1/x', url: `https://${P}.supabase.co/functions/v1/x?next=/rest/v1` })] });
    expect(await counts({ interval: 'hourly' })).toEqual([row('2026-11-22T10:00:00', 0, 0, 0, 0)]);
  });
});

describe('usage.api-counts project pattern (RE2 containment on the URL)', () => {
  const urls = [
    ['a', 'https://abc.supabase.co/rest/v1/x'],
    ['b', 'https://abcXsupabase.co/rest/v1/x'],
    ['c', 'https://zzabc.supabase.co/rest/v1/x'],
    ['d', 'https://other.supabase.co/rest/v1/abc'],
  ] as const;
  const seed = () => makeTestApp({ edge: urls.map(([id, url]) => edgeRecord(NOW - 10, { id, url, path: '/rest/v1/x' })) });
  const total = async (project: string) => (await counts({ project, interval: 'hourly' })).reduce((s, r) => s + r.total_rest_requests, 0);

  it('matches anywhere in the URL', async () => {
    t = await seed();
    expect(await total('abc')).toBe(4);
  });
  it('an unescaped dot matches any character; an escaped one only a dot', async () => {
    t = await seed();
    expect(await total('abc.supabase')).toBe(3);
    expect(await total('abc\\.supabase')).toBe(2);
  });
  it('anchors anchor to the whole URL', async () => {
    t = await seed();
    expect(await total('^https://abc\\.')).toBe(1);
    expect(await total('abc$')).toBe(1);
  });
  it('a pattern matching nothing gives no rows', async () => {
    t = await seed();
    expect(await counts({ project: 'nomatch', interval: 'hourly' })).toEqual([]);
  });
  it('(a+)+$ answers quickly on URLs full of a', async () => {
    t = await makeTestApp({
      edge: Array.from({ length: 200 }, (_, i) => edgeRecord(NOW - 10, { url: `https://x.co/${'a'.repeat(40 + i)}!`, path: '/rest/v1/x' })),
    });
    const started = performance.now();
    expect(await counts({ project: '(a+)+$', interval: 'hourly' })).toEqual([]);
    // Backtracking engines take seconds to centuries here; generous bound against slow CI.
    expect(performance.now() - started).toBeLessThan(5000);
  });
  it('an invalid pattern is a 400 naming project with the engine reason', async () => {
    t = await seed();
    for (const bad of ['(', '\\1', '(?=x)', '(a{1000}){1000}', 'x'.repeat(100_000)]) {
      const res = await t.request(`/api/endpoints/usage.api-counts`, { method: 'POST', body: JSON.stringify({ project: bad, interval: 'hourly' }) });
      expect(res.status, bad.slice(0, 20)).toBe(400);
      const body = (await res.json()) as { error: { errors: Array<{ location: string; message: string }> } };
      expect(body.error.errors[0]!.location).toBe('project');
    }
  });
});
