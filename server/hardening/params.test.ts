/**
 * Parameters: unknown endpoints, dotted names, bad enum values, dates and repeats,
 * oversized values and bodies, wrong methods, and an internal SQL error that must not leak.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { ENDPOINTS, type EndpointDefinition } from '../../queries/registry.ts';
import { createApp } from '../app.ts';
import { AppClock } from '../clock.ts';
import { validateParams } from '../endpoints/params.ts';
import { AppError } from '../errors.ts';
import { LogStore } from '../store/log-store.ts';
import { HOST, NOW, TEST_KEY, TEST_PORT, edgeRecord, fnRecord, makeTestApp, tempDir, type TestApp } from '../testing/fixtures.ts';
import { P, queryEntryPoints, testSpeedPath } from './helpers.ts';

/** Counts the calls of every way an endpoint reads the store (speed paths, partitions, catalog). */
function spyOnQueries(store: LogStore): () => number {
  const spies = queryEntryPoints(store).map(([o, m]) => vi.spyOn(o as Record<string, () => unknown>, m));
  return () => spies.reduce((n, s) => n + s.mock.calls.length, 0);
}

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  vi.restoreAllMocks();
});

interface Envelope {
  error: { code: number; status: string; message: string; errors: Array<{ reason: string; location?: string; message: string }> };
}

async function errorOf(res: Response, code: number) {
  expect(res.status).toBe(code);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = (await res.json()) as Envelope;
  expect(body.error.code).toBe(code);
  return body.error;
}

const byName = (name: string) => ENDPOINTS.find((e) => e.name === name)!;

describe('which endpoint', () => {
  it('an unknown name or UUID is a 404 on every route form', async () => {
    t = await makeTestApp();
    for (const p of [
      '/api/endpoints/nope',
      '/api/endpoints/query/nope',
      '/api/endpoints/query/00000000-0000-0000-0000-000000000000',
      `/api/endpoints/query/${crypto.randomUUID()}`,
      '/api/endpoints/logs',
      '/api/endpoints/logs.all.extra',
      '/api/endpoints/LOGS.ALL',
      '/api/endpoints/%2e%2e',
      '/api/endpoints/..%2fsources',
    ]) {
      const e = await errorOf(await t.request(`${p}?project=${P}&project_tier=FREE`), 404);
      expect(e.status, p).toBe('NOT_FOUND');
    }
  });

  it('dotted names and UUIDs (any case) resolve on each route form', async () => {
    t = await makeTestApp({ fn: [fnRecord(NOW - 1000)], edge: [edgeRecord(NOW - 1000)] });
    for (const def of ENDPOINTS) {
      const q = def.name === 'logs.all' ? `project=${P}&project_tier=FREE` : `project=${P}&interval=${def.name === 'usage.api-counts' ? 'daily' : '1hr'}`;
      for (const p of [`/api/endpoints/${def.name}`, `/api/endpoints/query/${def.name}`, `/api/endpoints/query/${def.id}`, `/api/endpoints/query/${def.id.toUpperCase()}`]) {
        const res = await t.request(`${p}?${q}`);
        expect(res.status, p).toBe(200);
      }
    }
  });
});

