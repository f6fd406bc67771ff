/** The dictionary files: ids stable across reopen, exact lookups, rollback, crash leftovers; the derived (paths) file's token and cut lines. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SAVE_LINES_AFTER, TextDictionary } from './text-dictionary.ts';
import { checkSavedLines, linesFileOf, readSavedLines, writeSavedLines } from './saved-lines.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const file = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'le-urls-'));
  dirs.push(d);
  return path.join(d, 'urls.log');
};

/** A dictionary of `texts` (ids 1…n), committed and synced, opened again: nothing in memory but what the file gives. */
async function committed(f: string, texts: readonly string[]): Promise<TextDictionary> {
  const d = new TextDictionary(f, { bytes: 0, count: 0 });
  for (const t of texts) d.idOf(t);
  d.flush();
  await d.fsync();
  const state = d.state();
  d.close();
  return new TextDictionary(f, state);
}

/** How many fs.readSync calls `work` makes, and what it returns. */
function readsDuring<T>(work: () => T): { calls: number; out: T } {
  const reads = vi.spyOn(fs, 'readSync');
  try {
    const out = work();
    return { calls: reads.mock.calls.length, out };
  } finally {
    reads.mockRestore();
  }
}

describe('TextDictionary, committed (URLs)', () => {
  it('gives dense ids in order of first sight, the same id for a repeat, and reads every URL back', () => {
    const d = new TextDictionary(file(), { bytes: 0, count: 0 });
    expect(['https://a/x', 'https://b/y', 'https://a/x', 'é/ü?q="1"', 'https://b/y'].map((u) => d.idOf(u))).toEqual([1, 2, 1, 3, 2]);
    expect(d.slice(0, 10)).toEqual([
      { id: 1, text: 'https://a/x' },
      { id: 2, text: 'https://b/y' },
      { id: 3, text: 'é/ü?q="1"' },
    ]);
    expect(d.slice(1, 1)).toEqual([{ id: 2, text: 'https://b/y' }]);
    expect(d.get(3)).toBe('é/ü?q="1"');
  });

  it('a committed state reopens with the same ids; 20,000 URLs (past the recent cache and many table growths) all resolve exactly', async () => {
    const f = file();
    const urls = Array.from({ length: 20_000 }, (_, i) => `https://p.supabase.co/rest/v1/t?id=eq.${i}`);
    const d = new TextDictionary(f, { bytes: 0, count: 0 });
    urls.forEach((u, i) => expect(d.idOf(u)).toBe(i + 1));
    d.flush();
    await d.fsync();
    const state = d.state();
    d.close();
    const again = new TextDictionary(f, state);
    // Backwards, so none is in the recent cache: every lookup goes through the hash table and the file.
    for (let i = urls.length - 1; i >= 0; i--) expect(again.idOf(urls[i]!)).toBe(i + 1);
    expect(again.idOf('https://new')).toBe(20_001);
    again.close();
  });

  it('indexInSteps hashes 20,000 URLs in slices with turns for others between, and every lookup after is exact', async () => {
    const f = file();
    const urls = Array.from({ length: 20_000 }, (_, i) => `https://p.supabase.co/rest/v1/t?id=eq.${i}`);
    const again = await committed(f, urls);
    let turns = 0;
    let running = true;
    const other = (async () => {
      while (running) await new Promise<void>((resolve) => setImmediate(() => (turns++, resolve())));
    })();
    await again.indexInSteps();
    // Hashed by the steps, before any lookup.
    expect((again as unknown as { indexed: boolean }).indexed).toBe(true);
    running = false;
    await other;
    // 20,000 texts are three slices of 8,192: the other work had a turn between them.
    expect(turns).toBeGreaterThanOrEqual(3);
    for (let i = urls.length - 1; i >= 0; i--) expect(again.idOf(urls[i]!)).toBe(i + 1);
    expect(again.idOf('https://new')).toBe(20_001);
    again.close();
  });

  it('getMany reads the texts of many ids in runs of nearby lines: the same texts as get, in a read per run', async () => {
    const f = file();
    const urls = Array.from({ length: 5_000 }, (_, i) => `https://p.supabase.co/rest/v1/t${i % 7}?id=eq.${i}&q="${'é'.repeat(i % 3)}"`);
    const again = await committed(f, urls);
    again.size();
    // Two texts not yet written (pending), ids in any order with repeats, and two runs far apart.
    expect(again.idOf('pending-1')).toBe(5_001);
    expect(again.idOf('pending-2')).toBe(5_002);
    const ids = [5_002, ...Array.from({ length: 1_000 }, (_, i) => 1_000 + ((i * 7919) % 1_000)), 4_990, 4_991, 3, 3, 5_001];
    const { calls, out: got } = readsDuring(() => again.getMany(ids));
    expect(calls).toBeLessThanOrEqual(3);
    expect(got.size).toBe(new Set(ids).size);
    for (const id of ids) expect(got.get(id)).toBe(id > 5_000 ? `pending-${id - 5_000}` : urls[id - 1]);
    again.close();
  });

  it('idsOf gives the ids idOf gives (known texts confirmed in a few reads, new ones added once each, in order)', async () => {
    const f = file();
    const paths = Array.from({ length: 3_000 }, (_, i) => `/rest/v1/table_${i}`);
    const again = await committed(f, paths);
    again.size();
    const asked = [...paths.slice(1_000, 2_000).reverse(), '/new/a', paths[5]!, '/new/b', '/new/a', paths[1_500]!];
    const { calls, out: got } = readsDuring(() => again.idsOf(asked));
    expect(calls).toBeLessThanOrEqual(3);
    expect(got).toEqual([...Array.from({ length: 1_000 }, (_, i) => 2_000 - i), 3_001, 6, 3_002, 3_001, 1_501]);
    expect(again.get(3_001)).toBe('/new/a');
    again.close();
  });

  it('lines past the committed length (an import that never committed) are cut at open and ids reused', async () => {
    const f = file();
    const d = new TextDictionary(f, { bytes: 0, count: 0 });
    d.idOf('kept');
    d.flush();
    const state = d.state();
    d.idOf('lost');
    d.flush();
    d.close();
    expect(fs.readFileSync(f, 'utf8')).toBe('"kept"\n"lost"\n');
    const again = new TextDictionary(f, state);
    expect(again.idOf('other')).toBe(2);
    again.flush();
    expect(fs.readFileSync(f, 'utf8')).toBe('"kept"\n"other"\n');
    again.close();
  });

  it('resetTo goes back to an earlier state in memory; cutFile cuts the file only when asked', () => {
    const f = file();
    const d = new TextDictionary(f, { bytes: 0, count: 0 });
    d.idOf('a');
    d.flush();
    const before = d.state();
    d.idOf('b');
    d.flush();
    d.resetTo(before);
    expect(fs.readFileSync(f, 'utf8')).toBe('"a"\n"b"\n');
    expect(d.idOf('a')).toBe(1);
    expect(d.slice(0, 10)).toEqual([{ id: 1, text: 'a' }]);
    d.cutFile();
    expect(fs.readFileSync(f, 'utf8')).toBe('"a"\n');
    expect(d.idOf('c')).toBe(2);
    d.close();
  });

  it('a file shorter than the catalog says is an error naming the file, not silent loss', () => {
    const f = file();
    fs.writeFileSync(f, '"a"\n');
    const d = new TextDictionary(f, { bytes: 100, count: 5 });
    expect(() => d.idOf('x')).toThrow(/^the store file urls\.log is damaged \(it holds 4 bytes but the catalog counts 100\)/);
    // Every later use fails the same way: never an empty dictionary.
    expect(() => d.size()).toThrow(/urls\.log is damaged/);
  });
});

