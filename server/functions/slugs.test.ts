import { afterEach, describe, expect, it } from 'vitest';
import { importRecords, fnRecord, makeTestApp, NOW, MIN, HOUR, DAY, type TestApp } from '../testing/fixtures.ts';
import { functionSlugs, slugFromUrl, slugOfRecord, urlOfRecord } from './slugs.ts';

const P = 'projaaaaaaaaaaaaaaaa';

/** A function edge record called at `url` (fnRecord's default URL replaced). */
function called(ts: number, functionId: string, url: string | null) {
  const r = fnRecord(ts, { functionId });
  const request = r.metadata.request as Record<string, unknown>;
  if (url === null) delete request.url;
  else request.url = url;
  return r;
}

describe('slugFromUrl', () => {
  const cases: Array<[string, string | null]> = [
    ['https://abcdefghijklmnopqrst.supabase.co/functions/v1/stripe-webhook', 'stripe-webhook'],
    ['https://abcdefghijklmnopqrst.supabase.co/functions/v1/og-image?title=shoe%20lamp&id=12', 'og-image'],
    ['https://abcdefghijklmnopqrst.supabase.co/functions/v1/api/users/42', 'api'],
    ['https://abcdefghijklmnopqrst.functions.supabase.co/send-order-email', 'send-order-email'],
    ['https://abcdefghijklmnopqrst.functions.supabase.co/send-order-email/retry?x=1', 'send-order-email'],
    ['https://ABCDEFGHIJKLMNOPQRST.Functions.Supabase.co/hello', 'hello'],
    ['http://127.0.0.1:54321/functions/v1/hello-world', 'hello-world'],
    ['/functions/v1/relative-path?x=1', 'relative-path'],
    ['https://abcdefghijklmnopqrst.supabase.co/functions/v1/caf%C3%A9', 'café'],
    // Not function URLs, or no slug in them.
    ['https://abcdefghijklmnopqrst.supabase.co/rest/v1/todos', null],
    ['https://abcdefghijklmnopqrst.supabase.co/functions/v1/', null],
    ['https://abcdefghijklmnopqrst.functions.supabase.co/', null],
    ['not a url at all', null],
    ['', null],
  ];
  for (const [url, slug] of cases) {
    it(`${JSON.stringify(url)} -> ${JSON.stringify(slug)}`, () => {
      expect(slugFromUrl(url)).toBe(slug);
    });
  }
});

describe('urlOfRecord', () => {
  it('reads metadata.request.url in the ingest shape, the query shape (arrays) and as JSON text', () => {
    const url = 'https://r.supabase.co/functions/v1/a';
    expect(urlOfRecord(JSON.stringify({ metadata: { request: { url } } }))).toBe(url);
    expect(urlOfRecord(JSON.stringify({ metadata: [{ request: [{ url }] }] }))).toBe(url);
    expect(urlOfRecord(JSON.stringify({ metadata: JSON.stringify({ request: { url } }) }))).toBe(url);
  });

  it('falls back to the URL in the relay event message', () => {
    const text = JSON.stringify({ event_message: 'POST | 200 | https://r.functions.supabase.co/b?x=1', metadata: { request: {} } });
    expect(urlOfRecord(text)).toBe('https://r.functions.supabase.co/b?x=1');
    expect(slugOfRecord(text)).toBe('b');
  });

  it('is null for a record naming no URL, and for text that is not a JSON object', () => {
    expect(urlOfRecord(JSON.stringify({ event_message: 'boot', metadata: {} }))).toBeNull();
    expect(urlOfRecord('[1, 2]')).toBeNull();
    expect(urlOfRecord('{not json')).toBeNull();
  });
});

describe('functionSlugs over a store', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const ids = (store: TestApp['store'], ...names: string[]) => names.map((n) => store.functions.find(n)!);

  it('takes each function’s slug from its newest record naming one, in either URL form', async () => {
    t = await makeTestApp({
      fn: [
        // fn-a was renamed: its newest record names the current slug.
        called(NOW - 2 * DAY, 'fn-a', 'https://projaaaaaaaaaaaaaaaa.supabase.co/functions/v1/old-name'),
        called(NOW - HOUR, 'fn-a', 'https://projaaaaaaaaaaaaaaaa.supabase.co/functions/v1/alpha?id=1'),
        // fn-b uses the functions host; its newest record lost its URL, the one before names it.
        called(NOW - 3 * MIN, 'fn-b', 'https://projaaaaaaaaaaaaaaaa.functions.supabase.co/beta'),
        called(NOW - MIN, 'fn-b', null),
        // fn-c never names a function URL.
        called(NOW - MIN, 'fn-c', 'https://example.com/webhook'),
      ],
    });
    const store = t.store;
    const [a, b, c] = ids(store, 'fn-a', 'fn-b', 'fn-c');
    const slugs = functionSlugs(store, store.projects.find(P)!, [a!, b!, c!]);
    expect(slugs.get(a!)).toBe('alpha');
    expect(slugs.get(b!)).toBe('beta');
    expect(slugs.get(c!)).toBeNull();
  });

  it('is kept per data version: a newer record with another slug shows once it is imported', async () => {
    t = await makeTestApp({ fn: [called(NOW - HOUR, 'fn-a', 'https://x.supabase.co/functions/v1/first')] });
    const store = t.store;
    const project = store.projects.find(P)!;
    const [a] = ids(store, 'fn-a');
    expect(functionSlugs(store, project, [a!]).get(a!)).toBe('first');
    const before = store.dataVersion;
    await importRecords(store, 'function_edge_logs', [called(NOW - MIN, 'fn-a', 'https://x.functions.supabase.co/second')]);
    expect(store.dataVersion).toBeGreaterThan(before);
    expect(functionSlugs(store, project, [a!]).get(a!)).toBe('second');
  });

  it('keeps projects apart: the same function id in two projects has each project’s own slug', async () => {
    const other = 'projbbbbbbbbbbbbbbbb';
    const inOther = called(NOW - MIN, 'fn-a', 'https://projbbbbbbbbbbbbbbbb.supabase.co/functions/v1/elsewhere');
    (inOther.metadata as Record<string, unknown>).project_ref = other;
    t = await makeTestApp({ fn: [called(NOW - HOUR, 'fn-a', 'https://x.supabase.co/functions/v1/here'), inOther] });
    const store = t.store;
    const [a] = ids(store, 'fn-a');
    expect(functionSlugs(store, store.projects.find(P)!, [a!]).get(a!)).toBe('here');
    expect(functionSlugs(store, store.projects.find(other)!, [a!]).get(a!)).toBe('elsewhere');
  });
});
