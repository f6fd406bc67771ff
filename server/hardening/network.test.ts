/**
 * Over real sockets to the real server: foreign Host (DNS rebinding) and Origin are
 * refused before routing; only loopback listens; oversized and slow header blocks are cut off
 * with the JSON envelope; what the server writes to disk is owner-only. Slow and
 * silent bodies are cut off (408) without touching busy servers or idle keep-alive connections.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SPEED_PATHS } from '../endpoints/speed-paths.ts';
import { P, edgeNdjson, httpRequest, rawExchange, rawJson, realServer, sleep, type RealServer } from './helpers.ts';

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
  it.skipIf(process.platform === 'win32')('the data folder and parts/ (and each source folder) are 0700; catalog.sqlite, urls.log, paths.log, LOCK and every partition file are 0600; no temp file is left', async () => {
    await s.store.save();
    await s.store.columnsSettled();
    const data = s.store.dataDir;
    const mode = (p: string) => fs.statSync(p).mode & 0o777;
    expect(mode(data)).toBe(0o700);
    expect(fs.readdirSync(data).sort()).toEqual(['LOCK', 'catalog.sqlite', 'parts', 'paths.log', 'urls.log']);
    expect(mode(path.join(data, 'catalog.sqlite'))).toBe(0o600);
    expect(mode(path.join(data, 'urls.log'))).toBe(0o600);
    expect(mode(path.join(data, 'paths.log'))).toBe(0o600);
    expect(mode(path.join(data, 'LOCK'))).toBe(0o600);
    const parts = path.join(data, 'parts');
    expect(mode(parts)).toBe(0o700);
    // Only edge records were imported (3, within one partition): one folder, one database
    // version, its columns file, one record file, its block index and its record texts, exactly the ones the
    // committed catalog names (the derived ones once the background builder is done).
    await s.store.columnsSettled();
    expect(fs.readdirSync(parts)).toEqual(['edge_logs']);
    expect(mode(path.join(parts, 'edge_logs'))).toBe(0o700);
    const [p, ...more] = s.store.partitions('cloudflare.logs.prod');
    expect(more).toEqual([]);
    const files = fs.readdirSync(path.join(parts, 'edge_logs')).sort();
    const db = path.basename(p!.dbFile(p!.row.version));
    expect(files).toEqual([db, db.replace(/\.sqlite$/, '.cols'), path.basename(p!.blocks.file), path.basename(p!.blocks.gramsFile), path.basename(p!.blocks.textsFile), path.basename(p!.blocks.tokensFile)].sort());
    for (const f of files) expect(mode(path.join(parts, 'edge_logs', f)), f).toBe(0o600);
  });
});

describe('request bodies: a window of 300 ms on this server', () => {
  let b: RealServer;
  let head: (method: string, target: string, extra?: string) => string;
  beforeAll(async () => {
    b = await realServer({ bodyTimeoutMs: 300 });
    head = (method, target, extra = '') => `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${b.port}\r\nX-API-KEY: ${b.apiKey}\r\n${extra}`;
  });
  afterAll(async () => {
    await b.stop();
  });

  function expect408(r: { status: number | undefined; text: string; closedAfterMs: number }, what: string) {
    expect(r.status, what).toBe(408);
    expect(r.text, what).toMatch(/\r\nconnection: close\r\n/i);
    expect(rawJson(r.text), what).toEqual({ error: expect.objectContaining({ code: 408, status: 'REQUEST_TIMEOUT' }) });
  }

  it('a body that stops arriving (endpoints, clock, imports; by length or chunked) is a 408 and the connection closes', async () => {
    const cases: Array<[string, string]> = [
      ['logs.all by length', `${head('POST', '/api/endpoints/logs.all', 'Content-Length: 100\r\n')}\r\n{"proj`],
      ['logs.all chunked', `${head('POST', '/api/endpoints/query/logs.all', 'Transfer-Encoding: chunked\r\n')}\r\n6\r\n{"proj\r\n`],
      ['clock', `${head('PUT', '/api/clock', 'Content-Length: 100\r\n')}\r\n{"mo`],
      ['imports', `${head('POST', '/api/imports?source=edge_logs', 'Content-Length: 100000\r\n')}\r\n${edgeNdjson(2, { prefix: 'stall' }).slice(0, 300)}`],
    ];
    for (const [what, text] of cases) {
      // The socket stays open on the client's side: only the server can end this exchange.
      const r = await rawExchange(b.port, [text], 0, 10_000);
      expect408(r, what);
      expect(r.closedAfterMs, what).toBeGreaterThanOrEqual(280);
      expect(r.closedAfterMs, what).toBeLessThan(3_000);
    }
    expect(b.store.summary().find((x) => x.alias === 'edge_logs')!.count).toBe(0);
  });

  it('a trickle (one byte every 50 ms) does not hold the connection: parameters must arrive within the window, uploads bring 16 KiB per window', async () => {
    const drip = Array.from({ length: 200 }, () => ' ');
    for (const [what, start] of [
      ['logs.all', `${head('POST', '/api/endpoints/logs.all', 'Content-Length: 1000\r\n')}\r\n`],
      ['imports', `${head('POST', '/api/imports?source=edge_logs', 'Content-Length: 1000\r\n')}\r\n`],
    ] as const) {
      const r = await rawExchange(b.port, [start, ...drip], 50, 15_000);
      expect408(r, what);
      // Cut within a few windows, not after the whole drip (10 s).
      expect(r.closedAfterMs, what).toBeLessThan(3_000);
    }
  });

  it('an upload slower than the window but steady (24 KiB every 150 ms, 3 s in all) is imported whole', async () => {
    const body = Buffer.from(edgeNdjson(1500, { prefix: 'steady' }));
    const parts: Buffer[] = [];
    for (let o = 0; o < body.length; o += 24 * 1024) parts.push(body.subarray(o, o + 24 * 1024));
    expect(parts.length).toBeGreaterThan(20);
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: b.port, method: 'POST', path: '/api/imports?source=edge_logs', agent: false, headers: { host: `127.0.0.1:${b.port}`, 'x-api-key': b.apiKey, 'content-length': String(body.length) } });
      req.on('response', (r) => {
        let text = '';
        r.on('data', (d: Buffer) => (text += d.toString()));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      void (async () => {
        for (const part of parts) {
          req.write(part);
          await sleep(150);
        }
        req.end();
      })();
    });
    expect(res.status, res.text).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ result: { imported: 1500, rejected: 0 } });
  });

  /** A socket whose writes the test times itself; resolves with all the server wrote once it closes. */
  function openExchange(): Promise<{ socket: net.Socket; reply: Promise<string> }> {
    return new Promise((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port: b.port }, () => resolve({ socket, reply }));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (text += d));
      socket.on('error', () => undefined);
      const reply = new Promise<string>((done) => socket.on('close', () => done(text)));
    });
  }
  const busyFor = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };

  it('a busy server is not a silent client: the event loop stalled past the window while the rest of the body sat in the socket', async () => {
    // A project with no records: the answer is known whatever the other tests imported.
    const body = JSON.stringify({ project: 'projzzzzzzzzzzzzzzzz', project_tier: 'FREE' });
    const { socket, reply } = await openExchange();
    socket.write(`${head('POST', '/api/endpoints/logs.all', `Content-Length: ${body.length}\r\nConnection: close\r\n`)}\r\n${body.slice(0, 10)}`);
    // The server is reading the body now; the rest reaches its socket, then the process is busy
    // for 1 s (a long synchronous query would do the same), well past the 300 ms window.
    await sleep(100);
    socket.write(body.slice(10));
    busyFor(1_000);
    const text = await reply;
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(rawJson(text)).toEqual({ result: [] });
  });

  it('a query computing longer than the window, the client waiting in silence, is answered', async () => {
    const paths = SPEED_PATHS as unknown as Record<string, (...a: unknown[]) => unknown>;
    const original = paths['partitioned-logs-all']!;
    const spy = vi.spyOn(paths, 'partitioned-logs-all').mockImplementation((...a: unknown[]) => {
      busyFor(800);
      return original(...a);
    });
    try {
      const body = JSON.stringify({ project: P, project_tier: 'FREE' });
      const r = await rawExchange(b.port, [`${head('POST', '/api/endpoints/logs.all', `Content-Length: ${body.length}\r\nConnection: close\r\n`)}\r\n${body}`], 0, 10_000);
      expect(r.status).toBe(200);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('an idle keep-alive connection between complete requests is left alone', async () => {
    // Two requests on one connection, 800 ms (more than two windows) apart.
    const r = await rawExchange(b.port, [`${head('GET', '/api/sources')}\r\n`, `${head('GET', '/api/clock', 'Connection: close\r\n')}\r\n`], 800, 10_000);
    expect(r.text.match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(800);
  });

  it('a body nobody reads (of a GET, of a refused request) cannot hold the connection once it is answered', async () => {
    const drip = Array.from({ length: 100 }, () => 'x');
    for (const [what, start, status] of [
      ['GET with a body', `${head('GET', '/api/sources', 'Content-Length: 1000\r\n')}\r\n`, 200],
      ['wrong key', `POST /api/imports?source=edge_logs HTTP/1.1\r\nHost: 127.0.0.1:${b.port}\r\nX-API-KEY: wrong\r\nContent-Length: 1000\r\n\r\n`, 401],
    ] as const) {
      const r = await rawExchange(b.port, [start, ...drip], 50, 15_000);
      expect(r.status, what).toBe(status);
      // Not after the whole drip (5 s).
      expect(r.closedAfterMs, what).toBeLessThan(2_000);
    }
  });
});
