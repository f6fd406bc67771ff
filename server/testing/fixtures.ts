/**
 * Test fixtures: hand-built records of the two hot sources, a temp store, and an in-process
 * app with a fixed clock. Used by the endpoint and API tests.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../app.ts';
import { AppClock } from '../clock.ts';
import { ResultsCache } from '../endpoints/cache.ts';
import { importStream } from '../ingest/import.ts';
import { LogStore, type StoreOptions } from '../store/log-store.ts';
import { MICROS } from '../time.ts';

export const TEST_KEY = 'test-key-0123456789';
export const TEST_PORT = 4100;
export const HOST = `127.0.0.1:${TEST_PORT}`;

/** 2026-11-22T10:30:45.123456Z */
export const NOW = Date.UTC(2026, 10, 22, 10, 30, 45) * 1000 + 123_456;

export const at = (iso: string): number => Date.parse(iso) * 1000;
export const { second: SEC, minute: MIN, hour: HOUR, day: DAY } = MICROS;

let counter = 0;
const nextId = (prefix: string) => `${prefix}-${String(++counter).padStart(6, '0')}`;

export interface EdgeOpts {
  id?: string;
  project?: string;
  url?: string;
  path?: string;
  status?: number;
  method?: string;
}

export function edgeRecord(ts: number, o: EdgeOpts = {}) {
  const project = o.project ?? 'projaaaaaaaaaaaaaaaa';
  const p = o.path ?? '/rest/v1/todos';
  const url = o.url ?? `https://${project}.supabase.co${p}?select=*`;
  return {
    id: o.id ?? nextId('edge'),
    timestamp: ts,
    project,
    event_message: `${o.method ?? 'GET'} | ${o.status ?? 200} | ${url}`,
    metadata: {
      request: { method: o.method ?? 'GET', url, path: p, host: `${project}.supabase.co` },
      response: { status_code: o.status ?? 200 },
    },
  };
}

export interface FnOpts {
  id?: string;
  project?: string;
  functionId?: string;
  exec?: number | null;
  status?: number;
}

export function fnRecord(ts: number, o: FnOpts = {}) {
  const meta: Record<string, unknown> = {
    project_ref: o.project ?? 'projaaaaaaaaaaaaaaaa',
    function_id: o.functionId ?? 'fn-hello',
    request: { method: 'POST', url: 'https://x.supabase.co/functions/v1/hello' },
    response: { status_code: o.status ?? 200 },
  };
  if (o.exec !== null) meta.execution_time_ms = o.exec ?? 10;
  return { id: o.id ?? nextId('fn'), timestamp: ts, event_message: 'POST | 200 | hello', metadata: meta };
}

export function tempDir(prefix = 'le-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * The temp folders and open stores of one test file: `cleanup` (in afterEach) closes every store
 * still open and removes every folder.
 */
export function storeKeeper(prefix = 'le-store-') {
  const dirs: string[] = [];
  const stores = new Set<LogStore>();
  return {
    newDir(): string {
      const dir = tempDir(prefix);
      dirs.push(dir);
      return dir;
    },
    async open(dir: string, opts: StoreOptions = {}): Promise<LogStore> {
      const store = await LogStore.open(dir, opts);
      stores.add(store);
      return store;
    },
    async close(store: LogStore): Promise<void> {
      stores.delete(store);
      await store.close();
    },
    async cleanup(): Promise<void> {
      for (const s of stores) await s.close();
      stores.clear();
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    },
  };
}

export async function importRecords(store: LogStore, source: string, records: unknown[]) {
  const body = Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return importStream(store, [body], { source });
}

export interface TestApp {
  store: LogStore;
  clock: AppClock;
  cache: ResultsCache;
  /** Advances the cache's elapsed-time source. */
  advance(ms: number): void;
  request(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export async function makeTestApp(seed: { edge?: unknown[]; fn?: unknown[] } = {}, now = NOW, storeOptions: StoreOptions = {}): Promise<TestApp> {
  const dir = tempDir();
  const store = await LogStore.open(dir, storeOptions);
  if (seed.edge?.length) await importRecords(store, 'edge_logs', seed.edge);
  if (seed.fn?.length) await importRecords(store, 'function_edge_logs', seed.fn);
  const t = appOver(store, now);
  return {
    ...t,
    close: async () => {
      await t.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The in-process app over a store the caller opened; close() closes the store (not its folder). */
export function appOver(store: LogStore, now = NOW): TestApp {
  const clock = new AppClock(() => null);
  clock.set('fixed', now);
  let elapsed = 0;
  const cache = new ResultsCache(() => elapsed);
  const { app } = createApp({ store, clock, apiKey: TEST_KEY, port: () => TEST_PORT, cache });
  return {
    store,
    clock,
    cache,
    advance: (ms) => {
      elapsed += ms;
    },
    request: (p, init = {}) => {
      const headers = new Headers(init.headers);
      if (!headers.has('host')) headers.set('host', HOST);
      if (!headers.has('x-api-key')) headers.set('x-api-key', TEST_KEY);
      return Promise.resolve(app.request(`http://${HOST}${p}`, { ...init, headers }));
    },
    close: () => store.close(),
  };
}

/** GET an endpoint and return its rows, failing loudly on a non-200. */
export async function rows<T = Record<string, unknown>>(t: TestApp, name: string, params: Record<string, string>): Promise<T[]> {
  const res = await t.request(`/api/endpoints/${name}?${new URLSearchParams(params)}`);
  const body = (await res.json()) as { result?: T[]; error?: unknown };
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
  return body.result ?? [];
}

/** The field index section of a columns file: where it starts, and where the ids of `idsOf` (else of its first kept path) are. */
export function fieldSectionOf(file: string, idsOf?: string): { at: number; bytes: number; firstIds: number } {
  const buf = fs.readFileSync(file);
  const bytes = buf.readUInt32LE(124);
  const at = buf.length - bytes;
  const d = buf.readUInt32LE(at);
  const desc = JSON.parse(buf.toString('utf8', at + 8, at + 8 + d)) as { n: number; paths: Array<{ path: string; capped: boolean; texts?: number; ids?: number; k?: number }> };
  // Each kept path's parts in turn (a capped path has none): its texts, its ids, its counts.
  let part = at + 8 + d;
  for (const p of desc.paths) {
    if (p.capped) continue;
    if (idsOf === undefined || p.path === idsOf) return { at, bytes, firstIds: part + p.texts! };
    part += p.texts! + p.ids! + p.k! * 12;
  }
  throw new Error(`no ids of ${idsOf} in ${file}`);
}
