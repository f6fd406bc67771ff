import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogRow } from '../../contract/api-types.ts';
import { formatIsoMicros } from '../../contract/instants.ts';
import { normalizeRecord } from '../ingest/normalize.ts';
import { sourceInfo } from '../sources.ts';
import { ImportWriter, LogStore } from '../store/log-store.ts';
import { DAY, NOW, appOver, edgeRecord, fnRecord, importRecords, makeTestApp, rows, tempDir, type TestApp } from '../testing/fixtures.ts';

const P = 'projaaaaaaaaaaaaaaaa';
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const logs = (params: Record<string, string>) => rows<LogRow>(t!, 'logs.all', { project: P, project_tier: 'FREE', ...params });

describe('logs.all retention by tier', () => {
  const windows: Array<[string, number]> = [
    ['FREE', 1 * DAY],
    ['PRO', 7 * DAY],
    ['PAYG', 90 * DAY],
    ['ENTERPRISE', 90 * DAY],
    ['GOLD', 1 * DAY],
    ['pro', 1 * DAY],
  ];
  for (const [tier, w] of windows) {
    it(`${tier}: strictly newer than now - ${w / DAY} day(s); the cutoff itself is out`, async () => {
      t = await makeTestApp({
        edge: [edgeRecord(NOW - w, { id: 'at-cutoff' }), edgeRecord(NOW - w + 1, { id: 'just-inside' }), edgeRecord(NOW - 1, { id: 'recent' })],
      });
      expect((await logs({ project_tier: tier })).map((r) => r.id)).toEqual(['recent', 'just-inside']);
    });
  }
});

describe('logs.all time range', () => {
  const base = Date.UTC(2026, 10, 22, 9, 0, 0) * 1000; // 09:00:00Z
  const seed = () =>
    makeTestApp({
      edge: [
        edgeRecord(base + 122_455, { id: 'r-455' }),
        edgeRecord(base + 122_456, { id: 'r-456' }),
        edgeRecord(base + 122_457, { id: 'r-457' }),
        edgeRecord(base + 500_000, { id: 'r-500' }),
      ],
    });

  it('start is exclusive and end inclusive at microsecond precision (6 fraction digits)', async () => {
    t = await seed();
    const r = await logs({ iso_timestamp_start: '2026-11-22T09:00:00.122455Z', iso_timestamp_end: '2026-11-22T09:00:00.122457Z' });
    expect(r.map((x) => x.id)).toEqual(['r-457', 'r-456']);
  });

  it('9 fraction digits are truncated to the microsecond, not rounded', async () => {
    t = await seed();
    const r = await logs({ iso_timestamp_start: '2026-11-22T09:00:00.122455999Z', iso_timestamp_end: '2026-11-22T09:00:00.122456999Z' });
    expect(r.map((x) => x.id)).toEqual(['r-456']);
  });

  it('an offset is honoured: 14:30:00.122456+05:30 is 09:00:00.122456Z', async () => {
    t = await seed();
    const r = await logs({ iso_timestamp_end: '2026-11-22T14:30:00.122456+05:30' });
    expect(r.map((x) => x.id)).toEqual(['r-456', 'r-455']);
  });

  it('without a range every record inside retention comes back, newest first', async () => {
    t = await seed();
    expect((await logs({})).map((x) => x.id)).toEqual(['r-500', 'r-457', 'r-456', 'r-455']);
  });

  it('an unparseable timestamp is a 400 naming the parameter', async () => {
    t = await seed();
    const res = await t.request(`/api/endpoints/logs.all?project=${P}&project_tier=FREE&iso_timestamp_start=yesterday`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { errors: Array<{ location: string }> } };
    expect(body.error.errors[0]!.location).toBe('iso_timestamp_start');
  });
});

