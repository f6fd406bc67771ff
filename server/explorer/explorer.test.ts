/**
 * The explorer API against small fixtures whose expected answers are worked out by hand here:
 * every filter, exclusions, the text search, the cursor, the histogram's buckets and the facets,
 * for edge, auth and function sources.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sourceLabel } from '../../contract/sources.ts';
import { importRecords, makeTestApp, MIN, NOW, SEC, type TestApp } from '../testing/fixtures.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const A = 'projaaaaaaaaaaaaaaaa';
const B = 'projbbbbbbbbbbbbbbbb';

/** Edge record i of the fixture: instant NOW - i minutes. */
function edge(i: number, status: number, method: string, path: string, project = A, message?: string) {
  const url = `https://${project}.supabase.co${path}?i=${i}`;
  return {
    id: `e${String(i).padStart(2, '0')}`,
    timestamp: NOW - i * MIN,
    project,
    event_message: message ?? `${method} | ${status} | ${url}`,
    metadata: { request: { method, url, path }, response: { status_code: status } },
  };
}

// By hand: 12 records of project A over the last 12 minutes, two of project B.
const EDGE = [
  edge(1, 200, 'GET', '/rest/v1/todos'),
  edge(2, 503, 'GET', '/rest/v1/todos'),
  edge(3, 404, 'POST', '/auth/v1/token'),
  edge(4, 500, 'POST', '/rest/v1/orders'),
  edge(5, 200, 'get', '/storage/v1/object/a.png'),
  edge(6, 502, 'GET', '/storage/v1/object/b.png', A, 'GET | 502 | upstream TIMEOUT at gateway'),
  edge(7, 301, 'GET', '/rest/v1/todos'),
  edge(8, 200, 'DELETE', '/rest/v1/todos'),
  edge(9, 504, 'GET', '/functions/v1/hello'),
  edge(10, 201, 'POST', '/rest/v1/orders'),
  edge(11, 401, 'GET', '/auth/v1/user'),
  edge(12, 200, 'GET', '/rest/v1/todos'),
  edge(13, 500, 'GET', '/rest/v1/todos', B),
  edge(14, 200, 'GET', '/rest/v1/todos', B),
];

async function get<T>(app: TestApp, path: string): Promise<{ status: number; body: T }> {
  const res = await app.request(path);
  return { status: res.status, body: (await res.json()) as T };
}

interface Page {
  result: Array<{ id: string; timestamp: number; event_message: string; metadata: unknown; fields: Record<string, unknown> }>;
  next: string | null;
  scanned: { complete: boolean };
}

const ids = (p: Page) => p.result.map((r) => r.id);
const range = `start=${encodeURIComponent(new Date((NOW - 60 * MIN) / 1000).toISOString())}&end=${encodeURIComponent(new Date(NOW / 1000).toISOString())}`;

