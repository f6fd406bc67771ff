/**
 * Issue 7 (slow): `kill -9` at random points of imports and saves, 20 times over one data
 * folder. After every kill the store must open, pass PRAGMA integrity_check, hold at least
 * every record whose import was acknowledged, and read every stored record back.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { LogStore } from '../store/log-store.ts';
import { SOURCES } from '../sources.ts';
import { hotTable } from '../store/schema.ts';
import { tempDir } from '../testing/fixtures.ts';
import { ROOT, sleep } from './helpers.ts';

const ROUNDS = 20;
const dir = tempDir('le-crash-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs the worker until it has said `ready`, then kills it with SIGKILL after `delayMs`. */
async function runAndKill(prefix: string, delayMs: number): Promise<{ ready: number; acked: number; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join('server', 'hardening', 'crash-worker.ts'), path.join(dir, 'data'), prefix], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let ready = -1;
  let acked = -1;
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      for (const m of out.matchAll(/^(ready|ack) (\d+)$/gm)) {
        if (m[1] === 'ready') ready = Number(m[2]);
        else acked = Math.max(acked, Number(m[2]));
      }
      if (ready >= 0) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready: ${out}`)));
  });
  await sleep(delayMs);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return { ready, acked, output: out };
}

it(`kill -9 at ${ROUNDS} random points of imports and saves: the store always opens, is intact, and keeps every acknowledged import`, async () => {
  let mustHave = 0;
  const log: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const delay = Math.round(100 + Math.random() * 2500);
    const r = await runAndKill(`k${round}`, delay);
    // What the last worker acknowledged, it found on opening the store again.
    expect(r.ready, `round ${round}: opened with fewer records than acknowledged`).toBeGreaterThanOrEqual(mustHave);
    mustHave = Math.max(mustHave, r.acked);

    const store = await LogStore.open(path.join(dir, 'data'));
    try {
      expect(store.db.query('PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      const total = store.summary().reduce((n, s) => n + s.count, 0);
      expect(total, `round ${round}`).toBeGreaterThanOrEqual(mustHave);
      // Every row's record is in its segment, whole.
      for (const s of SOURCES) {
        const rows = store.db.query<{ off: number; len: number }>(`SELECT off, len FROM ${hotTable(s)}`);
        for (const row of rows) JSON.parse(store.readRecord(s.name, row.off, row.len));
        // Counts agree between the summary and the table.
        expect(store.summary().find((x) => x.source === s.name)!.count).toBe(rows.length);
      }
      expect(fs.existsSync(path.join(dir, 'data', 'store.sqlite.tmp'))).toBe(false);
      log.push(`round ${String(round).padStart(2)}: killed after ${String(delay).padStart(4)} ms; acknowledged ${r.acked < 0 ? '-' : r.acked}; store holds ${total}`);
      mustHave = total;
    } finally {
      await store.close();
    }
  }
  console.log(log.join('\n'));
  // The loop reached past the first save every time on average: the kills hit real work.
  expect(mustHave).toBeGreaterThan(0);
});
