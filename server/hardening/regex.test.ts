/**
 * Regular expressions: usage.api-counts runs RE2 (linear time, containment) over the
 * URL dictionary without holding the event loop; patterns RE2 cannot run are a 400 with the
 * engine's reason; the SQL functions survive a save.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { re2Contains } from '../endpoints/re2.ts';
import { importStream } from '../ingest/import.ts';
import { NOW, edgeRecord, fnRecord, makeTestApp, type TestApp } from '../testing/fixtures.ts';
import { P, chunked, edgeNdjson } from './helpers.ts';

const URLS = 100_000;
/** 100k distinct URLs, each with a long run of a's followed by '!': (a+)+$ backtracks on them. */
const longUrl = (i: number) => `https://${P}.supabase.co/rest/v1/${'a'.repeat(200)}!/${i}`;

interface Bucket {
  timestamp: string;
  total_rest_requests: number;
  total_storage_requests: number;
  total_auth_requests: number;
  total_realtime_requests: number;
}

async function apiCounts(t: TestApp, pattern: string, interval = 'daily') {
  const res = await t.request(`/api/endpoints/usage.api-counts?project=${encodeURIComponent(pattern)}&interval=${interval}`);
  return { status: res.status, body: (await res.json()) as { result?: Bucket[]; error?: { message: string; errors: Array<{ location?: string; message: string }> } } };
}

const total = (rows: Bucket[] | undefined) => (rows ?? []).reduce((s, r) => s + r.total_rest_requests, 0);

describe('over 100k distinct URLs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
    const body = Buffer.from(edgeNdjson(URLS, { url: longUrl }));
    const report = await importStream(t.store, chunked(body, 1 << 20), { source: 'edge_logs' });
    expect(report.imported).toBe(URLS);
  }, 120_000);
  afterAll(async () => {
    await t.close();
  });

  it('(a+)+$ answers in linear time: the same order as a plain pattern over the same URLs', async () => {
    let start = performance.now();
    // Not a literal (a character class): run by the RE2 port URL by URL like (a+)+$, where a
    // literal pattern is looked for in urls.log's bytes, many times faster.
    const literal = await apiCounts(t, 'zzz-no-such-tex[t]');
    const literalMs = performance.now() - start;
    start = performance.now();
    const evil = await apiCounts(t, '(a+)+$');
    const evilMs = performance.now() - start;
    expect(literal).toEqual({ status: 200, body: { result: [] } });
    expect(evil).toEqual({ status: 200, body: { result: [] } });
    // A backtracking engine needs ~2^200 steps per URL here; RE2 needs one pass.
    expect(evilMs).toBeLessThan(Math.max(5 * literalMs, 3_000));
    // And the same family with a match: every URL contains a+ followed by '!'.
    const all = await apiCounts(t, '(a+)+!');
    expect(all.status).toBe(200);
    expect(total(all.body.result)).toBe(URLS);
  });

  it('RE2 time grows linearly with the text: 4x the a\'s, about 4x the time (never exponential)', () => {
    const time = (n: number) => {
      const text = 'a'.repeat(n) + '!';
      re2Contains('(a+)+$', text);
      const start = performance.now();
      for (let i = 0; i < 5; i++) expect(re2Contains('(a+)+$', text)).toBe(false);
      return performance.now() - start;
    };
    time(1000); // warm up
    const small = time(20_000);
    const large = time(80_000);
    expect(large / small).toBeLessThan(12);
  });

  it('other requests keep being answered while a costly pattern runs over every URL', async () => {
    let done = false;
    const started = performance.now();
    const slow = apiCounts(t, '(a|aa)+(b|c)?$').then((r) => {
      done = true;
      return { ...r, ms: performance.now() - started };
    });
    const latencies: number[] = [];
    while (!done) {
      const sent = performance.now();
      const res = await t.request('/api/clock');
      expect(res.status).toBe(200);
      await res.json();
      if (!done) latencies.push(performance.now() - sent);
      await new Promise((r) => setTimeout(r, 10));
    }
    const r = await slow;
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual([]);
    // Small requests were answered while the costly one ran: it yields between slices. How long
    // either took depends on the machine, so no time is asserted (bench/ measures those).
    expect(latencies.length).toBeGreaterThanOrEqual(1);
  });

  it('a pattern that runs past the query time limit is cut with a 503 near the limit', async () => {
    const { createApp } = await import('../app.ts');
    const { AppClock } = await import('../clock.ts');
    const clock = new AppClock(() => null);
    clock.set('fixed', NOW);
    const { app } = createApp({ store: t.store, clock, apiKey: 'k', port: () => 4100, queryTimeoutMs: 20 });
    const get = (pattern: string) =>
      app.request(`http://127.0.0.1:4100/api/endpoints/usage.api-counts?project=${encodeURIComponent(pattern)}&interval=daily`, { headers: { host: '127.0.0.1:4100', 'x-api-key': 'k' } });
    const started = performance.now();
    const res = await get('(x+x+)+y|(a|aa)+c');
    const ms = performance.now() - started;
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { status: string; message: string } }).error).toEqual({
      code: 503,
      status: 'UNAVAILABLE',
      message: 'usage.api-counts ran longer than the 0.02 s limit and was stopped; try a shorter interval or a narrower pattern',
      errors: [{ reason: 'unavailable', message: 'usage.api-counts ran longer than the 0.02 s limit and was stopped; try a shorter interval or a narrower pattern' }],
    });
    // Cut near the limit rather than after the whole pass: how near depends on the machine's
    // load, so only the order is asserted (a test never fails because the machine is slow).
    expect(ms).toBeLessThan(60_000);
  });
});

