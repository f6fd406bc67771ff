/**
 * `/api/logs/export` when it cannot finish: the answer is cut off without its final chunk (so
 * fetch, curl and a browser download all see a failure, never a short file that looks whole)
 * and the server's log gets one line saying why. And when it can: every matching record, in
 * pages that leave the event loop a turn in between.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rawExchange } from '../hardening/helpers.ts';
import { startServer, type RunningServer } from '../server.ts';
import { LogStore } from '../store/log-store.ts';
import { DAY, edgeRecord, importRecords, makeTestApp, NOW, tempDir, type TestApp } from '../testing/fixtures.ts';
import { formatIsoMicros } from '../time.ts';

const KEY = 'export-key-0123456789abcdef';
/** Every record of the fixtures lies within these four days. */
const RANGE = `start=${formatIsoMicros(NOW - 4 * DAY)}&end=${formatIsoMicros(NOW)}`;

let server: RunningServer | undefined;
let t: TestApp | undefined;
const dirs: string[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  await server?.close();
  server = undefined;
  await t?.close();
  t = undefined;
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** `n` edge records spread evenly over the three days before NOW (one partition a day), newest first. */
function spread(n: number, prefix = 'r') {
  return Array.from({ length: n }, (_, i) => edgeRecord(NOW - 1000 - Math.floor((i * 3 * DAY) / n), { id: `${prefix}${i}` }));
}

/** What the server wrote to its log (console.error), one string per call. */
function captureLog(): string[] {
  const lines: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : String(a))).join(' ')));
  return lines;
}

/** Reads a body to its end; `error` is what the read threw, if it did not end normally. */
async function readAll(body: ReadableStream<Uint8Array>, between?: (chunks: number) => Promise<void>): Promise<{ text: string; error: unknown }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let chunks = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, error: null };
      text += decoder.decode(value, { stream: true });
      await between?.(++chunks);
    }
  } catch (err) {
    return { text, error: err };
  }
}

/** `n` edge records within the nine hours before NOW: one day partition (not dense enough to split into hours). */
function recent(n: number) {
  return Array.from({ length: n }, (_, i) => edgeRecord(NOW - 1000 - Math.floor((i * 9 * 3600e6) / n), { id: `h${i}` }));
}

const ids = (ndjson: string) => ndjson.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { id: string }).id);