describe('TextDictionary, derived (paths)', () => {
  const TOKEN_LINE = /^"\\u0000dictionary [0-9a-f]{16}"\n/;

  it('starts with its token as id 1, then texts from id 2; reopens with the same token and ids', () => {
    const f = file();
    const d = new TextDictionary(f, 'derived');
    const epoch = d.epoch;
    expect(epoch).toMatch(/^[0-9a-f]{16}$/);
    expect(['/a', '/b', '/a'].map((t) => d.idOf(t))).toEqual([2, 3, 2]);
    d.syncNow();
    d.close();
    const text = fs.readFileSync(f, 'utf8');
    expect(text).toMatch(TOKEN_LINE);
    expect(text.split('\n').slice(1)).toEqual(['"/a"', '"/b"', '']);
    const again = new TextDictionary(f, 'derived');
    // The token is read from the first line alone, before anything is loaded.
    expect(again.epoch).toBe(epoch);
    expect(again.get(3)).toBe('/b');
    expect(again.idOf('/c')).toBe(4);
    again.close();
  });

  it('a cut or garbled last line (a crash mid-append) is dropped; the lines before it keep their ids', () => {
    const f = file();
    const d = new TextDictionary(f, 'derived');
    const epoch = d.epoch;
    d.idOf('/kept');
    d.syncNow();
    d.close();
    fs.appendFileSync(f, '"/cut');
    const cut = new TextDictionary(f, 'derived');
    expect(cut.epoch).toBe(epoch);
    expect(cut.count).toBe(0); // not loaded yet: the token came from the first line
    expect(cut.idOf('/kept')).toBe(2);
    expect(cut.count).toBe(2);
    expect(cut.idOf('/new')).toBe(3);
    cut.syncNow();
    cut.close();
    fs.appendFileSync(f, '\u0000\u0000\n"/after"\n');
    const garbled = new TextDictionary(f, 'derived');
    expect(garbled.slice(1, 10)).toEqual([
      { id: 2, text: '/kept' },
      { id: 3, text: '/new' },
    ]);
    garbled.close();
    expect(fs.readFileSync(f, 'utf8').split('\n').slice(1)).toEqual(['"/kept"', '"/new"', '']);
  });

  it('a file that is not one (no token line, or deleted) starts again under a new token', () => {
    const f = file();
    fs.writeFileSync(f, '"/a"\n"/b"\n');
    const d = new TextDictionary(f, 'derived');
    const first = d.epoch;
    expect(d.idOf('/b')).toBe(2);
    d.syncNow();
    d.close();
    expect(fs.readFileSync(f, 'utf8')).toMatch(new RegExp(`${TOKEN_LINE.source}"/b"\\n$`));
    fs.rmSync(f);
    const fresh = new TextDictionary(f, 'derived');
    expect(fresh.epoch).not.toBe(first);
    fresh.close();
  });

  it('20,000 texts past the caches resolve exactly after a reopen', () => {
    const f = file();
    const texts = Array.from({ length: 20_000 }, (_, i) => `/storage/v1/object/b/${i}.png`);
    const d = new TextDictionary(f, 'derived');
    texts.forEach((t, i) => expect(d.idOf(t)).toBe(i + 2));
    d.syncNow();
    d.close();
    const again = new TextDictionary(f, 'derived');
    for (let i = 0; i < texts.length; i += 997) expect(again.get(i + 2)).toBe(texts[i]);
    for (let i = texts.length - 1; i >= 0; i -= 1009) expect(again.idOf(texts[i]!)).toBe(i + 2);
    expect(again.count).toBe(20_001);
    again.close();
  });
});

