import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../queries/registry.ts';
import { createApp } from './app.ts';
import { AppClock } from './clock.ts';
import { LogStore } from './store/log-store.ts';
import { HOST, NOW, TEST_KEY, TEST_PORT, edgeRecord, fnRecord, makeTestApp, tempDir, type TestApp } from './testing/fixtures.ts';

const P = 'projaaaaaaaaaaaaaaaa';
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function errorOf(res: Response) {
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  return ((await res.json()) as { error: { code: number; status: string; message: string; errors: Array<{ reason: string; location?: string; message: string }> } }).error;
}

describe('routes', () => {
  it('by name, by UUID and query/<name> give the same rows; POST with a JSON body too', async () => {
    t = await makeTestApp({ fn: [fnRecord(NOW - 1000), fnRecord(NOW - 2000, { status: 500 })] });
    const def = ENDPOINTS.find((e) => e.name === 'functions.invocation-stats')!;
    const q = `project=${P}&interval=15min`;
    const bodies = await Promise.all(
      [`/api/endpoints/${def.name}?${q}`, `/api/endpoints/query/${def.id}?${q}`, `/api/endpoints/query/${def.name}?${q}`].map(async (p) => {
        const res = await t!.request(p);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
        return res.json();
      }),
    );
    const post = await t.request(`/api/endpoints/query/${def.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ project: P, interval: '15min' }),
    });
    expect(post.status).toBe(200);
    const postBody = await post.json();
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
    expect(postBody).toEqual(bodies[0]);
    const result = (bodies[0] as { result: Array<{ count: number; error_count: number }> }).result;
    expect(result.reduce((s, r) => s + r.count, 0)).toBe(2);
    expect(result.reduce((s, r) => s + r.error_count, 0)).toBe(1);
  });

  it('undeclared parameters are ignored', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1, { id: 'x' })] });
    const res = await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE&sql=drop%20table&limit=1`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: unknown[] }).result).toHaveLength(1);
  });

  it('a missing or empty required parameter is a 400 naming it', async () => {
    t = await makeTestApp();
    for (const [p, missing] of [
      [`/api/endpoints/logs.all?project_tier=FREE`, 'project'],
      [`/api/endpoints/logs.all?project=${P}&project_tier=`, 'project_tier'],
      [`/api/endpoints/functions.invocation-stats?project=${P}`, 'interval'],
      [`/api/endpoints/usage.api-counts?project=&interval=daily`, 'project'],
    ] as const) {
      const res = await t.request(p);
      expect(res.status).toBe(400);
      const e = await errorOf(res);
      expect(e.status).toBe('INVALID_ARGUMENT');
      expect(e.errors).toContainEqual({ reason: 'required', location: missing, message: `${missing} is required` });
    }
  });

  it('GET /api/endpoints lists name, UUID, parameters and cache settings', async () => {
    t = await makeTestApp();
    const res = await t.request('/api/endpoints');
    const list = ((await res.json()) as { result: Array<{ name: string; id: string; cacheSeconds: number; warmSeconds: number; maxRows: number; parameters: Array<{ name: string }> }> }).result;
    expect(list.map((e) => [e.name, e.cacheSeconds, e.warmSeconds, e.maxRows])).toEqual([
      ['functions.invocation-stats', 900, 300, 1000],
      ['logs.all', 0, 0, 1000],
      ['usage.api-counts', 900, 300, 1000],
    ]);
    expect(list[1]!.parameters.map((p) => p.name)).toEqual(['project', 'project_tier', 'iso_timestamp_start', 'iso_timestamp_end']);
  });

  it('GET /api/sources reports counts, time span, projects and function ids', async () => {
    t = await makeTestApp({
      edge: [edgeRecord(NOW - 5000), edgeRecord(NOW - 1000, { project: 'projbbbbbbbbbbbbbbbb' })],
      fn: [fnRecord(NOW - 300, { functionId: 'fn-a' }), fnRecord(NOW - 200, { functionId: 'fn-a' }), fnRecord(NOW - 100, { functionId: 'fn-b' })],
    });
    const list = ((await (await t.request('/api/sources')).json()) as { result: Array<Record<string, unknown>> }).result;
    const edge = list.find((s) => s.source === 'cloudflare.logs.prod')!;
    expect(edge).toMatchObject({ count: 2, minTimestamp: NOW - 5000, maxTimestamp: NOW - 1000 });
    expect(edge.projects).toEqual(expect.arrayContaining([{ ref: P, count: 1 }, { ref: 'projbbbbbbbbbbbbbbbb', count: 1 }]));
    const fn = list.find((s) => s.source === 'deno-relay-logs')!;
    expect(fn).toMatchObject({ count: 3, projects: [{ ref: P, count: 3 }] });
    expect(fn.functionIds).toEqual([
      { functionId: 'fn-a', project: P, count: 2 },
      { functionId: 'fn-b', project: P, count: 1 },
    ]);
    expect(list.find((s) => s.source === 'postgres.logs')).toMatchObject({ count: 0, minTimestamp: null, projects: [] });
  });

  it('POST /api/imports streams the body into the importer and answers the report; DELETE /api/sources removes it', async () => {
    t = await makeTestApp();
    const body = [JSON.stringify(edgeRecord(NOW - 10, { id: 'a' })), '{oops', JSON.stringify(edgeRecord(NOW - 20, { id: 'b' }))].join('\n');
    const res = await t.request('/api/imports?filename=export.ndjson&source=edge_logs', { method: 'POST', body });
    expect(res.status).toBe(200);
    const report = ((await res.json()) as { result: Record<string, unknown> }).result;
    expect(report).toMatchObject({ source: 'cloudflare.logs.prod', imported: 2, duplicates: 0, rejected: 1, file: 'export.ndjson' });
    const progress = ((await (await t.request('/api/imports')).json()) as { result: Array<Record<string, unknown>> }).result;
    expect(progress[0]).toMatchObject({ state: 'done', file: 'export.ndjson', records: 2, bytes: Buffer.byteLength(body) });
    const del = await t.request('/api/sources/edge_logs', { method: 'DELETE' });
    expect(((await del.json()) as { result: unknown }).result).toEqual({ source: 'cloudflare.logs.prod', deleted: 2 });
    const after = ((await (await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`)).json()) as { result: unknown[] }).result;
    expect(after).toEqual([]);
  });

  it('logs.all never serves a remembered record after its offsets were reused (delete, then a new import)', async () => {
    t = await makeTestApp();
    const logsIds = async () =>
      ((await (await t!.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`)).json()) as { result: Array<{ id: string }> }).result.map((r) => r.id);
    await t.request('/api/imports?source=edge_logs', { method: 'POST', body: JSON.stringify(edgeRecord(NOW - 10, { id: 'first' })) });
    expect(await logsIds()).toEqual(['first']);
    await t.request('/api/sources/edge_logs', { method: 'DELETE' });
    await t.request('/api/imports?source=edge_logs', { method: 'POST', body: JSON.stringify(edgeRecord(NOW - 10, { id: 'other' })) });
    expect(await logsIds()).toEqual(['other']);
  });

  it('an import whose source cannot be told is a 400 and stores nothing', async () => {
    t = await makeTestApp();
    const res = await t.request('/api/imports?filename=x.ndjson', { method: 'POST', body: '{"timestamp": 1700000000000000, "event_message": "hi", "project": "p"}\n' });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toMatch(/cannot tell the source/);
  });

  it('the clock can be read, fixed, pinned to the newest record and set back to system time', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 7777)] });
    expect(((await (await t.request('/api/clock')).json()) as { result: { mode: string; now: number } }).result).toMatchObject({ mode: 'fixed', now: NOW });
    const put = async (body: unknown) => (await t!.request('/api/clock', { method: 'PUT', body: JSON.stringify(body) })).json() as Promise<{ result: { mode: string; now: number; iso: string } }>;
    expect((await put({ mode: 'fixed', now: '2026-01-02T03:04:05.678901Z' })).result).toMatchObject({ mode: 'fixed', now: Date.UTC(2026, 0, 2, 3, 4, 5) * 1000 + 678901, iso: '2026-01-02T03:04:05.678901Z' });
    const bad = await t.request('/api/clock', { method: 'PUT', body: JSON.stringify({ mode: 'fixed', now: 'soon' }) });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).errors[0]!.location).toBe('now');
    const system = await put({ mode: 'system' });
    expect(system.result.mode).toBe('system');
    expect(Math.abs(system.result.now - Date.now() * 1000)).toBeLessThan(60_000_000);
  });
});