describe('logs.all rows', () => {
  it('cuts to 100 rows, newest first, ties at the same instant ordered by id', async () => {
    const recs = [];
    // 95 distinct instants, then 10 records sharing the instant just older than those.
    for (let i = 0; i < 95; i++) recs.push(edgeRecord(NOW - 1000 - i, { id: `u-${String(i).padStart(3, '0')}` }));
    const tie = NOW - 5000;
    const tieIds = ['t-j', 't-c', 't-a', 't-h', 't-e', 't-b', 't-i', 't-d', 't-g', 't-f'];
    for (const id of tieIds) recs.push(edgeRecord(tie, { id }));
    recs.push(edgeRecord(NOW - 9000, { id: 'older' }));
    t = await makeTestApp({ edge: recs });
    const r = await logs({});
    expect(r).toHaveLength(100);
    expect(r.slice(0, 95).map((x) => x.id)).toEqual(Array.from({ length: 95 }, (_, i) => `u-${String(i).padStart(3, '0')}`));
    expect(r.slice(95).map((x) => x.id)).toEqual(['t-a', 't-b', 't-c', 't-d', 't-e']);
  });

  it("reads as many partitions as the 100 rows take: twelve days of 12 records each, and the other project's between them", async () => {
    const recs = [];
    const want: Array<{ id: string; ts: number }> = [];
    for (let d = 0; d < 12; d++) {
      for (let i = 0; i < 12; i++) {
        const ts = NOW - d * DAY - 1000 - i * 1000;
        const id = `d${String(d).padStart(2, '0')}-${String(i).padStart(2, '0')}`;
        recs.push(edgeRecord(ts, { id }));
        want.push({ id, ts });
        recs.push(edgeRecord(ts - 1, { id: `x-${id}`, project: 'projbbbbbbbbbbbbbbbb' }));
      }
    }
    t = await makeTestApp({ edge: recs });
    const expected = want.sort((a, b) => b.ts - a.ts).slice(0, 100).map((r) => r.id);
    expect((await logs({ project_tier: 'PAYG' })).map((r) => r.id)).toEqual(expected);
    // A window that starts inside the sixth day: what is left of it and the five newer days.
    const start = formatIsoMicros(NOW - 5 * DAY - 6000);
    expect((await logs({ project_tier: 'PAYG', iso_timestamp_start: start })).map((r) => r.id)).toEqual(want.filter((r) => r.ts > NOW - 5 * DAY - 6000).map((r) => r.id));
  });

  it('reads rows not saved yet (a partition an import is still writing), its cut and ties as for saved ones', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 900_000, { id: 'saved-older' }), edgeRecord(NOW - 10, { id: 'saved-newest' })] });
    const edge = sourceInfo('cloudflare.logs.prod');
    // 97 newer rows, then three at one instant: the cut keeps the first two of them by id.
    const written = [...Array.from({ length: 97 }, (_, i) => edgeRecord(NOW - 100 - i, { id: `u-${String(i).padStart(2, '0')}` })), ...['t-a', 't-b', 't-c'].map((id) => edgeRecord(NOW - 500, { id }))];
    const rows = written.map((r) => {
      const n = normalizeRecord(r, edge, undefined);
      if ('error' in n) throw new Error(n.error);
      return n.record;
    });
    expect(new ImportWriter(t.store, edge).write(rows)).toEqual({ imported: 100, duplicates: 0 });
    expect(t.store.partitions('cloudflare.logs.prod').some((p) => p.dirty)).toBe(true);
    const got = (await logs({ project_tier: 'PRO' })).map((r) => r.id);
    expect(got).toEqual(['saved-newest', ...Array.from({ length: 97 }, (_, i) => `u-${String(i).padStart(2, '0')}`), 't-a', 't-b']);
  });

  it('answers from the databases, without building a columns file on the answering thread, when the newest partitions have none yet', async () => {
    const dir = tempDir();
    try {
      const want: Array<{ id: string; ts: number }> = [];
      const recs = [];
      // Six days of 30 records each (the newest four partitions are read from their columns when they have them), another project's between.
      for (let h = 0; h < 6; h++) {
        for (let i = 0; i < 30; i++) {
          const ts = NOW - h * DAY - 1000 - i * 60_000_000;
          const id = `h${h}-${String(i).padStart(2, '0')}`;
          recs.push(edgeRecord(ts, { id }));
          recs.push(edgeRecord(ts - 1, { id: `x-${id}`, project: 'projbbbbbbbbbbbbbbbb' }));
          want.push({ id, ts });
        }
      }
      let store = await LogStore.open(dir);
      await importRecords(store, 'edge_logs', recs);
      await store.columnsSettled();
      await store.close();
      const removed = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.cols'));
      expect(removed.length).toBeGreaterThanOrEqual(6);
      for (const f of removed) fs.rmSync(path.join(dir, f));
      store = await LogStore.open(dir);
      t = appOver(store);
      const expected = want.sort((a, b) => b.ts - a.ts).slice(0, 100).map((r) => r.id);
      expect((await logs({ project_tier: 'PRO' })).map((r) => r.id)).toEqual(expected);
      expect(store.columnsBuiltForRequests).toBe(0);
      // Built in the background instead; the same answer from them.
      await store.columnsSettled();
      t.cache.clear();
      expect((await logs({ project_tier: 'PRO' })).map((r) => r.id)).toEqual(expected);
      expect(store.columnsBuiltForRequests).toBe(0);
    } finally {
      await t?.close();
      t = undefined;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('returns id, timestamp (µs), event_message and metadata in the query shape', async () => {
    const rec = edgeRecord(NOW - 10, { id: 'one', path: '/auth/v1/user', status: 401 });
    t = await makeTestApp({ edge: [rec] });
    const [row] = await logs({});
    expect(row).toEqual({
      id: 'one',
      timestamp: NOW - 10,
      event_message: rec.event_message,
      metadata: [
        {
          request: [{ method: 'GET', url: rec.metadata.request.url, path: '/auth/v1/user', host: `${P}.supabase.co` }],
          response: [{ status_code: 401 }],
        },
      ],
    });
  });

  it("returns only the project's edge request logs", async () => {
    t = await makeTestApp({
      edge: [edgeRecord(NOW - 10, { id: 'mine' }), edgeRecord(NOW - 10, { id: 'theirs', project: 'projbbbbbbbbbbbbbbbb' })],
      fn: [fnRecord(NOW - 10, { id: 'function-log' })],
    });
    expect((await logs({})).map((x) => x.id)).toEqual(['mine']);
  });
});