describe('TextDictionary, reading before adding', () => {
  /** JSON string lines with every kind of escape, and the same lines with bytes garbled. */
  function lines(seed: number): Buffer[] {
    let x = seed;
    const next = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const chars = ['a', '/', '"', '\\', '\n', '\t', '\u0001', 'é', '\ud83d\ude00', '\ud800', 'u', '0', ' ', '\u007f', '\u2028'];
    return Array.from({ length: 400 }, () => {
      let t = '';
      for (let k = Math.floor(next() * 12); k > 0; k--) t += chars[Math.floor(next() * chars.length)];
      const line = Buffer.from(`${JSON.stringify(t)}\n`, 'utf8');
      // A few garbled (a byte changed, never into a newline: a quote, a backslash, a control byte…), a few with spaces around.
      const u = next();
      if (u < 0.03 && line.length > 2) {
        const i = Math.floor(next() * (line.length - 1));
        const garbage = [0x22, 0x5c, 0x00, 0x1f, 0x20, 0x75, 0xff, 0xc3, 0x09, 0x0d][Math.floor(next() * 10)]!;
        line[i] = garbage;
      } else if (u < 0.08) return Buffer.concat([Buffer.from(' \t'), line.subarray(0, line.length - 1), Buffer.from('\r\n')]);
      return line;
    });
  }
  const parses = (line: Buffer) => {
    try {
      return typeof JSON.parse(line.toString('utf8', 0, line.length - 1)) === 'string';
    } catch {
      return false;
    }
  };

  it('keeps exactly the lines before the first one JSON.parse does not read as a string (derived), on garbled random lines', () => {
    for (let seed = 1; seed <= 80; seed++) {
      const f = file();
      const d = new TextDictionary(f, 'derived');
      expect(d.epoch).toMatch(/^[0-9a-f]{16}$/);
      d.syncNow();
      d.close();
      const body = lines(seed);
      fs.appendFileSync(f, Buffer.concat(body));
      const firstBad = body.findIndex((l) => !parses(l));
      const again = new TextDictionary(f, 'derived');
      expect(again.size(), `seed ${seed}`).toBe(1 + (firstBad < 0 ? body.length : firstBad));
      for (let i = 0; i < again.size() - 1; i++) expect(again.get(i + 2)).toBe(JSON.parse(body[i]!.toString('utf8')));
      again.close();
    }
  });

  it('a committed line JSON.parse does not read is damage, named at the first read', () => {
    const f = file();
    fs.writeFileSync(f, '"a"\n"b\\x"\n"c"\n');
    const d = new TextDictionary(f, { bytes: 14, count: 3 });
    expect(() => d.get(1)).toThrow(/^the store file urls\.log is damaged \(a line is not a JSON string\)/);
    expect(() => d.size()).toThrow(/a line is not a JSON string/);
  });

  it('reading texts by id decodes only those; the first text added decodes every line once', () => {
    const f = file();
    const d = new TextDictionary(f, { bytes: 0, count: 0 });
    for (let i = 0; i < 5000; i++) d.idOf(`https://x/${i}`);
    d.flush();
    const state = d.state();
    d.close();
    const again = new TextDictionary(f, state);
    const parse = vi.spyOn(JSON, 'parse');
    expect(again.get(4321)).toBe('https://x/4320');
    expect(again.endOf(10)).toBe(again.slice(0, 10).reduce((n, t) => n + Buffer.byteLength(JSON.stringify(t.text)) + 1, 0));
    expect(parse.mock.calls.length).toBeLessThan(20);
    expect(again.idOf('https://x/17')).toBe(18);
    expect(parse.mock.calls.length).toBeGreaterThan(5000);
    expect(again.idOf('https://new')).toBe(5001);
    parse.mockRestore();
    again.close();
  });

  it('idsContaining finds what includes finds, in written and pending texts, escapes and all', () => {
    const texts = lines(7).map((l) => l.toString('utf8', 0, l.length - 1)).filter((l) => parses(Buffer.from(`${l}\n`)));
    const all = [...new Set([...texts.map((l) => JSON.parse(l) as string), 'nab', 'a\nab', 'xu0001', '\u0001'])];
    const f = file();
    const d = new TextDictionary(f, { bytes: 0, count: 0 });
    all.forEach((t) => d.idOf(t));
    d.flush();
    const pending = ['ab pending', 'u0001 pending'];
    pending.forEach((t) => d.idOf(t));
    const texts2 = [...all, ...pending];
    for (const literal of ['a', 'ab', 'nab', 'u0001', 'ud800', '/', ' ', 'pending', '']) {
      const expected = texts2.flatMap((t, i) => (t.includes(literal) ? [i + 1] : []));
      expect(d.idsContaining(literal, 0, 1e9), literal).toEqual({ ids: expected, last: texts2.length });
      // A slice at a time, from the middle.
      const parts = [d.idsContaining(literal, 100, 37), d.idsContaining(literal, 137, 1e9)];
      expect(parts.flatMap((p) => p.ids)).toEqual(expected.filter((id) => id > 100));
    }
    expect(() => d.idsContaining('a"b', 0, 10)).toThrow();
    d.close();
  });

  it('idsFound takes places found in any order, each line once, and decides lines with escapes and pending texts by its test', () => {
    const texts = ['/REST/v1/a', 'none', '/rest/V1/b "quoted"', 'rest/v1 twice rest/v1', '\u0001/rest/v1/c', 'x/rEsT/v1/'];
    const d = new TextDictionary(file(), { bytes: 0, count: 0 });
    texts.forEach((t) => d.idOf(t));
    d.flush();
    const pending = ['/Rest/V1/pending', 'other pending'];
    pending.forEach((t) => d.idOf(t));
    // Case-insensitive: every place any spelling starts, found last to first (not in order).
    const find = (bytes: Buffer, visit: (at: number) => boolean) => {
      const lower = Buffer.from(bytes.toString('latin1').toLowerCase(), 'latin1');
      const at: number[] = [];
      for (let i = lower.indexOf('rest/v1'); i >= 0; i = lower.indexOf('rest/v1', i + 1)) at.push(i);
      for (const i of at.reverse()) if (visit(i)) return;
    };
    const test = (t: string) => t.toLowerCase().includes('rest/v1');
    const all = [...texts, ...pending];
    const expected = all.flatMap((t, i) => (test(t) ? [i + 1] : []));
    expect(expected).toEqual([1, 3, 4, 5, 6, 7]);
    expect(d.idsFound(find, test, 0, 100)).toEqual({ ids: expected, last: all.length });
    expect(d.idsFound(find, test, 2, 3)).toEqual({ ids: [3, 4, 5], last: 5 });
    d.close();
  });
});

