/**
 * The import CLI as a user runs it: a child process, one JSON report per line per file.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
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

const EDGE_REPORT = {
  file: 'edge_logs.ndjson',
  source: 'cloudflare.logs.prod',
  format: 'ndjson',
  imported: 2,
  duplicates: 1,
  rejected: 0,
  sources: { 'cloudflare.logs.prod': { imported: 2, duplicates: 1, rejected: 0 } },
  errors: [],
  errorsOmitted: 0,
};
const FN_REPORT = {
  file: 'function_edge_logs.csv',
  source: 'deno-relay-logs',
  format: 'csv',
  imported: 1,
  duplicates: 0,
  rejected: 1,
  sources: { 'deno-relay-logs': { imported: 1, duplicates: 0, rejected: 1 } },
  errors: [{ line: 3, reason: 'unrecognized timestamp "oops"' }],
  errorsOmitted: 0,
};

describe('cli', () => {
  it('imports two files: one JSON report per line, in order, exit code 0, data saved', async () => {
    const { dataDir, edgeFile, fnFile } = fixtures();
    const r = await cli(['--data-dir', dataDir, edgeFile, fnFile]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.map((l) => JSON.parse(l))).toEqual([EDGE_REPORT, FN_REPORT]);
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

  it('gzip-compressed files import as the plain ones; a truncated one keeps its start, reports the damage and does not fail', async () => {
    const { dir, dataDir, edgeFile, fnFile } = fixtures();
    const edgeGz = `${edgeFile}.gz`;
    const fnGz = `${fnFile}.gz`;
    fs.writeFileSync(edgeGz, gzipSync(fs.readFileSync(edgeFile)));
    fs.writeFileSync(fnGz, gzipSync(fs.readFileSync(fnFile)));
    // A name that says nothing of the compression: it is told by the content.
    const lines = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ id: `t${i}`, timestamp: T0 + i, project: P, event_message: randomBytes(40).toString('hex') }));
    const full = gzipSync(lines.join('\n') + '\n');
    const cutFile = path.join(dir, 'cut_edge_logs.ndjson');
    fs.writeFileSync(cutFile, full.subarray(0, Math.floor(full.length / 2)));
    const r = await cli(['--data-dir', dataDir, edgeGz, fnGz, cutFile]);
    expect(r.code).toBe(0);
    const [edge, fn, cut] = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { imported: number; rejected: number; errors: Array<{ reason: string }> });
    expect(edge).toEqual({ ...EDGE_REPORT, file: 'edge_logs.ndjson.gz' });
    expect(fn).toEqual({ ...FN_REPORT, file: 'function_edge_logs.csv.gz' });
    expect(cut).toMatchObject({ file: 'cut_edge_logs.ndjson', source: 'cloudflare.logs.prod', format: 'ndjson' });
    expect(cut!.imported).toBeGreaterThan(100);
    expect(cut!.imported).toBeLessThan(2000);
    expect(cut!.errors.at(-1)!.reason).toMatch(/^the gzip archive is damaged after \d+ bytes of compressed input/);
  }, 40_000);

  it('no files: usage on stderr, nothing on stdout, exit code 2', async () => {
    const { dataDir } = fixtures();
    const r = await cli(['--data-dir', dataDir]);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('usage: npm run import -- --data-dir DIR [--source NAME] [--project REF] FILE...');
  }, 40_000);
});

/** `npm run serve` (server/main.ts, i.e. startServer) in a child process, until it listens. */
async function serveChild(dataDir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--data-dir', dataDir, '--port', '0', '--api-key', 'serve-key'], {
    cwd: ROOT,
    env: { ...process.env, LOG_EXPLORER_API_KEY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Listening on (http:\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the server exited ${code}: ${out}`)));
  });
  return {
    url,
    pid: child.pid!,
    sources: async () => {
      const res = await fetch(`${url}/api/sources`, { headers: { 'X-API-KEY': 'serve-key' } });
      return ((await res.json()) as { result: Array<{ alias: string; count: number; projects: Array<{ ref: string }> }> }).result;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A child process holding the folder's lock (as another import would) until stopped. */
async function lockHolder(dataDir: string, extra?: { url: string; apiKey: string }) {
  const module = path.join(ROOT, 'server', 'store', 'data-lock.ts');
  const script = `
    import { acquireDataLock } from ${JSON.stringify(module)};
    const lock = acquireDataLock(${JSON.stringify(dataDir)}, { kind: ${JSON.stringify(extra ? 'serve' : 'import')} });
    ${extra ? `lock.update(${JSON.stringify(extra)});` : ''}
    console.log('held');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited ${code}`)));
  });
  return {
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('cli on a data folder another process holds', () => {
  it('a running server holds it: the files go through its API, with the same reports and exit codes', async () => {
    const { dir, dataDir, edgeFile, fnFile } = fixtures();
    const server = await serveChild(dataDir);
    try {
      const r = await cli(['--data-dir', dataDir, edgeFile, fnFile]);
      expect(r.stderr).toBe(`the data folder is held by pid ${server.pid} (serve); importing through its API at ${server.url}\n`);
      expect(r.code).toBe(0);
      expect(r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l))).toEqual([EDGE_REPORT, FN_REPORT]);
      expect(Object.fromEntries((await server.sources()).map((s) => [s.alias, s.count]))).toMatchObject({ edge_logs: 2, function_edge_logs: 1 });

      // --source and --project travel along; an unreadable file fails alone, exit code 1.
      const plain = path.join(dir, 'records.ndjson');
      fs.writeFileSync(plain, `${JSON.stringify({ id: 'p1', timestamp: T0, event_message: 'c', metadata: { request: { path: '/rest/v1/x' } } })}\n`);
      const missing = path.join(dir, 'nope.ndjson');
      // A compressed file travels as it is: the server decompresses it.
      const compressed = path.join(dir, 'records.ndjson.gz');
      fs.writeFileSync(compressed, gzipSync(`${JSON.stringify({ id: 'p2', timestamp: T0, event_message: 'd', metadata: { request: { path: '/rest/v1/y' } } })}\n`));
      const again = await cli(['--data-dir', dataDir, '--source', 'edge_logs', '--project', 'zyxwvutsrqponmlkjihg', missing, plain, compressed]);
      expect(again.code).toBe(1);
      const [first, second, third] = again.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(first).toEqual({ file: missing, failed: true, reason: `cannot read ${missing}: ENOENT` });
      expect(second).toMatchObject({ file: 'records.ndjson', source: 'cloudflare.logs.prod', imported: 1 });
      expect(third).toMatchObject({ file: 'records.ndjson.gz', source: 'cloudflare.logs.prod', format: 'ndjson', imported: 1, rejected: 0 });
      const edge = (await server.sources()).find((s) => s.alias === 'edge_logs')!;
      expect(edge.count).toBe(4);
      expect(edge.projects.map((p) => p.ref).sort()).toEqual([P, 'zyxwvutsrqponmlkjihg']);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('another import holds it (no API): says which process, imports nothing, exit code 2', async () => {
    const { dataDir, edgeFile } = fixtures();
    const holder = await lockHolder(dataDir);
    try {
      const r = await cli(['--data-dir', dataDir, edgeFile]);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(
        new RegExp(`^the data folder ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another Log Explorer process \\(pid ${holder.pid}, npm run import, started \\S+\\); wait for it to finish or stop it\\n$`),
      );
    } finally {
      await holder.stop();
    }
    // The holder was killed by a signal: its lock is stale now, and the import goes ahead.
    const r = await cli(['--data-dir', dataDir, edgeFile]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(EDGE_REPORT);
  }, 60_000);

  it('a holder whose API does not answer: the lock message, exit code 2', async () => {
    const { dataDir, edgeFile } = fixtures();
    const holder = await lockHolder(dataDir, { url: 'http://127.0.0.1:9', apiKey: 'k' });
    try {
      const r = await cli(['--data-dir', dataDir, edgeFile]);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toContain(`is in use by another Log Explorer process (pid ${holder.pid}, npm run serve, started `);
      expect(r.stderr).not.toContain('importing through');
    } finally {
      await holder.stop();
    }
  }, 60_000);
});
