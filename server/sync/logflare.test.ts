/**
 * Two real servers on 127.0.0.1: the first serves its demo edge logs as a Logflare would
 * (`/api/endpoints/query/logs.all`); the second syncs them over a `logflare` connection. Then
 * the second's logs.all answers what the first's does, for the same parameters.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ConnectionView } from '../../contract/api-types.ts';
import { DEMO_PROJECTS, generateRecords } from '../demo/generate.ts';
import { importStream } from '../ingest/import.ts';
import { startServer, type RunningServer } from '../server.ts';
import { NOW, tempDir } from '../testing/fixtures.ts';
import { formatIsoMicros, MICROS } from '../time.ts';

const { day: DAY, hour: HOUR } = MICROS;
const PROJECT = DEMO_PROJECTS[0]!.ref;
let dir: string;
let a: RunningServer;
let b: RunningServer;

beforeAll(async () => {
  dir = tempDir('le-lf-');
  a = await startServer({ dataDir: path.join(dir, 'a'), port: 0, apiKey: 'first-server-key-0123456789', now: NOW });
  const lines = [...generateRecords('cloudflare.logs.prod', { now: NOW, count: 1500, seed: 7 })].map((r) => JSON.stringify(r)).join('\n');
  const report = await importStream(a.store, [Buffer.from(`${lines}\n`)], { source: 'edge_logs' });
  expect(report.imported).toBe(1500);
  // A budget that does not make the test wait (the default, 50 a minute, would: it costs a minute per 50 pages).
  b = await startServer({ dataDir: path.join(dir, 'b'), port: 0, apiKey: 'second-server-key-0123456789', now: NOW, sync: { callsPerMinute: 1000 } });
});

afterAll(async () => {
  await b?.close();
  await a?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function api<T>(s: RunningServer, p: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${s.url}${p}`, { ...init, headers: { 'x-api-key': s.apiKey, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
  return { status: res.status, body: (await res.json()) as T };
}

it("the second server's logs.all answers equal the first's after syncing over the logflare kind", async () => {
  const created = await api<{ result: ConnectionView }>(b, '/api/connections', {
    method: 'POST',
    body: JSON.stringify({ kind: 'logflare', ref: PROJECT, url: a.url, token: a.apiKey, start: formatIsoMicros(NOW - 8 * DAY) }),
  });
  expect(created.status).toBe(201);
  expect(created.body.result).toMatchObject({ kind: 'logflare', token: '…6789', dialect: null, sources: { 'cloudflare.logs.prod': { state: 'backfilling' } } });
  let view: ConnectionView | undefined;
  for (let i = 0; i < 600; i++) {
    view = (await api<{ result: ConnectionView[] }>(b, '/api/connections')).body.result[0];
    const s = view!.sources['cloudflare.logs.prod']!;
    if (s.state === 'following' || s.state === 'failed') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const edge = view!.sources['cloudflare.logs.prod']!;
  expect(edge).toMatchObject({ state: 'following', error: null, through: NOW, warnings: [] });

  // Every record of the project in the synced span is there, once, with the project.
  const expected = a.store.dump('cloudflare.logs.prod').filter((r) => r.project === PROJECT && r.ts > NOW - 8 * DAY);
  const got = b.store.dump('cloudflare.logs.prod');
  expect(got.map((r) => r.id).sort()).toEqual(expected.map((r) => r.id).sort());
  expect(new Set(got.map((r) => r.project))).toEqual(new Set([PROJECT]));
  expect(edge.records).toBe(expected.length);
  // Pages of 100, newest first within each window: at least one call per 100 records.
  expect(view!.callsLastMinute).toBeGreaterThanOrEqual(Math.ceil(expected.length / 100));

  const cases: Array<Record<string, string>> = [
    { project_tier: 'FREE' },
    { project_tier: 'PRO' },
    { project_tier: 'ENTERPRISE' },
    { project_tier: 'PRO', iso_timestamp_start: formatIsoMicros(NOW - 7 * DAY), iso_timestamp_end: formatIsoMicros(NOW - 6 * DAY) },
    { project_tier: 'PRO', iso_timestamp_start: formatIsoMicros(NOW - 3 * DAY - 5 * HOUR), iso_timestamp_end: formatIsoMicros(NOW - 2 * DAY) },
    { project_tier: 'FREE', iso_timestamp_end: formatIsoMicros(NOW - 6 * HOUR) },
  ];
  for (const c of cases) {
    const q = `/api/endpoints/query/logs.all?${new URLSearchParams({ project: PROJECT, ...c })}`;
    const [x, y] = await Promise.all([api<{ result: unknown[] }>(a, q), api<{ result: unknown[] }>(b, q)]);
    expect(x.status, JSON.stringify(c)).toBe(200);
    expect(x.body.result.length, JSON.stringify(c)).toBeGreaterThan(0);
    expect(y.body, JSON.stringify(c)).toEqual(x.body);
  }
});
