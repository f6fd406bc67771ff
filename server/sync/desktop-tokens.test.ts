/**
 * What protects a token at rest, through the real server: browser mode keeps it in the
 * owner-only connections file; with the desktop app's key the file holds only ciphertext, and a
 * server without the key says what to do instead of using or losing the token.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import type { ConnectionView } from '../../contract/api-types.ts';
import { startServer, type RunningServer } from '../server.ts';
import { NOW, tempDir } from '../testing/fixtures.ts';
import { CONNECTIONS_FILE } from './connections.ts';
import { REF, TOKEN } from './testing.ts';

const dirs: string[] = [];
const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function serve(dataDir: string, tokenKey?: Buffer): Promise<RunningServer> {
  const s = await startServer({ dataDir, port: 0, apiKey: 'desktop-test-key-0123456789', now: NOW, ...(tokenKey ? { tokenKey } : {}) });
  servers.push(s);
  return s;
}

async function call<T>(s: RunningServer, p: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${s.url}${p}`, { ...init, headers: { 'x-api-key': s.apiKey, 'content-type': 'application/json' } });
  return ((await res.json()) as { result: T }).result;
}

it('desktop mode seals tokens with its key; without the key a server says so; a browser-mode token is sealed once the key is there', async () => {
  const dir = tempDir('le-tokens-');
  dirs.push(dir);
  const dataDir = path.join(dir, 'data');
  const key = Buffer.alloc(32, 9);
  // A loopback port nothing listens on: tests never leave 127.0.0.1 (the connections are paused at once anyway).
  const closed = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
  const body = (ref: string) => JSON.stringify({ kind: 'supabase', ref, url: `http://127.0.0.1:${closed}`, token: TOKEN, sources: ['edge_logs'] });

  const desktop = await serve(dataDir, key);
  const sealed = await call<ConnectionView>(desktop, '/api/connections', { method: 'POST', body: body(REF) });
  await call(desktop, `/api/connections/${sealed.id}`, { method: 'PATCH', body: JSON.stringify({ paused: true }) });
  expect(sealed.tokenProtection).toBe('os keychain key');
  const file = path.join(dataDir, CONNECTIONS_FILE);
  expect(fs.readFileSync(file, 'utf8')).not.toContain(TOKEN);
  expect(fs.readFileSync(file, 'utf8')).not.toContain(TOKEN.slice(4, 20));
  await servers.pop()!.close();

  // Browser mode: the sealed token cannot be opened here, and the connection says what to do.
  const browser = await serve(dataDir);
  await call(browser, `/api/connections/${sealed.id}`, { method: 'PATCH', body: JSON.stringify({ paused: false }) });
  // The resumed connection tries at once; on a busy machine that takes more than a moment.
  await vi.waitFor(
    async () => {
      const [seen] = await call<ConnectionView[]>(browser, '/api/connections');
      expect(seen!.tokenProtection).toBe('owner-only file');
      expect(seen!.sources['cloudflare.logs.prod']).toMatchObject({ state: 'failed', error: expect.stringContaining('desktop app') });
    },
    { timeout: 10_000, interval: 50 },
  );
  await call(browser, `/api/connections/${sealed.id}`, { method: 'PATCH', body: JSON.stringify({ paused: true }) });
  // A token entered in browser mode is kept as it is, in the owner-only file.
  const plain = await call<ConnectionView>(browser, '/api/connections', { method: 'POST', body: body('qqqqqqqqqqqqqqqqqqqq') });
  await call(browser, `/api/connections/${plain.id}`, { method: 'PATCH', body: JSON.stringify({ paused: true }) });
  expect(fs.readFileSync(file, 'utf8')).toContain(TOKEN);
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  await servers.pop()!.close();

  // Back in the desktop app: the browser-mode token is sealed at start.
  await serve(dataDir, key);
  for (let i = 0; i < 100 && fs.readFileSync(file, 'utf8').includes(TOKEN); i++) await new Promise((r) => setTimeout(r, 20));
  expect(fs.readFileSync(file, 'utf8')).not.toContain(TOKEN);
  const list = await call<ConnectionView[]>(servers[0]!, '/api/connections');
  expect(list.map((c) => c.token)).toEqual(['…4567', '…4567']);
});
