/**
 * `status=none` and `level=none`: records without a status or a level, counted in the
 * histogram's `none`, can be selected and left out like any value. Expected answers are worked
 * out by hand from the fixture below.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { importRecords, makeTestApp, MIN, NOW, SEC, type TestApp } from '../testing/fixtures.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const A = 'projaaaaaaaaaaaaaaaa';
const range = `start=${encodeURIComponent(new Date((NOW - 60 * MIN) / 1000).toISOString())}&end=${encodeURIComponent(new Date(NOW / 1000).toISOString())}`;

const auth = (i: number, status: number | undefined, msg: string) => ({
  id: `a${i}`,
  timestamp: NOW - i * SEC,
  project: A,
  event_message: msg,
  metadata: { level: 'info', method: 'POST', path: '/token', msg, ...(status === undefined ? {} : { status }) },
});

// By hand: a1 200, a2 500, a3 none, a4 429, a5 none.
const RECORDS = [auth(1, 200, 'request completed'), auth(2, 500, 'Database error'), auth(3, undefined, 'request started'), auth(4, 429, 'rate limit'), auth(5, undefined, 'Login')];

async function ids(query: string): Promise<string[]> {
  const res = await t!.request(`/api/logs?source=auth_logs&${range}&${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: Array<{ id: string }> }).result.map((r) => r.id);
}

describe('status=none', () => {
  it('selects the records without a status, alone or beside codes and classes; !none leaves them out', async () => {
    t = await makeTestApp();
    await importRecords(t.store, 'auth_logs', RECORDS);
    expect(await ids('status=none')).toEqual(['a3', 'a5']);
    expect(await ids('status=NONE,5xx')).toEqual(['a2', 'a3', 'a5']);
    expect(await ids('status=!none')).toEqual(['a1', 'a2', 'a4']);
    expect(await ids('status=!none,!200')).toEqual(['a2', 'a4']);
    // Unchanged: an excluded code keeps the records without a status, an included one drops them.
    expect(await ids('status=!500')).toEqual(['a1', 'a3', 'a4', 'a5']);
    expect(await ids('status=4xx')).toEqual(['a4']);
  });

  it('the histogram and the count agree with it', async () => {
    t = await makeTestApp();
    await importRecords(t.store, 'auth_logs', RECORDS);
    const h = (await (await t.request(`/api/logs/histogram?source=auth_logs&${range}&status=none&buckets=1`)).json()) as { result: Array<{ count: number; by: Record<string, number> }> };
    expect(h.result.reduce((n, b) => n + b.count, 0)).toBe(2);
    expect(h.result.reduce((n, b) => n + (b.by.none ?? 0), 0)).toBe(2);
    const c = (await (await t.request(`/api/logs/count?source=auth_logs&${range}&status=!none`)).json()) as { result: { count: number } };
    expect(c.result.count).toBe(3);
  });

  it('anything else is still a 400 naming status', async () => {
    t = await makeTestApp();
    const res = await t.request(`/api/logs?source=auth_logs&${range}&status=nothing`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; errors: Array<{ location: string }> } };
    expect(body.error.errors[0]!.location).toBe('status');
    expect(body.error.message).toContain('or none');
  });
});

describe('level=none', () => {
  // By hand: l1 info, l2 error, l3 none, l4 warning, l5 none.
  const LEVELED = [
    { ...auth(1, 200, 'ok'), metadata: { level: 'info', msg: 'ok' } },
    { ...auth(2, 500, 'bad'), metadata: { level: 'error', msg: 'bad' } },
    { ...auth(3, 200, 'plain'), metadata: { msg: 'plain' } },
    { ...auth(4, 429, 'slow'), metadata: { level: 'warning', msg: 'slow' } },
    { ...auth(5, 200, 'bare'), metadata: { msg: 'bare' } },
  ].map((r, i) => ({ ...r, id: `l${i + 1}` }));

  it('selects the records without a level, alone or beside levels; !none leaves them out; the histogram and facets agree', async () => {
    t = await makeTestApp();
    await importRecords(t.store, 'auth_logs', LEVELED);
    expect(await ids('level=none')).toEqual(['l3', 'l5']);
    expect(await ids('level=none,ERROR')).toEqual(['l2', 'l3', 'l5']);
    expect(await ids('level=!none')).toEqual(['l1', 'l2', 'l4']);
    expect(await ids('level=!none,!info')).toEqual(['l2', 'l4']);
    expect(await ids('level=!error')).toEqual(['l1', 'l3', 'l4', 'l5']);
    expect(await ids('level=warning')).toEqual(['l4']);
    const h = (await (await t!.request(`/api/logs/histogram?source=auth_logs&${range}&level=none&buckets=1`)).json()) as { result: Array<{ count: number; by: Record<string, number> }> };
    expect(h.result.reduce((n, b) => n + (b.by.none ?? 0), 0)).toBe(2);
    const c = (await (await t!.request(`/api/logs/count?source=auth_logs&${range}&level=!none`)).json()) as { result: { count: number } };
    expect(c.result.count).toBe(3);
  });
});
