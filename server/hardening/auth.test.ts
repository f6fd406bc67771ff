/**
 * Auth: every request to /api needs the key, in X-API-KEY only; a wrong key runs
 * nothing; the comparison is constant-time over equal-length digests; the key never reaches
 * the server's output.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

// Wrap timingSafeEqual so a test can see what the key check compares (the real one still runs).
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return { ...real, default: real, timingSafeEqual: vi.fn(real.timingSafeEqual) };
});

import { timingSafeEqual } from 'node:crypto';
import { keyMatches } from '../app.ts';
import { NOW, TEST_KEY, edgeRecord, makeTestApp, tempDir, type TestApp } from '../testing/fixtures.ts';
import type { LogStore } from '../store/log-store.ts';
import { P, edgeNdjson, queryEntryPoints, startCli } from './helpers.ts';

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

const ENDPOINT_URLS = [
  `/api/endpoints/logs.all?project=${P}&project_tier=FREE`,
  `/api/endpoints/functions.invocation-stats?project=${P}&interval=1hr`,
  `/api/endpoints/usage.api-counts?project=${P}&interval=daily`,
  `/api/endpoints/query/15930e07-5833-4bd5-8c05-3e02145fb068?project=${P}&project_tier=FREE`,
];

/** Headers with only what is given: the fixture adds the right key unless x-api-key is set. */
function noKey(extra: Record<string, string> = {}): Headers {
  const h = new Headers(extra);
  h.set('x-api-key', '');
  return h;
}

async function expect401(res: Response) {
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = (await res.json()) as { error: { code: number; status: string; message: string } };
  expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED', message: 'a valid X-API-KEY header is required' });
  expect(JSON.stringify(body)).not.toContain(TEST_KEY);
}

describe('a request without the right key', () => {
  it('missing, empty, wrong of the same length and of other lengths: 401 JSON, and no query runs', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1, { id: 'x' })] });
    const queries = spyOnQueries(t.store);
    const sameLength = TEST_KEY.slice(0, -1) + (TEST_KEY.endsWith('9') ? '8' : '9');
    expect(sameLength).toHaveLength(TEST_KEY.length);
    const wrong = ['', sameLength, 'x', TEST_KEY.slice(0, -1), TEST_KEY + 'x', TEST_KEY.toUpperCase(), `${TEST_KEY},${TEST_KEY}`, 'k'.repeat(4000)];
    // (Surrounding spaces are not part of a header value in HTTP, so ` KEY` is the key itself.)
    for (const url of ENDPOINT_URLS) {
      for (const key of wrong) await expect401(await t.request(url, { headers: { 'x-api-key': key } }));
    }
    expect(queries()).toBe(0);
    // The same requests with the key do run the query.
    expect((await t.request(ENDPOINT_URLS[0]!)).status).toBe(200);
    expect(queries()).toBeGreaterThan(0);
  });

  it('is accepted only in X-API-KEY: not in the query string, not as Authorization (Bearer, Basic or bare)', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1)] });
    const queries = spyOnQueries(t.store);
    const url = ENDPOINT_URLS[0]!;
    const basic = Buffer.from(`user:${TEST_KEY}`).toString('base64');
    const attempts: Array<[string, Headers]> = [
      [`${url}&api_key=${TEST_KEY}`, noKey()],
      [`${url}&x-api-key=${TEST_KEY}`, noKey()],
      [`${url}&key=${TEST_KEY}`, noKey()],
      [url, noKey({ authorization: `Bearer ${TEST_KEY}` })],
      [url, noKey({ authorization: `Basic ${basic}` })],
      [url, noKey({ authorization: TEST_KEY })],
      [url, noKey({ cookie: `x-api-key=${TEST_KEY}; api_key=${TEST_KEY}` })],
      [url, noKey({ 'x-api-token': TEST_KEY, apikey: TEST_KEY })],
    ];
    for (const [u, headers] of attempts) await expect401(await t.request(u, { headers }));
    // POST bodies carry parameters, never credentials.
    await expect401(await t.request('/api/endpoints/logs.all', { method: 'POST', headers: noKey(), body: JSON.stringify({ project: P, project_tier: 'FREE', api_key: TEST_KEY, 'x-api-key': TEST_KEY }) }));
    expect(queries()).toBe(0);
  });

  it('guards every /api route, including imports (the body is not read), deletes and the clock', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1, { id: 'keep' })] });
    const before = t.store.summary();
    const calls: Array<[string, RequestInit]> = [
      ['/api/sources', {}],
      ['/api/endpoints', {}],
      ['/api/imports', {}],
      ['/api/clock', {}],
      ['/api/imports?source=edge_logs', { method: 'POST', body: edgeNdjson(3, { prefix: 'unauth' }) }],
      ['/api/sources/edge_logs', { method: 'DELETE' }],
      ['/api/clock', { method: 'PUT', body: JSON.stringify({ mode: 'fixed', now: '2001-01-01T00:00:00Z' }) }],
      ['/api/demo', { method: 'POST' }],
      ['/api/no-such-route', {}],
    ];
    for (const [p, init] of calls) await expect401(await t.request(p, { ...init, headers: { 'x-api-key': 'wrong' } }));
    expect(t.store.summary()).toEqual(before);
    expect(t.clock.now()).toBe(NOW);
  });
});

