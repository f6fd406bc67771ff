import fs from 'node:fs';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../server/server.ts';
import { tempDir } from '../server/testing/fixtures.ts';
import { isRememberablePort, listenPreferring, PREFERRED_PORT_ENV, preferredPort, preferredPortEnv } from './port-choice.ts';

const open: Array<{ close(): unknown }> = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A plain TCP listener on 127.0.0.1 (0 = any free port). */
function listenTcp(port: number): Promise<{ port: number; close(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => {
      const handle = { port: (s.address() as net.AddressInfo).port, close: () => new Promise<void>((r) => s.close(() => r())) };
      open.push(handle);
      resolve(handle);
    });
  });
}

describe('the remembered port', () => {
  it('travels to the server process in its environment, only when it is an unprivileged port', () => {
    expect(preferredPortEnv(51234)).toEqual({ [PREFERRED_PORT_ENV]: '51234' });
    expect(preferredPortEnv(undefined)).toEqual({});
    for (const bad of [0, 80, 1023, 65536, 1.5, Number.NaN]) expect(preferredPortEnv(bad), String(bad)).toEqual({});
    expect(preferredPort({ [PREFERRED_PORT_ENV]: '51234' })).toBe(51234);
    for (const bad of ['', 'x', '80', '99999', '-5', '12e3', ' 4100']) expect(preferredPort({ [PREFERRED_PORT_ENV]: bad }), bad).toBe(0);
    expect(preferredPort({})).toBe(0);
    expect([1024, 65535].map(isRememberablePort)).toEqual([true, true]);
  });

  it('is taken again when it is free', async () => {
    const probe = await listenTcp(0);
    const port = probe.port;
    await probe.close();
    open.pop();
    const got = await listenPreferring(port, listenTcp);
    expect(got.port).toBe(port);
  });

  it('gives way to any free port when another process has it', async () => {
    const taken = await listenTcp(0);
    const got = await listenPreferring(taken.port, listenTcp);
    expect(got.port).not.toBe(taken.port);
    expect(got.port).toBeGreaterThan(0);
  });

  it('passes on other errors, and listens on any port when none is remembered', async () => {
    const boom = Object.assign(new Error('no'), { code: 'EMFILE' });
    await expect(listenPreferring(5000, () => Promise.reject(boom))).rejects.toBe(boom);
    const tried: number[] = [];
    await listenPreferring(0, async (p) => {
      tried.push(p);
      return listenTcp(p);
    });
    expect(tried).toEqual([0]);
  });

  it("works with the real server: a taken port releases the data folder's lock, so the retry opens it", async () => {
    const taken = await listenTcp(0);
    const dataDir = tempDir('le-port-');
    dirs.push(dataDir);
    const server: RunningServer = await listenPreferring(taken.port, (port) => startServer({ dataDir, port, lockKind: 'desktop' }));
    open.push(server);
    expect(server.port).not.toBe(taken.port);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });
});