describe('patterns RE2 does not run are a 400 with the engine\'s reason', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1000)] });
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['\\1', 'invalid escape sequence: `\\1`'],
    ['(?=x)', 'invalid or unsupported Perl syntax: `(?=`'],
    ['(?!x)', 'invalid or unsupported Perl syntax: `(?!`'],
    ['(?<=x)a', 'invalid named capture: `(?<=x)a`'],
    ['(', 'missing closing ): `(`'],
    ['a)', 'unexpected ): `a)`'],
    ['[z-a]', 'invalid character class range: `z-a`'],
    ['(a{1000}){1000}', 'invalid repeat count: `{1000}`'],
    ['a{1001}', 'invalid repeat count: `{1001}`'],
    ['*a', 'missing argument to repetition operator: `*`'],
  ])('%s', async (pattern, reason) => {
    const { status, body } = await apiCounts(t, pattern);
    expect(status).toBe(400);
    expect(body.error!.errors).toEqual([{ reason: 'invalid', location: 'project', message: `project is not a valid RE2 pattern: error parsing regexp: ${reason}` }]);
  });

  it('a 100 KB pattern (sent as a POST body, past any header limit) is a 400 for its length', async () => {
    const res = await t.request('/api/endpoints/usage.api-counts', { method: 'POST', body: JSON.stringify({ project: 'a'.repeat(100 * 1024), interval: 'daily' }) });
    expect(res.status).toBe(400);
    const e = ((await res.json()) as { error: { errors: unknown[] } }).error;
    expect(e.errors).toEqual([{ reason: 'invalid', location: 'project', message: 'project is a pattern longer than 2048 characters' }]);
  });
});

