/**
 * The record texts (store/block-texts.ts) against the records: every count of a search read
 * from the texts equals the count worked out here from the records themselves, for plain
 * texts, Unicode and RE2 patterns; a match must lie within the message or within the URL; a
 * common word reads no record block once the texts are built; and damaged, cut or deleted
 * texts cost reads, never an answer, and are built again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RE2JS } from 're2js';
import { afterEach, describe, expect, it } from 'vitest';
import { appOver, DAY, importRecords, MIN, NOW, storeKeeper } from '../testing/fixtures.ts';
import { recordBlocksHeld } from '../store/record-blocks.ts';
import { textGroupsRead, packGroup, unpackGroup, messageOf, urlOf } from '../store/block-texts.ts';

const keeper = storeKeeper('le-texts-');
afterEach(() => keeper.cleanup());

const REF = 'projaaaaaaaaaaaaaaaa';
const WORDS = ['timeout', 'Timeout', 'refused', 'products', 'gateway', 'Zürich', 'café', '東京', 'error', 'ok', 'retry', 'a"quote', 'back\\slash', 'Mozilla/5.0'];
const PATHS = ['/rest/v1/products', '/rest/v1/orders', '/auth/v1/token', '/functions/v1/hello'];

function records(n: number, seed: number) {
  let s = seed;
  const rnd = (k: number) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s % k;
  };
  return Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 1 + rnd(4) }, () => WORDS[rnd(WORDS.length)]).join(' ');
    const p = PATHS[rnd(PATHS.length)]!;
    const url = `https://x.supabase.co${p}?id=${rnd(1000)}`;
    return {
      id: `t-${seed}-${i}`,
      timestamp: NOW - i * 2 * MIN,
      project: REF,
      // Every 5th message ends where its URL begins: "…prod" + "https://…" must not match
      // "prodhttps"; every 3rd holds its URL, as an edge request's does (the URL is not kept twice).
      event_message: i % 5 === 0 ? `GET | ${words} | prod` : i % 3 === 0 ? `GET | 200 | ${url} | ${words}` : `GET | ${[200, 500][rnd(2)]} | ${words}`,
      metadata: { request: { method: 'GET', url, headers: { note: `padding ${'x'.repeat(300 + rnd(400))} sidecar` } }, response: { status_code: 200 } },
    };
  });
}

const window = `start=${encodeURIComponent(new Date((NOW - 10 * DAY) / 1000).toISOString())}&end=${encodeURIComponent(new Date((NOW + MIN) / 1000).toISOString())}`;

describe('text search by the record texts', () => {
  it('packs and unpacks a group: messages, URLs (none kept apart from empty), Unicode', () => {
    const recs = [
      { blk: 0, boff: 0, texts: { message: 'GET | 200 | Zürich', url: 'https://x/é' } },
      { blk: 0, boff: 120, texts: { message: '', url: null } },
      { blk: 4096, boff: 0, texts: { message: '東京 timeout', url: null } },
    ];
    const g = unpackGroup(packGroup(recs));
    expect(g.n).toBe(3);
    expect([...g.blk]).toEqual([0, 0, 4096]);
    expect([...g.boff]).toEqual([0, 120, 0]);
    expect([0, 1, 2].map((r) => [messageOf(g, r), urlOf(g, r)])).toEqual(recs.map((r) => [r.texts.message, r.texts.url]));
  });

  it('counts, pages and histograms exactly what a plain reading of the records finds, before and after the texts are built', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const recs = records(2500, 3);
    await importRecords(store, 'edge_logs', recs);
    const t = appOver(store);
    const count = async (q: string, regex = false) => {
      const res = await t.request(`/api/logs/count?source=edge_logs&q=${encodeURIComponent(q)}${regex ? '&regex=1' : ''}&${window}`);
      expect(res.status, q).toBe(200);
      return ((await res.json()) as { result: { count: number } }).result.count;
    };
    const expected = (test: (text: string) => boolean) => recs.filter((r) => test(r.event_message) || test(r.metadata.request.url)).length;
    const plain = ['timeout', 'TIMEOUT', 'zürich', 'CAFÉ', '東京', 'a"quote', 'back\\slash', 'mozilla/5', 'prodhttps', 'prod', 'sidecar', 'id=42', '| 500 |'];
    const patterns = ['time(out|s)', '^GET \\| 500', 'products\\?id=\\d{2}$', '^https://', 'caf.', 'prod$', 'prodhttps', '\\d \\| https'];
    const all = async (stage: string) => {
      for (const q of plain) expect(await count(q), `${q}, ${stage}`).toBe(expected((text) => text.toLowerCase().includes(q.toLowerCase())));
      for (const p of patterns) {
        const re = RE2JS.compile(`(?i)${p}`);
        expect(await count(p, true), `/${p}/, ${stage}`).toBe(expected((text) => re.matcher(text).find()));
      }
    };
    expect(expected((text) => text.toLowerCase().includes('prodhttps'))).toBe(0);
    expect(expected((text) => text.toLowerCase().includes('prod'))).toBeGreaterThan(0);
    await all('right after the import');
    await store.columnsSettled();
    const folder = path.join(dir, 'parts', 'edge_logs');
    expect(fs.readdirSync(folder).filter((f) => f.endsWith('.texts')).length).toBeGreaterThan(0);
    await all('texts built');
    // Pages: the newest matching records, in order, across several pages.
    const want = recs.filter((r) => r.event_message.toLowerCase().includes('timeout') || r.metadata.request.url.includes('timeout')).map((r) => r.id);
    const got: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.request(`/api/logs?source=edge_logs&q=timeout&limit=300&${window}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const body = (await res.json()) as { result: Array<{ id: string }>; next: string | null };
      got.push(...body.result.map((r) => r.id));
      cursor = body.next;
    } while (cursor);
    expect(got).toEqual(want);
  });

  it('a common word reads no record block once the texts are built (only its groups of texts)', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const recs = records(2000, 5);
    await importRecords(store, 'edge_logs', recs);
    await store.columnsSettled();
    const t = appOver(store);
    const blocks = recordBlocksHeld().decompressed;
    const groups = textGroupsRead();
    const res = await t.request(`/api/logs/count?source=edge_logs&q=get&${window}`);
    expect(((await res.json()) as { result: { count: number } }).result.count).toBe(recs.length);
    expect(recordBlocksHeld().decompressed - blocks).toBe(0);
    expect(textGroupsRead() - groups).toBeGreaterThan(0);
  });

  it('damaged, cut or deleted texts cost reads, never an answer; the background builder makes them whole again', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const recs = records(3000, 9);
    await importRecords(store, 'edge_logs', recs);
    await store.columnsSettled();
    await keeper.close(store);
    const folder = path.join(dir, 'parts', 'edge_logs');
    const files = fs.readdirSync(folder).filter((f) => f.endsWith('.texts'));
    expect(files.length).toBeGreaterThan(2);
    for (const [i, f] of files.entries()) {
      const file = path.join(folder, f);
      const buf = fs.readFileSync(file);
      if (i % 3 === 0) buf[buf.length - 10] = buf[buf.length - 10]! ^ 0xff; // a flipped byte in the last group
      if (i % 3 === 1) fs.writeFileSync(file, buf.subarray(0, buf.length - 7)); // a torn last group
      else if (i % 3 === 0) fs.writeFileSync(file, buf);
      else fs.rmSync(file); // gone
    }
    const again = await keeper.open(dir);
    const t = appOver(again);
    const count = async (q: string) => ((await (await t.request(`/api/logs/count?source=edge_logs&q=${encodeURIComponent(q)}&${window}`)).json()) as { result: { count: number } }).result.count;
    for (const q of ['timeout', 'refused', 'zürich', 'sidecar', 'products']) {
      expect(await count(q), q).toBe(recs.filter((r) => `${r.event_message}\n${r.metadata.request.url}`.toLowerCase().includes(q)).length);
    }
    // Built again in the background: a common word then reads no record block.
    await again.columnsSettled();
    const blocks = recordBlocksHeld().decompressed;
    expect(await count('get')).toBe(recs.length);
    expect(recordBlocksHeld().decompressed - blocks).toBe(0);
  });
});
