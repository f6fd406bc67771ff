/**
 * The block index (store/block-grams.ts) against a plain scan: random records with texts in
 * several cases and scripts, searched by words, short texts, Unicode, and RE2 patterns with
 * and without literal parts. Every count equals the one worked out here from the records
 * themselves, and a text no record holds decompresses no block once the index is built.
 * Then the record texts (store/block-texts.ts, text-hits.ts): the same counts read from them;
 * a match must lie within the message or within the URL; a common word reads no record block
 * once they are built; damaged, cut or deleted texts cost reads, never an answer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RE2JS } from 're2js';
import { afterEach, describe, expect, it } from 'vitest';
import { appOver, DAY, importRecords, MIN, NOW, storeKeeper, type TestApp } from '../testing/fixtures.ts';
import { recordBlocksHeld, seedOf } from '../store/record-blocks.ts';
import { appendBlockTexts, textChunksRead, textGroupsRead, packGroup, readBlockTexts, textsEntry, unpackGroup, messageOf, urlOf, textsDictionary } from '../store/block-texts.ts';
import { appendRecordTokens, deflateListOffThread, markWords, readRecordTokens, TokenSegmentBuilder, tokenSegmentEntry, tokenSegmentsRead, type WordMode } from '../store/record-tokens.ts';
import { partsOf } from './token-hits.ts';
import { activeSearchWorker, setSearchWorker, wordJobsDone, wordMarksOffThread, searchWorkerUnavailable } from '../store/search-worker.ts';
import { importStream } from '../ingest/import.ts';

const keeper = storeKeeper('le-grams-');
afterEach(() => keeper.cleanup());

const REF = 'projaaaaaaaaaaaaaaaa';
const WORDS = ['timeout', 'Timeout', 'TIMEOUT', 'refused', 'products', 'orders', 'gateway', 'Zürich', 'café', 'naïve', '東京', 'error', 'ok', 'upstream', 'retry', 'connection', 'a"quote', 'back\\slash', 'Mozilla/5.0'];
const PATHS = ['/rest/v1/products', '/rest/v1/orders', '/auth/v1/token', '/storage/v1/object/x.png', '/functions/v1/hello'];

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
      id: `r-${seed}-${i}`,
      timestamp: NOW - i * 2 * MIN,
      project: REF,
      // Every 5th message ends where its URL begins: "…prod" + "https://…" must not match
      // "prodhttps"; every 3rd holds its URL, as an edge request's does (the record texts keep it once).
      event_message: i % 5 === 0 ? `GET | ${words} | prod` : i % 3 === 0 ? `GET | 200 | ${url} | ${words}` : `GET | ${[200, 500][rnd(2)]} | ${words}`,
      // Padding, so a few hundred records make several blocks; its words are not searched but are in the raw bytes.
      metadata: { request: { method: 'GET', url, path: p, headers: { note: `padding ${'x'.repeat(600 + rnd(400))} sidecar` } }, response: { status_code: 200 } },
    };
  });
}

const window = `start=${encodeURIComponent(new Date((NOW - 10 * DAY) / 1000).toISOString())}&end=${encodeURIComponent(new Date((NOW + MIN) / 1000).toISOString())}`;

/** The count of a text search (`regex`: an RE2 pattern) over the test window, checked to answer 200. */
async function countOf(t: TestApp, q: string, regex = false): Promise<number> {
  const res = await t.request(`/api/logs/count?source=edge_logs&q=${encodeURIComponent(q)}${regex ? '&regex=1' : ''}&${window}`);
  expect(res.status, q).toBe(200);
  return ((await res.json()) as { result: { count: number } }).result.count;
}

/** How many of `recs` have a message or URL that passes `test`: what a search must count. */
const expectedOf = (recs: ReturnType<typeof records>, test: (text: string) => boolean) => recs.filter((r) => test(r.event_message) || test(r.metadata.request.url)).length;

/**
 * A closed store of 3,000 records (its background builder done first when `settle`) whose
 * derived files ending in `ext` (three or more) are each handed to `damage` (index, path, bytes).
 */
async function damageDerived(dir: string, ext: string, settle: boolean, damage: (i: number, file: string, buf: Buffer) => void) {
  const store = await keeper.open(dir);
  const recs = records(3000, 9);
  await importRecords(store, 'edge_logs', recs);
  if (settle) await store.columnsSettled();
  await keeper.close(store);
  const folder = path.join(dir, 'parts', 'edge_logs');
  const files = fs.readdirSync(folder).filter((f) => f.endsWith(ext));
  expect(files.length).toBeGreaterThan(2);
  for (const [i, f] of files.entries()) damage(i, path.join(folder, f), fs.readFileSync(path.join(folder, f)));
  return recs;
}