describe('partial-match semantics (REGEXP_CONTAINS)', () => {
  let t: TestApp;
  const urls = [
    `https://${P}.supabase.co/rest/v1/todos?select=*`,
    `https://${P}.supabase.co/storage/v1/object/avatars/a.png`,
    'https://projbbbbbbbbbbbbbbbb.supabase.co/auth/v1/token?grant_type=password',
    'https://projbbbbbbbbbbbbbbbb.supabase.co/realtime/v1/websocket',
  ];
  beforeAll(async () => {
    t = await makeTestApp({ edge: urls.map((url, i) => edgeRecord(NOW - (i + 1) * 1_000_000, { url, path: new URL(url).pathname })) });
  });
  afterAll(async () => {
    await t.close();
  });

  const families = async (pattern: string) => {
    const { status, body } = await apiCounts(t, pattern);
    expect(status, pattern).toBe(200);
    const rows = body.result!;
    return [0, 1, 2, 3].map((i) => rows.reduce((s, r) => s + [r.total_rest_requests, r.total_storage_requests, r.total_auth_requests, r.total_realtime_requests][i]!, 0));
  };

  it.each([
    // [pattern, rest, storage, auth, realtime]: computed by hand from the four URLs.
    [P, 1, 1, 0, 0],
    ['projbbbb', 0, 0, 1, 1],
    ['supabase', 1, 1, 1, 1],
    ['v1/to', 1, 0, 1, 0], // todos and token
    ['^https://proja', 1, 1, 0, 0],
    ['websocket$', 0, 0, 0, 1],
    ['^projaaaa', 0, 0, 0, 0],
    ['TODOS', 0, 0, 0, 0],
    ['(?i)TODOS', 1, 0, 0, 0],
    ['a\\.png|grant_type=pass', 0, 1, 1, 0],
    ['', 1, 1, 1, 1],
  ])('%s matches anywhere in the URL', async (pattern, ...expected) => {
    if (pattern === '') {
      // An empty pattern is a missing required parameter, not "match everything".
      expect((await apiCounts(t, pattern)).status).toBe(400);
      return;
    }
    expect(await families(pattern)).toEqual(expected);
  });
});

describe('user functions survive a save', () => {
  it('each endpoint gives the same answer before a save, after it, and for new parameters after it', async () => {
    const t = await makeTestApp({
      edge: Array.from({ length: 30 }, (_, i) => edgeRecord(NOW - (i + 1) * 60_000_000, { id: `s${i}`, path: i % 2 ? '/rest/v1/x' : '/auth/v1/y' })),
      fn: Array.from({ length: 40 }, (_, i) => fnRecord(NOW - (i + 1) * 1_000_000, { exec: i + 1, status: i % 5 ? 200 : 500 })),
    });
    try {
      const urls = [
        `/api/endpoints/logs.all?project=${P}&project_tier=FREE`, // log_record
        `/api/endpoints/usage.api-counts?project=${P}&interval=hourly`, // re2 URL matching
        `/api/endpoints/functions.invocation-stats?project=${P}&interval=5min`, // nearest_rank
        `/api/endpoints/functions.invocation-stats?project=${P}&interval=1day`, // sketches
      ];
      const answer = async (u: string) => {
        const res = await t.request(u);
        expect(res.status, u).toBe(200);
        return res.json();
      };
      const before = await Promise.all(urls.map(answer));
      expect((before[0] as { result: unknown[] }).result).toHaveLength(30);
      for (let round = 0; round < 3; round++) {
        await t.store.save();
        t.cache.clear();
        expect(await Promise.all(urls.map(answer))).toEqual(before);
      }
      // A pattern never seen before the save compiles and runs after it.
      const fresh = await apiCounts(t, 'auth/v1/y\\?select', 'hourly');
      expect(total(fresh.body.result)).toBe(0);
      expect(fresh.body.result!.reduce((s, r) => s + r.total_auth_requests, 0)).toBe(15);
    } finally {
      await t.close();
    }
  });
});

describe('many new patterns at once', () => {
  it('40 concurrent requests with 40 different patterns (more than the 32 remembered) all finish, with the right counts', async () => {
    const t = await makeTestApp();
    try {
      const body = Buffer.from(edgeNdjson(6000, { url: (i) => `https://${P}.supabase.co/rest/v1/t${i}?x=${i % 40}` }));
      await importStream(t.store, chunked(body, 1 << 20), { source: 'edge_logs' });
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => apiCounts(t, `x=${i}$`)));
      for (const a of answers) {
        expect(a.status).toBe(200);
        expect(total(a.body.result)).toBe(150);
      }
      // Each pattern's pass over the URLs is done once, not restarted each time others push it out.
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await t.close();
    }
  });
});