describe('TextDictionary, saved line offsets (urls.log.lines)', () => {
  /** Enough URLs that reading them line by line saves their offsets (past SAVE_LINES_AFTER bytes). */
  const urls = (n: number, tag = '') => Array.from({ length: n }, (_, i) => `https://p${i % 97}.supabase.co/rest/v1/items${tag}?select=*&id=eq.${i}&pad=${'x'.repeat(i % 40)}`);
  /** The texts of a file's lines, read with nothing but split and JSON.parse. */
  const linesOf = (f: string, bytes?: number) =>
    fs
      .readFileSync(f)
      .subarray(0, bytes)
      .toString('utf8')
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l) as string);
  const many = urls(60_000);
  /** A committed dictionary of `many` read once (which saves its offsets), closed: its committed state. */
  async function readOnce(f: string): Promise<{ bytes: number; count: number }> {
    const d = await committed(f, many);
    d.size();
    d.close();
    return d.committedState;
  }

  it('a file read line by line saves its offsets; the next open takes them and reads every text as the file holds it', async () => {
    const f = file();
    expect(Buffer.byteLength(many.join('\n'))).toBeGreaterThan(SAVE_LINES_AFTER);
    const d = await committed(f, many);
    const state = d.committedState;
    expect(fs.existsSync(`${f}.lines`)).toBe(false);
    expect(d.size()).toBe(many.length);
    d.close();
    expect(fs.existsSync(`${f}.lines`)).toBe(true);
    const savedAt = fs.statSync(`${f}.lines`).mtimeMs;
    const again = new TextDictionary(f, state);
    // The saved offsets are checked by a CRC of the bytes, a megabyte per read: far fewer reads than 256 KiB line by line.
    const { calls } = readsDuring(() => again.size());
    expect(calls).toBeLessThan(Math.ceil(state.bytes / (1024 * 1024)) + 4);
    expect(again.size()).toBe(many.length);
    const expected = linesOf(f);
    for (let id = 1; id <= many.length; id += 7) expect(again.get(id)).toBe(expected[id - 1]);
    expect([...again.getMany([1, 2, many.length])]).toEqual([[1, expected[0]], [2, expected[1]], [many.length, expected[many.length - 1]]]);
    expect(again.idsContaining('id=eq.59999&', 0, many.length).ids).toEqual([60_000]);
    // Not written again: nothing was read line by line.
    expect(fs.statSync(`${f}.lines`).mtimeMs).toBe(savedAt);
    again.close();
  });

  it('loadInSteps reads the saved offsets off this thread: a start does not wait for their file', async () => {
    const f = file();
    const state = await readOnce(f);
    const d = new TextDictionary(f, state);
    const sync = vi.spyOn(fs, 'readFileSync');
    const opened = vi.spyOn(fs, 'openSync');
    let turns = 0;
    let release!: () => void;
    let asked = 0;
    const loading = d.loadInSteps(
      () => (turns++ === 0 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve()),
      async (file, bytes) => (asked++, zlib.crc32(fs.readFileSync(file).subarray(0, bytes))),
    );
    // Nothing of the dictionary or its offsets was read or opened before the call returned.
    expect(sync.mock.calls.length).toBe(0);
    expect(opened.mock.calls.length).toBe(0);
    sync.mockRestore();
    opened.mockRestore();
    // Once read, the offsets wait for a turn (requests go first) before they are checked and taken.
    await vi.waitUntil(() => turns === 1);
    expect(asked).toBe(0);
    release();
    await loading;
    expect(asked).toBe(1);
    expect(d.size()).toBe(many.length);
    expect(d.get(777)).toBe(linesOf(f)[776]);
    d.close();
  });

  it('a loadInSteps still running when the dictionary is closed stops: it opens and reads nothing more', async () => {
    const f = file();
    const state = await readOnce(f);
    for (const closeAfter of [0, 1, 3]) {
      const d = new TextDictionary(f, state);
      let turns = 0;
      let closed = false;
      const opened = vi.spyOn(fs, 'openSync');
      const read = vi.spyOn(fs, 'readSync');
      const loading = d.loadInSteps(async () => {
        if (turns++ === closeAfter) {
          d.close();
          closed = true;
          opened.mockClear();
          read.mockClear();
        }
      });
      await loading;
      expect(closed).toBe(true);
      expect(opened.mock.calls.length, `closed at turn ${closeAfter}`).toBe(0);
      expect(read.mock.calls.length, `closed at turn ${closeAfter}`).toBe(0);
      opened.mockRestore();
      read.mockRestore();
    }
  });

  it('saved offsets checked by a CRC computed on another thread: taken without a read here; a wrong CRC, or a read that cannot wait, reads them here', async () => {
    const f = file();
    const d = await committed(f, many);
    const state = d.committedState;
    expect(d.size()).toBe(many.length);
    d.close();
    expect(fs.existsSync(`${f}.lines`)).toBe(true);
    const expected = linesOf(f);
    const content = fs.readFileSync(f);
    const crcOf = async (file: string, bytes: number) => (file === f ? zlib.crc32(content.subarray(0, bytes)) : null);
    // The CRC from elsewhere: the offsets are taken, this thread reading only the saved offsets' file.
    const off = new TextDictionary(f, state);
    const reads = vi.spyOn(fs, 'readSync');
    await off.loadInSteps(undefined, crcOf);
    const calls = reads.mock.calls.length;
    reads.mockRestore();
    // (Reading the saved offsets' file alone: a few reads of 512 KiB.)
    expect(calls).toBeLessThan(Math.ceil(fs.statSync(`${f}.lines`).size / (512 * 1024)) + 3);
    expect(calls).toBeLessThan(Math.ceil(state.bytes / (1024 * 1024)));
    expect(off.size()).toBe(many.length);
    for (const id of [1, 2, 777, many.length]) expect(off.get(id)).toBe(expected[id - 1]);
    off.close();
    // A read that waits for the check (whenChecked) finds the lines taken once the CRC comes.
    let give!: (crc: number | null) => void;
    const waits = new TextDictionary(f, state);
    const loaded = waits.loadInSteps(undefined, () => new Promise((resolve) => (give = resolve)));
    // (The saved offsets are read off the thread first, then the CRC is asked.)
    await vi.waitUntil(() => give !== undefined);
    let checked = false;
    const until = waits.whenChecked().then(() => (checked = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(checked).toBe(false);
    give(zlib.crc32(content.subarray(0, readSavedLines(f)!.bytes)));
    await until;
    await loaded;
    const after = vi.spyOn(fs, 'readSync');
    expect(waits.size()).toBe(many.length);
    expect(after.mock.calls.length).toBe(0);
    after.mockRestore();
    waits.close();
    // A second loadInSteps (the columns builder's, after the store's own) waits for the CRC asked by the first, reading nothing meanwhile.
    let crc!: (crc: number | null) => void;
    const twice = new TextDictionary(f, state);
    const asked = twice.loadInSteps(undefined, () => new Promise((resolve) => (crc = resolve)));
    await vi.waitUntil(() => crc !== undefined);
    const meanwhile = vi.spyOn(fs, 'readSync');
    let secondDone = false;
    const second = twice.loadInSteps(undefined, async () => 12345).then(() => (secondDone = true));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(secondDone).toBe(false);
    expect(meanwhile.mock.calls.length).toBe(0);
    meanwhile.mockRestore();
    crc(zlib.crc32(content.subarray(0, readSavedLines(f)!.bytes)));
    await Promise.all([asked, second]);
    const none = vi.spyOn(fs, 'readSync');
    expect(twice.size()).toBe(many.length);
    expect(twice.get(777)).toBe(expected[776]);
    expect(none.mock.calls.length).toBeLessThanOrEqual(1);
    none.mockRestore();
    twice.close();
    // A CRC that is not the bytes': read line by line, the same texts.
    const wrong = new TextDictionary(f, state);
    await wrong.loadInSteps(undefined, async () => 12345);
    expect(wrong.size()).toBe(many.length);
    for (const id of [1, 777, many.length]) expect(wrong.get(id)).toBe(expected[id - 1]);
    wrong.close();
    // A read that needs the lines while the CRC is computed elsewhere checks them itself; the late CRC is dropped.
    let answer!: (crc: number | null) => void;
    const late = new TextDictionary(f, state);
    const loading = late.loadInSteps(undefined, () => new Promise((resolve) => (answer = resolve)));
    await vi.waitUntil(() => answer !== undefined);
    expect(late.get(777)).toBe(expected[776]);
    answer(12345);
    await loading;
    await late.whenChecked();
    expect(late.size()).toBe(many.length);
    expect(late.get(many.length)).toBe(expected[many.length - 1]);
    late.close();
  });

  it('lines committed after the saved ones are read line by line after them; new texts get the next ids', async () => {
    const f = file();
    const more = new TextDictionary(f, await readOnce(f));
    for (const u of urls(300, '-more')) more.idOf(u);
    more.flush();
    const state = more.state();
    more.close();
    const again = new TextDictionary(f, state);
    expect(again.size()).toBe(many.length + 300);
    const expected = linesOf(f);
    for (const id of [1, many.length, many.length + 1, many.length + 300]) expect(again.get(id)).toBe(expected[id - 1]);
    expect(again.idOf(`https://p0.supabase.co/rest/v1/items-more?select=*&id=eq.0&pad=`)).toBe(many.length + 1);
    again.close();
  });

  it('bytes changed where the offsets were saved: read line by line, a line that is no JSON string named as damage, a changed text read as it now is', async () => {
    const f = file();
    const state = await readOnce(f);
    const bytes = fs.readFileSync(f);
    const at = bytes.indexOf('items', Math.floor(bytes.length / 2));
    // The same length, still JSON: only the CRC tells the file changed.
    bytes.write('ITEMS', at, 'latin1');
    fs.writeFileSync(f, bytes);
    const changed = new TextDictionary(f, state);
    expect(changed.size()).toBe(many.length);
    const expected = linesOf(f);
    expect(expected.filter((t) => t.includes('ITEMS'))).toHaveLength(1);
    expect(changed.idsContaining('ITEMS', 0, many.length).ids.map((id) => changed.get(id))).toEqual(expected.filter((t) => t.includes('ITEMS')));
    changed.close();
    // A quote in the middle of a line: damage, as without saved offsets.
    bytes[at] = 0x22;
    fs.writeFileSync(f, bytes);
    const damaged = new TextDictionary(f, state);
    expect(() => damaged.size()).toThrow(/^the store file urls\.log is damaged \(a line is not a JSON string\)/);
    damaged.close();
  });

  it('a saved file cut, garbled or longer than what the catalog commits is not used; the texts are the file’s', async () => {
    const f = file();
    const state = await readOnce(f);
    const saved = fs.readFileSync(`${f}.lines`);
    const expected = linesOf(f);
    const variants: Array<[string, Buffer]> = [
      ['cut', saved.subarray(0, saved.length - 100)],
      ['garbled', Buffer.concat([saved.subarray(0, 40), Buffer.from([saved[40]! ^ 0xff]), saved.subarray(41)])],
      ['empty', Buffer.alloc(0)],
    ];
    for (const [what, bytes] of variants) {
      fs.writeFileSync(`${f}.lines`, bytes);
      const again = new TextDictionary(f, state);
      expect(again.size(), what).toBe(many.length);
      for (const id of [1, 30_001, many.length]) expect(again.get(id), what).toBe(expected[id - 1]);
      again.close();
      // Read line by line, so saved again whole.
      expect(fs.readFileSync(`${f}.lines`).equals(saved), what).toBe(true);
    }
    // A catalog that commits fewer texts (a source deleted, then some imported again): its own lines only.
    const fewer = { count: 1000, bytes: linesOf(f).slice(0, 1000).reduce((n, t) => n + Buffer.byteLength(`${JSON.stringify(t)}\n`), 0) };
    const back = new TextDictionary(f, fewer);
    expect(back.size()).toBe(1000);
    expect(back.get(1000)).toBe(expected[999]);
    back.close();
  });

  it('a derived file (paths.log) keeps its token and ids through saved offsets; a cut before their end reads line by line', () => {
    const f = file();
    const d = new TextDictionary(f, 'derived');
    const token = d.epoch;
    for (const u of many) d.idOf(u);
    d.syncNow();
    d.close();
    const read = new TextDictionary(f, 'derived');
    expect(read.size()).toBe(many.length + 1);
    read.close();
    expect(fs.existsSync(`${f}.lines`)).toBe(true);
    const again = new TextDictionary(f, 'derived');
    expect(again.epoch).toBe(token);
    expect(again.size()).toBe(many.length + 1);
    expect(again.get(2)).toBe(many[0]);
    expect(again.get(many.length + 1)).toBe(many[many.length - 1]);
    again.close();
    // A crash cut the file in the middle of a line, before where the saved offsets end.
    const size = fs.statSync(f).size;
    fs.truncateSync(f, Math.floor(size / 2));
    const whole = linesOf(f, fs.readFileSync(f).lastIndexOf(0x0a) + 1);
    const cut = new TextDictionary(f, 'derived');
    expect(cut.epoch).toBe(token);
    expect(cut.size()).toBe(whole.length);
    expect(cut.get(whole.length)).toBe(whole[whole.length - 1]);
    cut.close();
  });
});