describe('deleting a source takes its exact name or alias', () => {
  it('a padded, re-cased or otherwise near name is a 404 and deletes nothing', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 10, { id: 'a' }), edgeRecord(NOW - 20, { id: 'b' })] });
    const count = () => t!.store.summary().find((s) => s.source === 'cloudflare.logs.prod')!.count;
    for (const name of ['%20edge_logs', 'edge_logs%20', 'EDGE_LOGS', 'Edge_Logs', 'CLOUDFLARE.LOGS.PROD', '%09cloudflare.logs.prod', 'edge_logs%0A']) {
      const res = await t.request(`/api/sources/${name}`, { method: 'DELETE' });
      expect(res.status, name).toBe(404);
      expect((await errorOf(res)).status).toBe('NOT_FOUND');
      expect(count(), name).toBe(2);
    }
    // The exact alias and the exact name both work.
    const byAlias = await t.request('/api/sources/edge_logs', { method: 'DELETE' });
    expect(((await byAlias.json()) as { result: unknown }).result).toEqual({ source: 'cloudflare.logs.prod', deleted: 2 });
    await t.request('/api/imports?source=EDGE_LOGS', { method: 'POST', body: JSON.stringify(edgeRecord(NOW - 5, { id: 'c' })) });
    expect(count()).toBe(1);
    const byName = await t.request('/api/sources/cloudflare.logs.prod', { method: 'DELETE' });
    expect(((await byName.json()) as { result: unknown }).result).toEqual({ source: 'cloudflare.logs.prod', deleted: 1 });
  });
});

