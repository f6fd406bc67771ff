import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../sync/timers.ts';
import { bigQueryPageSql, clickHousePageSql } from '../sync/pages.ts';
import { MICROS } from '../time.ts';
import { FakeManagementApi, parsePageSql, type FakeRecord } from './fake-management-api.ts';

const { minute: MIN, hour: HOUR, second: SEC } = MICROS;
const REF = 'abcdefghijklmnopqrst';
const OTHER = 'zyxwvutsrqponmlkjihg';
const TOKEN = 'sbp_0123456789abcdef0123456789abcdef01234567';
// 2026-06-22T12:00:30Z
const NOW = Date.UTC(2026, 5, 22, 12, 0, 30) * 1000;
const iso = (us: number) => new Date(us / 1000).toISOString();

let fake: FakeManagementApi | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function edge(id: string, ts: number): FakeRecord {
  return { id, timestamp: ts, event_message: `GET | 200 | ${id}`, metadata: { request: { method: 'GET', path: `/rest/v1/${id}` }, response: { status_code: 200 } } };
}

async function start(opts: ConstructorParameters<typeof FakeManagementApi>[0] = {}) {
  const clock = new ManualClock(NOW);
  fake = new FakeManagementApi({ clock, ...opts });
  fake.addUser('u1', TOKEN, [REF]).addProject(REF, 'bigquery').addProject(OTHER, 'clickhouse');
  await fake.listen();
  return { fake, clock };
}

async function get(params: Record<string, string>, opts: { ref?: string; token?: string | null } = {}) {
  const url = new URL(`${fake!.url}/v1/projects/${opts.ref ?? REF}/analytics/endpoints/logs.all`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const headers: Record<string, string> = {};
  if (opts.token !== null) headers.authorization = `Bearer ${opts.token ?? TOKEN}`;
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: (await res.json()) as { result?: Array<Record<string, unknown>>; error?: unknown; message?: unknown } };
}

