/**
 * The file of what the sync's cards show (state.ts) on its own: written whole, read back, and a
 * file that cannot be read ignored with one logged line. The restarts of a real sync are in
 * sync.test.ts ("restarts") and crash.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { tempDir } from '../testing/fixtures.ts';
import { SYNC_STATE_FILE, SyncStateFile, type SavedState } from './state.ts';

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function folder(): string {
  const d = tempDir('le-sync-state-');
  dirs.push(d);
  return d;
}

const STATE: SavedState = {
  connections: {
    c1: {
      auth: null,
      rateLimited: { until: 1_782_129_720_000_000, message: 'ThrottlerException: Too Many Requests' },
      sources: {
        'cloudflare.logs.prod': { syncedAt: 1_782_129_630_000_000, refused: null, backoff: null, warnings: ['1 record of a page could not be stored: no timestamp'] },
        'postgres.logs': { syncedAt: null, refused: { message: 'Not found: Table postgres_logs', status: 400 }, backoff: { until: 1_782_129_640_000_000, count: 2, message: 'Bad Gateway', kind: 'remote', status: 502 }, warnings: [] },
      },
    },
  },
  budget: [{ at: 1_782_129_600_000_000, who: 'c1' }],
};

it('writes the whole state (no temp file left) and reads it back; a leftover temp file is removed at open', async () => {
  const dir = folder();
  const file = SyncStateFile.open(dir, () => STATE);
  expect(file.loaded).toEqual({ connections: {}, budget: [] });
  await file.flush();
  expect(fs.readdirSync(dir)).toEqual([SYNC_STATE_FILE]);
  fs.writeFileSync(path.join(dir, `${SYNC_STATE_FILE}.tmp`), '{"half');
  expect(SyncStateFile.open(dir, () => STATE).loaded).toEqual(STATE);
  expect(fs.readdirSync(dir)).toEqual([SYNC_STATE_FILE]);
});

it('changes are written once after the delay, not once each', async () => {
  const dir = folder();
  let snapshots = 0;
  const file = SyncStateFile.open(dir, () => (snapshots++, STATE), 20);
  for (let i = 0; i < 10; i++) file.changed();
  await vi.waitUntil(() => snapshots > 0, { timeout: 5000, interval: 20 });
  // Well past the delay again: still the one write.
  await new Promise((r) => setTimeout(r, 200));
  expect(snapshots).toBe(1);
  expect(SyncStateFile.open(dir, () => STATE).loaded).toEqual(STATE);
});

it('a file that cannot be read (not JSON, another shape) is ignored with one logged line each', () => {
  const dir = folder();
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  for (const [text, problem] of [
    ['{"version": 1, "conn', /not JSON/],
    [JSON.stringify({ version: 2, connections: {}, budget: [] }), /unexpected content at version/],
    [JSON.stringify({ ...STATE, version: 1, budget: [{ at: 'soon', who: 'c1' }] }), /unexpected content at budget\.0\.at/],
  ] as const) {
    fs.writeFileSync(path.join(dir, SYNC_STATE_FILE), text);
    warn.mockClear();
    expect(SyncStateFile.open(dir, () => STATE).loaded).toEqual({ connections: {}, budget: [] });
    expect(warn.mock.calls).toEqual([[expect.stringMatching(problem)]]);
    expect(warn.mock.calls[0]![0]).toMatch(/ignored it, the syncs resume from the store's cursors/);
  }
});
