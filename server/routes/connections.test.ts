/**
 * The `/api/connections` routes in-process (createApp with a SyncManager on virtual time)
 * against the fake Management API on 127.0.0.1.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../app.ts';
import { AppClock } from '../clock.ts';
import { LogStore } from '../store/log-store.ts';
import { CONNECTIONS_FILE } from '../sync/connections.ts';
import { SyncManager } from '../sync/manager.ts';
import { REF, runUntil, allIn, recordsOf, TOKEN } from '../sync/testing.ts';
import { ManualClock, ManualTimers } from '../sync/timers.ts';
import { FakeManagementApi } from '../testing/fake-management-api.ts';
import { HOST, TEST_KEY, TEST_PORT, tempDir } from '../testing/fixtures.ts';

// 2026-06-22T12:00:30Z
const NOW = Date.UTC(2026, 5, 22, 12, 0, 30) * 1000;

interface Ctx {
  request(p: string, init?: RequestInit): Promise<Response>;
  fake: FakeManagementApi;
  sync: SyncManager;
  store: LogStore;
  clock: ManualClock;
  timers: ManualTimers;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<Ctx> {
  const clock = new ManualClock(NOW);
  const timers = new ManualTimers(clock);
  const fake = new FakeManagementApi({ clock });
  fake.addUser('u1', TOKEN, [REF]).addProject(REF, 'bigquery');
  await fake.listen();
  const dir = tempDir('le-conn-');
  const store = await LogStore.open(path.join(dir, 'data'));
  const sync = SyncManager.open({ store, clock, timers });
  sync.start();
  const appClock = new AppClock(() => null);
  appClock.set('fixed', NOW);
  const { app } = createApp({ store, clock: appClock, apiKey: TEST_KEY, port: () => TEST_PORT, sync });
  cleanups.push(async () => {
    await sync.stop();
    await store.close();
    await fake.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    fake,
    sync,
    store,
    clock,
    timers,
    request: (p, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set('host', HOST);
      headers.set('x-api-key', TEST_KEY);
      if (init.body) headers.set('content-type', 'application/json');
      return Promise.resolve(app.request(`http://${HOST}${p}`, { ...init, headers }));
    },
  };
}

type ErrorEnvelope = { error: { code: number; status: string; message: string; errors: Array<{ reason: string; location?: string; message: string }> } };

const post = (t: Ctx, p: string, body: unknown) => t.request(p, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
const valid = (t: Ctx, extra: Record<string, unknown> = {}) => ({ kind: 'supabase', ref: REF, url: t.fake.url, token: TOKEN, dialect: 'bigquery', sources: ['edge_logs'], ...extra });

describe('/api/connections', () => {
  it('POST checks every parameter and names the one at fault, in the error envelope', async () => {
    const t = await setup();
    const cases: Array<[unknown, string, RegExp]> = [
      [{ ...valid(t), kind: undefined }, 'kind', /kind is required/],
      [{ ...valid(t), kind: 'bigquery' }, 'kind', /supabase or logflare/],
      [{ ...valid(t), ref: 'ABCDEFGHIJKLMNOPQRST' }, 'ref', /20 lowercase letters/],
      [{ ...valid(t), ref: undefined }, 'ref', /ref is required/],
      [{ ...valid(t), token: undefined }, 'token', /token is required/],
      [{ ...valid(t), token: 'has space' }, 'token', /printable ASCII/],
      [{ ...valid(t), url: 'http://api.example.com' }, 'url', /must use https/],
      [{ ...valid(t), url: 'https://user:pw@api.example.com' }, 'url', /user name or password/],
      [{ ...valid(t), dialect: 'postgres' }, 'dialect', /bigquery, clickhouse, detect/],
      [{ ...valid(t), sources: ['edge_logs', 'nope'] }, 'sources', /"nope" is not a source/],
      [{ ...valid(t), sources: [] }, 'sources', /non-empty array/],
      [{ ...valid(t), start: 'soon' }, 'start', /ISO 8601/],
      [{ ...valid(t), start: '2026-06-23T00:00:00Z' }, 'start', /not be later than now/],
      [{ ...valid(t), follow: 'yes' }, 'follow', /true or false/],
      [{ ...valid(t), extra: 1 }, 'extra', /not a parameter here/],
      [{ kind: 'logflare', ref: 'p', token: TOKEN }, 'url', /url is required for a logflare connection/],
      [{ kind: 'logflare', ref: 'p', token: TOKEN, url: t.fake.url, sources: ['postgres_logs'] }, 'sources', /edge logs only/],
      [{ kind: 'logflare', ref: 'p', token: TOKEN, url: t.fake.url, dialect: 'bigquery' }, 'dialect', /supabase connections only/],
      ['not json', 'body', /JSON object/],
      [[1, 2], 'body', /JSON object/],
    ];
    for (const [body, location, message] of cases) {
      const res = await post(t, '/api/connections', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const e = ((await res.json()) as ErrorEnvelope).error;
      expect(e.code).toBe(400);
      expect(e.status).toBe('INVALID_ARGUMENT');
      expect(e.errors.find((d) => d.location === location)?.message, `${location}: ${JSON.stringify(e)}`).toMatch(message);
    }
    expect(t.sync.list()).toEqual([]);
  });

  it('POST answers 201 with the connection; no answer carries the token, only its last four characters; the file is owner-only', async () => {
    const t = await setup();
    const logs: string[] = [];
    for (const m of ['log', 'info', 'warn', 'error', 'debug'] as const) vi.spyOn(console, m).mockImplementation((...a: unknown[]) => void logs.push(a.map(String).join(' ')));
    const res = await post(t, '/api/connections', valid(t, { start: '2026-06-22T10:00:00Z' }));
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(TOKEN.slice(0, -4));
    const created = JSON.parse(text).result;
    expect(created).toMatchObject({
      kind: 'supabase',
      ref: REF,
      url: t.fake.url,
      token: '…4567',
      dialect: 'bigquery',
      detectedDialect: null,
      follow: true,
      paused: false,
      startIso: '2026-06-22T10:00:00.000000Z',
      // When the view was taken, on the sync's clock: what a client measures ages and waits from.
      asOf: NOW,
      asOfIso: '2026-06-22T12:00:30.000000Z',
      tokenProtection: 'owner-only file',
      sources: { 'cloudflare.logs.prod': { records: 0, through: null, state: 'backfilling', error: null, errorKind: null, errorStatus: null } },
    });
    await runUntil(t.sync, t.clock, t.timers, () => allIn(t.sync, 'following'));
    const list = await t.request('/api/connections');
    const listText = await list.text();
    expect(listText).not.toContain(TOKEN);
    const [one] = JSON.parse(listText).result;
    expect(one.sources['cloudflare.logs.prod']).toMatchObject({ state: 'following', through: Date.UTC(2026, 5, 22, 12, 0) * 1000, throughIso: '2026-06-22T12:00:00.000000Z' });
    expect(one.callsLastMinute).toBe(1);
    expect(((await (await t.request(`/api/connections/${created.id}`)).json()) as { result: { id: string } }).result.id).toBe(created.id);
    // Browser mode keeps the token in the data folder's owner-only file, written whole.
    const file = path.join(t.store.dataDir, CONNECTIONS_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(`${file}.tmp`)).toBe(false);
    // The token went only in the Authorization header, never in a URL; nothing logged it.
    expect(t.fake.calls.every((c) => c.token === TOKEN && !c.path.includes(TOKEN) && !c.path.includes('sbp_'))).toBe(true);
    expect(logs.join('\n')).not.toContain(TOKEN);
    // The same project at the same URL again: a 409 naming ref.
    const dup = await post(t, '/api/connections', valid(t));
    expect(dup.status).toBe(409);
    expect(((await dup.json()) as ErrorEnvelope).error.errors[0]!.location).toBe('ref');
  });

  it('PATCH pauses, resumes, turns following off and changes sources; unknown ids are 404s; bad bodies name the parameter', async () => {
    const t = await setup();
    const { result: c } = (await (await post(t, '/api/connections', valid(t))).json()) as { result: { id: string } };
    const patch = (id: string, body: unknown) => t.request(`/api/connections/${id}`, { method: 'PATCH', body: JSON.stringify(body) });
    const paused = await patch(c.id, { paused: true });
    expect(paused.status).toBe(200);
    expect(((await paused.json()) as { result: { paused: boolean } }).result.paused).toBe(true);
    await runUntil(t.sync, t.clock, t.timers, () => allIn(t.sync, 'paused'));
    const changed = (await (await patch(c.id, { paused: false, follow: false, sources: ['edge_logs', 'auth_logs'] })).json()) as { result: { follow: boolean; sources: Record<string, unknown> } };
    expect(changed.result.follow).toBe(false);
    expect(Object.keys(changed.result.sources)).toEqual(['cloudflare.logs.prod', 'gotrue.logs.prod']);
    expect((await patch('no-such-id', { paused: true })).status).toBe(404);
    for (const [body, location] of [
      [{ paused: 'yes' }, 'paused'],
      [{ sources: ['x'] }, 'sources'],
      [{ kind: 'logflare' }, 'kind'],
      [{}, 'body'],
      [{ start: '2099-01-01T00:00:00Z' }, 'start'],
    ] as const) {
      const res = await patch(c.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as ErrorEnvelope).error.errors[0]!.location).toBe(location);
    }
  });

  it('DELETE needs data=keep or data=delete', async () => {
    const t = await setup();
    const { result: c } = (await (await post(t, '/api/connections', valid(t))).json()) as { result: { id: string } };
    for (const q of ['', '?data=maybe', '?data=keep&data=delete']) {
      const res = await t.request(`/api/connections/${c.id}${q}`, { method: 'DELETE' });
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as ErrorEnvelope).error.errors[0]!.location).toBe('data');
    }
    expect((await t.request('/api/connections/nope?data=keep', { method: 'DELETE' })).status).toBe(404);
    const res = await t.request(`/api/connections/${c.id}?data=keep`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ result: { id: c.id, deleted: [] } });
    expect(await (await t.request('/api/connections')).json()).toEqual({ result: [] });
  });

  it('DELETE /api/sources of a synced source: the next sync brings the records back, and every count equals the remote', async () => {
    const t = await setup();
    const start = NOW - 2 * 86_400_000_000;
    t.fake.add(REF, 'edge_logs', recordsOf('edge_logs', start, NOW - 60_000_000, 1500, 5));
    const remote = t.fake.records(REF, 'edge_logs').map((r) => r.id).sort();
    const { result: c } = (await (await post(t, '/api/connections', valid(t, { start: new Date(start / 1000).toISOString() }))).json()) as { result: { id: string } };
    await runUntil(t.sync, t.clock, t.timers, () => allIn(t.sync, 'following'));
    const counts = async () => ({
      stored: ((await (await t.request('/api/sources')).json()) as { result: Array<{ alias: string; count: number }> }).result.find((s) => s.alias === 'edge_logs')?.count,
      synced: ((await (await t.request(`/api/connections/${c.id}`)).json()) as { result: { sources: Record<string, { records: number }> } }).result.sources['cloudflare.logs.prod']!.records,
    });
    expect(await counts()).toEqual({ stored: 1500, synced: 1500 });

    const res = await t.request('/api/sources/edge_logs', { method: 'DELETE' });
    expect(await res.json()).toEqual({ result: { source: 'cloudflare.logs.prod', deleted: 1500 } });
    await runUntil(t.sync, t.clock, t.timers, () => allIn(t.sync, 'following'));
    expect(await counts()).toEqual({ stored: remote.length, synced: remote.length });
    expect(t.store.dump('cloudflare.logs.prod').map((r) => r.id).sort()).toEqual(remote);
  });

  it('POST /test makes one call and says what the remote answered', async () => {
    const t = await setup();
    const ok = await post(t, '/api/connections/test', valid(t, { dialect: 'detect' }));
    // detect: ClickHouse first (refused by this BigQuery project), then BigQuery.
    expect(await ok.json()).toEqual({ result: { ok: true, status: 200, message: null, dialect: 'bigquery', rows: 0 } });
    expect(t.fake.calls.map((c) => c.status)).toEqual([400, 200]);
    const bad = await post(t, '/api/connections/test', valid(t, { token: 'sbp_bad0123456789' }));
    expect(await bad.json()).toEqual({ result: { ok: false, status: 401, message: 'Unauthorized', dialect: null, rows: 0 } });
    const { result: c } = (await (await post(t, '/api/connections', valid(t))).json()) as { result: { id: string } };
    const byId = await post(t, '/api/connections/test', { id: c.id });
    expect(((await byId.json()) as { result: { ok: boolean } }).result.ok).toBe(true);
    expect((await post(t, '/api/connections/test', { id: 'nope' })).status).toBe(404);
    expect((await post(t, '/api/connections/test', { ...valid(t), ref: 'x' })).status).toBe(400);
  });

  it('redirects are not followed: the token never reaches the host a redirect names', async () => {
    const t = await setup();
    let reached = 0;
    const other = http.createServer((_req, res) => {
      reached++;
      res.end('{}');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const redirector = http.createServer((req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${(other.address() as { port: number }).port}${req.url}` });
      res.end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    cleanups.push(async () => {
      await new Promise((r) => other.close(r));
      await new Promise((r) => redirector.close(r));
    });
    const res = await post(t, '/api/connections/test', valid(t, { url: `http://localhost:${(redirector.address() as { port: number }).port}` }));
    const body = (await res.json()) as { result: { ok: boolean; status: number; message: string } };
    expect(body.result).toMatchObject({ ok: false, status: 302, message: expect.stringContaining('redirects are not followed') });
    expect(reached).toBe(0);
  });

  it('other methods are 405s naming the ones each route takes', async () => {
    const t = await setup();
    const put = await t.request('/api/connections', { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST');
    const get = await t.request('/api/connections/test', { method: 'PUT' });
    expect(get.status).toBe(405);
  });

  it('the budget is shared with tests of a connection: past it, a 503 with Retry-After', async () => {
    const t = await setup();
    for (let i = 0; i < 50; i++) t.sync.budget.take('someone');
    const res = await post(t, '/api/connections/test', valid(t));
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('60');
    expect(t.fake.calls).toEqual([]);
  });
});
