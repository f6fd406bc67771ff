/** The URL dictionary file: ids stable across reopen, exact lookups, rollback, crash leftovers. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UrlDictionary } from './url-dictionary.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const file = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'le-urls-'));
  dirs.push(d);
  return path.join(d, 'urls.log');
};

describe('UrlDictionary', () => {
  it('gives dense ids in order of first sight, the same id for a repeat, and reads every URL back', () => {
    const d = new UrlDictionary(file(), { bytes: 0, count: 0 });
    expect(['https://a/x', 'https://b/y', 'https://a/x', 'é/ü?q="1"', 'https://b/y'].map((u) => d.idOf(u))).toEqual([1, 2, 1, 3, 2]);
    expect(d.slice(0, 10)).toEqual([
      { id: 1, url: 'https://a/x' },
      { id: 2, url: 'https://b/y' },
      { id: 3, url: 'é/ü?q="1"' },
    ]);
    expect(d.slice(1, 1)).toEqual([{ id: 2, url: 'https://b/y' }]);
    expect(d.get(3)).toBe('é/ü?q="1"');
  });

  it('a committed state reopens with the same ids; 20,000 URLs (past the recent cache and many table growths) all resolve exactly', async () => {
    const f = file();
    const urls = Array.from({ length: 20_000 }, (_, i) => `https://p.supabase.co/rest/v1/t?id=eq.${i}`);
    const d = new UrlDictionary(f, { bytes: 0, count: 0 });
    urls.forEach((u, i) => expect(d.idOf(u)).toBe(i + 1));
    d.flush();
    await d.fsync();
    const state = d.state();
    d.close();
    const again = new UrlDictionary(f, state);
    // Backwards, so none is in the recent cache: every lookup goes through the hash table and the file.
    for (let i = urls.length - 1; i >= 0; i--) expect(again.idOf(urls[i]!)).toBe(i + 1);
    expect(again.idOf('https://new')).toBe(20_001);
    again.close();
  });

  it('lines past the committed length (an import that never committed) are cut at open and ids reused', async () => {
    const f = file();
    const d = new UrlDictionary(f, { bytes: 0, count: 0 });
    d.idOf('kept');
    d.flush();
    const state = d.state();
    d.idOf('lost');
    d.flush();
    d.close();
    expect(fs.readFileSync(f, 'utf8')).toBe('"kept"\n"lost"\n');
    const again = new UrlDictionary(f, state);
    expect(again.idOf('other')).toBe(2);
    again.flush();
    expect(fs.readFileSync(f, 'utf8')).toBe('"kept"\n"other"\n');
    again.close();
  });

  it('resetTo goes back to an earlier state in memory; cutFile cuts the file only when asked', () => {
    const f = file();
    const d = new UrlDictionary(f, { bytes: 0, count: 0 });
    d.idOf('a');
    d.flush();
    const before = d.state();
    d.idOf('b');
    d.flush();
    d.resetTo(before);
    expect(fs.readFileSync(f, 'utf8')).toBe('"a"\n"b"\n');
    expect(d.idOf('a')).toBe(1);
    expect(d.slice(0, 10)).toEqual([{ id: 1, url: 'a' }]);
    d.cutFile();
    expect(fs.readFileSync(f, 'utf8')).toBe('"a"\n');
    expect(d.idOf('c')).toBe(2);
    d.close();
  });

  it('a file shorter than the catalog says is an error naming the file, not silent loss', () => {
    const f = file();
    fs.writeFileSync(f, '"a"\n');
    const d = new UrlDictionary(f, { bytes: 100, count: 5 });
    expect(() => d.idOf('x')).toThrow(/urls\.log holds 4 bytes but the catalog points to byte 100/);
  });
});
