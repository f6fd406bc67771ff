/** Imports through another process's server (the window shows that server when it holds the data folder). */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../server/server.ts';
import { fnRecord, tempDir } from '../server/testing/fixtures.ts';
import { importThroughServer } from './remote-import.ts';

let dir: string;
let server: RunningServer;
beforeAll(async () => {
  dir = tempDir('le-remote-import-');
  server = await startServer({ dataDir: path.join(dir, 'data'), port: 0, apiKey: 'remote-key', lockKind: 'serve' });
});
afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('importThroughServer', () => {
  it('streams each file to the server and returns its report, or why the file was not imported', async () => {
    const now = Date.now() * 1000;
    const good = path.join(dir, 'function_edge_logs.ndjson');
    fs.writeFileSync(good, [1, 2, 3, 4].map((i) => JSON.stringify(fnRecord(now - i * 1_000_000, { project: 'remoteprojaaaaaaaaaa' }))).join('\n'));
    const missing = path.join(dir, 'missing.ndjson');
    const unknown = path.join(dir, 'notes.txt');
    fs.writeFileSync(unknown, 'hello\n');

    const out = await importThroughServer({ url: server.url, apiKey: 'remote-key' }, [good, missing, unknown, good]);

    expect(out).toHaveLength(4);
    expect(out[0]).toMatchObject({ file: good, ok: true, report: { imported: 4, duplicates: 0, source: 'deno-relay-logs' } });
    expect(out[1]).toEqual({ file: missing, ok: false, reason: `cannot read ${missing}: ENOENT` });
    expect(out[2]).toMatchObject({ file: unknown, ok: false });
    expect(out[3]).toMatchObject({ ok: true, report: { imported: 0, duplicates: 4 } });
    expect(server.store.summary().find((s) => s.alias === 'function_edge_logs')?.count).toBe(4);
  });

  it('reports a refused key or a server that is gone per file, without throwing', async () => {
    const file = path.join(dir, 'function_edge_logs.ndjson');
    const [refused] = await importThroughServer({ url: server.url, apiKey: 'wrong' }, [file]);
    expect(refused).toMatchObject({ ok: false });
    expect((refused as { reason: string }).reason).not.toContain('wrong');
    const [gone] = await importThroughServer({ url: 'http://127.0.0.1:1', apiKey: 'remote-key' }, [file]);
    expect(gone).toEqual({ file, ok: false, reason: 'the server at http://127.0.0.1:1 did not answer: ECONNREFUSED' });
  });
});
