/**
 * Hostile import input: broken, blank, BOM/CRLF and truncated lines; Latin-1 CSV;
 * invalid UTF-8 and NUL bytes; a 50 MB line; uploads over the limit; the same file twice; and
 * a server killed in the middle of an import.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ImportRun } from '../../contract/api-types.ts';
import type { ImportReport } from '../ingest/import.ts';
import { importStream } from '../ingest/import.ts';
import { activeParseWorkers } from '../ingest/parse-host.ts';
import { MAX_LINE_BYTES } from '../ingest/formats.ts';
import { LogStore } from '../store/log-store.ts';
import { NOW, edgeRecord, makeTestApp, tempDir, type TestApp } from '../testing/fixtures.ts';
import { P, chunked, edgeNdjson, httpRequest, rawExchange, rawJson, realServer, sleep, startCli, storeProblems, type RealServer } from './helpers.ts';

let t: TestApp | undefined;
let s: RealServer | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await t?.close();
  t = undefined;
  await s?.stop();
  s = undefined;
});

async function upload(app: TestApp, body: string | Buffer, query = 'source=edge_logs') {
  const res = await app.request(`/api/imports?${query}`, { method: 'POST', body });
  return { status: res.status, json: (await res.json()) as { result?: ImportReport; error?: { code: number; message: string } } };
}

async function storedIds(app: TestApp): Promise<string[]> {
  const res = await app.request(`/api/endpoints/logs.all?project=${P}&project_tier=ENTERPRISE`);
  return ((await res.json()) as { result: Array<{ id: string }> }).result.map((r) => r.id).sort();
}

const line = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ ...edgeRecord(NOW - 1000, { id }), ...extra });

describe('NDJSON line by line', () => {
  it('a BOM, CRLF ends, blank lines, a bad line and a truncated last line: good lines kept, bad ones reported by line', async () => {
    t = await makeTestApp();
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(
        [line('a'), '', '   ', line('b'), '{"id": "c", "timestamp": oops}', line('d'), '', line('e').slice(0, 40)].join('\r\n'),
      ),
    ]);
    const { status, json } = await upload(t, body);
    expect(status).toBe(200);
    expect(json.result).toMatchObject({ format: 'ndjson', imported: 3, duplicates: 0, rejected: 2 });
    expect(json.result!.errors.map((e) => e.line)).toEqual([5, 8]);
    expect(json.result!.errors[0]!.reason).toMatch(/^invalid JSON/);
    expect(json.result!.errors[1]!.reason).toMatch(/^invalid JSON/);
    expect(await storedIds(t)).toEqual(['a', 'b', 'd']);
  });

  it('invalid UTF-8 rejects its line (NDJSON must be UTF-8, and lines are stored as they came); the others are kept', async () => {
    t = await makeTestApp();
    const bad = Buffer.from(line('bad', { event_message: 'caf\u00e9' }), 'latin1'); // é as the single byte 0xE9
    const overlong = Buffer.concat([Buffer.from(line('overlong').slice(0, -1) + ',"x":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]);
    const body = Buffer.concat([Buffer.from(line('ok1') + '\n'), bad, Buffer.from('\n'), overlong, Buffer.from('\n' + line('ok2') + '\n')]);
    const { json } = await upload(t, body);
    expect(json.result).toMatchObject({ imported: 2, rejected: 2, errors: [{ line: 2, reason: 'invalid UTF-8' }, { line: 3, reason: 'invalid UTF-8' }] });
    expect(await storedIds(t)).toEqual(['ok1', 'ok2']);
  });

  it('NUL: a raw NUL byte rejects its line; an escaped \\u0000 in an id or project rejects the record; in a message it is kept', async () => {
    t = await makeTestApp();
    const body = [
      line('raw').replace('GET', 'G\u0000ET'),
      line('nul-id\u0000x'),
      JSON.stringify({ ...edgeRecord(NOW - 1000, { id: 'nul-project', project: `${P}\u0000evil` }) }),
      line('nul-message', { event_message: 'a\u0000b' }),
      line('clean'),
    ].join('\n');
    const { json } = await upload(t, body);
    expect(json.result).toMatchObject({
      imported: 2,
      rejected: 3,
      errors: [
        { line: 1, reason: 'contains a NUL byte' },
        { line: 2, reason: 'id contains a NUL character' },
        { line: 3, reason: 'project contains a NUL character' },
      ],
    });
    expect(await storedIds(t)).toEqual(['clean', 'nul-message']);
    // No project that prints like the real one but is another string reaches the listing.
    const sources = ((await (await t.request('/api/sources')).json()) as { result: Array<{ source: string; projects: Array<{ ref: string }> }> }).result;
    expect(sources.find((x) => x.source === 'cloudflare.logs.prod')!.projects).toEqual([{ ref: P, count: 2 }]);
    const rows = ((await (await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`)).json()) as { result: Array<{ id: string; event_message: string }> }).result;
    expect(rows.find((r) => r.id === 'nul-message')!.event_message).toBe('a\u0000b');
  });

  it(`a single 50 MB line is skipped and counted, the lines around it imported, without buffering it`, async () => {
    t = await makeTestApp();
    const huge = Buffer.alloc(50 * 1024 * 1024, 0x61);
    huge.write('{"id":"huge","event_message":"', 0);
    const body = Buffer.concat([Buffer.from(line('before') + '\n'), huge, Buffer.from('\n' + line('after') + '\n')]);
    // Buffers live outside the JS heap: arrayBuffers is what counts them.
    const before = process.memoryUsage().arrayBuffers;
    let peak = 0;
    const report = await importStream(
      t.store,
      (async function* () {
        for (const c of chunked(body, 1 << 20)) {
          peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
          yield c;
        }
      })(),
      { source: 'edge_logs' },
    );
    expect(report).toMatchObject({ imported: 2, rejected: 1, errors: [{ line: 2, reason: `line longer than ${MAX_LINE_BYTES} bytes` }] });
    expect(await storedIds(t)).toEqual(['after', 'before']);
    // At most one line limit (16 MiB) is ever held, never the 50 MB line.
    expect(peak).toBeLessThan(40 * 1024 * 1024);
  });
});

describe('CSV in Windows-1252 (Latin-1), as spreadsheet tools save it', () => {
  const header = 'id,timestamp,project,event_message,metadata\r\n';
  const meta = (msg: string) => `"${JSON.stringify({ request: { url: `https://${P}.supabase.co/rest/v1/${msg}`, path: `/rest/v1/${msg}` }, response: { status_code: 200 } }).replace(/"/g, '""')}"`;

  it('bytes that are not UTF-8 are read as Windows-1252, the rows imported, and the report says which lines', async () => {
    t = await makeTestApp();
    const rows = [
      `utf8row,2026-11-22T10:00:00Z,${P},déjà vu,${meta('ok')}\r\n`,
      // Latin-1 / Windows-1252 bytes: é = E9, € = 80, ü = FC, „ = 84
      `latin1row,2026-11-22T10:00:01Z,${P},caf\u00e9 \u0080 5 \u00fcber \u0084quoted\u0093,${meta('x')}\r\n`,
      `plain,2026-11-22T10:00:02Z,${P},just ascii,${meta('y')}\r\n`,
    ];
    const body = Buffer.concat([Buffer.from(header + rows[0]!, 'utf8'), Buffer.from(rows[1]!, 'latin1'), Buffer.from(rows[2]!, 'utf8')]);
    // Split inside the multi-byte UTF-8 "é" of the first row, too.
    const { json } = await upload(t, body, 'source=edge_logs');
    expect(json.result).toMatchObject({ format: 'csv', imported: 3, rejected: 0, recoded: { encoding: 'windows-1252', lines: 1, firstLine: 3 } });
    const res = await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE&iso_timestamp_start=2026-11-22T09:00:00Z`);
    const got = ((await res.json()) as { result: Array<{ id: string; event_message: string }> }).result;
    expect(Object.fromEntries(got.map((r) => [r.id, r.event_message]))).toEqual({
      utf8row: 'déjà vu',
      latin1row: 'café € 5 über „quoted“',
      plain: 'just ascii',
    });
  });

  it('valid UTF-8 CSV is read as UTF-8 (no recoded field), even split mid-character across chunks', async () => {
    t = await makeTestApp();
    const body = Buffer.from(`${header}u1,2026-11-22T10:00:00Z,${P},naïve café ✓ 日本,${meta('a')}\r\n`, 'utf8');
    const report = await importStream(t.store, chunked(body, 7), { source: 'edge_logs' });
    expect(report).toMatchObject({ imported: 1, rejected: 0 });
    expect(report).not.toHaveProperty('recoded');
    const got = ((await (await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE`)).json()) as { result: Array<{ event_message: string }> }).result;
    expect(got[0]!.event_message).toBe('naïve café ✓ 日本');
  });

  it('a Latin-1 byte split from its neighbours by a chunk boundary is still recoded, with the right line', async () => {
    t = await makeTestApp();
    const text = `${header}${Array.from({ length: 5 }, (_, i) => `r${i},2026-11-22T10:00:0${i}Z,${P},${i === 3 ? 'Gr\u00fc\u00dfe' : 'ok'},${meta('z')}\r\n`).join('')}`;
    const report = await importStream(t.store, chunked(Buffer.from(text, 'latin1'), 3), { source: 'edge_logs' });
    expect(report).toMatchObject({ imported: 5, recoded: { encoding: 'windows-1252', lines: 1, firstLine: 5 } });
  });

  it('a raw NUL byte in a CSV cell rejects the row, as in NDJSON', async () => {
    t = await makeTestApp();
    const body = `${header}n1,2026-11-22T10:00:00Z,${P},bad\u0000cell,${meta('a')}\r\nn2,2026-11-22T10:00:01Z,${P},fine,${meta('b')}\r\n`;
    const { json } = await upload(t, body);
    expect(json.result).toMatchObject({ imported: 1, rejected: 1, errors: [{ line: 2, reason: 'contains a NUL byte' }] });
  });
});

describe('upload size limit', () => {
  it('over the limit by Content-Length: 413 before the body is read; by a chunked body: 413, and nothing is stored', async () => {
    s = await realServer({ maxUploadBytes: 1024 * 1024 });
    const host = `127.0.0.1:${s.port}`;
    const before = s.store.summary();
    // Declared 10 GB, never sent: the answer comes without waiting for it.
    const declared = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: s!.port, method: 'POST', path: '/api/imports?source=edge_logs', headers: { host, 'x-api-key': s!.apiKey, 'content-length': String(10 * 1024 ** 3) } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(declared).toBe(413);
    // Chunked (no length): 2 MB of real records, cut at 1 MB.
    const body = Buffer.from(edgeNdjson(6000, { prefix: 'chunked' }));
    expect(body.length).toBeGreaterThan(2 * 1024 * 1024);
    const chunkedRes = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: s!.port, method: 'POST', path: '/api/imports?source=edge_logs', headers: { host, 'x-api-key': s!.apiKey, 'transfer-encoding': 'chunked' } });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      for (const c of chunked(body, 64 * 1024)) req.write(c);
      req.end();
    });
    expect(chunkedRes.status).toBe(413);
    expect(JSON.parse(chunkedRes.text)).toMatchObject({ error: { code: 413, status: 'PAYLOAD_TOO_LARGE', message: 'the upload is larger than the limit of 1048576 bytes' } });
    expect(s.store.summary()).toEqual(before);
    // Under the limit is fine.
    const small = await httpRequest(s.port, '/api/imports?source=edge_logs', { method: 'POST', headers: { host, 'x-api-key': s.apiKey }, body: edgeNdjson(10) });
    expect(small.status).toBe(200);
  });
});

describe('decompressed size limit (a gzip upload counts its content too)', () => {
  it('a gzip body within the limit whose content passes it: 413 naming the body, and nothing of it is kept, batches written before included', async () => {
    const limit = 2 * 1024 * 1024;
    s = await realServer({ maxUploadBytes: limit });
    const headers = { host: `127.0.0.1:${s.port}`, 'x-api-key': s.apiKey };
    expect((await httpRequest(s.port, '/api/imports?source=edge_logs', { method: 'POST', headers, body: edgeNdjson(3, { prefix: 'kept' }) })).status).toBe(200);
    const before = s.store.summary();
    const text = edgeNdjson(20_000, { prefix: 'inflated' });
    const gz = gzipSync(text);
    expect(text.length).toBeGreaterThan(3 * limit);
    expect(gz.length).toBeLessThan(limit);
    const res = await httpRequest(s.port, '/api/imports?source=edge_logs&id=inflated', { method: 'POST', headers, body: gz });
    expect(res.status).toBe(413);
    const message = `the decompressed size of the body passed the limit of ${limit} bytes; the import failed and nothing from this file was kept (a failed import leaves the store as it was)`;
    expect(JSON.parse(res.body)).toEqual({ error: { code: 413, status: 'PAYLOAD_TOO_LARGE', message, errors: [{ reason: 'too_large', location: 'body', message }] } });
    expect(s.store.summary()).toEqual(before);
    const list = JSON.parse((await httpRequest(s.port, '/api/imports', { headers })).body) as { result: ImportRun[] };
    const run = list.result.find((r) => r.id === 'inflated')!;
    expect(run).toMatchObject({ state: 'failed', error: message });
    // Batches had been written before the limit was passed: the rollback undid them.
    expect(run.records).toBeGreaterThanOrEqual(1000);
    // The same content under a limit it fits in imports whole.
    expect(JSON.parse((await httpRequest(s.port, '/api/imports?source=edge_logs', { method: 'POST', headers, body: gzipSync(edgeNdjson(2000, { prefix: 'fits' })) })).body)).toMatchObject({
      result: { imported: 2000, rejected: 0 },
    });
  });
});

describe('an import whose client leaves (a gzip bomb)', () => {
  it('the import stops and keeps nothing, and the next import starts and succeeds within 20 s', async () => {
    s = await realServer();
    const port = s.port;
    const headers = { host: `127.0.0.1:${port}`, 'x-api-key': s.apiKey };
    // 3000 distinct records, then members of ~64 MiB of one short line each (~230 KB compressed):
    // ~512 MiB of lines in under 2 MB, minutes of parsing were it not stopped.
    const line = JSON.stringify({ id: 'bomb-dup', timestamp: NOW - 1000, project: P }) + '\n';
    const member = gzipSync(Buffer.alloc(Math.floor((64 * 1024 * 1024) / line.length) * line.length, line), { level: 9 });
    const bomb = Buffer.concat([gzipSync(edgeNdjson(3000, { prefix: 'bomb' })), ...Array.from({ length: 8 }, () => member)]);
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    const runs = async () => (JSON.parse((await httpRequest(port, '/api/imports', { headers })).body) as { result: ImportRun[] }).result;
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/api/imports?source=edge_logs&id=bomb', headers: { ...headers, 'content-length': String(bomb.length) } });
    req.on('error', () => undefined);
    req.on('response', (res) => res.resume());
    req.end(bomb);
    // Once records are written (the rollback then has something to undo), the client leaves.
    await vi.waitUntil(async () => ((await runs()).find((r) => r.id === 'bomb')?.records ?? 0) >= 3000, { timeout: 20_000, interval: 50 });
    req.destroy();
    const left = performance.now();
    const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the next import did not finish within 20 s of the client leaving')), 20_000).unref());
    const next = await Promise.race([httpRequest(port, '/api/imports?source=edge_logs&id=next', { method: 'POST', headers, body: edgeNdjson(5, { prefix: 'next' }) }), late]);
    expect(performance.now() - left).toBeLessThan(20_000);
    expect(next.status).toBe(200);
    expect(JSON.parse(next.body)).toMatchObject({ result: { imported: 5, duplicates: 0, rejected: 0 } });
    // None of the bomb's records (its 3000 distinct ones were written before the client left).
    expect(s.store.dump('cloudflare.logs.prod').map((r) => r.id).sort()).toEqual(['next0', 'next1', 'next2', 'next3', 'next4']);
    expect((await runs()).find((r) => r.id === 'bomb')).toMatchObject({ state: 'failed', error: 'the import was cancelled (Client connection prematurely closed.); nothing from it was kept' });
    // Its parser was stopped, not left decompressing: no worker is busy.
    expect(activeParseWorkers().size).toBe(0);
  }, 60_000);
});

describe('the import parameters', () => {
  const runs = async (app: TestApp) => ((await (await app.request('/api/imports')).json()) as { result: ImportRun[] }).result;
  const edgeCount = (app: TestApp) => app.store.summary().find((x) => x.source === 'cloudflare.logs.prod')!.count;

  it('a repeated source, id, filename or project is a 400 naming it, before anything is read or stored', async () => {
    t = await makeTestApp();
    for (const [query, name] of [
      ['source=edge_logs&source=function_edge_logs', 'source'],
      ['source=edge_logs&source=edge_logs', 'source'],
      ['source=edge_logs&id=a&id=b', 'id'],
      ['source=edge_logs&filename=a.ndjson&filename=b.ndjson', 'filename'],
      [`source=edge_logs&project=${P}&project=projbbbbbbbbbbbbbbbb`, 'project'],
    ] as const) {
      const { status, json } = await upload(t, edgeNdjson(3, { prefix: 'rep' }), query);
      expect(status, query).toBe(400);
      expect((json.error as unknown as { errors: unknown[] }).errors, query).toEqual([{ reason: 'duplicate', location: name, message: `${name} is given more than once` }]);
    }
    expect(edgeCount(t)).toBe(0);
    expect(await runs(t)).toEqual([]);
  });

  it('reusing an import id is a 409 naming id; the first run keeps its progress entry and nothing of the second body is stored', async () => {
    t = await makeTestApp();
    const first = await upload(t, edgeNdjson(4, { prefix: 'first' }), 'source=edge_logs&id=job-1&filename=one.ndjson');
    expect(first.status).toBe(200);
    const before = await runs(t);
    expect(before).toHaveLength(1);
    expect(before[0]).toMatchObject({ id: 'job-1', file: 'one.ndjson', state: 'done', records: 4 });
    const again = await t.request('/api/imports?source=edge_logs&id=job-1&filename=two.ndjson', { method: 'POST', body: edgeNdjson(7, { prefix: 'second' }) });
    expect(again.status).toBe(409);
    const e = ((await again.json()) as { error: { code: number; status: string; message: string; errors: unknown[] } }).error;
    expect(e).toMatchObject({ code: 409, status: 'ALREADY_EXISTS', message: 'an import with id job-1 exists already; give each import its own id' });
    expect(e.errors).toEqual([{ reason: 'duplicate', location: 'id', message: 'an import with id job-1 exists already; give each import its own id' }]);
    expect(await runs(t)).toEqual(before);
    expect(edgeCount(t)).toBe(4);
    // Another id is fine.
    expect((await upload(t, edgeNdjson(7, { prefix: 'second' }), 'source=edge_logs&id=job-2')).status).toBe(200);
    expect(edgeCount(t)).toBe(11);
  });

  it('an import refused for a full disk is a 507, and its progress entry says the disk is full (not "internal error")', async () => {
    t = await makeTestApp();
    const realOpen = fs.promises.open;
    vi.spyOn(fs.promises, 'open').mockImplementation(async (...args: Parameters<typeof fs.promises.open>) => {
      if (String(args[0]).endsWith('catalog.sqlite.tmp')) throw Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' });
      return realOpen(...args);
    });
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const { status, json } = await upload(t, edgeNdjson(50, { prefix: 'full' }), 'source=edge_logs&id=full-1');
    expect(status).toBe(507);
    expect(json.error!.message).toMatch(/^the disk is full/);
    vi.restoreAllMocks();
    const [run] = await runs(t);
    expect(run).toMatchObject({ id: 'full-1', state: 'failed' });
    expect(run!.error).toBe('the disk is full: nothing from this request was kept, and the data saved before is intact; free some space and try again');
    expect(edgeCount(t)).toBe(0);
  });

  it('an upload that stalls is a 408 and its progress entry says so', async () => {
    s = await realServer({ bodyTimeoutMs: 300 });
    const host = `127.0.0.1:${s.port}`;
    const r = await rawExchange(s.port, [`POST /api/imports?source=edge_logs&id=stalled HTTP/1.1\r\nHost: ${host}\r\nX-API-KEY: ${s.apiKey}\r\nContent-Length: 100000\r\n\r\n${edgeNdjson(3, { prefix: 'st' })}`], 0, 10_000);
    expect(r.status).toBe(408);
    expect(rawJson(r.text)).toMatchObject({ error: { code: 408, status: 'REQUEST_TIMEOUT', message: 'the upload stalled: less than 16 KiB arrived in 0.3 s' } });
    const list = JSON.parse((await httpRequest(s.port, '/api/imports', { headers: { host, 'x-api-key': s.apiKey } })).body) as { result: ImportRun[] };
    expect(list.result).toEqual([expect.objectContaining({ id: 'stalled', state: 'failed', error: 'the upload stalled: less than 16 KiB arrived in 0.3 s' })]);
    expect(s.store.summary().find((x) => x.source === 'cloudflare.logs.prod')!.count).toBe(0);
  });
});

describe('the same file twice', () => {
  it('adds nothing the second time, with or without ids in the records', async () => {
    t = await makeTestApp();
    const withIds = edgeNdjson(500);
    const withoutIds = Array.from({ length: 300 }, (_, i) => {
      const { id: _id, ...rest } = edgeRecord(NOW - i * 1000, { path: `/rest/v1/t${i}` });
      return JSON.stringify(rest);
    }).join('\n');
    for (const body of [withIds, withoutIds]) {
      const first = await upload(t, body);
      const summary = t.store.summary();
      const second = await upload(t, body);
      expect(second.json.result).toMatchObject({ imported: 0, duplicates: first.json.result!.imported, rejected: 0 });
      expect(t.store.summary()).toEqual(summary);
    }
    expect(t.store.summary().find((x) => x.source === 'cloudflare.logs.prod')!.count).toBe(800);
  });
});

describe('a server killed during an import', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('SIGKILL at ~60% of an import leaves the earlier data intact and the store loadable', async () => {
    dir = tempDir('le-hard-');
    const data = path.join(dir, 'data');
    const key = 'kill-key-0123456789';
    const cli = startCli(['--data-dir', data, '--port', '0', '--now', '2026-11-22T10:30:45.123456Z'], { LOG_EXPLORER_API_KEY: key });
    const url = new URL(await cli.listening);
    const port = Number(url.port);
    const headers = { host: url.host, 'x-api-key': key };
    const first = await httpRequest(port, '/api/imports?source=edge_logs', { method: 'POST', headers, body: edgeNdjson(1000, { prefix: 'kept' }) });
    expect(first.status).toBe(200);

    // A second, large import streamed slowly; killed once ~60% of its bytes are in.
    const body = Buffer.from(edgeNdjson(60_000, { prefix: 'lost' }));
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/api/imports?source=edge_logs&id=big', headers: { ...headers, 'content-length': String(body.length) } });
    req.on('error', () => undefined);
    let killedAt = 0;
    const sending = (async () => {
      for (const c of chunked(body, 256 * 1024)) {
        // Once the server is gone, 'drain' never comes: 'close' ends the wait, unless the
        // request closed already (then nothing more is emitted and the wait would never end).
        if (!req.write(c) && !req.destroyed) await new Promise((r) => (req.once('drain', r), req.once('close', r)));
        await sleep(5);
        if (req.destroyed || cli.child.exitCode !== null || cli.child.signalCode !== null) return;
      }
      req.end();
    })();
    for (;;) {
      const runs = JSON.parse((await httpRequest(port, '/api/imports', { headers })).body) as { result: Array<{ id: string; bytes: number; state: string; error?: string }> };
      const big = runs.result.find((r) => r.id === 'big');
      if (big && big.state !== 'running') throw new Error(`the import ended before the kill: ${JSON.stringify(big)}; server said ${cli.output()}`);
      if (big && big.bytes >= body.length * 0.6) {
        expect(big.state).toBe('running');
        killedAt = big.bytes / body.length;
        cli.child.kill('SIGKILL');
        break;
      }
      await sleep(10);
    }
    expect((await cli.exited).signal).toBe('SIGKILL');
    await sending;
    expect(killedAt).toBeGreaterThanOrEqual(0.6);
    expect(killedAt).toBeLessThan(1);

    const store = await LogStore.open(data);
    try {
      // Intact: integrity, every record reads back whole, and the files under parts/ are exactly
      // the committed ones, record files cut back to their committed length at open.
      expect(storeProblems(store)).toEqual([]);
      const edge = store.summary().find((x) => x.source === 'cloudflare.logs.prod')!;
      expect(edge.count).toBe(1000);
      const ids = store.dump('cloudflare.logs.prod').map((r) => r.id);
      expect(ids.sort()).toEqual(Array.from({ length: 1000 }, (_, i) => `kept${i}`).sort());
      // And it takes the same import again, in full.
      const again = await importStream(store, chunked(body, 1 << 20), { source: 'edge_logs' });
      expect(again).toMatchObject({ imported: 60_000, duplicates: 0 });
    } finally {
      await store.close();
    }
  });
});
