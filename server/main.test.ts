import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LogStore } from './store/log-store.ts';
import { NOW, edgeRecord, tempDir } from './testing/fixtures.ts';

const root = path.resolve(import.meta.dirname, '..');
let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function startCli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const m = /Listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, listening, exited, output: () => out };
}

it('the real CLI imports, listens on 127.0.0.1, answers with the key, and saves on SIGTERM', async () => {
  dir = tempDir();
  const file = path.join(dir, 'edge_logs.ndjson');
  fs.writeFileSync(file, `${JSON.stringify(edgeRecord(NOW - 10, { id: 'cli-1' }))}\n`);
  const cli = startCli(['--data-dir', path.join(dir, 'data'), '--port', '0', '--now', '2026-11-22T10:30:45.123456Z', '--import', file], {
    LOG_EXPLORER_API_KEY: 'env-key',
  });
  const url = await cli.listening;
  const res = await fetch(`${url}/api/endpoints/logs.all?project=projaaaaaaaaaaaaaaaa&project_tier=FREE`, { headers: { 'X-API-KEY': 'env-key' } });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { result: Array<{ id: string }> }).result.map((r) => r.id)).toEqual(['cli-1']);
  expect((await fetch(`${url}/api/sources`)).status).toBe(401);
  expect(cli.output()).toContain('"imported":1');
  expect(cli.output()).not.toContain('API key:');
  cli.child.kill('SIGTERM');
  expect(await cli.exited).toBe(0);
  // Saved: the record is there when the folder is opened again (and the server's lock is gone).
  const store = await LogStore.open(path.join(dir, 'data'));
  try {
    expect(store.summary().find((s) => s.alias === 'edge_logs')?.count).toBe(1);
  } finally {
    await store.close();
  }
});

it('generates and prints a key when none is given', async () => {
  dir = tempDir();
  const cli = startCli(['--data-dir', dir, '--port', '0'], { LOG_EXPLORER_API_KEY: '' });
  const url = await cli.listening;
  const key = /API key: (\S+)/.exec(cli.output())?.[1];
  expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
  expect((await fetch(`${url}/api/sources`, { headers: { 'X-API-KEY': key! } })).status).toBe(200);
  cli.child.kill('SIGINT');
  expect(await cli.exited).toBe(0);
});

it('a second server on a held data folder says which process holds it and exits 2, with no stack trace', async () => {
  dir = tempDir();
  const dataDir = path.join(dir, 'data');
  const first = startCli(['--data-dir', dataDir, '--port', '0', '--api-key', 'k1']);
  const url = await first.listening;
  const pid = first.child.pid!;
  try {
    const second = startCli(['--data-dir', dataDir, '--port', '0', '--api-key', 'k2']);
    second.listening.catch(() => undefined);
    expect(await second.exited).toBe(2);
    const out = second.output();
    expect(out).toMatch(
      new RegExp(
        `^cannot start: the data folder ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another Log Explorer process \\(pid ${pid}, npm run serve, started \\S+\\); stop it or import through it\\n` +
          `Its API is at ${url}; \`npm run import -- --data-dir .+ FILE\\.\\.\\.\` imports through it\\.\\n$`,
      ),
    );
    expect(out).not.toContain('k1');
    // The first server is unaffected.
    expect((await fetch(`${url}/api/sources`, { headers: { 'X-API-KEY': 'k1' } })).status).toBe(200);
  } finally {
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
  }
  expect(fs.existsSync(path.join(dataDir, 'LOCK'))).toBe(false);
});
