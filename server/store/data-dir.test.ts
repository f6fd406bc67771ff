import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importRecords, NOW, edgeRecord, storeKeeper } from '../testing/fixtures.ts';

const keeper = storeKeeper();
afterEach(() => keeper.cleanup());

/** Every entry under dir with its permission bits, as text like `0600 parts/x`. */
function modes(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      out.push(`${(fs.lstatSync(full).mode & 0o777).toString(8).padStart(4, '0')} ${path.relative(dir, full)}`);
      if (e.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return out.sort();
}

describe.skipIf(process.platform === 'win32')('the data folder is owner-only', () => {
  it('opening a folder left at 0777 with 0644 files makes every folder 0700 and every file 0600', async () => {
    const dir = keeper.newDir();
    let store = await keeper.open(dir);
    await importRecords(store, 'edge_logs', [edgeRecord(NOW - 1000), edgeRecord(NOW - 2000)]);
    await keeper.close(store);
    const loosen = (d: string) => {
      fs.chmodSync(d, 0o777);
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const full = path.join(d, e.name);
        if (e.isDirectory()) loosen(full);
        else fs.chmodSync(full, 0o644);
      }
    };
    loosen(dir);
    expect(modes(dir).some((m) => m.startsWith('0644 parts/edge_logs/'))).toBe(true);
    store = await keeper.open(dir);
    const all = modes(dir);
    expect(all.length).toBeGreaterThan(4);
    for (const m of all) {
      const name = m.slice(5);
      expect(m, name).toBe(`${fs.statSync(path.join(dir, name)).isDirectory() ? '0700' : '0600'} ${name}`);
    }
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  });
});
