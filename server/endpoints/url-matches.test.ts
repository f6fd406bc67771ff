/**
 * URL pattern matches: what UrlMatches remembers and keeps in `urls.log.matches` against RE2
 * containment tested URL by URL (an independent reading of the rule), on random URLs with
 * escapes; after restarts, with the file damaged, stale or another folder's, and after imports.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Rng } from '../demo/random.ts';
import { checkStore } from '../store/check.ts';
import type { LogStore } from '../store/log-store.ts';
import { URL_MATCHES_FILE } from '../store/store-files.ts';
import { readUrlMatches } from '../store/url-match-file.ts';
import { appOver, edgeRecord, importRecords, NOW, DAY, HOUR, storeKeeper } from '../testing/fixtures.ts';
import { compileRe2 } from './re2.ts';
import { helpersOf } from './speed-paths.ts';
import { matchesId } from './url-matches.ts';

const keeper = storeKeeper('le-url-matches-');
afterEach(() => keeper.cleanup());

const REFS = ['ouwmmbchcsjxvtfobujc', 'blcewytrjvljrooddvav', 'bzpkezpugdwviesknuzj'];
const PATHS = ['/rest/v1/t', '/auth/v1/token', '/storage/v1/object/x', '/realtime/v1/ws', '/graphql/v1'];
/** Literal patterns (looked for as bytes) and others (tested by the RE2 port) alike. */
const PATTERNS = [
  ...REFS.map((r) => r),
  'ouwmmbchcsjxvtfobujc\\.supabase\\.co/rest',
  'nblcewytrjvljrooddvav', // "\n" + ref in a URL is an escape in urls.log, not this text
  'u0009',
  'a"b', // a literal with a quote: tested by the RE2 port
  '(rest|auth)/v1',
  '^https://[a-z]+\\.supabase\\.co/storage',
  'é',
  'zz-no-url-has-this',
];

/** Random URLs: the projects' hosts, another ref in the query now and then, and characters urls.log escapes. */
function randomUrls(seed: number, n: number): string[] {
  const r = new Rng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r.next() * xs.length)]!;
  const bits = ['a', 'b', '"', '\\', '\t', '\n', 'é', '\u0001', '%20', '=', '&', 'n', 'u0009', 'a"b', '\ud83d\ude00'];
  return Array.from({ length: n }, (_, i) => {
    let q = `id=${i}`;
    for (let k = Math.floor(r.next() * 4); k > 0; k--) q += pick(bits);
    if (r.next() < 0.2) q += `&ref=${r.next() < 0.5 ? '\n' : ''}${pick(REFS)}`;
    return `https://${pick(REFS)}.supabase.co${pick(PATHS)}?${q}`;
  });
}

function edgeRecords(urls: string[], seed: number) {
  const r = new Rng(seed);
  return urls.map((url, i) => edgeRecord(NOW - Math.floor(r.next() * 8 * DAY), { id: `e${seed}-${i}`, url, path: new URL(url.replace(/[\n\t\u0001]/g, '')).pathname }));
}

/** Every URL id the pattern matches, each URL tested by the RE2 port (no literal shortcut). */
function plainIds(store: LogStore, pattern: string): number[] {
  const re = compileRe2(pattern);
  return store.urls
    .slice(0, Number.MAX_SAFE_INTEGER)
    .filter((u) => re.test(u.text))
    .map((u) => u.id);
}

function memoIds(store: LogStore, pattern: string): number[] {
  const bits = helpersOf(store).urlMatches.bitmap(pattern);
  const out: number[] = [];
  for (let id = 1; id < bits.length * 8; id++) if (matchesId(bits, id)) out.push(id);
  return out;
}

async function storeWith(urls: string[], seed = 1): Promise<{ dir: string; store: LogStore }> {
  const dir = keeper.newDir();
  const store = await keeper.open(dir);
  await importRecords(store, 'edge_logs', edgeRecords(urls, seed));
  return { dir, store };
}

/** The patterns asked (so remembered), the file written, the store closed. */
async function askAndClose(store: LogStore): Promise<void> {
  for (const p of PATTERNS) memoIds(store, p);
  helpersOf(store).urlMatches.flush();
  await keeper.close(store);
}

/** Spies on the dictionary's matching reads. */
function spyMatching(store: LogStore) {
  return { bytes: vi.spyOn(store.urls, 'idsContaining'), texts: vi.spyOn(store.urls, 'slice') };
}

