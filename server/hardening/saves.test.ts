/**
 * Issue 7, saving: saves never overlap; a full disk is a clear error that loses nothing
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
import { LogStore, STORE_FILE } from '../store/log-store.ts';
import { HOST, NOW, TEST_KEY, TEST_PORT, tempDir } from '../testing/fixtures.ts';
import { P, chunked, edgeNdjson } from './helpers.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

const edgeCount = (store: LogStore) => store.summary().find((s) => s.source === 'cloudflare.logs.prod')!.count;

describe('saves', () => {
  it('concurrent save() calls run one at a time, in call order, and all complete', async () => {
    const dir = tempDir();
    const store = await LogStore.open(dir);
    try {
      await importStream(store, [Buffer.from(edgeNdjson(3000))], { source: 'edge_logs' });
      let active = 0;
      let maxActive = 0;
      const events: string[] = [];
      const realExport = store.db.exportImage.bind(store.db);
      let n = 0;
      // A save starts at its export and ends when its file is renamed into place.
      vi.spyOn(store.db, 'exportImage').mockImplementation(() => {
        active++;
        maxActive = Math.max(maxActive, active);
        events.push(`start ${++n}`);
        return realExport();
      });
      const realRename = fs.promises.rename;
      vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
        await new Promise((r) => setTimeout(r, 5)); // widen the window an overlap would need
        await realRename(from, to);
        events.push(`end ${n}`);
        active--;
      });
      const saves = Array.from({ length: 10 }, () => store.save());
      // Imports save too; they queue behind the same lock.
      const imported = importStream(store, [Buffer.from(edgeNdjson(100, { prefix: 'during' }))], { source: 'edge_logs' });
      await Promise.all([...saves, imported]);
      expect(maxActive).toBe(1);
      expect(events).toHaveLength(22);
      for (let i = 0; i < events.length; i += 2) {
        expect(events[i]).toMatch(/^start (\d+)$/);
        expect(events[i + 1]).toBe(events[i]!.replace('start', 'end'));
      }
    } finally {
      vi.restoreAllMocks();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a failed save leaves no temp file behind and the previous store file in place', async () => {
    const dir = tempDir();
    const store = await LogStore.open(dir);
    try {
      await importStream(store, [Buffer.from(edgeNdjson(100))], { source: 'edge_logs' });
      const before = fs.readFileSync(path.join(dir, STORE_FILE));
      const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
      const realOpen = fs.promises.open;
      vi.spyOn(fs.promises, 'open').mockImplementationOnce(async (...args: Parameters<typeof fs.promises.open>) => {
        const handle = await realOpen(...args);
        // The write gets partway, then the disk is full.
        vi.spyOn(handle, 'writeFile').mockImplementationOnce(async (data) => {
          await realOpen(String(args[0]), 'w').then(async (h) => (await h.write(Buffer.from(data as Uint8Array).subarray(0, 1000)), h.close()));
          throw enospc;
        });
        return handle;
      });
      await expect(store.save()).rejects.toMatchObject({ code: 'ENOSPC', message: expect.stringMatching(/^cannot save the store: the disk is full/) });
      expect(fs.readdirSync(dir).sort()).toEqual(['records', STORE_FILE]);
      expect(fs.readFileSync(path.join(dir, STORE_FILE)).equals(before)).toBe(true);
      // Nothing in memory was lost; the next save works.
      expect(edgeCount(store)).toBe(100);
      await store.save();
    } finally {
      await store.close();
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
    const segmentFile = path.join(dir, 'records', 'edge_logs.ndjson');
    const copy = tempDir();
    fs.cpSync(dir, copy, { recursive: true });
    await store.close();
    const reopened = await LogStore.open(copy);
    try {
      expect(reopened.db.query('PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      const ids = reopened.db.query<{ id: string }>('SELECT id FROM edge_logs_ids');
      expect(ids.filter((r) => r.id.startsWith('acked'))).toHaveLength(500);
      // Every stored row can be read back from its segment.
      const rows = reopened.db.query<{ off: number; len: number }>('SELECT off, len FROM edge_logs');
      for (const r of rows) expect(() => JSON.parse(reopened.readRecord('cloudflare.logs.prod', r.off, r.len))).not.toThrow();
      expect(fs.statSync(segmentFile).size).toBeGreaterThan(0);
    } finally {
      await reopened.close();
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(copy, { recursive: true, force: true });
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
      expect(fs.readdirSync(data).sort()).toEqual(['records', STORE_FILE]);
      const rows = await request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`);
      expect(rows.status).toBe(200);
      expect(((await rows.json()) as { result: unknown[] }).result).toHaveLength(100);
      expect(edgeCount(store)).toBe(1000);

      // Space comes back: saving and importing work again, and everything is on disk.
      fs.rmSync(filler);
      await store.save();
      const again = await request('/api/imports?source=edge_logs', { method: 'POST', body: edgeNdjson(3000, { prefix: 'nospace' }) });
      expect(again.status).toBe(200);
      expect(((await again.json()) as { result: { imported: number } }).result.imported).toBe(3000);
      await store.close();
      const reopened = await LogStore.open(data);
      expect(edgeCount(reopened)).toBe(4000);
      expect(reopened.db.query('PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      await reopened.close();
    } finally {
      await store.close().catch(() => undefined);
      unmount();
    }
  });
});
