/**
 * Issue 7, over real sockets to the real server: foreign Host (DNS rebinding) and Origin are
 * refused before routing; only loopback listens; oversized and slow header blocks are cut off
 * with the JSON envelope; what the server writes to disk is owner-only.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { P, edgeNdjson, httpRequest, rawExchange, rawJson, realServer, type RealServer } from './helpers.ts';

let s: RealServer;
beforeAll(async () => {
  s = await realServer({ headersTimeoutMs: 1_000 });
  const res = await httpRequest(s.port, '/api/imports?source=edge_logs', { method: 'POST', headers: { host: `127.0.0.1:${s.port}`, 'x-api-key': s.apiKey }, body: edgeNdjson(3) });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await s.stop();
});

function envelope(body: string) {
  return (JSON.parse(body) as { error: { code: number; status: string; message: string } }).error;
}

describe('Host header (DNS rebinding)', () => {
  it('evil.com, localhost.evil.com and 127.0.0.1.nip.io (with the right port and key) are 403 before routing', async () => {
    const hosts = ['evil.com', 'localhost.evil.com', '127.0.0.1.nip.io', '127.0.0.2', '0.0.0.0', 'localhost.'].map((h) => `${h}:${s.port}`);
    hosts.push('127.0.0.1', 'localhost', `127.0.0.1:${s.port + 1}`);
    const before = s.store.summary();
    for (const host of hosts) {
      // Routes that would answer, one that would write, one that does not exist, and the page.
      for (const [p, method, body] of [
        [`/api/endpoints/logs.all?project=${P}&project_tier=FREE`, 'GET', undefined],
        ['/api/imports?source=edge_logs', 'POST', edgeNdjson(2, { prefix: 'rebind' })],
        ['/api/sources/edge_logs', 'DELETE', undefined],
        ['/no/such/route', 'GET', undefined],
        ['/', 'GET', undefined],
      ] as const) {
        const res = await httpRequest(s.port, p, { method, headers: { host, 'x-api-key': s.apiKey }, body });
        expect(res.status, `${host} ${method} ${p}`).toBe(403);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(envelope(res.body)).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' });
        expect(res.body).not.toContain('"result"');
      }
    }
    expect(s.store.summary()).toEqual(before);
  });

  it('a Host the HTTP adapter cannot parse as a URL host is refused by the adapter (400) before the app', async () => {
    for (const host of [`[::ffff:127.0.0.1]:${s.port}`, `127.0.0.1:${s.port}.evil.com`, `127.0.0.1:${s.port}@evil.com`, `evil.com/x`]) {
      const res = await httpRequest(s.port, '/api/sources', { headers: { host, 'x-api-key': s.apiKey } });
      expect([400, 403], host).toContain(res.status);
      expect(res.body).not.toContain('"result"');
    }
  });

  it('a request with no Host at all (HTTP/1.0) is refused too', async () => {
    const r = await rawExchange(s.port, [`GET /api/sources HTTP/1.0\r\nX-API-KEY: ${s.apiKey}\r\n\r\n`]);
    expect(r.status).toBe(403);
  });

  it('an absolute-form request line naming another host does not get around the Host check', async () => {
    const r = await rawExchange(s.port, [`GET http://127.0.0.1:${s.port}/api/sources HTTP/1.1\r\nHost: evil.com:${s.port}\r\nX-API-KEY: ${s.apiKey}\r\nConnection: close\r\n\r\n`]);
    expect(r.status).toBe(403);
  });

  it('the loopback names the server listens under are accepted', async () => {
    for (const host of [`127.0.0.1:${s.port}`, `localhost:${s.port}`, `LOCALHOST:${s.port}`, `[::1]:${s.port}`]) {
      const res = await httpRequest(s.port, '/api/sources', { headers: { host, 'x-api-key': s.apiKey } });
      expect(res.status, host).toBe(200);
    }
  });
});

describe('Origin and CORS', () => {
  it('a foreign Origin and a preflight are 403 with no Access-Control-Allow-* header, even with the key', async () => {
    const host = `127.0.0.1:${s.port}`;
    for (const origin of ['https://evil.com', `http://evil.com:${s.port}`, 'null', `https://${host}`, `http://localhost:${s.port}`, 'file://']) {
      const get = await httpRequest(s.port, `/api/endpoints/logs.all?project=${P}&project_tier=FREE`, { headers: { host, origin, 'x-api-key': s.apiKey } });
      expect(get.status, origin).toBe(403);
      const pre = await httpRequest(s.port, '/api/sources', {
        method: 'OPTIONS',
        headers: { host, origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' },
      });
      expect(pre.status, origin).toBe(403);
      for (const r of [get, pre]) {
        expect(Object.keys(r.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
        expect(envelope(r.body).code).toBe(403);
      }
    }
    // A preflight from the app's own origin is still refused: the app never needs one.
    const own = await httpRequest(s.port, '/api/sources', { method: 'OPTIONS', headers: { host, origin: `http://${host}` } });
    expect(own.status).toBe(403);
    expect((await httpRequest(s.port, '/api/sources', { headers: { host, origin: `http://${host}`, 'x-api-key': s.apiKey } })).status).toBe(200);
  });
});

describe('listening', () => {
  const external = Object.values(os.networkInterfaces())
    .flat()
    .filter((a): a is os.NetworkInterfaceInfo => !!a && !a.internal);

  it.skipIf(external.length === 0)('is not reachable on any non-loopback address of this machine', async () => {
    for (const a of external) {
      const host = a.family === 'IPv6' && a.scopeid ? `${a.address}%${a.scopeid}` : a.address;
      const outcome = await new Promise<string>((resolve) => {
        const sock = net.connect({ host, port: s.port, family: a.family === 'IPv6' ? 6 : 4 });
        sock.setTimeout(2_000, () => {
          sock.destroy();
          resolve('timeout');
        });
        sock.once('connect', () => {
          sock.destroy();
          resolve('connected');
        });
        sock.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      });
      expect(outcome, `${a.family} ${host}:${s.port}`).not.toBe('connected');
    }
  });

  it('is reachable on 127.0.0.1 (the control for the test above)', async () => {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = net.connect({ host: '127.0.0.1', port: s.port }, () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    expect(ok).toBe(true);
  });
});

describe('header limits', () => {
  it('a header block over 16 KiB is a 431 with the JSON envelope, and the connection is closed', async () => {
    const r = await rawExchange(s.port, [`GET /api/sources HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nX-API-KEY: ${s.apiKey}\r\nX-Filler: ${'f'.repeat(17 * 1024)}\r\n\r\n`]);
    expect(r.status).toBe(431);
    expect(r.text).toMatch(/content-type: application\/json; charset=utf-8/i);
    expect(rawJson(r.text)).toEqual({
      error: expect.objectContaining({ code: 431, status: 'REQUEST_HEADER_FIELDS_TOO_LARGE' }),
    });
  });

  it('many small headers adding up past 16 KiB are a 431 too; just under the limit is fine', async () => {
    const many = Array.from({ length: 400 }, (_, i) => `X-H${i}: ${'v'.repeat(40)}\r\n`).join('');
    const over = await rawExchange(s.port, [`GET /api/sources HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nX-API-KEY: ${s.apiKey}\r\n${many}\r\n`]);
    expect(over.status).toBe(431);
    const under = await httpRequest(s.port, '/api/sources', { headers: { host: `127.0.0.1:${s.port}`, 'x-api-key': s.apiKey, 'x-filler': 'f'.repeat(14 * 1024) } });
    expect(under.status).toBe(200);
  });

  it('a malformed request line is a 400 with the JSON envelope', async () => {
    const r = await rawExchange(s.port, ['NOT HTTP AT ALL\r\n\r\n']);
    expect(r.status).toBe(400);
    expect(rawJson(r.text)).toEqual({ error: expect.objectContaining({ code: 400, status: 'INVALID_ARGUMENT' }) });
  });

  it('headers sent slowly are dropped with a 408 once the headers timeout passes', async () => {
    const head = `GET /api/sources HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nX-API-KEY: ${s.apiKey}\r\n`;
    // One header byte every 100 ms: never finishes within the 1 s headers timeout of this server.
    const drip = Array.from({ length: 100 }, () => 'x');
    const r = await rawExchange(s.port, [head, 'X-Slow: ', ...drip], 100, 15_000);
    expect(r.status).toBe(408);
    expect(rawJson(r.text)).toEqual({ error: expect.objectContaining({ code: 408, status: 'REQUEST_TIMEOUT' }) });
    // Cut near the limit, not after the whole drip (10 s).
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(900);
    expect(r.closedAfterMs).toBeLessThan(4_000);
  });

  it('a connection that opens and sends nothing is closed too', async () => {
    const r = await rawExchange(s.port, [], 0, 15_000);
    expect(r.closedAfterMs).toBeLessThan(4_000);
  });
});

describe('files on disk', () => {
  it.skipIf(process.platform === 'win32')('the data folder and parts/ (and each source folder) are 0700; catalog.sqlite, urls.log, LOCK and every partition file are 0600; no temp file is left', async () => {
    await s.store.save();
    const data = s.store.dataDir;
    const mode = (p: string) => fs.statSync(p).mode & 0o777;
    expect(mode(data)).toBe(0o700);
    expect(fs.readdirSync(data).sort()).toEqual(['LOCK', 'catalog.sqlite', 'parts', 'urls.log']);
    expect(mode(path.join(data, 'catalog.sqlite'))).toBe(0o600);
    expect(mode(path.join(data, 'urls.log'))).toBe(0o600);
    expect(mode(path.join(data, 'LOCK'))).toBe(0o600);
    const parts = path.join(data, 'parts');
    expect(mode(parts)).toBe(0o700);
    // Only edge records were imported (3, within one partition): one folder, one database
    // version and one record file, exactly the ones the committed catalog names.
    expect(fs.readdirSync(parts)).toEqual(['edge_logs']);
    expect(mode(path.join(parts, 'edge_logs'))).toBe(0o700);
    const [p, ...more] = s.store.partitions('cloudflare.logs.prod');
    expect(more).toEqual([]);
    const files = fs.readdirSync(path.join(parts, 'edge_logs')).sort();
    expect(files).toEqual([path.basename(p!.dbFile(p!.row.version)), path.basename(p!.blocks.file)].sort());
    for (const f of files) expect(mode(path.join(parts, 'edge_logs', f)), f).toBe(0o600);
  });
});
