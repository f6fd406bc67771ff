/** The main process's API client against the real app, in process (createApp behind a real listener). */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportReport, SourceListing } from '../contract/api-types.ts';
import { startServer, type RunningServer } from '../server/server.ts';
import { edgeRecord, importRecords, tempDir } from '../server/testing/fixtures.ts';
import { AppApiError, appApi, demoSources, storeIsEmpty, waitForServer } from './app-api.ts';

let server: RunningServer;
let dir: string;

beforeAll(async () => {
  dir = tempDir('le-app-api-');
  server = await startServer({ dataDir: dir, port: 0, apiKey: 'the-key' });
});

afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('appApi', () => {
  it('lists sources, endpoints and the clock with the key', async () => {
    const api = appApi({ url: server.url, apiKey: 'the-key' });
    const sources = await api.sources();
    expect(sources).toHaveLength(9);
    expect(storeIsEmpty(sources)).toBe(true);
    expect((await api.endpoints()).map((e) => e.id)).toContain('15930e07-5833-4bd5-8c05-3e02145fb068');
    expect((await api.clock()).mode).toBe('system');
  });

  it('says "no demo loader" (undefined) when the server has none', async () => {
    await expect(appApi({ url: server.url, apiKey: 'the-key' }).loadDemo()).resolves.toBeUndefined();
  });

  it('deletes a source by name or alias', async () => {
    await importRecords(server.store, 'edge_logs', [edgeRecord(Date.now() * 1000)]);
    const api = appApi({ url: server.url, apiKey: 'the-key' });
    expect(storeIsEmpty(await api.sources())).toBe(false);
    await expect(api.deleteSource('edge_logs')).resolves.toEqual({ source: 'cloudflare.logs.prod', deleted: 1 });
    expect(storeIsEmpty(await api.sources())).toBe(true);
  });

  it("raises the server's own error message and status", async () => {
    const err = await appApi({ url: server.url, apiKey: 'wrong' }).sources().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppApiError);
    expect(err).toMatchObject({ status: 401, message: 'a valid X-API-KEY header is required' });
  });
});

describe('waitForServer', () => {
  it('resolves once /api/clock answers with the key', async () => {
    await expect(waitForServer({ url: server.url, apiKey: 'the-key' }, { timeoutMs: 2_000 })).resolves.toBeUndefined();
  });

  it('gives up with the last answer when the key is wrong', async () => {
    await expect(waitForServer({ url: server.url, apiKey: 'nope' }, { timeoutMs: 300, intervalMs: 50 })).rejects.toThrow(/did not answer GET \/api\/clock \(HTTP 401\)/);
  });

  it('keeps polling until the server comes up', async () => {
    let calls = 0;
    const fetchLater: typeof fetch = async () => {
      calls++;
      if (calls < 3) throw new Error('ECONNREFUSED');
      return new Response('{}', { status: 200 });
    };
    await waitForServer({ url: 'http://127.0.0.1:1', apiKey: 'k' }, { fetch: fetchLater, intervalMs: 10 });
    expect(calls).toBe(3);
  });
});

describe('demo helpers', () => {
  it('clears each source the demo wrote into, once', () => {
    const r = (source: string, imported: number): ImportReport => ({ source, imported, duplicates: 0, rejected: 0, errors: [], errorsOmitted: 0, format: 'ndjson' }) as unknown as ImportReport;
    expect(demoSources([r('postgres.logs', 5), r('gotrue.logs.prod', 0), r('postgres.logs', 1)])).toEqual(['postgres.logs']);
  });

  it('calls a store with any record non-empty', () => {
    expect(storeIsEmpty([{ count: 0 }, { count: 1 }] as SourceListing[])).toBe(false);
    expect(storeIsEmpty([])).toBe(true);
  });
});
