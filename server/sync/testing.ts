/**
 * Helpers of the sync tests: records a fake remote holds, a SyncManager on virtual time
 * (ManualClock + ManualTimers) driven until a condition holds, and the comparison of a store's
 * records with the remote's.
 */
import { canonicalRecord } from '../ingest/normalize.ts';
import { sourceInfo, type SourceName } from '../sources.ts';
import type { LogStore } from '../store/log-store.ts';
import type { FakeRecord } from '../testing/fake-management-api.ts';
import { MICROS } from '../time.ts';
import type { SyncManager } from './manager.ts';
import type { ManualClock, ManualTimers } from './timers.ts';

export const REF = 'abcdefghijklmnopqrst';
export const TOKEN = 'sbp_0123456789abcdef0123456789abcdef01234567';

/** A small deterministic generator (LCG): the same seed, the same records. */
export function lcg(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The four tables the backfill tests sync, with the app source each is stored as. */
export const FOUR: ReadonlyArray<readonly [string, SourceName]> = [
  ['edge_logs', 'cloudflare.logs.prod'],
  ['postgres_logs', 'postgres.logs'],
  ['function_edge_logs', 'deno-relay-logs'],
  ['auth_logs', 'gotrue.logs.prod'],
];

/** One record of a table, in the BigQuery-era shape, its non-text fields where the sources have them. */
export function recordOf(table: string, id: string, ts: number, n: number): FakeRecord {
  const status = [200, 201, 404, 500][n % 4]!;
  switch (table) {
    case 'edge_logs':
      return { id, timestamp: ts, event_message: `GET | ${status} | /rest/v1/t${n % 7}`, metadata: { request: { method: n % 3 ? 'GET' : 'POST', url: `https://${REF}.supabase.co/rest/v1/t${n % 7}?select=*`, path: `/rest/v1/t${n % 7}` }, response: { status_code: status } } };
    case 'postgres_logs':
      return { id, timestamp: ts, event_message: `statement ${n}`, metadata: { host: `db-${REF}`, parsed: { error_severity: n % 5 ? 'LOG' : 'ERROR', process_id: 1000 + (n % 50), sql_state_code: '00000' } } };
    case 'function_edge_logs':
      return { id, timestamp: ts, event_message: `POST | ${status} | hello`, metadata: { project_ref: REF, function_id: `fn-${n % 3}`, execution_time_ms: 5 + (n % 90), request: { method: 'POST', url: `https://${REF}.supabase.co/functions/v1/hello` }, response: { status_code: status } } };
    case 'auth_logs':
      return { id, timestamp: ts, event_message: `{"msg":"request completed","n":${n}}`, metadata: { level: n % 9 ? 'info' : 'error', status, method: 'POST', path: '/token', msg: 'request completed' } };
    default:
      return { id, timestamp: ts, event_message: `line ${n}`, metadata: { host: `db-${REF}` } };
  }
}

/**
 * `count` records of a table between `from` and `to` (µs), with bursts: a tenth of them share
 * a handful of instants (ties across page boundaries), and one minute holds more than a page.
 */
export function recordsOf(table: string, from: number, to: number, count: number, seed: number): FakeRecord[] {
  const next = lcg(seed);
  const out: FakeRecord[] = [];
  const burstAt = from + Math.floor(next() * (to - from - MICROS.minute));
  for (let i = 0; i < count; i++) {
    let ts: number;
    const r = next();
    if (i < 1100) ts = burstAt + Math.floor(next() * 50) * 1_000_000; // 1,100 records within 50 s: more than a page in one minute
    else if (r < 0.1) ts = from + Math.floor(next() * 20) * Math.floor((to - from) / 20); // shared instants
    else ts = from + Math.floor(next() * (to - from));
    out.push(recordOf(table, `${table.slice(0, 2)}-${seed}-${String(i).padStart(6, '0')}-${Math.floor(next() * 1e6).toString(36)}`, ts, i));
  }
  return out;
}

/** Lets pending I/O run until every source of the manager is asleep. */
export async function settle(sync: SyncManager, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let idleTurns = 0;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, sync.isIdle() ? 0 : 2));
    idleTurns = sync.isIdle() ? idleTurns + 1 : 0;
    if (idleTurns >= 3) return;
  }
  throw new Error('the sync did not settle');
}

/**
 * Drives virtual time: lets the sync work until it sleeps, checks `done`, fires the next timer,
 * and so on, for at most `maxUs` of virtual time.
 */
export async function runUntil(sync: SyncManager, clock: ManualClock, timers: ManualTimers, done: () => boolean, maxUs = 7 * MICROS.day): Promise<void> {
  const limit = clock.us + maxUs;
  for (;;) {
    await settle(sync);
    if (done()) return;
    const due = timers.nextDue();
    if (due === undefined || due > limit) throw new Error(`not done within ${maxUs / MICROS.second} s of virtual time; ${JSON.stringify(sync.list().map((c) => Object.fromEntries(Object.entries(c.sources).map(([k, v]) => [k, [v.state, v.error]]))))}`);
    timers.fireNext();
  }
}

/** Every source of every connection in `state`. */
export function allIn(sync: SyncManager, state: string): boolean {
  return sync.list().every((c) => Object.values(c.sources).every((s) => s.state === state));
}

/** A stored or remote record as logs.all would give it (canonical JSON, parsed). */
export function canonical(source: SourceName, raw: string, project: string, ts?: number): unknown {
  return JSON.parse(canonicalRecord(raw, sourceInfo(source), project, ts));
}

/** The store's records of a source, by id, canonical; throws on a duplicate id. */
export function storedById(store: LogStore, source: SourceName): Map<string, { project: string; record: unknown }> {
  const out = new Map<string, { project: string; record: unknown }>();
  for (const r of store.dump(source)) {
    if (out.has(r.id)) throw new Error(`${source}: id ${r.id} is stored twice`);
    out.set(r.id, { project: r.project, record: canonical(source, r.raw, r.project, r.ts) });
  }
  return out;
}

/** The remote's records of a table, by id, canonical, as the connection's project's. */
export function remoteById(records: readonly FakeRecord[], source: SourceName, project = REF): Map<string, unknown> {
  return new Map(records.map((r) => [r.id, canonical(source, JSON.stringify(r), project)]));
}