describe('text search with the block index', () => {
  it('counts exactly what a plain reading of the records finds, for words, short texts, Unicode and patterns', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const recs = records(3000, 11);
    await importRecords(store, 'edge_logs', recs);
    await store.columnsSettled();
    const grams = fs.readdirSync(path.join(dir, 'parts', 'edge_logs')).filter((f) => f.endsWith('.grams'));
    expect(grams.length).toBeGreaterThan(0);
    const t = appOver(store);
    const count = (q: string, regex = false) => countOf(t, q, regex);
    const expected = (test: (text: string) => boolean) => expectedOf(recs, test);
    for (const q of ['timeout', 'TimeOut', 'refused', 'products', 'ok', 'zürich', 'CAFÉ', '東京', 'nothing-here', 'xyz', 'sidecar', 'id=42']) {
      expect(await count(q), q).toBe(expected((text) => text.toLowerCase().includes(q.toLowerCase())));
    }
    for (const pattern of ['time(out|s)', 'gate.ay', 'refused|gateway', '^GET \\| 500', 'products\\?id=\\d{2}$', 'na.ve', 'absent[0-9]+word']) {
      const re = RE2JS.compile(`(?i)${pattern}`);
      expect(await count(pattern, true), pattern).toBe(expected((text) => re.matcher(text).find()));
    }
  });

  it('finds texts that records spell with JSON escapes (\\/, \\u0026, \\u00e9), before and after the index is built', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const recs = records(1500, 23).map((r, i) => (i % 7 === 0 ? { ...r, event_message: `${r.event_message} | a&b` } : r));
    // The same records as an encoder that escapes slashes, & and every non-ASCII character writes them.
    const escaped = (r: unknown) =>
      JSON.stringify(r)
        .replace(/\//g, '\\/')
        .replace(/&/g, '\\u0026')
        .replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    expect(escaped({ a: 'x/é&' })).toBe('{"a":"x\\/\\u00e9\\u0026"}');
    const body = Buffer.from(recs.map(escaped).join('\n') + '\n');
    expect(await importStream(store, [body], { source: 'edge_logs' })).toMatchObject({ imported: recs.length });
    const t = appOver(store);
    const count = (q: string) => countOf(t, q);
    const expected = (q: string) => recs.filter((r) => [r.event_message, r.metadata.request.url].some((text) => text.toLowerCase().includes(q.toLowerCase()))).length;
    // Texts the raw tests take (printable ASCII) must be found; others (é) are read from parsed records anyway.
    const texts = ['/rest/v1/products', 'a&b', 'v1/orders?id=1', 'supabase.co/auth', 'é', '東京'];
    for (const q of texts.slice(0, 4)) expect(expected(q), q).toBeGreaterThan(0);
    for (const q of texts) expect(await count(q), `${q}, block index being built`).toBe(expected(q));
    await store.columnsSettled();
    for (const q of texts) expect(await count(q), `${q}, block index built`).toBe(expected(q));
    // The whole-block and whole-record tests too: a page of the newest matching records.
    const res = await t.request(`/api/logs?source=edge_logs&q=${encodeURIComponent('a&b')}&limit=1000&${window}`);
    expect(((await res.json()) as { result: unknown[] }).result.length).toBe(expected('a&b'));
  });

  it('a text no record holds reads no block once the index is built; without the index the answer is the same', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    await importRecords(store, 'edge_logs', records(2000, 5));
    await store.columnsSettled();
    const t = appOver(store);
    const before = recordBlocksHeld().decompressed;
    const res = await t.request(`/api/logs/count?source=edge_logs&q=quasar&${window}`);
    expect(((await res.json()) as { result: { count: number } }).result.count).toBe(0);
    expect(recordBlocksHeld().decompressed - before).toBe(0);
    // The index deleted: the blocks are read (the answer is the same).
    await keeper.close(store);
    for (const f of fs.readdirSync(path.join(dir, 'parts', 'edge_logs'))) if (f.endsWith('.grams')) fs.rmSync(path.join(dir, 'parts', 'edge_logs', f));
    const again = await keeper.open(dir);
    const t2 = appOver(again);
    const res2 = await t2.request(`/api/logs/count?source=edge_logs&q=quasar&${window}`);
    expect(((await res2.json()) as { result: { count: number } }).result.count).toBe(0);
  });

  it('is written as the blocks are: a search right after each import reads no block for a text no record holds', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const t = appOver(store);
    const count = (q: string) => countOf(t, q);
    const first = records(1500, 7);
    await importRecords(store, 'edge_logs', first);
    // No columnsSettled(): the background rebuild has not run.
    let before = recordBlocksHeld().decompressed;
    expect(await count('quasar')).toBe(0);
    expect(recordBlocksHeld().decompressed - before).toBe(0);
    const second = records(1500, 8).map((r) => ({ ...r, id: `${r.id}-b`, timestamp: r.timestamp - 3 * DAY }));
    await importRecords(store, 'edge_logs', second);
    before = recordBlocksHeld().decompressed;
    expect(await count('quasar')).toBe(0);
    expect(recordBlocksHeld().decompressed - before).toBe(0);
    // And the words that are there are all found.
    const expected = [...first, ...second].filter((r) => `${r.event_message}\n${r.metadata.request.url}`.toLowerCase().includes('gateway')).length;
    expect(expected).toBeGreaterThan(0);
    expect(await count('gateway')).toBe(expected);
  });

  it('a damaged or cut index costs reads, never an answer', async () => {
    const dir = keeper.newDir();
    const recs = await damageDerived(dir, '.grams', false, (i, file, buf) => {
      if (i % 3 === 0) buf[buf.length - 100] = buf[buf.length - 100]! ^ 0xff; // a flipped bit in the last entry
      if (i % 3 === 1) fs.writeFileSync(file, buf.subarray(0, buf.length - 1000)); // a torn last entry
      else fs.writeFileSync(file, buf);
      // i % 3 === 2: the first entry's bits cleared, its CRC not updated
      if (i % 3 === 2) fs.writeFileSync(file, Buffer.concat([buf.subarray(0, 40), Buffer.alloc(4096), buf.subarray(40 + 4096)]));
    });
    const again = await keeper.open(dir);
    const t = appOver(again);
    for (const q of ['timeout', 'refused', 'products', 'sidecar']) {
      const res = await t.request(`/api/logs/count?source=edge_logs&q=${q}&${window}`);
      const expected = recs.filter((r) => `${r.event_message}\n${r.metadata.request.url}`.toLowerCase().includes(q)).length;
      expect(((await res.json()) as { result: { count: number } }).result.count, q).toBe(expected);
    }
    // The background rebuild makes the index whole again: an absent text reads no block.
    await again.columnsSettled();
    const before = recordBlocksHeld().decompressed;
    const res = await t.request(`/api/logs/count?source=edge_logs&q=quasar&${window}`);
    expect(((await res.json()) as { result: { count: number } }).result.count).toBe(0);
    expect(recordBlocksHeld().decompressed - before).toBe(0);
  });
});