describe('the fake Management API, from its documented contract', () => {
  it('a Bearer token is required: none or an unknown one is a 401', async () => {
    await start();
    expect(await get({}, { token: null })).toMatchObject({ status: 401, body: { message: 'Unauthorized' } });
    expect(await get({}, { token: 'sbp_nope' })).toMatchObject({ status: 401, body: { message: 'Unauthorized' } });
  });

  it('a ref of 20 lowercase letters; another project of no access is a 403', async () => {
    await start();
    expect((await get({}, { ref: 'ABCDEFGHIJKLMNOPQRST' })).status).toBe(400);
    expect((await get({}, { ref: 'abc' })).status).toBe(400);
    const r = await get({}, { ref: OTHER });
    expect(r.status).toBe(403);
    expect(r.body.message).toMatch(/necessary privileges/);
  });

  it('no range is the last minute; the ends are rounded down to whole minutes; rows are start <= t < end', async () => {
    await start();
    // Whole minute of NOW is 12:00:00: the last minute is [11:59:00, 12:00:00).
    fake!.add(REF, 'edge_logs', [edge('a', NOW - 120 * SEC), edge('b', NOW - 90 * SEC), edge('c', NOW - 31 * SEC), edge('d', NOW - 20 * SEC)]);
    expect((await get({})).body.result!.map((r) => r.id)).toEqual(['c', 'b']);
    // 11:58:00 to 11:59:29 is read as [11:58:00, 11:59:00): a only (b, at 11:59:00, is the end).
    const r = await get({ iso_timestamp_start: iso(NOW - 150 * SEC), iso_timestamp_end: iso(NOW - 61 * SEC) });
    expect(r.body.result!.map((x) => x.id)).toEqual(['a']);
    expect(fake!.calls.at(-1)).toMatchObject({ start: NOW - 30 * SEC - 2 * MIN, end: NOW - 30 * SEC - MIN });
  });

  it('at most 24 hours: exactly 24 is answered, a minute more is a 400 with the message as text', async () => {
    await start();
    const end = NOW - 30 * SEC;
    expect((await get({ iso_timestamp_start: iso(end - 24 * HOUR), iso_timestamp_end: iso(end) })).status).toBe(200);
    const r = await get({ iso_timestamp_start: iso(end - 24 * HOUR - MIN), iso_timestamp_end: iso(end) });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/24 hours/);
    expect((await get({ iso_timestamp_start: 'yesterday' })).status).toBe(400);
  });

  it('at most 1,000 rows an answer, whatever the SQL asks', async () => {
    await start();
    const base = NOW - 30 * SEC - HOUR;
    fake!.add(REF, 'edge_logs', Array.from({ length: 1500 }, (_, i) => edge(`r${String(i).padStart(4, '0')}`, base + i * 1000)));
    const range = { iso_timestamp_start: iso(base), iso_timestamp_end: iso(base + HOUR) };
    const sql = bigQueryPageSql('edge_logs', { ts: base, id: null }).replace('limit 1000', 'limit 5000');
    const r = await get({ ...range, sql });
    expect(r.body.result).toHaveLength(1000);
    expect(r.body.result![999]!.id).toBe('r0999');
    expect((await get(range)).body.result).toHaveLength(1000);
  });

  it('past 60 calls in a minute every call is a 429 for a minute', async () => {
    const { clock } = await start({ retryAfterSeconds: 60 });
    for (let i = 0; i < 60; i++) expect((await get({})).status).toBe(200);
    const r = await get({});
    expect(r).toMatchObject({ status: 429, body: { message: 'ThrottlerException: Too Many Requests' } });
    expect(r.headers.get('retry-after')).toBe('60');
    clock.us += 59 * SEC;
    expect((await get({})).status).toBe(429);
    clock.us += 2 * SEC;
    expect((await get({})).status).toBe(200);
  });

  it('callsPerMinute: Infinity turns the limit off (the bench)', async () => {
    await start({ callsPerMinute: Infinity });
    for (let i = 0; i < 150; i++) expect((await get({})).status).toBe(200);
  });

  it('pages equal a plain filter of the records, ties and late arrivals included; a table set whole answers the same', async () => {
    await start();
    const base = NOW - 30 * SEC - 3 * HOUR;
    // Every 7th instant is shared by three ids; some records arrive after the others.
    const records = Array.from({ length: 900 }, (_, i) => edge(`k${String((i * 37) % 900).padStart(3, '0')}`, base + Math.floor(i / 3) * 7 * SEC));
    fake!.add(REF, 'edge_logs', records.slice(300)).add(REF, 'edge_logs', records.slice(0, 300));
    const sorted = [...records].sort((a, b) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : 1));
    fake!.addProject('tablesetwholeaaaaaaa', 'bigquery').addUser('u1', TOKEN, ['tablesetwholeaaaaaaa']);
    fake!.setTable('tablesetwholeaaaaaaa', 'edge_logs', { length: sorted.length, timestamp: (i) => sorted[i]!.timestamp, id: (i) => sorted[i]!.id, rows: (f, t) => sorted.slice(f, t) });
    const range = { iso_timestamp_start: iso(base + 10 * MIN), iso_timestamp_end: iso(base + 40 * MIN) };
    const [s, e] = [base + 10 * MIN, base + 40 * MIN];
    for (const cursor of [{ ts: base, id: null }, { ts: sorted[400]!.timestamp, id: sorted[400]!.id }, { ts: sorted[401]!.timestamp, id: null }]) {
      const expected = records
        .filter((r) => r.timestamp >= s && r.timestamp < e && (cursor.id === null ? r.timestamp >= cursor.ts : r.timestamp > cursor.ts || (r.timestamp === cursor.ts && r.id > cursor.id)))
        .sort((a, b) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : 1))
        .map((r) => r.id);
      for (const ref of [REF, 'tablesetwholeaaaaaaa']) {
        const r = await get({ ...range, sql: bigQueryPageSql('edge_logs', cursor) }, { ref });
        expect(r.body.result!.map((x) => x.id), `${ref} after ${JSON.stringify(cursor)}`).toEqual(expected);
      }
    }
    const newest = records.filter((r) => r.timestamp >= s && r.timestamp < e).sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? 1 : -1)).map((r) => r.id);
    for (const ref of [REF, 'tablesetwholeaaaaaaa']) expect((await get(range, { ref })).body.result!.map((x) => x.id)).toEqual(newest);
    expect(() => fake!.add('tablesetwholeaaaaaaa', 'edge_logs', [edge('x', base)])).toThrow(/set whole/);
  });

  it('bigquery: answers the two page forms from its records, in the query shape; anything else is a 400 like BigQuery gives', async () => {
    await start();
    const t = NOW - 30 * SEC - 10 * MIN;
    fake!.add(REF, 'edge_logs', [edge('b', t), edge('a', t), edge('c', t + 1), edge('z', t - 1)]);
    const range = { iso_timestamp_start: iso(t - MIN), iso_timestamp_end: iso(t + MIN) };
    const first = await get({ ...range, sql: bigQueryPageSql('edge_logs', { ts: t, id: null }) });
    expect(first.body.result).toEqual([
      { id: 'a', timestamp: t, event_message: 'GET | 200 | a', metadata: [{ request: [{ method: 'GET', path: '/rest/v1/a' }], response: [{ status_code: 200 }] }] },
      expect.objectContaining({ id: 'b' }),
      expect.objectContaining({ id: 'c' }),
    ]);
    const next = await get({ ...range, sql: bigQueryPageSql('edge_logs', { ts: t, id: 'a' }) });
    expect(next.body.result!.map((r) => r.id)).toEqual(['b', 'c']);
    for (const sql of ['select * from edge_logs', clickHousePageSql('edge_logs', { ts: t, id: null }), bigQueryPageSql('edge_logs', { ts: t, id: null }).replace('  ', ' ').replace('asc, id', 'asc,  id')]) {
      const r = await get({ ...range, sql });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({
        result: [],
        error: { code: 400, errors: [{ domain: 'global', location: 'q', locationType: 'parameter', message: expect.stringMatching(/^Syntax error/), reason: 'invalidQuery' }], message: expect.stringMatching(/^Syntax error/), status: 'INVALID_ARGUMENT' },
      });
    }
    const missing = await get({ ...range, sql: bigQueryPageSql('nope_logs', { ts: t, id: null }) });
    expect(missing.status).toBe(400);
  });

  it('clickhouse: the logs table of one source, text attributes; BigQuery SQL is a 400 with a string error', async () => {
    await start();
    fake!.addUser('u1', TOKEN, [OTHER]);
    const t = NOW - 30 * SEC - 10 * MIN;
    fake!.add(OTHER, 'edge_logs', [edge('a', t + 215_000)]);
    fake!.add(OTHER, 'postgres_logs', [{ id: 'p', timestamp: t, event_message: 'x', metadata: { parsed: { error_severity: 'ERROR' } } }]);
    const range = { iso_timestamp_start: iso(t - MIN), iso_timestamp_end: iso(t + MIN) };
    const r = await get({ ...range, sql: clickHousePageSql('edge_logs', { ts: t, id: null }) }, { ref: OTHER });
    expect(r.body.result).toEqual([
      {
        id: 'a',
        timestamp: '2026-06-22T11:50:00.215000',
        event_message: 'GET | 200 | a',
        severity_text: '',
        log_attributes: { 'request.method': 'GET', 'request.path': '/rest/v1/a', 'response.status_code': '200' },
      },
    ]);
    const pg = await get({ ...range, sql: clickHousePageSql('postgres_logs', { ts: t, id: null }) }, { ref: OTHER });
    expect(pg.body.result).toEqual([expect.objectContaining({ id: 'p', severity_text: 'ERROR', log_attributes: { 'parsed.error_severity': 'ERROR' } })]);
    const bad = await get({ ...range, sql: bigQueryPageSql('edge_logs', { ts: t, id: null }) }, { ref: OTHER });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toEqual(expect.stringMatching(/^Code: 62\. DB::Exception: Syntax error/));
  });

  it('a refused query can come with a 200 and an error beside an empty result', async () => {
    await start({ queryErrorStatus: 200 });
    const r = await get({ sql: 'select 1' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ result: [], error: { code: 400, status: 'INVALID_ARGUMENT' } });
  });

  it('faults are answered in order, after the token and rate checks', async () => {
    await start();
    fake!.failNext({ status: 500, body: { error: 'Internal Server Error' } }, { status: 503, body: { message: 'upstream' } });
    expect(await get({})).toMatchObject({ status: 500, body: { error: 'Internal Server Error' } });
    expect(await get({})).toMatchObject({ status: 503, body: { message: 'upstream' } });
    expect((await get({})).status).toBe(200);
    expect(fake!.calls.map((c) => c.status)).toEqual([500, 503, 200]);
  });

  it('parsePageSql reads exactly the forms the app writes, escapes included', () => {
    const sql = clickHousePageSql('edge_logs', { ts: 123, id: "o'neil\\x" });
    expect(parsePageSql(sql, 'clickhouse')).toEqual({ query: { table: 'edge_logs', ts: 123, id: "o'neil\\x", limit: 1000 } });
    expect(parsePageSql(sql, 'bigquery')).toHaveProperty('problem');
    expect(parsePageSql(bigQueryPageSql('auth_logs', { ts: 9, id: null }), 'bigquery')).toEqual({ query: { table: 'auth_logs', ts: 9, id: null, limit: 1000 } });
    // The two instants of a keyset page must agree.
    expect(parsePageSql(bigQueryPageSql('auth_logs', { ts: 9, id: 'a' }).replace('timestamp_micros(9) and', 'timestamp_micros(8) and'), 'bigquery')).toHaveProperty('problem');
  });
});