describe('the key comparison', () => {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

  it('compares SHA-256 digests of equal length with timingSafeEqual, whatever the lengths of the keys', () => {
    const spy = vi.mocked(timingSafeEqual);
    spy.mockClear();
    const expected = digest(TEST_KEY);
    const given = ['a', TEST_KEY.slice(1), TEST_KEY + 'extra', 'z'.repeat(100_000), TEST_KEY];
    expect(given.map((g) => keyMatches(g, expected))).toEqual([false, false, false, false, true]);
    expect(spy).toHaveBeenCalledTimes(given.length);
    for (const [i, call] of spy.mock.calls.entries()) {
      const [a, b] = call as unknown as [Buffer, Buffer];
      expect(a.length).toBe(32);
      expect(b.length).toBe(32);
      // What is compared is the digest of the given key, never the key itself.
      expect(Buffer.compare(a, digest(given[i]!))).toBe(0);
      expect(b).toBe(expected);
    }
  });

  it('rejects a missing or empty key without comparing (nothing secret to time)', () => {
    const spy = vi.mocked(timingSafeEqual);
    spy.mockClear();
    expect(keyMatches(undefined, digest(TEST_KEY))).toBe(false);
    expect(keyMatches('', digest(TEST_KEY))).toBe(false);
    expect(spy).not.toHaveBeenCalled();
  });
});

describe('the real CLI', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('never writes the key (right or wrong) to stdout or stderr, through imports, good, bad and failing requests, and shutdown', async () => {
    dir = tempDir('le-hard-');
    const key = `sekrit-${Math.random().toString(36).slice(2)}-${'k'.repeat(20)}`;
    const wrong = `wrongkey-${Math.random().toString(36).slice(2)}`;
    const file = path.join(dir, 'edge_logs.ndjson');
    fs.writeFileSync(file, edgeNdjson(5) + '{broken\n');
    const cli = startCli(['--data-dir', path.join(dir, 'data'), '--port', '0', '--now', '2026-11-22T10:30:45.123456Z', '--import', file], {
      LOG_EXPLORER_API_KEY: key,
    });
    const url = await cli.listening;
    const get = (p: string, k?: string, init: RequestInit = {}) => fetch(`${url}${p}`, { ...init, headers: { ...(k !== undefined ? { 'X-API-KEY': k } : {}), ...(init.headers as Record<string, string>) } });
    expect((await get(ENDPOINT_URLS[0]!, key)).status).toBe(200);
    expect((await get(ENDPOINT_URLS[0]!, wrong)).status).toBe(401);
    expect((await get(`${ENDPOINT_URLS[0]!}&api_key=${key}`)).status).toBe(401);
    expect((await get(ENDPOINT_URLS[0]!, undefined, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
    expect((await get('/api/endpoints/usage.api-counts?project=(&interval=daily', key)).status).toBe(400);
    expect((await get('/api/imports?source=edge_logs', key, { method: 'POST', body: 'not an export\n' })).status).toBe(400);
    expect((await get('/api/imports?source=edge_logs', key, { method: 'POST', body: edgeNdjson(3, { prefix: 'up' }) })).status).toBe(200);
    expect((await get('/api/sources', key, { headers: { origin: 'https://evil.com' } })).status).toBe(403);
    cli.child.kill('SIGTERM');
    expect((await cli.exited).code).toBe(0);
    const out = cli.output();
    expect(out).toContain('Listening on');
    expect(out).toContain('"imported":5');
    expect(out).not.toContain(key);
    expect(out).not.toContain(wrong);
    // Not even a prefix of the key long enough to help guess it.
    expect(out).not.toContain(key.slice(0, 12));
  });
});
