/**
 * Saving: saves never overlap; a full disk is a clear error that loses nothing
 * acknowledged and leaves the server working (a later save succeeds once space is back); a
 * failed import's rollback never leaves a store that cannot be opened.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../app.ts';
import { AppClock } from '../clock.ts';
import { importStream } from '../ingest/import.ts';
import { sourceInfo } from '../sources.ts';
import { ImportWriter, LogStore, type StoredRecord } from '../store/log-store.ts';
import { HOST, NOW, TEST_KEY, TEST_PORT, tempDir } from '../testing/fixtures.ts';
import { P, chunked, edgeNdjson, filesUnder, realServer, storeProblems } from './helpers.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

const edgeCount = (store: LogStore) => store.summary().find((s) => s.source === 'cloudflare.logs.prod')!.count;
const sizes = (dir: string, files: string[]) => files.map((f) => [f, fs.statSync(path.join(dir, f)).size]);

describe('saves', () => {
  it('concurrent save() calls run one at a time, in call order, and all complete', async () => {
    const dir = tempDir();
    const store = await LogStore.open(dir);
    try {
      await importStream(store, [Buffer.from(edgeNdjson(3000))], { source: 'edge_logs' });
      // What a save does on disk, in order: P = a partition's new version written, T = the
      // catalog's temp file written, R = the temp file renamed over the catalog (the commit).
      // Saves that never overlap give P*TR, P*TR, ...; the rename is slowed to widen the window
      // an overlap would need.
      const events: string[] = [];
      const realOpen = fs.promises.open;
      vi.spyOn(fs.promises, 'open').mockImplementation(async (...args: Parameters<typeof fs.promises.open>) => {
        const [file, flags] = [String(args[0]), args[1]];
        if (flags === 'w' && file.endsWith('.sqlite')) events.push('P');
        if (flags === 'w' && file.endsWith('catalog.sqlite.tmp')) events.push('T');
        return realOpen(...args);
      });
      const realRename = fs.promises.rename;
      vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
        await new Promise((r) => setTimeout(r, 5));
        await realRename(from, to);
        events.push('R');
      });
      const saves: Array<Promise<void>> = [];
      const done: number[] = [];
      const save = () => {
        const i = saves.length;
        saves.push(store.save().then(() => void done.push(i)));
      };
      // An import whose input asks for a save after each chunk (as a shutdown would), so that
      // saves find its batches to commit while it goes on; imports save too, behind the same queue.
      const chunks = chunked(Buffer.from(edgeNdjson(12_000, { prefix: 'during' })), 256 * 1024);
      async function* input() {
        for (const c of chunks) {
          yield c;
          save();
          await new Promise((r) => setTimeout(r, 10));
        }
      }
      for (let i = 0; i < 5; i++) save();
      const imported = importStream(store, input(), { source: 'edge_logs' });
      for (let i = 0; i < 5; i++) save();
      expect(await imported).toMatchObject({ imported: 12_000 });
      await Promise.all(saves);
      expect(done).toEqual(saves.map((_, i) => i));
      expect(events.join('')).toMatch(/^(P*TR)+$/);
      // Saves committed the import's batches while it went on: more than one did work.
      expect(events.filter((e) => e === 'R').length).toBeGreaterThanOrEqual(2);
      expect(edgeCount(store)).toBe(15_000);
    } finally {
      vi.restoreAllMocks();
      await store.close();
    }
    const reopened = await LogStore.open(dir);
    try {
      expect(edgeCount(reopened)).toBe(15_000);
      expect(storeProblems(reopened)).toEqual([]);
    } finally {
      await reopened.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // Rows written outside an import (through an ImportWriter) stay unsaved until save().
  const edgeRows = (n: number, prefix: string): StoredRecord[] =>
    Array.from({ length: n }, (_, i) => {
      const url = `https://${P}.supabase.co/rest/v1/t`;
      const ts = NOW - (i + 1) * 1000;
      const raw = JSON.stringify({ id: `${prefix}${i}`, timestamp: ts, project: P, event_message: 'GET', metadata: { request: { url }, response: { status_code: 200 } } });
      return { id: `${prefix}${i}`, ts, project: P, raw, url, families: 1, status: 200 };
    });

  for (const [label, failing] of [
    ['writing the partition\'s new version', (f: string) => f.endsWith('.sqlite')],
    ['writing the catalog\'s temp file', (f: string) => f.endsWith('.tmp')],
  ] as const) {
    it(`a failed save (${label}) leaves no temp or new partition file behind, the committed catalog and files in place; the next save commits`, async () => {
      const dir = tempDir();
      const store = await LogStore.open(dir);
      try {
        await importStream(store, [Buffer.from(edgeNdjson(100))], { source: 'edge_logs' });
        // Few enough that the day stays one partition (a young dense day of 200 rows is split into hours).
        expect(new ImportWriter(store, sourceInfo('cloudflare.logs.prod')).write(edgeRows(50, 'unsaved'))).toEqual({ imported: 50, duplicates: 0 });
        const catalog = path.join(dir, 'catalog.sqlite');
        const before = fs.readFileSync(catalog);
        await store.columnsSettled();
        const filesBefore = filesUnder(dir);
        const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
        const realOpen = fs.promises.open;
        let failed = 0;
        vi.spyOn(fs.promises, 'open').mockImplementation(async (...args: Parameters<typeof fs.promises.open>) => {
          const handle = await realOpen(...args);
          if (failed === 0 && failing(String(args[0]))) {
            failed++;
            // The write gets partway, then the disk is full.
            vi.spyOn(handle, 'writeFile').mockImplementationOnce(async (data) => {
              await realOpen(String(args[0]), 'w').then(async (h) => (await h.write(Buffer.from(data as Uint8Array).subarray(0, 1000)), h.close()));
              throw enospc;
            });
          }
          return handle;
        });
        await expect(store.save()).rejects.toMatchObject({ code: 'ENOSPC', message: expect.stringMatching(/^cannot save the store: the disk is full/) });
        expect(failed).toBe(1);
        vi.restoreAllMocks();
        expect(filesUnder(dir)).toEqual(filesBefore);
        expect(fs.readFileSync(catalog).equals(before)).toBe(true);
        // Nothing in memory was lost; the next save commits it.
        expect(edgeCount(store)).toBe(150);
        await store.save();
        expect(fs.readFileSync(catalog).equals(before)).toBe(false);
      } finally {
        vi.restoreAllMocks();
        await store.close();
      }
      const reopened = await LogStore.open(dir);
      try {
        expect(edgeCount(reopened)).toBe(150);
        expect(reopened.dump('cloudflare.logs.prod').filter((r) => r.id.startsWith('unsaved'))).toHaveLength(50);
        expect(storeProblems(reopened)).toEqual([]);
      } finally {
        await reopened.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('an import that fails after a save ran during it goes back to the catalog it started from (kept on disk for it), in memory and after a reopen', async () => {
    const dir = tempDir();
    const store = await LogStore.open(dir);
    await importStream(store, [Buffer.from(edgeNdjson(500, { prefix: 'acked' }))], { source: 'edge_logs' });
    const summary = () => store.catalog.rows('SELECT * FROM source_summary ORDER BY 1, 2');
    const before = { summary: summary(), partitions: store.catalog.rows('SELECT * FROM partitions ORDER BY 1, 2') };
    const body = chunked(Buffer.from(edgeNdjson(10_000, { prefix: 'partial' })), 64 * 1024);
    let keptDuring = false;
    async function* input() {
      for (const [i, c] of body.entries()) {
        yield c;
        if (i === Math.floor(body.length / 2)) {
          // A save in the middle (as at shutdown) commits what the import has inserted so far...
          for (let t = 0; t < 1000 && edgeCount(store) === 500; t++) await new Promise((resolve) => setTimeout(resolve, 10));
          expect(edgeCount(store)).toBeGreaterThan(500);
          await store.save();
          keptDuring = fs.existsSync(path.join(dir, 'catalog.sqlite.before-import'));
          // ...then the input breaks.
          throw new Error('connection reset');
        }
      }
    }
    await expect(importStream(store, input(), { source: 'edge_logs' })).rejects.toThrow('connection reset');
    expect(keptDuring).toBe(true);
    expect(fs.existsSync(path.join(dir, 'catalog.sqlite.before-import'))).toBe(false);
    expect(edgeCount(store)).toBe(500);
    expect(summary()).toEqual(before.summary);
    expect(store.catalog.rows('SELECT * FROM partitions ORDER BY 1, 2')).toEqual(before.partitions);
    await store.close();
    const reopened = await LogStore.open(dir);
    try {
      expect(storeProblems(reopened)).toEqual([]);
      expect(edgeCount(reopened)).toBe(500);
      expect(reopened.catalog.rows('SELECT * FROM source_summary ORDER BY 1, 2')).toEqual(before.summary);
    } finally {
      await reopened.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an import that fails after a save ran during it, with the rollback save failing too, still leaves a store that opens', async () => {
    const dir = tempDir();
    const store = await LogStore.open(dir);
    await importStream(store, [Buffer.from(edgeNdjson(500, { prefix: 'acked' }))], { source: 'edge_logs' });
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const body = chunked(Buffer.from(edgeNdjson(10_000, { prefix: 'partial' })), 64 * 1024);
    async function* input() {
      for (const [i, c] of body.entries()) {
        yield c;
        if (i === Math.floor(body.length / 2)) {
          // A save in the middle (as at shutdown) puts the first half of the import on disk...
          await store.save();
          // ...then the input breaks, and the save of the rollback fails (disk full).
          vi.spyOn(fs.promises, 'open').mockRejectedValueOnce(enospc);
          throw new Error('connection reset');
        }
      }
    }
    await expect(importStream(store, input(), { source: 'edge_logs' })).rejects.toThrow('connection reset');
    // The process dies here. What is on disk must open, with every acknowledged record.
    const copy = tempDir();
    fs.cpSync(dir, copy, { recursive: true });
    await store.close();
    const reopened = await LogStore.open(copy);
    try {
      // Intact: every record reads back whole; stray files and bytes are gone.
      expect(storeProblems(reopened)).toEqual([]);
      expect(reopened.dump('cloudflare.logs.prod').filter((r) => r.id.startsWith('acked'))).toHaveLength(500);
    } finally {
      await reopened.close();
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });
});

describe('a full disk means nothing changed', () => {
  const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' });
  /** Every open of the catalog's temp file fails, as on a full disk, until restored. */
  const catalogCannotBeWritten = () => {
    const realOpen = fs.promises.open;
    vi.spyOn(fs.promises, 'open').mockImplementation(async (...args: Parameters<typeof fs.promises.open>) => {
      if (String(args[0]).endsWith('catalog.sqlite.tmp')) throw enospc();
      return realOpen(...args);
    });
  };

  it('a delete that cannot be saved leaves the source listed, readable and on disk as it was', async () => {
    const dir = tempDir();
    let store = await LogStore.open(dir);
    try {
      await importStream(store, [Buffer.from(edgeNdjson(300, { prefix: 'kept' }))], { source: 'edge_logs' });
      const before = store.dump('cloudflare.logs.prod');
      const summaryBefore = store.summary();
      await store.columnsSettled();
      const files = filesUnder(dir);
      const sizesBefore = sizes(dir, files);
      catalogCannotBeWritten();
      await expect(store.deleteSource('cloudflare.logs.prod')).rejects.toMatchObject({ code: 'ENOSPC' });
      vi.restoreAllMocks();
      expect(store.summary()).toEqual(summaryBefore);
      expect(store.dump('cloudflare.logs.prod')).toEqual(before);
      expect(filesUnder(dir)).toEqual(files);
      expect(sizes(dir, files)).toEqual(sizesBefore);
      // Saving later (space is back) must not make the refused delete happen after all.
      await store.save();
      await store.close();
      store = await LogStore.open(dir);
      expect(store.dump('cloudflare.logs.prod').map((r) => r.id)).toEqual(before.map((r) => r.id));
      expect(storeProblems(store)).toEqual([]);
    } finally {
      vi.restoreAllMocks();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a shutdown whose save fails still releases the folder (lock and files), and says why', async () => {
    const s = await realServer();
    const err = Object.assign(new Error('cannot save the store: the disk is full (ENOSPC); the last saved store is intact'), { code: 'ENOSPC' });
    vi.spyOn(s.store, 'save').mockRejectedValue(err);
    await expect(s.close()).rejects.toBe(err);
    expect(fs.existsSync(path.join(s.dir, 'data', 'LOCK'))).toBe(false);
    fs.rmSync(s.dir, { recursive: true, force: true });
  });

  it('an import refused for a full disk leaves no bytes behind, even when its rollback cannot be saved either', async () => {
    const dir = tempDir();
    const store = await LogStore.open(dir);
    try {
      await importStream(store, [Buffer.from(edgeNdjson(300, { prefix: 'acked' }))], { source: 'edge_logs' });
      await store.columnsSettled();
      const files = filesUnder(dir);
      const sizesBefore = sizes(dir, files);
      const before = store.dump('cloudflare.logs.prod');
      catalogCannotBeWritten();
      await expect(importStream(store, [Buffer.from(edgeNdjson(2000, { prefix: 'refused' }))], { source: 'edge_logs' })).rejects.toMatchObject({ code: 'ENOSPC' });
      vi.restoreAllMocks();
      expect(filesUnder(dir)).toEqual(files);
      expect(sizes(dir, files)).toEqual(sizesBefore);
      expect(store.dump('cloudflare.logs.prod')).toEqual(before);
      // Memory matches the disk again: a save (at shutdown, say) has nothing to write.
      vi.spyOn(fs.promises, 'open').mockRejectedValue(enospc());
      await store.save();
      vi.restoreAllMocks();
      // The store goes on: the same import succeeds once the disk has room.
      const again = await importStream(store, [Buffer.from(edgeNdjson(2000, { prefix: 'refused' }))], { source: 'edge_logs' });
      expect(again.imported).toBe(2000);
      expect(storeProblems(store)).toEqual([]);
    } finally {
      vi.restoreAllMocks();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A tmpfs of `size` mounted on a fresh folder, or undefined (with the reason) when this machine cannot. */
function mountTmpfs(size: string): { dir: string; unmount(): void } | { skip: string } {
  if (process.platform !== 'linux') return { skip: 'tmpfs needs Linux' };
  if (process.getuid?.() !== 0) return { skip: 'mounting a tmpfs needs root' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    fs.rmdirSync(dir);
    return { skip: `mount -t tmpfs failed: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}` };
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', [dir]);
      fs.rmdirSync(dir);
    },
  };
}

describe('a full disk (a 3 MB tmpfs)', () => {
  it('an import that does not fit is a clear 507; acknowledged data stays (in memory and on disk); once space is back it all works', async (ctx) => {
    const mounted = mountTmpfs('3m');
    if ('skip' in mounted) {
      console.warn(`skipped: ${mounted.skip}`);
      ctx.skip();
      return;
    }
    const { dir: mnt, unmount } = mounted;
    const data = path.join(mnt, 'data');
    const store = await LogStore.open(data);
    const clock = new AppClock(() => null);
    clock.set('fixed', NOW);
    const { app } = createApp({ store, clock, apiKey: TEST_KEY, port: () => TEST_PORT });
    const request = (p: string, init: RequestInit = {}) => app.request(`http://${HOST}${p}`, { ...init, headers: { host: HOST, 'x-api-key': TEST_KEY } });
    const logged: unknown[] = [];
    vi.spyOn(console, 'error').mockImplementation((...a) => void logged.push(a));
    try {
      const acked = await request('/api/imports?source=edge_logs', { method: 'POST', body: edgeNdjson(1000, { prefix: 'acked' }) });
      expect(acked.status).toBe(200);
      await store.columnsSettled();
      const filesBefore = filesUnder(data);
      const sizesBefore = sizes(data, filesBefore);
      // Fill the disk, leaving less than the next import needs.
      const filler = path.join(mnt, 'filler');
      const fd = fs.openSync(filler, 'w');
      try {
        for (;;) fs.writeSync(fd, Buffer.alloc(64 * 1024));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      } finally {
        fs.closeSync(fd);
      }
      fs.truncateSync(filler, fs.statSync(filler).size - 200 * 1024);

      const tooBig = await request('/api/imports?source=edge_logs', { method: 'POST', body: edgeNdjson(3000, { prefix: 'nospace' }) });
      expect(tooBig.status).toBe(507);
      const e = ((await tooBig.json()) as { error: { status: string; message: string } }).error;
      expect(e.status).toBe('INSUFFICIENT_STORAGE');
      expect(e.message).toMatch(/^the disk is full/);
      expect(e.message).toContain('nothing from this request was kept');
      // Nothing half-written is left taking space, and the server still answers from memory.
      expect(filesUnder(data)).toEqual(filesBefore);
      expect(sizes(data, filesBefore)).toEqual(sizesBefore);
      const rows = await request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`);
      expect(rows.status).toBe(200);
      expect(((await rows.json()) as { result: unknown[] }).result).toHaveLength(100);
      expect(edgeCount(store)).toBe(1000);

      // Every byte taken: a delete cannot be saved, so it must not happen, in memory either.
      const filler2 = path.join(mnt, 'filler2');
      const fd2 = fs.openSync(filler2, 'w');
      try {
        for (;;) fs.writeSync(fd2, Buffer.alloc(4096));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      } finally {
        fs.closeSync(fd2);
      }
      const del = await request('/api/sources/edge_logs', { method: 'DELETE' });
      expect(del.status).toBe(507);
      const listed = (await (await request('/api/sources')).json()) as { result: Array<{ alias: string; count: number }> };
      expect(listed.result.find((x) => x.alias === 'edge_logs')?.count).toBe(1000);
      fs.rmSync(filler2);

      // Space comes back: saving and importing work again, and everything is on disk.
      fs.rmSync(filler);
      await store.save();
      const again = await request('/api/imports?source=edge_logs', { method: 'POST', body: edgeNdjson(3000, { prefix: 'nospace' }) });
      expect(again.status).toBe(200);
      expect(((await again.json()) as { result: { imported: number } }).result.imported).toBe(3000);
      await store.close();
      const reopened = await LogStore.open(data);
      expect(edgeCount(reopened)).toBe(4000);
      expect(storeProblems(reopened)).toEqual([]);
      await reopened.close();
    } finally {
      await store.close().catch(() => undefined);
      unmount();
    }
  });
});
