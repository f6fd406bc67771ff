/**
 * Helpers for the hardening suites: a real server on a real socket, raw HTTP/1.1 exchanges
 * (custom Host headers, slow or oversized header blocks, which fetch cannot send), the real
 * CLI as a child process, and synthetic export data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { SpeedPathName } from '../../queries/registry.ts';
import { SPEED_PATHS, type SpeedPath } from '../endpoints/speed-paths.ts';
import { startServer, type RunningServer, type ServerOptions } from '../server.ts';
import type { LogStore } from '../store/log-store.ts';
import { NOW, edgeRecord, fnRecord, tempDir } from '../testing/fixtures.ts';
import { COLUMNS_WRITING_TMP, RECORD_DERIVED } from '../store/store-files.ts';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const P = 'projaaaaaaaaaaaaaaaa';

export interface RealServer extends RunningServer {
  dir: string;
  /** Stops the server (saving) and removes its data folder. */
  stop(): Promise<void>;
}

/** A real server on 127.0.0.1 with a fixed clock and key, in a fresh data folder. */
export async function realServer(opts: Partial<ServerOptions> = {}): Promise<RealServer> {
  const dir = tempDir('le-hard-');
  const s = await startServer({ dataDir: path.join(dir, 'data'), port: 0, apiKey: 'hard-key-0123456789abcdef', now: NOW, ...opts });
  return {
    ...s,
    dir,
    stop: async () => {
      await s.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request through node:http, which (unlike fetch) lets the caller set Host. */
export function httpRequest(
  port: number,
  pathAndQuery: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathAndQuery, method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

export interface RawExchange {
  /** Everything the server wrote before it closed the connection. */
  text: string;
  status: number | undefined;
  /** ms from connect to the server closing the connection. */
  closedAfterMs: number;
}

/**
 * Writes `parts` to a bare TCP socket, waiting `gapMs` between them, and collects the reply
 * until the server closes. A part of `null` stops writing (the socket stays open).
 */
export function rawExchange(port: number, parts: Array<string | Buffer>, gapMs = 0, timeoutMs = 30_000): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect({ host: '127.0.0.1', port });
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${timeoutMs} ms; got ${JSON.stringify(text.slice(0, 200))}`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(guard);
      if (timer) clearTimeout(timer);
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ text, status: m ? Number(m[1]) : undefined, closedAfterMs: performance.now() - started });
    });
    socket.on('connect', () => {
      let i = 0;
      const next = () => {
        if (i >= parts.length || socket.destroyed) return;
        socket.write(parts[i++]!);
        timer = setTimeout(next, gapMs);
      };
      next();
    });
  });
}

/** The JSON body of a raw reply (after the blank line). */
export function rawJson(text: string): unknown {
  const at = text.indexOf('\r\n\r\n');
  return JSON.parse(text.slice(at + 4));
}

export interface Cli {
  child: ChildProcess;
  listening: Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** The real CLI (`server/main.ts`) as a child process, stdout and stderr captured together. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Cli {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const m = /Listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  listening.catch(() => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, listening, exited, output: () => out };
}

/** NDJSON text of edge records, one per line. */
export function edgeNdjson(count: number, opts: { from?: number; prefix?: string; url?: (i: number) => string } = {}): string {
  const lines: string[] = [];
  const from = opts.from ?? 0;
  for (let i = from; i < from + count; i++) {
    lines.push(JSON.stringify(edgeRecord(NOW - (i + 1) * 1000, { id: `${opts.prefix ?? 'e'}${i}`, ...(opts.url ? { url: opts.url(i) } : {}) })));
  }
  return lines.join('\n') + '\n';
}

/** NDJSON text of function edge records within the last minute of NOW. */
export function fnNdjson(count: number, prefix = 'f'): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(JSON.stringify(fnRecord(NOW - (i % 50_000) * 1000 - 1, { id: `${prefix}${i}`, exec: (i % 97) + 1, status: i % 10 === 0 ? 500 : 200 })));
  return lines.join('\n') + '\n';
}

/** Splits a buffer into chunks, as a file stream would deliver it. */
export function chunked(buf: Buffer, size = 1 << 16): Buffer[] {
  const out: Buffer[] = [];
  for (let o = 0; o < buf.length; o += size) out.push(buf.subarray(o, o + size));
  return out;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Registers a speed path under a test-only name (for registry entries of tests: a slow or a
 * broken endpoint answered through the same runEndpoint path as the real ones). Returns the
 * name and the function that removes it again.
 */
export function testSpeedPath(name: string, fn: SpeedPath): { name: SpeedPathName; remove(): void } {
  const paths = SPEED_PATHS as unknown as Record<string, SpeedPath>;
  paths[name] = fn;
  return { name: name as SpeedPathName, remove: () => void delete paths[name] };
}

/**
 * The objects and methods through which an endpoint reads the store: every speed path, a
 * partition's database (store.use) and the catalog. Spy on them all to show that no query ran.
 */
export function queryEntryPoints(store: LogStore): Array<[Record<string, unknown>, string]> {
  return [
    ...Object.keys(SPEED_PATHS).map((k): [Record<string, unknown>, string] => [SPEED_PATHS as unknown as Record<string, unknown>, k]),
    [store as unknown as Record<string, unknown>, 'use'],
    [store as unknown as Record<string, unknown>, 'partitionsWithProject'],
    ...['query', 'rows', 'run'].map((m): [Record<string, unknown>, string] => [store.catalog as unknown as Record<string, unknown>, m]),
  ];
}

/** Every file under `dir`, as paths relative to it with '/' separators, sorted. */
export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((d) => d.isFile())
    .map((d) => path.relative(dir, path.join(d.parentPath, d.name)).split(path.sep).join('/'))
    .sort();
}

/**
 * What is wrong with a store just opened, as a list (empty when all is well): SQLite's
 * integrity check of the catalog and every partition; every stored record read back, whole
 * JSON, with its row's id; counts that agree between the summary and the rows; files under
 * parts/ that are exactly the ones the committed catalog names (current database version and
 * record file of each partition); record files of exactly their committed length; no temp
 * catalog. Reads every partition: for tests.
 */
export function storeProblems(store: LogStore): string[] {
  const problems: string[] = [];
  const integrity = store.integrityCheck();
  if (integrity !== 'ok') problems.push(`integrity: ${integrity}`);
  const summary = store.summary();
  const expected: string[] = [];
  for (const s of summary) {
    const rows = store.dump(s.source);
    if (rows.length !== s.count) problems.push(`${s.alias}: the summary counts ${s.count}, the partitions hold ${rows.length}`);
    for (const r of rows) {
      try {
        const rec = JSON.parse(r.raw) as { id?: unknown };
        if (rec.id !== undefined && String(rec.id) !== r.id) problems.push(`${s.alias}/${r.partition} row ${r.rid}: the record's id ${String(rec.id)} is not the row's ${r.id}`);
      } catch (err) {
        problems.push(`${s.alias}/${r.partition} row ${r.rid}: the record does not parse: ${String(err)}`);
      }
    }
    for (const p of store.partitions(s.source)) {
      if (p.row.rows === 0) continue;
      const rel = (f: string) => path.relative(store.dataDir, f).split(path.sep).join('/');
      expected.push(rel(p.dbFile(p.row.version)), rel(p.blocks.file));
      const size = fs.existsSync(p.blocks.file) ? fs.statSync(p.blocks.file).size : -1;
      if (size !== p.row.record_bytes) problems.push(`${rel(p.blocks.file)}: ${size} bytes, committed ${p.row.record_bytes}`);
    }
  }
  const actual = filesUnder(path.join(store.dataDir, 'parts')).map((f) => `parts/${f}`);
  // A committed version's columns file and a record file's block index and texts may be there (derived,
  // built in the background) or not (rebuilt on use); a columns file the background builder is
  // writing is its temp file for a while.
  const columnsOf = new Set([
    ...expected.filter((f) => f.endsWith('.sqlite')).flatMap((f) => [f.replace(/\.sqlite$/, '.cols'), f.replace(/\.sqlite$/, `.cols${COLUMNS_WRITING_TMP}`)]),
    ...expected.filter((f) => f.endsWith('.records')).flatMap((f) => RECORD_DERIVED.map((ext) => f.replace(/\.records$/, ext))),
  ]);
  const extra = actual.filter((f) => !expected.includes(f) && !columnsOf.has(f));
  const missing = expected.filter((f) => !actual.includes(f));
  if (extra.length) problems.push(`files no committed partition names: ${extra.join(', ')}`);
  if (missing.length) problems.push(`files the catalog names that are missing: ${missing.join(', ')}`);
  if (fs.existsSync(path.join(store.dataDir, 'catalog.sqlite.tmp'))) problems.push('catalog.sqlite.tmp is left');
  return problems;
}