describe('the renderer', () => {
  it('serves its files; a missing file is a 404 (not index.html); client-side routes get the app shell', async () => {
    const dir = tempDir();
    const ui = path.join(dir, 'ui');
    fs.mkdirSync(path.join(ui, 'assets'), { recursive: true });
    fs.writeFileSync(path.join(ui, 'index.html'), '<!doctype html><title>shell</title>');
    fs.writeFileSync(path.join(ui, 'assets', 'app.js'), 'console.log(1);');
    const store = await LogStore.open(path.join(dir, 'data'));
    try {
      const clock = new AppClock(() => null);
      const { app } = createApp({ store, clock, apiKey: TEST_KEY, port: () => TEST_PORT, rendererDir: ui });
      const get = (p: string, method = 'GET') => Promise.resolve(app.request(`http://${HOST}${p}`, { method, headers: { host: HOST } }));
      const js = await get('/assets/app.js');
      expect(js.status).toBe(200);
      expect(await js.text()).toBe('console.log(1);');
      // Every page answer, file, shell or error, carries the security headers and the policy.
      for (const p of ['/assets/app.js', '/logs', '/assets/x.js']) {
        const res = await get(p);
        expect(res.headers.get('content-security-policy'), p).toMatch(/^default-src 'self'; /);
        expect(res.headers.get('x-content-type-options'), p).toBe('nosniff');
        expect(res.headers.get('referrer-policy'), p).toBe('no-referrer');
      }
      for (const p of ['/assets/x.js', '/assets/index-0000.css', '/assets/nested/y.js', '/assets/noext', '/favicon.ico', '/logs/app.js.map']) {
        for (const method of ['GET', 'HEAD']) {
          const res = await get(p, method);
          expect(res.status, `${method} ${p}`).toBe(404);
          expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
          if (method === 'GET') expect((await errorOf(res)).status).toBe('NOT_FOUND');
        }
      }
      for (const p of ['/', '/logs', '/usage?project=x&interval=daily', '/functions?project=a.b']) {
        const res = await get(p);
        expect(res.status, p).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
        expect(await res.text()).toBe('<!doctype html><title>shell</title>');
      }
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('security checks', () => {
  it('every answer says nosniff and no-referrer: endpoints, explorer, errors of each kind, unknown routes', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1)] });
    const answers: Array<[string, Promise<Response>, number]> = [
      ['endpoint', t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`), 200],
      ['explorer', t.request('/api/logs?source=edge_logs'), 200],
      ['bad parameter', t.request('/api/endpoints/logs.all?project_tier=FREE'), 400],
      ['no key', t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`, { headers: { 'x-api-key': 'wrong' } }), 401],
      ['foreign host', t.request('/api/sources', { headers: { host: 'evil.example:80' } }), 403],
      ['unknown route', t.request('/api/nothing'), 404],
      ['wrong method', t.request('/api/sources', { method: 'PATCH' }), 405],
    ];
    for (const [what, pending, status] of answers) {
      const res = await pending;
      expect(res.status, what).toBe(status);
      expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), what).toBe('no-referrer');
    }
  });

  it('a wrong, empty or missing key is a 401 and the query does not run', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1)] });
    // '' stands for a missing header too: the test helper only adds the key when none is set.
    for (const key of ['', 'wrong', TEST_KEY + 'x', TEST_KEY.slice(0, -1)]) {
      const res = await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`, { headers: { 'x-api-key': key } });
      expect(res.status).toBe(401);
      expect((await errorOf(res)).status).toBe('UNAUTHENTICATED');
    }
    const viaQuery = await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE&api_key=${TEST_KEY}`, { headers: { 'x-api-key': '' } });
    expect(viaQuery.status).toBe(401);
  });

  it('a foreign Host is a 403 (DNS rebinding), even with the right key', async () => {
    t = await makeTestApp();
    for (const host of ['evil.com:4100', 'localhost.evil.com:4100', '127.0.0.1.nip.io:4100', '127.0.0.1:4101', '127.0.0.1']) {
      const res = await t.request('/api/sources', { headers: { host } });
      expect(res.status, host).toBe(403);
    }
    for (const host of ['127.0.0.1:4100', 'localhost:4100', '[::1]:4100']) {
      expect((await t.request('/api/sources', { headers: { host } })).status, host).toBe(200);
    }
  });

  it('a foreign Origin and a CORS preflight are 403 with no Access-Control-Allow-* headers', async () => {
    t = await makeTestApp();
    const res = await t.request('/api/sources', { headers: { origin: 'https://evil.com' } });
    expect(res.status).toBe(403);
    const pre = await t.request('/api/sources', { method: 'OPTIONS', headers: { origin: 'https://evil.com', 'access-control-request-method': 'GET' } });
    expect(pre.status).toBe(403);
    for (const r of [res, pre]) for (const [name] of r.headers) expect(name.startsWith('access-control-allow')).toBe(false);
    expect((await t.request('/api/sources', { headers: { origin: `http://${HOST}` } })).status).toBe(200);
  });
});