describe('text search by the record texts', () => {
  it('packs and unpacks a group: messages, URLs (none kept apart from empty), Unicode', () => {
    const recs = [
      { blk: 0, boff: 0, texts: { message: 'GET | 200 | Zürich', url: 'https://x/é' } },
      { blk: 0, boff: 120, texts: { message: '', url: null } },
      { blk: 4096, boff: 0, texts: { message: '東京 timeout', url: null } },
    ];
    const g = unpackGroup(packGroup(recs, textsDictionary(recs)), 3, textsDictionary(recs));
    expect(g.n).toBe(3);
    expect([0, 1, 2].map((r) => [messageOf(g, r), urlOf(g, r)])).toEqual(recs.map((r) => [r.texts.message, r.texts.url]));
    // A group of many chunks (each packed with a dictionary from a few of the records), read a record at a time in any order.
    const many = Array.from({ length: 3000 }, (_, i) => {
      const url = i % 3 ? `https://x.supabase.co/rest/v1/t${i % 11}?id=${i}` : null;
      const message = i % 2 ? `GET | ${200 + (i % 5)} | ${url ?? 'no url'} | Zürich ${'é'.repeat(i % 4)}` : `POST | 500 | ${i}`;
      return { blk: Math.floor(i / 100) * 65536, boff: (i % 100) * 300, texts: { message, url } };
    });
    const dictionary = textsDictionary(many.slice(0, 1000));
    expect(dictionary.length).toBeGreaterThan(1000);
    const packed = packGroup(many, dictionary);
    const big = unpackGroup(packed, many.length, dictionary);
    expect(big.chunks).toBeGreaterThan(10);
    for (const r of [2999, 0, 1500, 77, 1501, 2998]) expect([messageOf(big, r), urlOf(big, r)], String(r)).toEqual([many[r]!.texts.message, many[r]!.texts.url]);
    for (let r = 0; r < many.length; r++) expect(messageOf(big, r)).toBe(many[r]!.texts.message);
    // A group said to hold another count of records fails when the chunk that disagrees is read.
    expect(() => messageOf(unpackGroup(packed, many.length + 1, dictionary), many.length - 1)).toThrow();
    // The dictionary is what makes chunks small: without one the group packs larger.
    expect(packGroup(many, Buffer.alloc(0)).length).toBeGreaterThan(packed.length);
  });

  it('a texts file written in several appends (the builder pauses between groups) reads back every group whole', () => {
    const dir = keeper.newDir();
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'x.texts');
    const groups = [0, 1, 2].map((k) =>
      Array.from({ length: 500 }, (_, i) => ({ blk: k * 4096, boff: i, texts: { message: `GET | 200 | https://x.supabase.co/rest/v1/t${k}?id=${i} | ${'ü'.repeat(i % 3)}`, url: null } })),
    );
    const dictionary = textsDictionary(groups[0]!);
    const entry = (k: number) => textsEntry(7, k * 4096, (k + 1) * 4096, k * 500, 500, packGroup(groups[k]!, dictionary));
    let end = appendBlockTexts(file, 7, 0, dictionary, [entry(0)]);
    expect(end).toBe(fs.statSync(file).size);
    end = appendBlockTexts(file, 7, end, dictionary, [entry(1)]);
    end = appendBlockTexts(file, 7, end, dictionary, [entry(2)]);
    expect(end).toBe(fs.statSync(file).size);
    const texts = readBlockTexts(file, 7, 3 * 4096)!;
    expect(texts.size).toBe(3);
    expect(texts.fileEnd).toBe(end);
    for (let k = 0; k < 3; k++) {
      const g = texts.group(k)!;
      expect(Array.from({ length: 500 }, (_, r) => messageOf(g, r))).toEqual(groups[k]!.map((r) => r.texts.message));
    }
  });

  it('counts, pages and histograms exactly what a plain reading of the records finds, before and after the texts are built', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const recs = records(2500, 3);
    await importRecords(store, 'edge_logs', recs);
    const t = appOver(store);
    const count = (q: string, regex = false) => countOf(t, q, regex);
    const expected = (test: (text: string) => boolean) => expectedOf(recs, test);
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

  it('one rule of case for every way a record is searched: ASCII letters alone fold for an ASCII text (the Kelvin sign is no k), lower case for any other', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    // Messages with a quote are escaped in the record's JSON, so the records searched one by one are parsed, not read as bytes.
    const messages = ['\u212aelvin "x"', 'KELVIN "y"', 'ADM\u0130N "z"', 'admin', '\u00dcMLAUT "q"', '\u00fcmlaut', 'STRASSE "s"', 'stra\u00dfe'];
    const recs = messages.flatMap((m, k) =>
      Array.from({ length: 40 }, (_, i) => ({
        id: `u-${k}-${i}`,
        timestamp: NOW - (k * 40 + i) * MIN,
        project: REF,
        event_message: `GET | ${m} | ${i}`,
        // The ASCII words in the record's other fields too, so its bytes hold them: they alone do not make a match.
        metadata: { request: { method: 'GET', url: `https://x.supabase.co/rest/v1/${i % 2 ? '\u212a' : 'k'}/t`, path: '/rest/v1/t', headers: { note: 'kelvin admin strasse /k/' } }, response: { status_code: 200 } },
      })),
    );
    await importRecords(store, 'edge_logs', recs);
    const t = appOver(store);
    const asciiFold = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());
    const reference = (q: string) => (/^[\x20-\x7e]*$/.test(q) ? (text: string) => asciiFold(text).includes(q.toLowerCase()) : (text: string) => text.toLowerCase().includes(q.toLowerCase()));
    const all = async (stage: string) => {
      for (const q of ['kelvin', 'admin', 'ümlaut', 'ÜMLAUT', 'strasse', '/k/']) expect(await countOf(t, q), `${q}, ${stage}`).toBe(expectedOf(recs, reference(q)));
    };
    // The references differ where the rule matters.
    expect(expectedOf(recs, reference('kelvin'))).toBe(40);
    expect(expectedOf(recs, (text) => text.toLowerCase().includes('kelvin'))).toBe(80);
    expect(expectedOf(recs, reference('/k/'))).toBe(recs.length / 2);
    await all('right after the import');
    await store.columnsSettled();
    await all('texts and words built');
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
    // Not a word alone: the record words narrow it to candidates, which their texts decide.
    expect(await countOf(t, 'get |')).toBe(recs.length);
    expect(recordBlocksHeld().decompressed - blocks).toBe(0);
    expect(textGroupsRead() - groups).toBeGreaterThan(0);
  });

  it('damaged, cut or deleted texts cost reads, never an answer; the background builder makes them whole again', async () => {
    const dir = keeper.newDir();
    const recs = await damageDerived(dir, '.texts', true, (i, file, buf) => {
      if (i % 3 === 0) buf[buf.length - 10] = buf[buf.length - 10]! ^ 0xff; // a flipped byte in the last group
      if (i % 6 === 0) buf[30] = buf[30]! ^ 0xff; // and in the dictionary
      if (i % 3 === 1) fs.writeFileSync(file, buf.subarray(0, buf.length - 7)); // a torn last group
      else if (i % 3 === 0) fs.writeFileSync(file, buf);
      else fs.rmSync(file); // gone
    });
    const again = await keeper.open(dir);
    const t = appOver(again);
    const count = (q: string) => countOf(t, q);
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

describe('text search by the record words', () => {
  /** Texts with words of every class: digits, hexadecimal request ids, words, and separators between them. */
  const MESSAGES = ['GET | 500 | 10.0.0.1 | fb5fda31 | https://x.supabase.co/rest/v1/products?id=42', 'POST | 200 | wp-login.php | deadbeef', 'timeout_after 3000ms', 'Zürich café | ok', '', 'a_b-c.d'];

  it('finds each part the way it must sit in a word, in a segment written and read back', () => {
    const dir = keeper.newDir();
    const groups = [0, 1].map((k) =>
      unpackGroup(packGroup(MESSAGES.map((message, i) => ({ blk: k * 4096, boff: i * 10, texts: { message, url: i === 2 ? 'https://y.example/after' : null } })), Buffer.alloc(0)), MESSAGES.length, Buffer.alloc(0)),
    );
    const file = path.join(dir, 'x.tokens');
    fs.mkdirSync(dir, { recursive: true });
    appendRecordTokens(file, 7, 0, [tokenSegmentEntry(7, 0, 8192, 0, groups)]);
    const tokens = readRecordTokens(file, 7, 8192)!;
    expect(tokens.records).toBe(2 * MESSAGES.length);
    const seg = tokens.segment(0);
    // Every record's texts, as the search reads them (the URL after the message apart from it).
    const texts = [...MESSAGES, ...MESSAGES].map((m, i) => [m, i % MESSAGES.length === 2 ? 'https://y.example/after' : ''].map((t) => t.toLowerCase()));
    const wordsOfText = (t: string) => t.split(/[^a-z0-9_]+/).filter(Boolean);
    const sits: Record<WordMode, (w: string, part: string) => boolean> = {
      contains: (w, part) => w.includes(part),
      prefix: (w, part) => w.startsWith(part),
      suffix: (w, part) => w.endsWith(part),
      exact: (w, part) => w === part,
    };
    for (const part of ['500', '0', '1', 'fb5f', 'dead', 'beef', 'a', 'rest', 'products', 'wp', 'login', 'php', 'timeout', 'after', 'z', 'rich', 'caf', 'ok', 'a_b', 'nothing', '42', 'https', 'y']) {
      for (const mode of ['contains', 'prefix', 'suffix', 'exact'] as const) {
        const out = new Uint8Array(tokens.records);
        expect(seg.mark({ word: part, mode }, out), `${part} ${mode}`).toBe(true);
        const want = texts.map((parts) => (parts.some((t) => wordsOfText(t).some((w) => sits[mode](w, part))) ? 1 : 0));
        expect([...out], `${part} ${mode}`).toEqual(want);
      }
    }
    expect(seg.postingsWhole()).toBe(true);
  });

  it('encodes a segment in slices, its lists deflated apart, to the same bytes as at once', async () => {
    // Thousands of distinct words of every class: slices end inside each class's list.
    const messages = Array.from({ length: 3000 }, (_, i) => `GET ${i} ${(i * 2654435761) % 4294967296 >>> 0}a word${i % 700} | ${WORDS[i % WORDS.length]}`);
    const group = unpackGroup(packGroup(messages.map((message, i) => ({ blk: 0, boff: i * 10, texts: { message, url: null } })), Buffer.alloc(0)), messages.length, Buffer.alloc(0));
    const b = new TokenSegmentBuilder();
    b.addGroup(group);
    let turns = 0;
    let deflated = 0;
    const stepped = await b.entryInSteps(7, 0, 4096, 0, 0, async () => (++turns, true), async (list) => (deflated++, deflateListOffThread(list)));
    expect(stepped!.equals(b.entry(7, 0, 4096, 0))).toBe(true);
    // Over 6,000 distinct words (3,000 numbers, 3,000 hashes, 700 words), each looked at twice
    // (put in its class, then encoded): a turn every 256 looks.
    expect(turns).toBeGreaterThanOrEqual(Math.floor((2 * 6000) / 256));
    expect(deflated).toBe(3);
    // Given up when the turn says so.
    expect(await b.entryInSteps(7, 0, 4096, 0, 0, async () => false, deflateListOffThread)).toBeNull();
  });

  it('finds every part in random texts as a plain reading does: long words, words of one record and of many, thousands of records', () => {
    // A small generator of its own (not Math.random): the same texts every run.
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabets = ['0123456789', '0123456789abcdef', 'abcdefghijklmnopqrstuvwxyz0123456789_'];
    const pool: string[] = [];
    const word = () => {
      const a = alphabets[rand(3)]!;
      // Most words short, some past 127 characters (a length of two LEB128 bytes).
      const len = rand(10) === 0 ? 120 + rand(200) : 1 + rand(12);
      return Array.from({ length: len }, () => a[rand(a.length)]).join('');
    };
    for (let i = 0; i < 400; i++) pool.push(word());
    const n = 3000;
    const messages = Array.from({ length: n }, () =>
      Array.from({ length: rand(6) }, () => (rand(3) ? pool[rand(pool.length)]! : word()))
        .map((w) => (rand(4) ? w : w.toUpperCase()))
        .join([' ', '-', '/', '.', ' | '][rand(5)]),
    );
    const groups = [0, 1, 2].map((k) => {
      const part = messages.slice(k * 1000, (k + 1) * 1000);
      return unpackGroup(packGroup(part.map((message, i) => ({ blk: k * 4096, boff: i * 10, texts: { message, url: null } })), Buffer.alloc(0)), part.length, Buffer.alloc(0));
    });
    const dir = keeper.newDir();
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'r.tokens');
    appendRecordTokens(file, 9, 0, [tokenSegmentEntry(9, 0, 12288, 0, groups)]);
    const tokens = readRecordTokens(file, 9, 12288)!;
    expect(tokens.records).toBe(n);
    const seg = tokens.segment(0);
    const wordsOfRecord = messages.map((m) => m.toLowerCase().split(/[^a-z0-9_]+/).filter(Boolean));
    const sits: Record<WordMode, (w: string, part: string) => boolean> = {
      contains: (w, part) => w.includes(part),
      prefix: (w, part) => w.startsWith(part),
      suffix: (w, part) => w.endsWith(part),
      exact: (w, part) => w === part,
    };
    const parts: string[] = [];
    for (let i = 0; i < 60; i++) {
      const w = pool[rand(pool.length)]!.toLowerCase();
      const from = rand(w.length);
      parts.push(w.slice(from, from + 1 + rand(4)), w);
    }
    parts.push('zzzzqqqq', '0', 'f', '_');
    for (const part of parts) {
      for (const mode of ['contains', 'prefix', 'suffix', 'exact'] as const) {
        const out = new Uint8Array(n);
        expect(seg.mark({ word: part, mode }, out), `${part} ${mode}`).toBe(true);
        const want = wordsOfRecord.map((ws) => (ws.some((w) => sits[mode](w, part)) ? 1 : 0));
        expect(out.join(''), `${part} ${mode}`).toBe(want.join(''));
      }
    }
    expect(seg.postingsWhole()).toBe(true);
  });

  it('splits a search into the words it needs', () => {
    expect(partsOf('wp-login.php')).toEqual([
      { word: 'wp', mode: 'suffix' },
      { word: 'login', mode: 'exact' },
      { word: 'php', mode: 'prefix' },
    ]);
    expect(partsOf('timeout')).toEqual([{ word: 'timeout', mode: 'contains' }]);
    expect(partsOf(' | 500 | ')).toEqual([{ word: '500', mode: 'exact' }]);
    expect(partsOf('/rest')).toEqual([{ word: 'rest', mode: 'prefix' }]);
    expect(partsOf('| -')).toBeNull();
  });

  /** Records whose messages also hold request ids (hexadecimal words), numbers and snake_case words. */
  const withIds = (recs: ReturnType<typeof records>) =>
    recs.map((r, i) => ({ ...r, event_message: `${r.event_message} | ${((i * 2654435761) >>> 0).toString(16)} | took_${i % 97}ms` }));

  it('counts and pages exactly what a plain reading finds, once the words are built, and a word search reads no text or record', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const recs = withIds(records(3000, 13));
    await importRecords(store, 'edge_logs', recs);
    await store.columnsSettled();
    expect(fs.readdirSync(path.join(dir, 'parts', 'edge_logs')).filter((f) => f.endsWith('.tokens')).length).toBeGreaterThan(0);
    const t = appOver(store);
    const expected = (test: (text: string) => boolean) => expectedOf(recs, test);
    const plain = ['timeout', 'TimeOut', 'get', 'prod', 'prodhttps', '500', '42', 'a1', 'dead', 'took_5', 'took_', '_5ms', 'id', 'x', 'mozilla/5', 'wp-login', '| 500 |', 'id=42', 'rest/v1', 'zürich', '東京', 'a"quote', 'nothing'];
    const patterns = ['time(out|s)', '^GET \\| 500', 'products\\?id=\\d{2}$', 'took_\\d+ms$', 'prod$', 'prodhttps', '[0-9a-f]{8}'];
    for (const q of plain) expect(await countOf(t, q), q).toBe(expected((text) => text.toLowerCase().includes(q.toLowerCase())));
    for (const p of patterns) {
      const re = RE2JS.compile(`(?i)${p}`);
      expect(await countOf(t, p, true), `/${p}/`).toBe(expected((text) => re.matcher(text).find()));
    }
    // A word alone: answered from the words, no group of texts and no record block read.
    const blocks = recordBlocksHeld().decompressed;
    const groups = textGroupsRead();
    const segments = tokenSegmentsRead();
    expect(await countOf(t, 'took_1')).toBe(expected((text) => text.includes('took_1')));
    expect(recordBlocksHeld().decompressed - blocks).toBe(0);
    expect(textGroupsRead() - groups).toBe(0);
    expect(tokenSegmentsRead() - segments).toBeGreaterThan(0);
    // A phrase few records hold: its candidates' chunks of text are read, not the others.
    const chunksOf = async (q: string) => {
      const before = textChunksRead();
      expect(await countOf(t, q), q).toBe(expected((text) => text.toLowerCase().includes(q)));
      return textChunksRead() - before;
    };
    // Every record holds `get |`: every chunk is read. One record holds its request id and `| took_`: its group's dictionary chunk and its own.
    const every = await chunksOf('get |');
    const one = `${((1234 * 2654435761) >>> 0).toString(16)} | took_`;
    expect(expected((text) => text.includes(one))).toBe(1);
    const few = await chunksOf(one);
    expect(every).toBeGreaterThan(10);
    expect(few).toBeGreaterThan(0);
    expect(few).toBeLessThanOrEqual(2);
    // Pages: the newest matching records, in order, across pages.
    const want = recs.filter((r) => `${r.event_message}\n${r.metadata.request.url}`.toLowerCase().includes('refused')).map((r) => r.id);
    const got: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.request(`/api/logs?source=edge_logs&q=refused&limit=250&${window}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const body = (await res.json()) as { result: Array<{ id: string }>; next: string | null };
      got.push(...body.result.map((r) => r.id));
      cursor = body.next;
    } while (cursor);
    expect(got.length).toBeGreaterThan(250);
    expect(got).toEqual(want);
  });

  it('reads the words on the word search worker with the marks of this thread, and answers the same without it or when it is gone', async () => {
    const store = await keeper.open(keeper.newDir());
    const recs = withIds(records(3000, 29));
    await importRecords(store, 'edge_logs', recs);
    await store.columnsSettled();
    const withWords = store.committedPartitions('cloudflare.logs.prod').filter((p) => (store.recordTokens(p)?.size ?? 0) > 0);
    expect(withWords.length).toBeGreaterThan(3);
    const searches = ['timeout', 'took_4', '500', 'a1', 'mozilla/5', 'rest/v1', 'nothing'];
    // The worker's marks, asked and awaited (never taken back), are this thread's.
    const before = wordJobsDone();
    for (const q of searches) {
      const parts = partsOf(q)!;
      for (const p of withWords) {
        const tokens = store.recordTokens(p)!;
        const marks = await wordMarksOffThread(tokens.listing(), parts).answer;
        expect(searchWorkerUnavailable()).toBeUndefined();
        expect(marks, `${q} in ${p.label}`).toEqual(markWords(tokens, parts));
      }
    }
    expect(wordJobsDone().worker - before.worker).toBe(searches.length * withWords.length);
    // A worker that dies while jobs wait: each answers null (read here) or its marks.
    const parts = partsOf('get')!;
    const pending = withWords.map((p) => wordMarksOffThread(store.recordTokens(p)!.listing(), parts).answer);
    await activeSearchWorker()?.terminate();
    const answers = await Promise.all(pending);
    answers.forEach((m, k) => {
      if (m) expect(m).toEqual(markWords(store.recordTokens(withWords[k]!)!, parts));
    });
    // Searches count the same with the worker (which shares the partitions with the walk) and without it.
    const t = appOver(store);
    const expected = searches.map((q) => expectedOf(recs, (text) => text.toLowerCase().includes(q)));
    // Each round over another window's end (no record there), so that no answer of the round before is reused.
    let round = 0;
    const counts = async () => {
      const end = encodeURIComponent(new Date((NOW + MIN) / 1000 + ++round * 1000).toISOString());
      const start = encodeURIComponent(new Date((NOW - 10 * DAY) / 1000).toISOString());
      return Promise.all(
        searches.map(async (q) => {
          const res = await t.request(`/api/logs/count?source=edge_logs&q=${encodeURIComponent(q)}&start=${start}&end=${end}`);
          expect(res.status, q).toBe(200);
          return ((await res.json()) as { result: { count: number } }).result.count;
        }),
      );
    };
    expect(await counts()).toEqual(expected);
    try {
      setSearchWorker('inline');
      const here = wordJobsDone();
      expect(await counts()).toEqual(expected);
      expect(wordJobsDone().worker).toBe(here.worker);
      expect(wordJobsDone().here).toBeGreaterThan(here.here);
    } finally {
      setSearchWorker('worker');
    }
    expect(await counts()).toEqual(expected);
  });

  it('records added to a partition later are found: its short last segment is built again with them', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const first = withIds(records(1200, 17));
    await importRecords(store, 'edge_logs', first);
    await store.columnsSettled();
    // The same instants again with other ids: appended to the same partitions.
    const second = withIds(records(1200, 19)).map((r) => ({ ...r, id: `${r.id}-later`, event_message: `${r.event_message} | later_batch` }));
    await importRecords(store, 'edge_logs', second);
    const t = appOver(store);
    const all = [...first, ...second];
    const check = async (stage: string) => {
      for (const q of ['later_batch', 'timeout', 'took_3', 'refused']) expect(await countOf(t, q), `${q}, ${stage}`).toBe(expectedOf(all, (text) => text.toLowerCase().includes(q)));
    };
    await check('before the builder');
    await store.columnsSettled();
    await check('words built again');
    const folder = path.join(dir, 'parts', 'edge_logs');
    for (const f of fs.readdirSync(folder).filter((f) => f.endsWith('.tokens'))) {
      const seed = seedOf(path.join(folder, f.replace(/\.tokens$/, '.records')));
      const tokens = readRecordTokens(path.join(folder, f), seed, Infinity)!;
      // One segment per partition: the first, short one was replaced, not followed.
      expect(tokens.size, f).toBe(1);
    }
  });

  it('damaged, cut or deleted words cost reads, never an answer; the background builder makes them whole again', async () => {
    const dir = keeper.newDir();
    const recs = await damageDerived(dir, '.tokens', true, (i, file, buf) => {
      if (i % 3 === 0) buf[buf.length - 3] = buf[buf.length - 3]! ^ 0xff; // a flipped byte in the postings
      if (i % 3 === 1) fs.writeFileSync(file, buf.subarray(0, buf.length - 5)); // a torn segment
      else if (i % 3 === 0) fs.writeFileSync(file, buf);
      else fs.writeFileSync(file, Buffer.concat([buf.subarray(0, 80), Buffer.from('garbage'), buf.subarray(87)])); // a flipped word list (the first class's)
    });
    const again = await keeper.open(dir);
    const t = appOver(again);
    const words = ['timeout', 'refused', 'get', 'sidecar', 'products', 'zürich', '200', 'id=4'];
    for (const q of words) expect(await countOf(t, q), q).toBe(expectedOf(recs, (text) => text.toLowerCase().includes(q)));
    await again.columnsSettled();
    for (const q of words) expect(await countOf(t, q), `${q}, built again`).toBe(expectedOf(recs, (text) => text.toLowerCase().includes(q)));
    const groups = textGroupsRead();
    expect(await countOf(t, 'refused')).toBe(expectedOf(recs, (text) => text.toLowerCase().includes('refused')));
    expect(textGroupsRead() - groups).toBe(0);
  });
});
