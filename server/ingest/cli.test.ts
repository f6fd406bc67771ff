/**
 * The import CLI as a user runs it: a child process, one JSON report per line per file.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LogStore } from '../store/log-store.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const T0 = Date.UTC(2023, 2, 23, 14, 40, 18) * 1000 + 149_123;
const P = 'abcdefghijklmnopqrst';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'server/ingest/cli.ts', ...args], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function fixtures() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-cli-'));
  dirs.push(dir);
  const edgeFile = path.join(dir, 'edge_logs.ndjson');
  fs.writeFileSync(
    edgeFile,
    [
      { id: 'e1', timestamp: T0, project: P, event_message: 'a', metadata: { request: { path: '/rest/v1/t' } } },
      { id: 'e2', timestamp: T0 + 1, project: P, event_message: 'b', metadata: { request: { path: '/auth/v1/t' } } },
      { id: 'e1', timestamp: T0, project: P, event_message: 'a', metadata: { request: { path: '/rest/v1/t' } } },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  const fnFile = path.join(dir, 'function_edge_logs.csv');
  fs.writeFileSync(fnFile, `id,timestamp,event_message,metadata\nf1,${T0},x,"{""project_ref"":""${P}"",""function_id"":""fn-a""}"\nf2,oops,y,\n`);
  return { dir, dataDir: path.join(dir, 'data'), edgeFile, fnFile };
}

describe('cli', () => {
  it('imports two files: one JSON report per line, in order, exit code 0, data saved', async () => {
    const { dataDir, edgeFile, fnFile } = fixtures();
    const r = await cli(['--data-dir', dataDir, edgeFile, fnFile]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        file: 'edge_logs.ndjson',
        source: 'cloudflare.logs.prod',
        format: 'ndjson',
        imported: 2,
        duplicates: 1,
        rejected: 0,
        errors: [],
        errorsOmitted: 0,
      },
      {
        file: 'function_edge_logs.csv',
        source: 'deno-relay-logs',
        format: 'csv',
        imported: 1,
        duplicates: 0,
        rejected: 1,
        errors: [{ line: 3, reason: 'unrecognized timestamp "oops"' }],
        errorsOmitted: 0,
      },
    ]);
    const store = await LogStore.open(dataDir);
    try {
      const counts = Object.fromEntries(store.summary().map((s) => [s.alias, s.count]));
      expect(counts).toMatchObject({ edge_logs: 2, function_edge_logs: 1 });
    } finally {
      await store.close();
    }
  }, 40_000);

  it('an unreadable file: a line with failed: true and the reason, the other file still imported, exit code 1', async () => {
    const { dir, dataDir, edgeFile } = fixtures();
    const missing = path.join(dir, 'nope_edge_logs.ndjson');
    const r = await cli(['--data-dir', dataDir, missing, edgeFile]);
    expect(r.code).toBe(1);
    const [first, second] = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toEqual({ file: missing, failed: true, reason: `cannot read ${missing}: ENOENT` });
    expect(second).toMatchObject({ file: 'edge_logs.ndjson', imported: 2, duplicates: 1 });
  }, 40_000);

  it('no files: usage on stderr, nothing on stdout, exit code 2', async () => {
    const { dataDir } = fixtures();
    const r = await cli(['--data-dir', dataDir]);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('usage: npm run import -- --data-dir DIR [--source NAME] [--project REF] FILE...');
  }, 40_000);
});