describe('checkSavedLines (npm run check)', () => {
  it('finds nothing wrong with offsets a read saved, and names a changed dictionary, a garbled file, one too long and offsets off their lines', async () => {
    const f = file();
    const texts = Array.from({ length: 60_000 }, (_, i) => `https://x.supabase.co/rest/v1/t?id=eq.${i}&pad=${'y'.repeat(i % 50)}`);
    const d = await committed(f, texts);
    const state = d.committedState;
    d.size();
    d.close();
    expect(checkSavedLines(path.join(path.dirname(f), 'missing.log'), 0)).toBeNull();
    expect(checkSavedLines(f, state.bytes)).toBeNull();
    expect(checkSavedLines(f, state.bytes - 1)).toMatch(/^it covers \d+ bytes, more than the dictionary's/);
    const saved = readSavedLines(f)!;
    // The same bytes, the offsets one line off: only the offsets are wrong.
    const shifted = new Float64Array(saved.starts);
    shifted[5] = shifted[5]! + 1;
    writeSavedLines(f, { ...saved, starts: shifted });
    expect(checkSavedLines(f, state.bytes)).toMatch(/^its offsets are not where the dictionary's lines start/);
    writeSavedLines(f, { ...saved, count: saved.count - 1, starts: saved.starts.subarray(0, saved.count - 1) });
    expect(checkSavedLines(f, state.bytes)).toMatch(/^made from other bytes|^its offsets are not where/);
    writeSavedLines(f, saved);
    const bytes = fs.readFileSync(f);
    bytes[100] = bytes[100] === 0x61 ? 0x62 : 0x61;
    fs.writeFileSync(f, bytes);
    expect(checkSavedLines(f, state.bytes)).toMatch(/^made from other bytes than the dictionary holds/);
    fs.writeFileSync(linesFileOf(f), 'garbage');
    expect(checkSavedLines(f, state.bytes)).toMatch(/^not whole or not of this format/);
  });
});

describe('TextDictionary, line offsets in memory', () => {
  const texts = (n: number) => Array.from({ length: n }, (_, i) => `https://p.supabase.co/rest/v1/items?id=eq.${i}`);

  it('a committed dictionary loaded holds about 8 bytes a text (4 of offset, 4 of hash), not a doubled array of 8-byte offsets', async () => {
    const n = 20_000;
    const d = await committed(file(), texts(n));
    expect(d.get(n)).toBe(texts(n)[n - 1]);
    // The hash table is built only to add a text: the offsets and hashes alone, with a few slots spare.
    const tableBytes = 2048 * 4;
    expect(d.heldBytes() - tableBytes).toBeLessThanOrEqual((n + 2) * 8 * 1.01);
    // Adding texts grows them by a quarter at a time.
    for (let i = 0; i < 100; i++) d.idOf(`https://new/${i}`);
    // (The hash table, built to add them: a power of two of 4-byte slots, at least twice the texts.)
    const table = 4 * 2 ** Math.ceil(Math.log2(2 * (n + 101)));
    expect(d.heldBytes() - table).toBeLessThanOrEqual((n + 102) * 8 * 1.25);
    d.close();
  });

  it('past the largest offset four bytes hold, its offsets take eight: every text reads back, before and after, added or loaded again', async () => {
    const f = file();
    const all = texts(3000);
    const limit = 50_000;
    const d = new TextDictionary(f, { bytes: 0, count: 0 }, limit);
    const narrow = new TextDictionary(path.join(path.dirname(f), 'narrow.log'), { bytes: 0, count: 0 });
    let below = 0;
    all.forEach((t, i) => {
      expect(d.idOf(t)).toBe(i + 1);
      narrow.idOf(t);
      // Below the limit both hold as much; past it, four bytes more for every slot of offsets.
      if (d.bytes <= limit) {
        expect(d.heldBytes()).toBe(narrow.heldBytes());
        below++;
      }
    });
    expect(below).toBeGreaterThan(100);
    expect(d.heldBytes() - narrow.heldBytes()).toBeGreaterThanOrEqual(4 * (all.length + 2));
    narrow.close();
    for (let i = all.length; i >= 1; i--) expect(d.get(i)).toBe(all[i - 1]);
    d.flush();
    await d.fsync();
    const state = d.state();
    expect(state.bytes).toBeGreaterThan(limit);
    d.close();
    for (const again of [new TextDictionary(f, state, limit), new TextDictionary(f, state)]) {
      // Backwards, so none is in the recent cache: every lookup goes through the offsets and the file.
      for (let i = all.length - 1; i >= 0; i--) expect(again.idOf(all[i]!)).toBe(i + 1);
      expect(again.idsContaining('id=eq.299', 0, 10_000).ids).toEqual(all.flatMap((t, i) => (t.includes('id=eq.299') ? [i + 1] : [])));
      again.close();
    }
  });
});
