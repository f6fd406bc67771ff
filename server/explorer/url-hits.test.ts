/**
 * A text search decided by edge records' URLs (url-hits.ts): counts, histograms and pages equal
 * a plain reading of the records for texts in URLs of any case, URLs urls.log writes with
 * escapes, matches held only by a message, and patterns; a phrase its URLs hold decides its
 * records without reading a text chunk or a record block; verdicts kept across requests do not
 * outlive the URL ids they were given for.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { RE2JS } from 're2js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { appOver, DAY, importRecords, MIN, NOW, storeKeeper, type TestApp } from '../testing/fixtures.ts';
import { recordBlocksHeld } from '../store/record-blocks.ts';
import { textChunksRead } from '../store/block-texts.ts';
import { URL_MATCH, URL_NO_MATCH, urlHits } from './url-hits.ts';
import { partitionsByKnownUrls } from './query.ts';
import { adaptiveTextFinder } from '../store/block-search.ts';
import { crcOffThread, linesFoundOffThread, searchWorkerUnavailable, setSearchWorker } from '../store/search-worker.ts';

const keeper = storeKeeper('le-urlhits-');
afterEach(() => keeper.cleanup());

const REF = 'projaaaaaaaaaaaaaaaa';

/**
 * Four kinds of edge record, in turn: a REST URL its message does not repeat; the same path in
 * upper case with a quote (urls.log escapes it); another URL, with the phrase in the message
 * only; a storage URL. `tag` changes every URL, so a second import names other URLs.
 */
function records(n: number, tag = '') {
  return Array.from({ length: n }, (_, i) => {
    const kind = i % 4;
    const url =
      kind === 0
        ? `https://x.supabase.co/rest/v1/t${i % 50}${tag}?id=${i}`
        : kind === 1
          ? `https://x.supabase.co/REST/V1/Orders${tag}?q="a"&i=${i % 20}`
          : kind === 2
            ? `https://x.supabase.co/auth/v2/login${tag}`
            : `https://x.supabase.co/storage/v1/object/x${i % 30}${tag}.png`;
    return {
      id: `r-${tag}-${i}`,
      timestamp: NOW - i * MIN,
      project: REF,
      event_message: kind === 2 ? `note /rest/v1/ in message` : kind === 1 ? 'POST | 201' : 'GET | 200 | ok',
      metadata: { request: { method: kind === 1 ? 'POST' : 'GET', url, headers: { note: `padding ${'x'.repeat(400 + (i % 300))}` } }, response: { status_code: kind === 1 ? 201 : 200 } },
    };
  });
}
type Rec = ReturnType<typeof records>[number];

const window = `start=${encodeURIComponent(new Date((NOW - 10 * DAY) / 1000).toISOString())}&end=${encodeURIComponent(new Date((NOW + MIN) / 1000).toISOString())}`;
const qs = (q: string, regex: boolean) => `source=edge_logs&q=${encodeURIComponent(q)}${regex ? '&regex=1' : ''}&${window}`;

async function json<T>(t: TestApp, url: string): Promise<T> {
  const res = await t.request(url);
  expect(res.status, url).toBe(200);
  return (await res.json()) as T;
}

const countOf = async (t: TestApp, q: string, regex = false) => (await json<{ result: { count: number } }>(t, `/api/logs/count?${qs(q, regex)}`)).result.count;

