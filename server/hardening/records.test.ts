/**
 * One record must never break the engine: records far larger than sql.js's 5 MiB
 * stack, nesting past any call stack, and keys like `__proto__` are stored and read back (or
 * refused at import with their line), and every other record of the window still answers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ImportReport } from '../ingest/import.ts';
import { MAX_NESTING_DEPTH } from '../ingest/normalize.ts';
import { sourceInfo } from '../sources.ts';
import { EngineTrapped, engineLimits } from '../store/db.ts';
import { ImportWriter } from '../store/log-store.ts';
import { NOW, SEC, edgeRecord, makeTestApp, type TestApp } from '../testing/fixtures.ts';
import { P } from './helpers.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function upload(app: TestApp, body: string) {
  const res = await app.request('/api/imports?source=edge_logs', { method: 'POST', body });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: ImportReport }).result;
}

async function logsAll(app: TestApp): Promise<Array<Record<string, unknown>>> {
  const res = await app.request(`/api/endpoints/logs.all?project=${P}&project_tier=ENTERPRISE`);
  const body = (await res.json()) as { result: Array<Record<string, unknown>> };
  expect(res.status, JSON.stringify(body).slice(0, 300)).toBe(200);
  return body.result;
}

/** `{"a": ... {"a": 1} ...}` with `levels` objects. */
const nested = (levels: number) => JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`) as unknown;

describe('nesting depth', () => {
  it(`a record nested up to ${MAX_NESTING_DEPTH} levels imports and reads back; deeper ones are refused by line, the rest kept`, async () => {
    t = await makeTestApp();
    // The record itself is level 1 and metadata level 2: `x` may add MAX - 2 more levels.
    const fits = { ...edgeRecord(NOW - 3 * SEC, { id: 'fits' }), metadata: { ...edgeRecord(0).metadata, x: nested(MAX_NESTING_DEPTH - 2) } };
    const tooDeep = { ...edgeRecord(NOW - 2 * SEC, { id: 'too-deep' }), metadata: { ...edgeRecord(0).metadata, x: nested(MAX_NESTING_DEPTH - 1) } };
    // Written as text: JSON.stringify itself cannot serialize this depth.
    const wayTooDeep = JSON.stringify(edgeRecord(NOW - SEC, { id: 'way-too-deep' })).replace('"response":', `"x":${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)},"response":`);
    const lines = [...[fits, tooDeep, edgeRecord(NOW - SEC, { id: 'plain' })].map((r) => JSON.stringify(r)), wayTooDeep].join('\n');
    const report = await upload(t, lines);
    expect(report).toMatchObject({ imported: 2, rejected: 2 });
    expect(report.errors).toEqual([
      { line: 2, reason: `nested deeper than ${MAX_NESTING_DEPTH} levels of objects and arrays` },
      { line: 4, reason: `nested deeper than ${MAX_NESTING_DEPTH} levels of objects and arrays` },
    ]);
    const rows = await logsAll(t);
    expect(rows.map((r) => r.id)).toEqual(['plain', 'fits']);
    // The deep value comes back whole, in the query shape: each object wrapped in an array.
    let v = (rows[1]!.metadata as Array<Record<string, unknown>>)[0]!.x;
    let levels = 0;
    while (Array.isArray(v)) {
      levels++;
      v = (v[0] as Record<string, unknown>).a;
    }
    expect([levels, v]).toEqual([MAX_NESTING_DEPTH - 2, 1]);
  });
});

describe('keys that are special to JavaScript', () => {
  it('a metadata key __proto__ is stored and returned like any other key', async () => {
    t = await makeTestApp();
    const text = JSON.stringify(edgeRecord(NOW - SEC, { id: 'proto' })).replace('"response":', '"__proto__":{"interval":"1hr"},"constructor":"c","response":');
    expect(await upload(t, text)).toMatchObject({ imported: 1, rejected: 0 });
    const [row] = await logsAll(t);
    const meta = (row!.metadata as Array<Record<string, unknown>>)[0]!;
    expect(Object.keys(meta)).toEqual(['request', '__proto__', 'constructor', 'response']);
    expect(JSON.stringify(meta)).toContain('"__proto__":[{"interval":"1hr"}]');
    expect(Object.getPrototypeOf(meta)).toBe(Object.prototype);
  });
});

describe('an engine failure', () => {
  it('answers 503 with Retry-After while the store reopens, then every request answers as before', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - SEC, { id: 'one' }), edgeRecord(NOW - 2 * SEC, { id: 'two' })] });
    const before = await logsAll(t);
    const guard = engineLimits.functionTextChars;
    engineLimits.functionTextChars = Infinity;
    try {
      t.store.catalog.defineFunction('huge_text', () => 'x'.repeat(6_000_000));
      expect(() => t!.store.catalog.query('SELECT huge_text()')).toThrow(EngineTrapped);
    } finally {
      engineLimits.functionTextChars = guard;
    }
    const during = await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=ENTERPRISE`);
    expect(during.status).toBe(503);
    expect(during.headers.get('retry-after')).toBe('1');
    expect(((await during.json()) as { error: { message: string } }).error.message).toMatch(/reopening from the last saved state/);
    await t.store.recoverEngine();
    expect(await logsAll(t)).toEqual(before);
  });
});

describe('records stored by an earlier version', () => {
  it('read back although today\'s import would refuse their timestamp (10 fraction digits)', async () => {
    t = await makeTestApp();
    const ts = NOW - SEC;
    const url = `https://${P}.supabase.co/rest/v1/x`;
    const raw = JSON.stringify({ id: 'old', timestamp: '2026-11-22T10:30:44.1234567890Z', project: P, event_message: 'GET', metadata: { request: { url }, response: { status_code: 200 } } });
    new ImportWriter(t.store, sourceInfo('cloudflare.logs.prod')).write([{ id: 'old', ts, project: P, raw, url, families: 1, status: 200 }]);
    await t.store.save();
    const rows = await logsAll(t);
    expect(rows.map((r) => [r.id, r.timestamp])).toEqual([['old', ts]]);
  });
});

describe('large records', () => {
  it('a record with an 8 MB event_message (past sql.js\'s 5 MiB stack) imports, reads back whole, and the next requests answer', async () => {
    t = await makeTestApp();
    const message = 'x'.repeat(8_000_000);
    const big = { ...edgeRecord(NOW - 2 * SEC, { id: 'big' }), event_message: message };
    expect(await upload(t, [JSON.stringify(big), JSON.stringify(edgeRecord(NOW - SEC, { id: 'small' }))].join('\n'))).toMatchObject({ imported: 2 });
    for (let i = 0; i < 2; i++) {
      const rows = await logsAll(t);
      expect(rows.map((r) => r.id)).toEqual(['small', 'big']);
      expect((rows[1]!.event_message as string).length).toBe(8_000_000);
    }
    const counts = await t.request(`/api/endpoints/usage.api-counts?project=${P}&interval=hourly`);
    expect(counts.status).toBe(200);
    expect(await upload(t, JSON.stringify(edgeRecord(NOW - SEC, { id: 'after' })))).toMatchObject({ imported: 1 });
  });
});