describe('GET /api/logs', () => {
  it('filters by status code and class, method, path prefix and project, newest first, with exclusions', async () => {
    t = await makeTestApp({ edge: EDGE });
    const q = async (f: string) => ids((await get<Page>(t!, `/api/logs?source=edge_logs&${range}&${f}`)).body);
    expect(await q(`project=${A}&status=5xx`)).toEqual(['e02', 'e04', 'e06', 'e09']);
    expect(await q('status=5xx')).toEqual(['e02', 'e04', 'e06', 'e09', 'e13']);
    expect(await q(`project=${A}&status=5xx,!503,!504`)).toEqual(['e04', 'e06']);
    expect(await q(`project=${A}&status=404,401`)).toEqual(['e03', 'e11']);
    expect(await q(`project=${A}&method=post`)).toEqual(['e03', 'e04', 'e10']);
    // Methods are stored upper-case, so "get" in a record counts as GET.
    expect(await q(`project=${A}&method=GET&path=/storage/`)).toEqual(['e05', 'e06']);
    expect(await q(`project=${A}&path=/rest/v1/todos&status=!200`)).toEqual(['e02', 'e07']);
    expect(await q(`project=${A}&path=!/rest/,!/storage/`)).toEqual(['e03', 'e09', 'e11']);
    expect(await q(`project=nosuchproject`)).toEqual([]);
  });

  it('takes any three-digit status, as the page does: 600 selects the record that holds it, outside every class', async () => {
    // By hand: e15 answered 600 (a code past the classes), so only `status=600` picks it, and 5xx does not.
    t = await makeTestApp({ edge: [...EDGE, edge(15, 600, 'GET', '/rest/v1/todos')] });
    const q = async (f: string) => ids((await get<Page>(t!, `/api/logs?source=edge_logs&project=${A}&${range}&${f}`)).body);
    expect(await q('status=600')).toEqual(['e15']);
    expect(await q('status=5xx,600')).toEqual(['e02', 'e04', 'e06', 'e09', 'e15']);
    expect(await q('status=!600&path=/rest/v1/todos')).toEqual(['e01', 'e02', 'e07', 'e08', 'e12']);
  });

  it('searches the message and the URL, case-insensitively, or with an RE2 pattern', async () => {
    t = await makeTestApp({ edge: EDGE });
    const q = async (f: string) => ids((await get<Page>(t!, `/api/logs?source=edge_logs&project=${A}&${range}&${f}`)).body);
    expect(await q('q=timeout')).toEqual(['e06']);
    expect(await q('q=ORDERS')).toEqual(['e04', 'e10']);
    // In the URL only: e06's message names no URL, its request URL ends in ?i=6.
    expect(await q('q=i%3D6')).toEqual(['e06']);
    expect(await q('q=i%3D1')).toEqual(['e01', 'e10', 'e11', 'e12']);
    expect(await q(`regex=1&q=${encodeURIComponent('\\| 50[0-2] \\|')}`)).toEqual(['e04', 'e06']);
    const bad = await get<{ error: { errors: Array<{ location: string }> } }>(t, `/api/logs?source=edge_logs&regex=1&q=${encodeURIComponent('(')}`);
    expect([bad.status, bad.body.error.errors[0]!.location]).toEqual([400, 'q']);
  });

  it('returns records in the logs.all shape with their fields, and pages with a cursor that continues exactly, also while records are added', async () => {
    t = await makeTestApp({ edge: EDGE });
    const first = (await get<Page>(t, `/api/logs?source=edge_logs&project=${A}&${range}&limit=5`)).body;
    expect(ids(first)).toEqual(['e01', 'e02', 'e03', 'e04', 'e05']);
    expect(first.result[1]).toMatchObject({
      id: 'e02',
      timestamp: NOW - 2 * MIN,
      fields: { status: 503, method: 'GET', path: '/rest/v1/todos' },
      metadata: [{ response: [{ status_code: 503 }] }],
    });
    // An import between pages adds a newer record and one in the middle of the next page.
    await importRecords(t.store, 'edge_logs', [edge(0, 200, 'GET', '/rest/v1/new'), { ...edge(7, 200, 'GET', '/rest/v1/late'), id: 'e07b' }]);
    const seen = [...ids(first)];
    let next = first.next;
    while (next) {
      const page = (await get<Page>(t, `/api/logs?source=edge_logs&project=${A}&${range}&limit=5&cursor=${next}`)).body;
      seen.push(...ids(page));
      next = page.next;
    }
    // e07b has e07's instant and was stored later: records of one instant come by id ("e07" < "e07b").
    expect(seen).toEqual(['e01', 'e02', 'e03', 'e04', 'e05', 'e06', 'e07', 'e07b', 'e08', 'e09', 'e10', 'e11', 'e12']);
  });

  it('gives records of one instant in id order, as logs.all does, and pages through them exactly at every page size', async () => {
    // By hand: five records at e05's instant, stored in the order m, c, x, a, k (and e05 itself
    // first); by id: "a-", "c-", "e05", "k-", "m-", "x-". Two of them hold "orders".
    const tie = (id: string, path: string) => ({ ...edge(5, 200, 'GET', path), id });
    const stored = [tie('m-tie', '/rest/v1/todos'), tie('c-tie', '/rest/v1/orders'), tie('x-tie', '/rest/v1/todos'), tie('a-tie', '/rest/v1/orders'), tie('k-tie', '/rest/v1/todos')];
    t = await makeTestApp({ edge: [...EDGE, ...stored] });
    const byId = ['a-tie', 'c-tie', 'e05', 'k-tie', 'm-tie', 'x-tie'];
    const all = ['e01', 'e02', 'e03', 'e04', ...byId, 'e06', 'e07', 'e08', 'e09', 'e10', 'e11', 'e12'];
    const walk = async (f: string, limit: number) => {
      const seen: string[] = [];
      let next: string | null = null;
      do {
        const page: Page = (await get<Page>(t!, `/api/logs?source=edge_logs&project=${A}&${range}&limit=${limit}${f}${next ? `&cursor=${next}` : ''}`)).body;
        seen.push(...ids(page));
        next = page.next;
      } while (next);
      return seen;
    };
    for (const limit of [1, 2, 3, 4, 5, 7, 100]) expect(await walk('', limit), `limit ${limit}`).toEqual(all);
    // A search whose matches include two of the instant's records: their order too.
    for (const limit of [1, 2, 100]) expect(await walk('&q=orders', limit), `search, limit ${limit}`).toEqual(['e04', 'a-tie', 'c-tie', 'e10']);
    // logs.all, the exact endpoint, orders the same records the same way.
    const exact = (await get<{ result: Array<{ id: string }> }>(t, `/api/endpoints/logs.all?project=${A}&project_tier=ENTERPRISE&${range.replace('start=', 'iso_timestamp_start=').replace('end=', 'iso_timestamp_end=')}`)).body;
    expect(exact.result.map((r) => r.id)).toEqual(all);
    // The export, paged inside the server, too.
    const res = await t.request(`/api/logs/export?source=edge_logs&project=${A}&${range}&format=ndjson`);
    expect((await res.text()).trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(all);
  });

  it('refuses what it cannot answer, naming the parameter', async () => {
    t = await makeTestApp({ edge: EDGE });
    const cases: Array<[string, string]> = [
      ['', 'source'],
      ['source=nope', 'source'],
      ['source=edge_logs&level=error', 'level'],
      ['source=edge_logs&status=abc', 'status'],
      ['source=edge_logs&limit=0', 'limit'],
      ['source=edge_logs&limit=1001', 'limit'],
      ['source=edge_logs&cursor=xyz', 'cursor'],
      ['source=edge_logs&start=2026-11-22T10:00:00Z&end=2026-11-22T09:00:00Z', 'start'],
      ['source=edge_logs&regex=yes', 'regex'],
      ['source=edge_logs&status=500&status=404', 'status'],
    ];
    for (const [query, location] of cases) {
      const r = await get<{ error: { errors: Array<{ location: string }> } }>(t, `/api/logs?${query}`);
      expect([query, r.status, r.body.error.errors[0]?.location]).toEqual([query, 400, location]);
    }
  });
});

describe('GET /api/logs/histogram', () => {
  it('buckets of a round width over the range, every bucket a row, split by status class adding up to the count', async () => {
    t = await makeTestApp({ edge: EDGE });
    // 60 minutes in about 6 buckets: 10-minute buckets aligned to the epoch.
    const res = await get<{ result: Array<{ timestamp: number; count: number; by: Record<string, number> }>; width: number; split: string }>(
      t,
      `/api/logs/histogram?source=edge_logs&project=${A}&${range}&buckets=6`,
    );
    expect(res.body.width).toBe(10 * MIN);
    expect(res.body.split).toBe('status');
    const w = 10 * MIN;
    const firstBucket = Math.floor((NOW - 60 * MIN + 1) / w) * w;
    expect(res.body.result[0]!.timestamp).toBe(firstBucket);
    expect(res.body.result.at(-1)!.timestamp).toBe(Math.floor(NOW / w) * w);
    // Expected counts per bucket and class, from the fixture's instants.
    const expected = new Map<number, Record<string, number>>();
    for (const r of EDGE.filter((e) => e.project === A)) {
      const b = Math.floor(r.timestamp / w) * w;
      const cls = `${Math.floor(r.metadata.response.status_code / 100)}xx`;
      const m = expected.get(b) ?? {};
      m[cls] = (m[cls] ?? 0) + 1;
      expected.set(b, m);
    }
    for (const bucket of res.body.result) {
      const want = expected.get(bucket.timestamp) ?? {};
      const total = Object.values(want).reduce((a, b) => a + b, 0);
      expect(bucket.count).toBe(total);
      expect(Object.values(bucket.by).reduce((a, b) => a + b, 0)).toBe(bucket.count);
      for (const [k, n] of Object.entries(want)) expect(bucket.by[k]).toBe(n);
    }
    expect(res.body.result.reduce((a, b) => a + b.count, 0)).toBe(12);
  });

  it('with a search, counts only the matching records', async () => {
    t = await makeTestApp({ edge: EDGE });
    const res = await get<{ result: Array<{ count: number; by: Record<string, number> }> }>(t, `/api/logs/histogram?source=edge_logs&project=${A}&${range}&q=orders`);
    expect(res.body.result.reduce((a, b) => a + b.count, 0)).toBe(2);
    expect(res.body.result.reduce((a, b) => a + (b.by['5xx'] ?? 0), 0)).toBe(1);
  });
});

describe('GET /api/logs/facets', () => {
  it('top values with exact counts under the current filters, and the number of others', async () => {
    t = await makeTestApp({ edge: EDGE });
    const res = await get<{ result: Record<string, Array<{ value: string | number; count: number }>>; others: Record<string, number> }>(
      t,
      `/api/logs/facets?source=edge_logs&project=${A}&${range}&fields=status,method,path`,
    );
    // By hand from the 12 records of project A.
    expect(res.body.result.method).toEqual([
      { value: 'GET', count: 8 },
      { value: 'POST', count: 3 },
      { value: 'DELETE', count: 1 },
    ]);
    expect(res.body.result.status!.slice(0, 1)).toEqual([{ value: 200, count: 4 }]);
    // Nine distinct codes: 200, 201, 301, 401, 404, 500, 502, 503, 504.
    expect(res.body.result.status).toHaveLength(9);
    expect(res.body.others.status).toBe(0);
    expect(res.body.result.path!.slice(0, 2)).toEqual([
      { value: '/rest/v1/todos', count: 5 },
      { value: '/rest/v1/orders', count: 2 },
    ]);
    expect(res.body.result.status!.reduce((a, b) => a + b.count, 0)).toBe(12);
    const filtered = await get<{ result: Record<string, Array<{ value: string; count: number }>> }>(t, `/api/logs/facets?source=edge_logs&project=${A}&${range}&fields=method&status=5xx`);
    expect(filtered.body.result.method).toEqual([
      { value: 'GET', count: 3 },
      { value: 'POST', count: 1 },
    ]);
  });
});

describe('other sources', () => {
  it('GET /api/logs/fields labels each source as the page does: the pooler is "Pooler (PgBouncer)" everywhere', async () => {
    t = await makeTestApp();
    const { body } = await get<{ result: Array<{ alias: string; label: string }> }>(t, '/api/logs/fields');
    const label = (alias: string) => body.result.find((s) => s.alias === alias)?.label;
    expect(label('pgbouncer_logs')).toBe('Pooler (PgBouncer)');
    expect(label('edge_logs')).toBe('Edge requests');
    for (const s of body.result) expect(s.label, s.alias).toBe(sourceLabel(s.alias));
  });

  const auth = (i: number, level: string, status: number | undefined, path: string, msg: string) => ({
    id: `a${i}`,
    timestamp: NOW - i * SEC,
    project: A,
    event_message: msg,
    metadata: { level, method: 'POST', path, msg, ...(status === undefined ? {} : { status }) },
  });
  const fn = (i: number, fid: string, status: number) => ({
    id: `f${i}`,
    timestamp: NOW - i * SEC,
    event_message: `POST | ${status} | https://${A}.supabase.co/functions/v1/${fid}`,
    metadata: { project_ref: A, function_id: fid, execution_time_ms: 10, request: { method: 'POST', url: `https://${A}.supabase.co/functions/v1/${fid}` }, response: { status_code: status } },
  });

  it('auth: level, status and path filters; the histogram splits by status class with "none"', async () => {
    t = await makeTestApp();
    await importRecords(t.store, 'auth_logs', [
      auth(1, 'info', 200, '/token', 'request completed'),
      auth(2, 'error', 500, '/token', '500: Database error'),
      auth(3, 'info', undefined, '/user', 'request started'),
      auth(4, 'warning', 429, '/otp', '429: rate limit'),
    ]);
    const q = async (f: string) => ids((await get<Page>(t!, `/api/logs?source=auth_logs&${range}&${f}`)).body);
    expect(await q('level=ERROR')).toEqual(['a2']);
    expect(await q('level=!info')).toEqual(['a2', 'a4']);
    expect(await q('status=4xx,5xx')).toEqual(['a2', 'a4']);
    expect(await q('status=!500')).toEqual(['a1', 'a3', 'a4']);
    expect(await q('path=/to')).toEqual(['a1', 'a2']);
    expect(await q('q=database')).toEqual(['a2']);
    const h = await get<{ result: Array<{ by: Record<string, number> }>; split: string }>(t, `/api/logs/histogram?source=auth_logs&${range}&buckets=1`);
    expect(h.body.split).toBe('status');
    const sum = (k: string) => h.body.result.reduce((a, b) => a + (b.by[k] ?? 0), 0);
    expect([sum('2xx'), sum('4xx'), sum('5xx'), sum('none')]).toEqual([1, 1, 1, 1]);
  });

  it('function invocations: function_id filter and facet', async () => {
    t = await makeTestApp();
    await importRecords(t.store, 'function_edge_logs', [fn(1, 'fa', 200), fn(2, 'fb', 500), fn(3, 'fa', 404), fn(4, 'fa', 200)]);
    const q = async (f: string) => ids((await get<Page>(t!, `/api/logs?source=function_edge_logs&${range}&${f}`)).body);
    expect(await q('function_id=fa')).toEqual(['f1', 'f3', 'f4']);
    expect(await q('function_id=fa&status=4xx')).toEqual(['f3']);
    expect(await q('function_id=!fa')).toEqual(['f2']);
    expect(await q('path=/functions/v1/fb')).toEqual(['f2']);
    // Each row names its function by slug too, taken from the function's records.
    const page = (await get<Page>(t, `/api/logs?source=function_edge_logs&${range}&limit=2`)).body;
    expect(page.result.map((r) => [r.fields.function_id, r.fields.function_slug])).toEqual([
      ['fa', 'fa'],
      ['fb', 'fb'],
    ]);
    const f = await get<{ result: Record<string, Array<{ value: string; count: number }>> }>(t, `/api/logs/facets?source=function_edge_logs&${range}&fields=function_id`);
    expect(f.body.result.function_id).toEqual([
      { value: 'fa', count: 3 },
      { value: 'fb', count: 1 },
    ]);
  });
});

describe('count and export', () => {
  it('counts what matches and exports all of it, not a page', async () => {
    t = await makeTestApp({ edge: EDGE });
    const count = await get<{ result: { count: number; bytes: number } }>(t, `/api/logs/count?source=edge_logs&${range}&status=5xx`);
    expect(count.body.result.count).toBe(5);
    expect(count.body.result.bytes).toBeGreaterThan(0);
    const nd = await (await t.request(`/api/logs/export?source=edge_logs&${range}&status=5xx&format=ndjson`)).text();
    const lines = nd.trim().split('\n').map((l) => JSON.parse(l) as { id: string });
    expect(lines.map((l) => l.id)).toEqual(['e02', 'e04', 'e06', 'e09', 'e13']);
    const csv = await (await t.request(`/api/logs/export?source=edge_logs&${range}&status=5xx&format=csv`)).text();
    const rows = csv.trim().split('\n');
    expect(rows[0]).toBe('id,timestamp,status,method,path,event_message,metadata');
    expect(rows).toHaveLength(6);
    expect(rows[1]!.startsWith('e02,')).toBe(true);
  });
});

describe('partitions stored before the explorer fields', () => {
  it('get the columns at load, filled from their records, and keep them once saved', async () => {
    const { storeKeeper } = await import('../testing/fixtures.ts');
    const { appOver } = await import('../testing/fixtures.ts');
    const keeper = storeKeeper();
    try {
      const dir = keeper.newDir();
      let store = await keeper.open(dir);
      await importRecords(store, 'auth_logs', [
        { id: 'x1', timestamp: NOW - SEC, project: A, event_message: 'a', metadata: { level: 'error', status: 500, method: 'get', path: '/token' } },
        { id: 'x2', timestamp: NOW - 2 * SEC, project: A, event_message: 'b', metadata: { level: 'info', status: 200, method: 'POST', path: '/user' } },
      ]);
      // What an older version wrote: the table without the explorer's columns.
      const p = store.partitions('gotrue.logs.prod')[0]!;
      const db = store.use(p);
      for (const c of ['status', 'method', 'path', 'level']) db.exec(`ALTER TABLE auth_logs DROP COLUMN ${c}`);
      p.dirty = true;
      await store.save();
      await keeper.close(store);
      store = await keeper.open(dir);
      t = appOver(store);
      const q = async (f: string) => ids((await get<Page>(t!, `/api/logs?source=auth_logs&${range}&${f}`)).body);
      expect(await q('level=error')).toEqual(['x1']);
      expect(await q('method=GET&status=5xx&path=/tok')).toEqual(['x1']);
      await store.save();
      expect(store.dump('gotrue.logs.prod').map((r) => [r.id, r.status, r.method, r.path, r.level])).toEqual([
        ['x1', 500, 'GET', '/token', 'error'],
        ['x2', 200, 'POST', '/user', 'info'],
      ]);
    } finally {
      t = undefined;
      await keeper.cleanup();
    }
  });
});