/** Every page of a search, newest first: the ids. */
async function idsOf(t: TestApp, q: string, regex = false): Promise<string[]> {
  const got: string[] = [];
  let cursor: string | null = null;
  do {
    const body: { result: Array<{ id: string }>; next: string | null } = await json(t, `/api/logs?${qs(q, regex)}&limit=170${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    got.push(...body.result.map((r) => r.id));
    cursor = body.next;
  } while (cursor);
  return got;
}

/** The records a search must find, newest first: its message or its URL holds a match (every text here is ASCII). */
function matching(recs: readonly Rec[], q: string, regex: boolean): Rec[] {
  const re = regex ? RE2JS.compile(`(?i)${q}`) : null;
  const test = (text: string) => (re ? re.matcher(text).find() : text.toLowerCase().includes(q.toLowerCase()));
  return recs.filter((r) => test(r.event_message) || test(r.metadata.request.url));
}

const SEARCHES: Array<[string, boolean]> = [
  ['/rest/v1/', false],
  ['/REST/v1/t1', false],
  ['rest/v1/orders', false],
  ['"a"&i=1', false],
  ['in message', false],
  ['rest/v1/t\\d+\\?id=1', true],
  ['orders.*i=\\d$', true],
  ['\\d\\.png$', true],
];

/** A fresh store holding `records(n)`. */
async function storeOf(n: number) {
  const store = await keeper.open(keeper.newDir());
  const recs = records(n);
  await importRecords(store, 'edge_logs', recs);
  return { store, recs };
}

describe('text search decided by the URLs', () => {
  it('counts, histograms and pages exactly what a plain reading finds, before and after the words and texts are built', async () => {
    const { store, recs } = await storeOf(2400);
    const t = appOver(store);
    const all = async (stage: string) => {
      for (const [q, regex] of SEARCHES) {
        const want = matching(recs, q, regex);
        expect(want.length, q).toBeGreaterThan(0);
        expect(await countOf(t, q, regex), `${q}, ${stage}`).toBe(want.length);
        const hist = await json<{ result: Array<{ count: number }> }>(t, `/api/logs/histogram?${qs(q, regex)}`);
        expect(hist.result.reduce((s, b) => s + b.count, 0), `${q} histogram, ${stage}`).toBe(want.length);
        expect(await idsOf(t, q, regex), `${q} pages, ${stage}`).toEqual(want.map((r) => r.id));
      }
    };
    await all('right after the import');
    await store.columnsSettled();
    // Asked again by a new app: its walks are not the ones kept above.
    await all('settled');
  });

  it('past the partition whose URL search read urls.log, decides each partition in one pass: the same counts, row filters too', async () => {
    const { store, recs } = await storeOf(2400);
    await store.columnsSettled();
    const t = appOver(store);
    const parts = store.committedPartitions('cloudflare.logs.prod').length;
    expect(parts).toBeGreaterThan(1);
    const filters: Array<[string, (r: Rec) => boolean]> = [
      ['', () => true],
      ['&status=201', (r) => r.metadata.response.status_code === 201],
      ['&method=!POST', (r) => r.metadata.request.method !== 'POST'],
    ];
    for (const [q, regex] of SEARCHES) {
      for (const [filter, keep] of filters) {
        const before = partitionsByKnownUrls();
        const want = matching(recs, q, regex).filter(keep);
        const count = await json<{ result: { count: number } }>(t, `/api/logs/count?${qs(q, regex)}${filter}`);
        expect(count.result.count, `${q}${filter}`).toBe(want.length);
        const hist = await json<{ result: Array<{ count: number }> }>(t, `/api/logs/histogram?${qs(q, regex)}${filter}&buckets=500`);
        expect(hist.result.reduce((s, b) => s + b.count, 0), `${q}${filter} histogram`).toBe(want.length);
        // Every URL was tested by the first partition's search (or an earlier request's): the rest took the one pass.
        expect(partitionsByKnownUrls() - before, `${q}${filter}`).toBeGreaterThanOrEqual(parts - 1);
      }
    }
  });

  it('a phrase the URLs hold decides its records without reading a text chunk or a record block', async () => {
    const { store, recs } = await storeOf(2400);
    await store.columnsSettled();
    const t = appOver(store);
    const chunks = textChunksRead();
    const blocks = recordBlocksHeld().decompressed;
    // Not a word alone (the words narrow it, they do not decide it); no message holds it.
    const want = matching(recs, '/rest/v1/t', false);
    expect(want.length).toBe(600);
    expect(await countOf(t, '/rest/v1/t')).toBe(600);
    expect(textChunksRead() - chunks).toBe(0);
    expect(recordBlocksHeld().decompressed - blocks).toBe(0);
    // A phrase also held by messages: those records' chunks are read, and counted right.
    expect(await countOf(t, '/rest/v1/')).toBe(matching(recs, '/rest/v1/', false).length);
    expect(textChunksRead() - chunks).toBeGreaterThan(0);
  });

  it('tests a few URLs one by one and many by reading urls.log, with the same verdicts', async () => {
    const { store } = await storeOf(2400);
    const n = store.urls.size();
    const scans = vi.spyOn(store.urls, 'linesJob');
    const texts = Array.from({ length: n }, (_, i) => store.urls.get(i + 1));
    for (const [q, regex] of SEARCHES) {
      const re = regex ? RE2JS.compile(`(?i)${q}`) : null;
      const want = texts.map((u) => (re ? re.matcher(u).find() : u.toLowerCase().includes(q.toLowerCase())));
      const ids = Array.from({ length: n }, (_, i) => i + 1);
      const search = { text: q, lower: q.toLowerCase(), re: regex ? RE2JS.compile(`(?i)${q}`) : null, rawSafe: false };
      // Five URLs: looked up one by one (too few to read the file for).
      const few = urlHits(store, search);
      scans.mockClear();
      for (const id of ids.slice(0, 5)) few.want(id);
      await few.decide(() => {});
      expect(scans, q).not.toHaveBeenCalled();
      expect(Array.from({ length: 5 }, (_, i) => few.matches(i + 1)), q).toEqual(want.slice(0, 5));
      // All but the last URL: read from the file (a plain text, or a pattern's literal part),
      // which tests every URL it holds, the last too; or looked up, which leaves the last untested.
      const many = urlHits(store, search);
      for (const id of ids.slice(0, n - 1)) many.want(id);
      await many.decide(() => {});
      const read = q !== '"a"&i=1';
      expect(scans.mock.calls.length > 0, q).toBe(read);
      expect(texts.map((_, i) => many.matches(i + 1)), q).toEqual(want.map((w, i) => w && (read || i !== n - 1)));
    }
  });

  it('a walk with many partitions left reads urls.log at once for a few URLs, rather than looking them up one by one first', async () => {
    for (const left of [0, 10_000]) {
      const { store } = await storeOf(2400);
      const scans = vi.spyOn(store.urls, 'linesJob');
      const search = { text: '/rest/v1/', lower: '/rest/v1/', re: null, rawSafe: true };
      const hits = urlHits(store, search);
      for (const id of [1, 2, 3, 4, 5]) hits.want(id);
      await hits.decide(() => {}, left);
      expect(scans.mock.calls.length > 0, `${left} partitions left`).toBe(left > 0);
      const want = [1, 2, 3, 4, 5].map((id) => store.urls.get(id).toLowerCase().includes('/rest/v1/'));
      expect([1, 2, 3, 4, 5].map((id) => hits.matches(id))).toEqual(want);
      expect(want).toContain(true);
    }
  });

  it('a walk waits for the chunks of urls.log that hold the URLs it wants; the worker answers the others meanwhile', async () => {
    const { store } = await storeOf(2400);
    const n = store.urls.size();
    const want = Array.from({ length: n }, (_, i) => store.urls.get(i + 1).toLowerCase().includes('/rest/v1/'));
    const verdicts = (tested: Uint8Array) => want.map((_, i) => (tested[i + 1] === URL_MATCH ? true : tested[i + 1] === URL_NO_MATCH ? false : 'untested'));
    const search = (text: string) => ({ text, lower: text, re: null, rawSafe: true });
    try {
      // No worker: the chunks past the one holding ids 1-5 are left for a walk that wants their ids.
      setSearchWorker('inline');
      const alone = urlHits(store, search('/rest/v1/'), 100);
      for (const id of [1, 2, 3, 4, 5]) alone.want(id);
      await alone.decide(() => {}, 10_000);
      expect(verdicts(alone.tested()!).slice(0, 100)).toEqual(want.slice(0, 100));
      expect(verdicts(alone.tested()!).slice(100).every((v) => v === 'untested')).toBe(true);
      alone.want(n - 1);
      await alone.decide(() => {}, 10_000);
      expect(verdicts(alone.tested()!)).toEqual(want);
      // A walk stopped while it waits: the chunks it asked and nobody started are dropped, and asked again by the next.
      const stopped = urlHits(store, search('/rest/v1/o'), 100);
      stopped.want(1);
      stopped.want(350);
      await expect(
        stopped.decide(() => {
          throw new Error('stopped');
        }, 10_000),
      ).rejects.toThrow('stopped');
      expect(verdicts(stopped.tested()!).slice(200).every((v) => v === 'untested')).toBe(true);
      const asks = vi.spyOn(store.urls, 'linesJob');
      for (let id = 1; id <= n; id++) stopped.want(id);
      await stopped.decide(() => {}, 10_000);
      expect(asks).toHaveBeenCalled();
      asks.mockRestore();
      expect(verdicts(stopped.tested()!)).toEqual(Array.from({ length: n }, (_, i) => store.urls.get(i + 1).toLowerCase().includes('/rest/v1/o')));
      // With the worker: the others are answered without another walk asking (a text of its own, not kept from above).
      setSearchWorker('worker');
      const ahead = urlHits(store, search('/rest/v1/t'), 100);
      for (const id of [1, 2, 3, 4, 5]) ahead.want(id);
      await ahead.decide(() => {}, 10_000);
      const wantT = Array.from({ length: n }, (_, i) => store.urls.get(i + 1).toLowerCase().includes('/rest/v1/t'));
      for (let wait = 0; wait < 200 && verdicts(ahead.tested()!).includes('untested'); wait++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(verdicts(ahead.tested()!).map((v, i) => v === wantT[i])).not.toContain(false);
      expect(searchWorkerUnavailable()).toBeUndefined();
    } finally {
      setSearchWorker('worker');
    }
  });

  it('the search worker finds in ranges of urls.log what this thread finds: escaped lines and texts not written yet left to this thread', async () => {
    const { store } = await storeOf(2400);
    // The file's lines with a quote are escaped (records' kind 1); texts added now are pending (not written yet).
    const odd = ['https://x.test/rest/v1/\\u00e9?"q"', 'https://x.test/REST/V1/é', 'https://x.test/a\\b/rest/v1/', 'https://x.test/rest/v2/'];
    const written = store.urls.size();
    for (const u of odd) store.urls.idOf(u);
    const n = store.urls.size();
    expect(n).toBe(written + odd.length);
    expect(fs.readFileSync(store.urls.file, 'latin1')).toContain('/REST/V1/Orders?q=\\"a\\"');
    for (const text of ['/rest/v1/', 'rest', 'v1/t1', '/v1/orders?q=', '/a/', 'zzz']) {
      const holds = (t: string) => t.toLowerCase().includes(text);
      for (const [after, limit] of [[0, n], [0, 700], [700, 50], [n - 6, 10], [n - 1, 10]] as const) {
        const mine = store.urls.idsFound(adaptiveTextFinder(text), holds, after, limit).ids;
        const job = store.urls.linesJob(after, limit);
        const ids: number[] = [];
        if (job.lines) {
          const found = await linesFoundOffThread(job.lines, text).answer;
          expect(searchWorkerUnavailable()).toBeUndefined();
          ids.push(...found!.plain);
          store.urls.testEscaped(found!.escaped, holds, ids);
        }
        store.urls.testPending(job, holds, ids);
        expect(ids.sort((a, b) => a - b), `${text} after ${after}`).toEqual(mine);
        // And what a plain reading of the texts finds.
        const want = Array.from({ length: Math.min(n, after + limit) - after }, (_, i) => after + i + 1).filter((id) => holds(store.urls.get(id)));
        expect(mine, `${text} after ${after}`).toEqual(want);
      }
    }
    // A job made while texts were pending, tested after a save wrote them: each read where it is now.
    const made = store.urls.linesJob(written, n - written);
    store.urls.flush();
    for (const text of ['/rest/v1/', 'x.test', 'zzz']) {
      const holds = (t: string) => t.toLowerCase().includes(text);
      const ids: number[] = [];
      store.urls.testPending(made, holds, ids);
      expect(ids, text).toEqual(odd.map((u, k) => (holds(u) ? written + k + 1 : 0)).filter(Boolean));
    }
        // The worker's CRC of the file's first bytes (urls.log's saved offsets are checked by it after a start).
    const bytes = fs.readFileSync(store.urls.file);
    for (const k of [0, 1, 1000, bytes.length]) expect(await crcOffThread(store.urls.file, k)).toBe(zlib.crc32(bytes.subarray(0, k)));
  });

  it('verdicts are not kept past a deletion: URL ids then name other URLs', async () => {
    const { store, recs: first } = await storeOf(800);
    const t = appOver(store);
    expect(await countOf(t, '/rest/v1/t1a')).toBe(0);
    expect(await countOf(t, 'v1/t1?')).toBe(matching(first, 'v1/t1?', false).length);
    await store.deleteSource('cloudflare.logs.prod');
    // The same ids now name URLs with a tag: what the verdicts said of the old ones is wrong for these.
    const second = records(800, 'a');
    await importRecords(store, 'edge_logs', second);
    for (const q of ['/rest/v1/t1a', 'v1/t1?']) expect(await countOf(t, q), q).toBe(matching(second, q, false).length);
    await store.columnsSettled();
    for (const q of ['/rest/v1/t1a', 'v1/t1?']) expect(await countOf(t, q), `${q}, settled`).toBe(matching(second, q, false).length);
  });
});