describe('every error has the one envelope', () => {
  it('walks every route with bad input', async () => {
    t = await makeTestApp();
    const cases: Array<[string, RequestInit, number, string]> = [
      ['/api/endpoints/nope', {}, 404, 'NOT_FOUND'],
      ['/api/endpoints/query/00000000-0000-0000-0000-000000000000', {}, 404, 'NOT_FOUND'],
      [`/api/endpoints/logs.all?project=${P}&project_tier=FREE`, { method: 'PUT' }, 405, 'METHOD_NOT_ALLOWED'],
      [`/api/endpoints/logs.all?project=${P}&project_tier=FREE`, { method: 'DELETE' }, 405, 'METHOD_NOT_ALLOWED'],
      [`/api/endpoints/logs.all?project=${P}&project_tier=FREE`, { method: 'PATCH' }, 405, 'METHOD_NOT_ALLOWED'],
      ['/api/endpoints/logs.all', { method: 'POST', body: '{not json' }, 400, 'INVALID_ARGUMENT'],
      ['/api/endpoints/logs.all', { method: 'POST', body: '[1,2]' }, 400, 'INVALID_ARGUMENT'],
      [`/api/endpoints/logs.all?project=${P}&project=${P}&project_tier=FREE`, {}, 400, 'INVALID_ARGUMENT'],
      [`/api/endpoints/logs.all?project=${'p'.repeat(300)}&project_tier=FREE`, {}, 400, 'INVALID_ARGUMENT'],
      [`/api/endpoints/usage.api-counts?project=(&interval=daily`, {}, 400, 'INVALID_ARGUMENT'],
      ['/api/imports?source=nosuch', { method: 'POST', body: 'x' }, 400, 'INVALID_ARGUMENT'],
      ['/api/imports', { method: 'POST', body: '' }, 400, 'INVALID_ARGUMENT'],
      ['/api/imports', { method: 'POST', body: 'hello world\n' }, 400, 'INVALID_ARGUMENT'],
      ['/api/sources/nosuch', { method: 'DELETE' }, 404, 'NOT_FOUND'],
      ['/api/clock', { method: 'PUT', body: '{"mode":"later"}' }, 400, 'INVALID_ARGUMENT'],
      ['/api/nothing-here', {}, 404, 'NOT_FOUND'],
      ['/api/demo', { method: 'POST' }, 404, 'NOT_FOUND'],
    ];
    for (const [p, init, code, status] of cases) {
      const res = await t.request(p, init);
      expect(res.status, `${init.method ?? 'GET'} ${p.slice(0, 80)}`).toBe(code);
      const e = await errorOf(res);
      expect(e.code).toBe(code);
      expect(e.status).toBe(status);
      expect(typeof e.message).toBe('string');
      expect(e.errors.length).toBeGreaterThan(0);
      for (const d of e.errors) expect(typeof d.message).toBe('string');
    }
  });

  it('names the parameter in every 400 about one', async () => {
    t = await makeTestApp();
    const res = await t.request(`/api/endpoints/logs.all?project=${P}&project=other&project_tier=FREE`);
    expect((await errorOf(res)).errors).toEqual([{ reason: 'duplicate', location: 'project', message: 'project is given more than once' }]);
  });
});