describe('URL pattern matches', () => {
  it('equal RE2 containment over every URL, for literal and other patterns, on URLs with escapes', async () => {
    for (const seed of [1, 2, 3]) {
      const { store } = await storeWith(randomUrls(seed, 1500), seed);
      for (const p of PATTERNS) expect(memoIds(store, p), `seed ${seed} ${p}`).toEqual(plainIds(store, p));
      await keeper.close(store);
    }
  });

  it('after a restart come from urls.log.matches without matching any URL again, the same', async () => {
    const { dir, store } = await storeWith(randomUrls(4, 2000));
    const expected = Object.fromEntries(PATTERNS.map((p) => [p, plainIds(store, p)]));
    await askAndClose(store);
    expect((await checkStore(dir)).findings).toEqual([]);
    const again = await keeper.open(dir);
    expect(readUrlMatches(path.join(dir, URL_MATCHES_FILE), again.urls).map((s) => s.pattern).sort()).toEqual([...PATTERNS].sort());
    const spies = spyMatching(again);
    for (const p of PATTERNS) expect(memoIds(again, p), p).toEqual(expected[p]);
    expect(spies.bytes).not.toHaveBeenCalled();
    expect(spies.texts).not.toHaveBeenCalled();
  });

  const damages: Record<string, (file: string, other: string) => void> = {
    flipped: (f) => {
      const b = fs.readFileSync(f);
      const i = Math.floor(b.length / 2);
      b[i] = b[i]! ^ 0x10;
      fs.writeFileSync(f, b);
    },
    cut: (f) => fs.truncateSync(f, Math.floor(fs.statSync(f).size / 2)),
    'zeroed tail': (f) => {
      const b = fs.readFileSync(f);
      b.fill(0, b.length - 100);
      fs.writeFileSync(f, b);
    },
    "another folder's": (f, other) => fs.copyFileSync(other, f),
    empty: (f) => fs.writeFileSync(f, ''),
  };
  for (const [name, damage] of Object.entries(damages)) {
    it(`a file ${name} is not used: the same matches, and it is written again whole`, async () => {
      const { dir, store } = await storeWith(randomUrls(5, 800), 5);
      const expected = Object.fromEntries(PATTERNS.map((p) => [p, plainIds(store, p)]));
      await askAndClose(store);
      // Another folder with other URLs, its file made the same way.
      const other = await storeWith(randomUrls(6, 900), 6);
      await askAndClose(other.store);
      const file = path.join(dir, URL_MATCHES_FILE);
      damage(file, path.join(other.dir, URL_MATCHES_FILE));
      // `npm run check` names it as derived (rebuilt by the app): the store is still OK.
      const report = await checkStore(dir);
      expect(report.findings).toEqual([{ file: URL_MATCHES_FILE, kind: 'derived', problem: expect.any(String) }]);
      expect(report.ok).toBe(true);
      const again = await keeper.open(dir);
      const spies = spyMatching(again);
      for (const p of PATTERNS) expect(memoIds(again, p), p).toEqual(expected[p]);
      expect(spies.bytes.mock.calls.length + spies.texts.mock.calls.length).toBeGreaterThan(0);
      helpersOf(again).urlMatches.flush();
      const sections = readUrlMatches(file, again.urls);
      expect(sections.map((s) => s.pattern).sort()).toEqual([...PATTERNS].sort());
      for (const s of sections) expect(s.count).toBe(again.urls.committedState.count);
    });
  }

  it('new imports extend them: a restart matches only the URLs added since the file was written, and the next write covers them', async () => {
    const first = randomUrls(7, 1000);
    const { dir, store } = await storeWith(first, 7);
    await askAndClose(store);
    const reopened = await keeper.open(dir);
    const before = reopened.urls.committedState.count;
    // An import after the restart, then a restart before any query: the file is behind.
    await importRecords(reopened, 'edge_logs', edgeRecords(randomUrls(8, 700), 8));
    await keeper.close(reopened);
    const again = await keeper.open(dir);
    const after = again.urls.committedState.count;
    expect(after).toBeGreaterThan(before);
    const expected = Object.fromEntries(PATTERNS.map((p) => [p, plainIds(again, p)]));
    const spies = spyMatching(again);
    for (const p of PATTERNS) expect(memoIds(again, p), p).toEqual(expected[p]);
    // Only the URLs past the file's were looked at.
    for (const [, after] of spies.bytes.mock.calls) expect(after).toBeGreaterThanOrEqual(before);
    for (const [after] of spies.texts.mock.calls) expect(after).toBeGreaterThanOrEqual(before);
    helpersOf(again).urlMatches.flush();
    for (const s of readUrlMatches(path.join(dir, URL_MATCHES_FILE), again.urls)) expect(s.count).toBe(after);
  });

  it('after a source is deleted and other URLs imported (ids given again), the file is not used', async () => {
    const { dir, store } = await storeWith(randomUrls(9, 1200), 9);
    await askAndClose(store);
    const reopened = await keeper.open(dir);
    await reopened.deleteSource('cloudflare.logs.prod');
    await importRecords(reopened, 'edge_logs', edgeRecords(randomUrls(10, 1300), 10));
    await keeper.close(reopened);
    const again = await keeper.open(dir);
    for (const p of PATTERNS) expect(memoIds(again, p), p).toEqual(plainIds(again, p));
  });

  it('usage.api-counts answers the same bytes with the file, without it and with it damaged', async () => {
    const r = new Rng(11);
    const urls = randomUrls(11, 3000);
    // Records within the last hour too, so every interval has buckets.
    const records = urls.map((url, i) =>
      edgeRecord(NOW - Math.floor(r.next() * (r.next() < 0.3 ? HOUR : 8 * DAY)), { id: `a${i}`, url, path: new URL(url.replace(/[\n\t\u0001]/g, '')).pathname }),
    );
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    await importRecords(store, 'edge_logs', records);
    const ask = async (s: LogStore) => {
      const t = appOver(s);
      const out: string[] = [];
      for (const project of PATTERNS) {
        for (const interval of ['daily', 'hourly', 'minutely']) {
          const res = await t.request(`/api/endpoints/usage.api-counts?${new URLSearchParams({ project, interval })}`);
          expect(res.status).toBe(200);
          out.push(await res.text());
        }
      }
      return out;
    };
    const plain = await ask(store);
    expect(plain.filter((b) => b !== '{"result":[]}').length).toBeGreaterThan(PATTERNS.length);
    helpersOf(store).urlMatches.flush();
    await keeper.close(store);
    const file = path.join(dir, URL_MATCHES_FILE);
    for (const change of ['none', 'deleted', 'flipped']) {
      if (change === 'deleted') fs.rmSync(file);
      if (change === 'flipped') damages.flipped!(file, '');
      const again = await keeper.open(dir);
      expect(await ask(again), change).toEqual(plain);
      helpersOf(again).urlMatches.flush();
      await keeper.close(again);
    }
  });
});