describe('parameter values', () => {
  it('an invalid choice is a 400 naming the parameter and the allowed values; a lenient choice falls back', async () => {
    t = await makeTestApp();
    for (const v of ['weekly', 'DAILY', ' daily', 'daily;drop table edge_logs']) {
      const e = await errorOf(await t.request(`/api/endpoints/usage.api-counts?project=${P}&interval=${encodeURIComponent(v)}`), 400);
      expect(e.errors).toEqual([{ reason: 'invalid', location: 'interval', message: 'interval must be one of hourly, daily, minutely' }]);
    }
    // DESIGN §4: any other interval behaves as 1day, any other tier as FREE.
    expect((await t.request(`/api/endpoints/functions.invocation-stats?project=${P}&interval=fortnight`)).status).toBe(200);
    expect((await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=GOLD`)).status).toBe(200);
  });

  it('an unparseable date is a 400 naming the parameter', async () => {
    t = await makeTestApp();
    for (const [name, v] of [
      ['iso_timestamp_start', 'yesterday'],
      ['iso_timestamp_end', '2026-13-01T00:00:00Z'],
      ['iso_timestamp_start', '2026-02-30T00:00:00Z'],
      ['iso_timestamp_end', '1700000000'],
      ['iso_timestamp_start', "2026-01-01' OR 1=1 --"],
    ] as const) {
      const e = await errorOf(await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE&${name}=${encodeURIComponent(v)}`), 400);
      expect(e.errors.map((d) => d.location)).toEqual([name]);
      expect(e.errors[0]!.message).toMatch(new RegExp(`^${name} is not an ISO 8601 timestamp`));
    }
  });

  it('a repeated parameter is a 400 naming it: twice in the query string, or in both the query string and the body', async () => {
    t = await makeTestApp();
    const twice = await errorOf(await t.request(`/api/endpoints/usage.api-counts?project=${P}&interval=daily&interval=hourly`), 400);
    expect(twice.errors).toEqual([{ reason: 'duplicate', location: 'interval', message: 'interval is given more than once' }]);
    const both = await errorOf(
      await t.request(`/api/endpoints/logs.all?project=${P}`, { method: 'POST', body: JSON.stringify({ project: 'projbbbbbbbbbbbbbbbb', project_tier: 'FREE' }) }),
      400,
    );
    expect(both.errors).toEqual([{ reason: 'duplicate', location: 'project', message: 'project is given more than once' }]);
    // Every bad parameter is named, not just the first.
    const many = await errorOf(await t.request(`/api/endpoints/logs.all?project=a&project=b&project_tier=FREE&iso_timestamp_end=soon`), 400);
    expect(many.errors.map((d) => d.location)).toEqual(['project', 'iso_timestamp_end']);
  });

  it('an over-long project is a 400 (text: 256 characters; a pattern: 2048), not a query', async () => {
    t = await makeTestApp();
    const queries = spyOnQueries(t.store);
    const e = await errorOf(await t.request(`/api/endpoints/logs.all?project=${'p'.repeat(257)}&project_tier=FREE`), 400);
    expect(e.errors).toEqual([{ reason: 'invalid', location: 'project', message: 'project is longer than 256 characters' }]);
    const e2 = await errorOf(await t.request(`/api/endpoints/functions.invocation-stats?project=${'p'.repeat(10_000)}&interval=1hr`), 400);
    expect(e2.errors[0]!.location).toBe('project');
    const e3 = await errorOf(await t.request(`/api/endpoints/usage.api-counts?project=${'a'.repeat(2049)}&interval=daily`), 400);
    expect(e3.errors[0]).toMatchObject({ location: 'project', message: 'project is a pattern longer than 2048 characters' });
    expect(queries()).toBe(0);
    // 256 exactly is fine.
    expect((await t.request(`/api/endpoints/logs.all?project=${'p'.repeat(256)}&project_tier=FREE`)).status).toBe(200);
  });

  it('values are bound, never spliced: SQL in a parameter is just text that matches nothing', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1000, { id: 'only' })] });
    for (const v of ["' OR 1=1 --", `${P}' --`, '"); DROP TABLE edge_logs; --', `${P}\u0000`]) {
      const res = await t.request(`/api/endpoints/logs.all?project=${encodeURIComponent(v)}&project_tier=FREE`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { result: unknown[] }).result).toEqual([]);
    }
    const ok = (await (await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`)).json()) as { result: Array<{ id: string }> };
    expect(ok.result.map((r) => r.id)).toEqual(['only']);
  });

  it('a parameter that is not a string or number in a POST body is a 400 naming it', async () => {
    t = await makeTestApp();
    for (const v of [{ a: 1 }, [P, P], true]) {
      const res = await t.request('/api/endpoints/logs.all', { method: 'POST', body: JSON.stringify({ project: v, project_tier: 'FREE' }) });
      const e = await errorOf(res, 400);
      expect(e.errors[0]!.location).toBe('project');
    }
  });
});

describe('parameters are own properties only', () => {
  it('a "__proto__" key in a POST body is a parameter name like any other: nothing is read through it', async () => {
    t = await makeTestApp({ fn: [fnRecord(NOW - 1000)] });
    const queries = spyOnQueries(t.store);
    // JSON.parse makes "__proto__" an own key; copying it by assignment would set the prototype.
    const cases: Array<[string, string, string]> = [
      ['functions.invocation-stats', `{"__proto__":{"interval":"1hr"},"project":"${P}"}`, 'interval'],
      ['logs.all', `{"__proto__":{"project_tier":"ENTERPRISE"},"project":"${P}"}`, 'project_tier'],
      ['usage.api-counts', `{"__proto__":{"project":"${P}"},"interval":"daily"}`, 'project'],
    ];
    for (const [name, body, missing] of cases) {
      const e = await errorOf(await t.request(`/api/endpoints/${name}`, { method: 'POST', body }), 400);
      expect(e.errors, name).toEqual([{ reason: 'required', location: missing, message: `${missing} is required` }]);
    }
    expect(queries()).toBe(0);
    // And nothing leaked into Object.prototype.
    expect(({} as Record<string, unknown>).interval).toBeUndefined();
    expect(({} as Record<string, unknown>).project_tier).toBeUndefined();
  });

  it('"__proto__" in the query string is ignored like any undeclared parameter', async () => {
    t = await makeTestApp({ fn: [fnRecord(NOW - 1000)] });
    const res = await t.request(`/api/endpoints/functions.invocation-stats?__proto__=x&__proto__%5Binterval%5D=1hr&project=${P}`);
    const e = await errorOf(res, 400);
    expect(e.errors).toEqual([{ reason: 'required', location: 'interval', message: 'interval is required' }]);
    const ok = await t.request(`/api/endpoints/functions.invocation-stats?__proto__=x&project=${P}&interval=1hr`);
    expect(ok.status).toBe(200);
  });

  it('validateParams reads only own properties: values on a prototype were never sent', () => {
    const inherited = Object.create({ project: P, interval: '1hr' }) as Record<string, unknown>;
    let thrown: unknown;
    try {
      validateParams(byName('functions.invocation-stats'), inherited);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).details.map((d) => [d.location, d.reason])).toEqual([
      ['project', 'required'],
      ['interval', 'required'],
    ]);
    // The same values as own properties are accepted.
    expect(validateParams(byName('functions.invocation-stats'), { project: P, interval: '1hr' }).bind).toMatchObject({ project: P, interval: '1hr' });
  });

  it('the clock body: "__proto__" is not read through, and a body that is not an object is a 400, not a 500', async () => {
    t = await makeTestApp();
    const proto = await errorOf(await t.request('/api/clock', { method: 'PUT', body: '{"__proto__":{"mode":"system"}}' }), 400);
    expect(proto.errors).toEqual([{ reason: 'invalid', location: 'mode', message: 'mode must be one of system, fixed, latest' }]);
    for (const body of ['null', '[]', '"system"', '7', '']) {
      const e = await errorOf(await t.request('/api/clock', { method: 'PUT', body }), 400);
      expect(e.errors[0]!.location, body).toBe('body');
    }
    // The clock did not move.
    expect(((await (await t.request('/api/clock')).json()) as { result: { mode: string; now: number } }).result).toMatchObject({ mode: 'fixed', now: NOW });
  });
});

describe('methods and bodies', () => {
  it('PUT, DELETE and PATCH on every endpoint route are 405 JSON, and run nothing', async () => {
    t = await makeTestApp();
    const queries = spyOnQueries(t.store);
    for (const def of ENDPOINTS) {
      for (const p of [`/api/endpoints/${def.name}`, `/api/endpoints/query/${def.id}`, `/api/endpoints/query/${def.name}`]) {
        for (const method of ['PUT', 'DELETE', 'PATCH']) {
          const res = await t.request(`${p}?project=${P}&project_tier=FREE&interval=daily`, { method, body: method === 'DELETE' ? undefined : '{}' });
          expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
          const e = await errorOf(res, 405);
          expect(e).toMatchObject({ status: 'METHOD_NOT_ALLOWED', message: `${method} is not allowed on endpoints; use GET or POST` });
        }
      }
    }
    expect(queries()).toBe(0);
  });

  it('HEAD on every endpoint route is answered as GET, without a body', async () => {
    t = await makeTestApp({ fn: [fnRecord(NOW - 1000)], edge: [edgeRecord(NOW - 1000)] });
    for (const def of ENDPOINTS) {
      const q = def.name === 'logs.all' ? `project=${P}&project_tier=FREE` : `project=${P}&interval=${def.name === 'usage.api-counts' ? 'daily' : '1hr'}`;
      for (const p of [`/api/endpoints/${def.name}`, `/api/endpoints/query/${def.id}`, `/api/endpoints/query/${def.name}`]) {
        const head = await t.request(`${p}?${q}`, { method: 'HEAD' });
        expect(head.status, p).toBe(200);
        expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(head.headers.get('x-log-explorer-now')).toBe(String(NOW));
        expect(await head.text()).toBe('');
      }
    }
    // A bad request is the same 400 as for GET, still without a body.
    const bad = await t.request(`/api/endpoints/logs.all?project_tier=FREE`, { method: 'HEAD' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe('');
  });

  it('another method on a known API route is a 405 with an Allow header naming the methods it takes', async () => {
    t = await makeTestApp();
    const cases: Array<[string, string, string]> = [
      ['/api/endpoints', 'POST', 'GET, HEAD'],
      ['/api/imports', 'PUT', 'GET, HEAD, POST'],
      ['/api/imports', 'DELETE', 'GET, HEAD, POST'],
      ['/api/sources', 'POST', 'GET, HEAD'],
      ['/api/sources/edge_logs', 'GET', 'DELETE'],
      ['/api/sources/edge_logs', 'HEAD', 'DELETE'],
      ['/api/clock', 'DELETE', 'GET, HEAD, PUT, POST'],
      ['/api/demo', 'GET', 'POST'],
    ];
    for (const [p, method, allow] of cases) {
      const res = await t.request(p, { method });
      expect(res.status, `${method} ${p}`).toBe(405);
      expect(res.headers.get('allow'), `${method} ${p}`).toBe(allow);
      if (method !== 'HEAD') expect((await errorOf(res, 405)).message).toBe(`${method} is not allowed here; use ${allow}`);
    }
    // Unknown routes stay 404, and HEAD on GET routes works.
    expect((await t.request('/api/nothing-here', { method: 'PUT' })).status).toBe(404);
    expect((await t.request('/api/sources', { method: 'HEAD' })).status).toBe(200);
  });

  it('an endpoint POST body larger than 1 MiB is a 413 without being read whole', async () => {
    t = await makeTestApp();
    const big = JSON.stringify({ project: P, project_tier: 'FREE', filler: 'x'.repeat(2 * 1024 * 1024) });
    const e = await errorOf(await t.request('/api/endpoints/logs.all', { method: 'POST', body: big }), 413);
    expect(e.status).toBe('PAYLOAD_TOO_LARGE');
    const clock = await errorOf(await t.request('/api/clock', { method: 'PUT', body: JSON.stringify({ mode: 'system', filler: 'x'.repeat(2 * 1024 * 1024) }) }), 413);
    expect(clock.status).toBe('PAYLOAD_TOO_LARGE');
    // A normal body still works.
    expect((await t.request('/api/endpoints/logs.all', { method: 'POST', body: JSON.stringify({ project: P, project_tier: 'FREE' }) })).status).toBe(200);
  });
});

describe('an internal error', () => {
  it('is a 500 with a clean message: no SQL, no table names, no stack; details go to the server log only', async () => {
    const dir = tempDir();
    const store = await LogStore.open(dir);
    // Requests are answered by speed paths: these two run bad SQL against the store's catalog,
    // one never cached and one cached, as a bug in a real one would.
    const sqlPath = testSpeedPath('test-broken-sql', (st, params) => st.catalog.query('SELECT secret_column FROM no_such_table_xyz WHERE project = @project', { project: String(params.bind.project) }));
    const jsonPath = testSpeedPath('test-broken-json', (st, params) => st.catalog.query('SELECT json_extract(@project, \'$[\') AS x', { project: String(params.bind.project) }));
    onTestFinished(() => (sqlPath.remove(), jsonPath.remove()));
    const broken: EndpointDefinition = {
      ...byName('logs.all'),
      name: 'broken.sql',
      id: '11111111-2222-4333-8444-555555555555',
      sql: 'SELECT secret_column FROM no_such_table_xyz WHERE project = @project',
      cacheSeconds: 0,
      speedPath: sqlPath.name,
    };
    const crashing: EndpointDefinition = {
      ...broken,
      name: 'broken.cached',
      id: '11111111-2222-4333-8444-666666666666',
      cacheSeconds: 900,
      sql: "SELECT json_extract(@project, '$[') AS x",
      speedPath: jsonPath.name,
    };
    const clock = new AppClock(() => null);
    clock.set('fixed', NOW);
    const { app } = createApp({ store, clock, apiKey: TEST_KEY, port: () => TEST_PORT, registry: [...ENDPOINTS, broken, crashing] });
    const logged: unknown[] = [];
    vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void logged.push(a));
    try {
      for (const name of ['broken.sql', 'broken.cached']) {
        for (let i = 0; i < 2; i++) {
          const res = await app.request(`http://${HOST}/api/endpoints/${name}?project=${P}&project_tier=FREE`, { headers: { host: HOST, 'x-api-key': TEST_KEY } });
          const text = await res.text();
          expect(res.status).toBe(500);
          expect(JSON.parse(text)).toEqual({
            error: { code: 500, status: 'INTERNAL', message: 'internal error while answering the request', errors: [{ reason: 'internal', message: 'internal error while answering the request' }] },
          });
          for (const leak of ['SELECT', 'no_such_table', 'secret_column', 'no such', 'json_extract', 'sqlite', 'at ', '.ts']) expect(text).not.toContain(leak);
        }
      }
      // The error (never cached) reached the server's own log.
      expect(logged.length).toBe(4);
      expect(String(logged[0])).toMatch(/no such table: no_such_table_xyz/);
      // The app keeps answering.
      const ok = await app.request(`http://${HOST}/api/endpoints/logs.all?project=${P}&project_tier=FREE`, { headers: { host: HOST, 'x-api-key': TEST_KEY } });
      expect(ok.status).toBe(200);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