describe('results cache', () => {
  const url = `/api/endpoints/functions.invocation-stats?project=${P}&interval=15min`;
  const total = async (res: Response) => ((await res.json()) as { result: Array<{ count: number }> }).result.reduce((s, r) => s + r.count, 0);

  it('misses, then hits; parameters are part of the key', async () => {
    t = await makeTestApp({ fn: [fnRecord(NOW - 1000)] });
    const a = await t.request(url);
    expect(a.headers.get('cache-status')).toBe('LogExplorer; fwd=miss; stored');
    const b = await t.request(url);
    expect(b.headers.get('cache-status')).toBe('LogExplorer; hit; ttl=900');
    expect(b.headers.get('x-log-explorer-now')).toBe(String(NOW));
    const c = await t.request(`${url}&function_id=fn-x`);
    expect(c.headers.get('cache-status')).toMatch(/fwd=miss/);
    expect(await total(b)).toBe(1);
  });

  it('an import drops the cache', async () => {
    t = await makeTestApp({ fn: [fnRecord(NOW - 1000)] });
    await t.request(url);
    const res = await t.request('/api/imports?source=function_edge_logs', { method: 'POST', body: JSON.stringify(fnRecord(NOW - 2000)) });
    expect(res.status).toBe(200);
    const after = await t.request(url);
    expect(after.headers.get('cache-status')).toMatch(/fwd=miss/);
    expect(await total(after)).toBe(2);
  });

  it('lives 900 s from its first computation, then the next request recomputes', async () => {
    t = await makeTestApp({ fn: [fnRecord(NOW - 1000)] });
    await t.request(url);
    t.advance(299_000);
    await t.cache.tick();
    expect((await t.request(url)).headers.get('cache-status')).toBe('LogExplorer; hit; ttl=601');
    t.advance(600_000);
    await t.cache.tick();
    expect(t.cache.size).toBe(1);
    t.advance(1_000); // 900 s: gone
    await t.cache.tick();
    expect(t.cache.size).toBe(0);
    expect((await t.request(url)).headers.get('cache-status')).toMatch(/fwd=miss/);
  });

  it('concurrent identical requests share one computation; errors are never cached', async () => {
    t = await makeTestApp();
    const { ResultsCache } = await import('./endpoints/cache.ts');
    const cache = new ResultsCache(() => 0);
    const def = ENDPOINTS[0]!;
    let runs = 0;
    const compute = () => {
      runs++;
      return { rows: [{ n: runs }], now: 0 };
    };
    const [a, b] = await Promise.all([cache.get(def, 'k', compute), cache.get(def, 'k', compute)]);
    expect(runs).toBe(1);
    expect(a.rows).toBe(b.rows);
    let fails = 0;
    const failing = () => {
      fails++;
      throw new Error('boom');
    };
    await expect(cache.get(def, 'e', failing)).rejects.toThrow('boom');
    await expect(cache.get(def, 'e', failing)).rejects.toThrow('boom');
    expect(fails).toBe(2);
  });

  it('a background recompute sees new data; logs.all is never cached', async () => {
    t = await makeTestApp({ fn: [fnRecord(NOW - 1000)] });
    const { ResultsCache } = await import('./endpoints/cache.ts');
    let elapsed = 0;
    const cache = new ResultsCache(() => elapsed);
    const def = ENDPOINTS[0]!;
    let value = 1;
    await cache.get(def, 'k', () => ({ rows: [{ v: value }], now: value }));
    // Asked for again (a hit): only entries asked for since their last computation are refreshed.
    await cache.get(def, 'k', () => ({ rows: [{ v: -1 }], now: -1 }));
    value = 2;
    elapsed = 300_000;
    await cache.tick();
    const warmed = await cache.get(def, 'k', () => ({ rows: [{ v: -1 }], now: -1 }));
    expect(warmed.rows).toEqual([{ v: 2 }]);
    expect(warmed.now).toBe(2);
    const logs = await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`);
    expect(logs.headers.get('cache-status')).toBe('LogExplorer; fwd=bypass');
    expect((await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`)).headers.get('cache-status')).toBe('LogExplorer; fwd=bypass');
  });
});