describe('an export that cannot finish, over a real HTTP connection', () => {
  /** A store of 3,000 records over three days whose oldest day's record block fails its check. */
  async function damagedServer(): Promise<{ dir: string; oldestRecords: string }> {
    const dir = tempDir('le-export-');
    dirs.push(dir);
    const store = await LogStore.open(dir);
    await importRecords(store, 'edge_logs', spread(3000));
    await store.close();
    const parts = path.join(dir, 'parts', 'edge_logs');
    const records = fs.readdirSync(parts).filter((f) => f.endsWith('.records')).sort();
    expect(records.length).toBeGreaterThanOrEqual(3);
    // The oldest partition is read last (newest first): the export fails well after it began.
    const oldest = path.join(parts, records[0]!);
    const bytes = fs.readFileSync(oldest);
    const mid = bytes.length >> 1;
    bytes[mid] = bytes[mid]! ^ 0xff;
    fs.writeFileSync(oldest, bytes);
    server = await startServer({ dataDir: dir, port: 0, apiKey: KEY, now: NOW });
    return { dir, oldestRecords: oldest };
  }

  it('is cut off: fetch’s body read rejects after some whole records, and the server logs one line without a path or a stack', async () => {
    const { dir } = await damagedServer();
    const log = captureLog();
    const res = await fetch(`${server!.url}/api/logs/export?source=edge_logs&${RANGE}&format=ndjson`, { headers: { 'x-api-key': KEY } });
    expect(res.status).toBe(200);
    const { text, error } = await readAll(res.body!);
    expect(error).toBeInstanceOf(Error);
    // What arrived is whole records, newest first, and not all of them.
    const got = ids(text);
    expect(text.endsWith('\n')).toBe(true);
    expect(got.length).toBeGreaterThan(0);
    expect(got.length).toBeLessThan(3000);
    expect(got.slice(0, 3)).toEqual(['r0', 'r1', 'r2']);

    const lines = log.filter((l) => l.startsWith('export of'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^export of edge_logs stopped after \d+ records, the connection was cut: a store file is damaged \(.+\); `npm run check` names it$/);
    for (const l of log) {
      expect(l).not.toContain(dir);
      expect(l).not.toMatch(/\n\s+at /);
    }
  });

  it('ends without the zero-length last chunk (curl and browsers report a partial transfer)', async () => {
    await damagedServer();
    captureLog();
    const r = await rawExchange(server!.port, [
      `GET /api/logs/export?source=edge_logs&${RANGE}&format=csv HTTP/1.1\r\nHost: 127.0.0.1:${server!.port}\r\nX-API-KEY: ${KEY}\r\nConnection: close\r\n\r\n`,
    ]);
    expect(r.status).toBe(200);
    const head = r.text.slice(0, r.text.indexOf('\r\n\r\n')).toLowerCase();
    expect(head).toContain('transfer-encoding: chunked');
    expect(r.text).toContain('id,timestamp,status,method,path,event_message,metadata');
    // A chunked body ends with "0\r\n\r\n" only when it is complete.
    expect(r.text.endsWith('\r\n0\r\n\r\n')).toBe(false);
  });

  it('a whole export ends with the last chunk, on the same server, once the damaged day is left out of the window', async () => {
    await damagedServer();
    captureLog();
    // Two days back from NOW: the newest two of the three days, 2,000 records by construction.
    const start = formatIsoMicros(NOW - 2 * DAY - 1000);
    const r = await rawExchange(server!.port, [
      `GET /api/logs/export?source=edge_logs&start=${start}&end=${formatIsoMicros(NOW)}&format=ndjson HTTP/1.1\r\nHost: 127.0.0.1:${server!.port}\r\nX-API-KEY: ${KEY}\r\nConnection: close\r\n\r\n`,
    ]);
    expect(r.status).toBe(200);
    expect(r.text.endsWith('\r\n0\r\n\r\n')).toBe(true);
    const res = await fetch(`${server!.url}/api/logs/export?source=edge_logs&start=${start}&end=${formatIsoMicros(NOW)}`, { headers: { 'x-api-key': KEY } });
    const { text, error } = await readAll(res.body!);
    expect(error).toBeNull();
    expect(ids(text)).toEqual(Array.from({ length: 2000 }, (_, i) => `r${i}`));
  });
});

describe('an export whose source is deleted while it runs', () => {
  it('over a real HTTP connection: cut off without the last chunk, and one line in the log', async () => {
    const dir = tempDir('le-export-');
    dirs.push(dir);
    server = await startServer({ dataDir: dir, port: 0, apiKey: KEY, now: NOW });
    await importRecords(server.store, 'edge_logs', spread(5000));
    const log = captureLog();
    // The deletion starts once 500 records were read: mid-export whatever the socket buffers.
    const read = server.store.readRecord.bind(server.store);
    let reads = 0;
    let deletion: Promise<number> | undefined;
    vi.spyOn(server.store, 'readRecord').mockImplementation((p, addr) => {
      if (++reads === 500) deletion = server!.store.deleteSource('cloudflare.logs.prod');
      return read(p, addr);
    });
    const r = await rawExchange(server.port, [
      `GET /api/logs/export?source=edge_logs&${RANGE} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nX-API-KEY: ${KEY}\r\nConnection: close\r\n\r\n`,
    ]);
    expect(await deletion).toBe(5000);
    expect(r.status).toBe(200);
    expect(r.text).toContain('"id":"r0"');
    expect(r.text.endsWith('\r\n0\r\n\r\n')).toBe(false);
    expect(log.filter((l) => l.startsWith('export of'))).toEqual([expect.stringMatching(/^export of edge_logs stopped after \d+ records, the connection was cut: .*deleted/)]);
  });

  it('errors its body instead of ending early, and logs why', async () => {
    t = await makeTestApp({ edge: spread(5000) });
    const log = captureLog();
    const res = await t.request(`/api/logs/export?source=edge_logs&${RANGE}`);
    expect(res.status).toBe(200);
    const { text, error } = await readAll(res.body!, async (chunks) => {
      if (chunks === 1) expect(await t!.store.deleteSource('cloudflare.logs.prod')).toBe(5000);
    });
    expect(error).toBeInstanceOf(Error);
    expect(ids(text).length).toBeLessThan(5000);
    expect(log.filter((l) => l.startsWith('export of'))).toEqual([
      // The reason is the store's (query.ts, sourceWatch): the source's records were deleted.
      expect.stringMatching(/^export of edge_logs stopped after \d+ records, the connection was cut: .*cloudflare\.logs\.prod were deleted/),
    ]);
  });
});

describe('an export that finishes', () => {
  it('gives the event loop a turn between pages (an import’s batches are not held up until it ends)', async () => {
    // One partition: the walk itself yields only between partitions and every 8,192 rows.
    t = await makeTestApp({ edge: recent(3000) });
    const res = await t.request(`/api/logs/export?source=edge_logs&${RANGE}`);
    // Scheduled once the first page is out: it runs before the last page only if pages yield.
    let chunksWhenItRan = -1;
    let chunks = 0;
    setImmediate(() => (chunksWhenItRan = chunks));
    const { text, error } = await readAll(res.body!, async (n) => void (chunks = n));
    expect(error).toBeNull();
    expect(ids(text)).toHaveLength(3000);
    expect(chunks).toBeGreaterThan(2);
    expect(chunksWhenItRan).toBeGreaterThanOrEqual(0);
    expect(chunksWhenItRan).toBeLessThan(chunks);
  });

  it('a text search whose matches are all far back exports each of them (a page that finds none in its time does not end it)', async () => {
    // 20,000 records; only every 1,000th of the oldest quarter has "needle" in its message. All
    // have it in their metadata, so no block is ruled out whole: each record is read and tested,
    // and pages of a few milliseconds find nothing for a long while.
    const recs = Array.from({ length: 20_000 }, (_, i) => {
      const r = edgeRecord(NOW - 1000 - Math.floor((i * 3 * DAY) / 20_000), { id: `s${i}` });
      const metadata = { ...r.metadata, note: 'a needle in the metadata only' };
      return { ...r, metadata, ...(i >= 15_000 && i % 1000 === 0 ? { event_message: `GET | 200 | needle ${i}` } : {}) };
    });
    t = await makeTestApp({ edge: recs });
    const res = await t.request(`/api/logs/export?source=edge_logs&${RANGE}&q=needle`);
    const { text, error } = await readAll(res.body!);
    expect(error).toBeNull();
    expect(ids(text)).toEqual(['s15000', 's16000', 's17000', 's18000', 's19000']);
  });

  it('cannot begin: an error status with the JSON envelope, not a 200', async () => {
    t = await makeTestApp({ edge: spread(10) });
    const res = await t.request(`/api/logs/export?source=edge_logs&${RANGE}&format=xml`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { code: 400, status: 'INVALID_ARGUMENT', message: 'format must be ndjson or csv', errors: [{ reason: 'invalid', location: 'format', message: 'format must be ndjson or csv' }] },
    });
  });
});
