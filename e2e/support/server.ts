/**
 * Starts the real server (`node --import tsx server/main.ts`) on a free port with its own
 * data folder and a fixed clock, and talks to its API the way scripts do.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const API_KEY = 'test-key';
const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface RunningServer {
  url: string;
  dataDir: string;
  /** GET /api/<path> with the key; returns `result`. */
  api<T>(pathAndQuery: string, init?: RequestInit): Promise<T>;
  /** Runs an endpoint; returns its rows. */
  endpoint<T>(name: string, params: Record<string, string>): Promise<T[]>;
  stop(): Promise<void>;
}

export async function startServer(opts: { now: string; imports?: string[] }): Promise<RunningServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-explorer-e2e-'));
  const args = ['--import', 'tsx', 'server/main.ts', '--data-dir', dataDir, '--port', '0', '--api-key', API_KEY, '--now', opts.now];
  for (const f of opts.imports ?? []) args.push('--import', f);
  const child: ChildProcess = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /Listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  // Imports print one JSON report per file before "Listening"; a failed one is a broken fixture.
  if (/"failed":true/.test(output)) throw new Error(`fixture import failed:\n${output}`);

  const api = async <T>(p: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetch(`${url}/api/${p}`, { ...init, headers: { 'X-API-KEY': API_KEY, ...(init.headers ?? {}) } });
    const body = (await res.json()) as { result: T; error?: { message: string } };
    if (!res.ok) throw new Error(`${res.status} ${body.error?.message ?? ''}`);
    return body.result;
  };
  return {
    url,
    dataDir,
    api,
    endpoint: <T>(name: string, params: Record<string, string>) => api<T[]>(`endpoints/${name}?${new URLSearchParams(params).toString()}`),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
