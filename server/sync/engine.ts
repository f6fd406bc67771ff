/**
 * The sync of one source of one connection (README, "Sync a live project"): a loop that plans a
 * page (pages.ts), takes a call from the app's budget, asks the remote (remote.ts), and commits
 * the page's records together with the cursor that covers them, in one commit of the store
 * (`withWriter`: the same path as a file import, so dedupe, partitions and rollups are the
 * same). A crash at any point loses nothing and adds nothing twice: what is committed is the
 * records and the cursor after them; what is not is read again, and the store's dedupe drops
 * what it already holds.
 *
 * States: `backfilling` (reading history up to now), `following` (caught up; polls every
 * `pollMs`, each poll reading the last REREAD_US again, as the platform ingests late),
 * `waiting` (a 429: the whole connection waits Retry-After or a minute; a 5xx or a network
 * failure: this source backs off, 5 s doubling up to 5 minutes), `paused` (by the user, or caught
 * up with following off), `failed` (401/403 stop the connection with the remote's message; a
 * request the remote refuses stops the source; both wait for a resume or a new token).
 */
import { spanOf } from '../activity.ts';
import { fromClickHouseRow, clickHouseSourceOf } from '../ingest/clickhouse-shape.ts';
import { normalizeRecord } from '../ingest/normalize.ts';
import { isObject, setOwn, type JsonObject } from '../store/shape.ts';
import type { SourceSyncView, SyncErrorKind, SyncStateName, WaitReason } from '../../contract/api-types.ts';
import type { SourceInfo } from '../sources.ts';
import { metaValue } from '../store/catalog.ts';
import type { LogStore, StoredRecord } from '../store/log-store.ts';
import type { Clock } from '../time.ts';
import { formatIsoMicros, parseRecordTimestamp } from '../time.ts';
import type { StoredConnection } from './connections.ts';
import {
  afterLogflarePage,
  afterManagementPage,
  bigQueryPageSql,
  clickHousePageSql,
  compareCursor,
  floorMinute,
  laterCursor,
  LOGFLARE_FIRST_WINDOW_US,
  logflareWindow,
  managementWindow,
  REREAD_US,
  type Cursor,
  type LogflareWindow,
  type Window,
} from './pages.ts';
import type { RateBudget } from './rate-budget.ts';
import { logflareQuery, managementQuery, RemoteError, type Dialect } from './remote.ts';
import type { SavedSourceState } from './state.ts';
import type { Timers } from './timers.ts';
import { turnForRequests } from '../turns.ts';

export type { SyncErrorKind, SyncStateName, WaitReason } from '../../contract/api-types.ts';

/** First back-off after a 5xx or a network failure, doubled each time up to MAX_BACKOFF_MS. */
export const FIRST_BACKOFF_MS = 5_000;
export const MAX_BACKOFF_MS = 5 * 60_000;
/** A 429 without Retry-After pauses the connection this long (the platform blocks for a minute). */
export const RATE_LIMIT_PAUSE_MS = 60_000;
const MAX_WARNINGS = 5;
/**
 * Rows converted, and records inserted, between two turns of the event loop: a page is a
 * thousand records, and the app's other answers wait while a slice is worked on.
 */
const SLICE_ROWS = 500;

/** The catalog meta key of a source's sync cursor. */
export function cursorKey(connectionId: string, source: SourceInfo): string {
  return `sync:${connectionId}:${source.name}`;
}

/** What a commit records beside the records: the cursor, and how many records this sync stored and refused. */
export interface Committed {
  cursor: Cursor;
  records: number;
  rejected: number;
}

export function readCommitted(store: LogStore, key: string): Committed | null {
  const text = metaValue(store.catalog, key);
  if (text === undefined) return null;
  try {
    const v = JSON.parse(text) as { ts: number; id: string | null; records: number; rejected: number };
    if (!Number.isSafeInteger(v.ts)) return null;
    return { cursor: { ts: v.ts, id: typeof v.id === 'string' ? v.id : null }, records: v.records ?? 0, rejected: v.rejected ?? 0 };
  } catch {
    return null;
  }
}

function committedText(c: Committed): string {
  return JSON.stringify({ v: 1, ts: c.cursor.ts, id: c.cursor.id, records: c.records, rejected: c.rejected });
}

/** What workers share: the app's clock, timers, call budget and store. */
export interface SyncContext {
  store: LogStore;
  clock: Clock;
  timers: Timers;
  budget: RateBudget;
  pollMs: number;
  requestTimeoutMs: number;
  /** A `detect` connection's first answer settled its dialect: keep it. */
  detected(rt: ConnectionRuntime, dialect: Dialect): void;
  /** What the last run saved of a source (state.ts), to show and go on from. */
  saved(connectionId: string, source: SourceInfo): SavedSourceState | undefined;
  /** Something a restart keeps changed (state.ts): save it soon. */
  changed(): void;
}

/** A connection while the app runs: its record, its token in clear (never written out), what stops it. */
export class ConnectionRuntime {
  token: string | null;
  /** Why the stored token cannot be used here (vault.ts). */
  tokenProblem: string | null;
  /** A 401/403: the remote's message; every source of the connection waits for a resume or a new token. */
  authFailure: string | null = null;
  /** The status of that refusal (401 or 403). */
  authStatus: number | null = null;
  /** A 429: no call until then (µs). */
  blockedUntil = 0;
  blockedMessage: string | null = null;
  /** `detect`: the source whose pages find the dialect; the others wait for it (a refused call each would be wasted). */
  detector: SourceWorker | null = null;
  readonly workers = new Map<string, SourceWorker>();

  constructor(
    public conn: StoredConnection,
    opened: { token: string } | { problem: string },
  ) {
    this.token = 'token' in opened ? opened.token : null;
    this.tokenProblem = 'problem' in opened ? opened.problem : null;
  }

  /** Wakes every source (a change of state to act on now). */
  poke(): void {
    for (const w of this.workers.values()) w.poke();
  }
}

/** A page the worker is about to ask for. */
type Plan =
  | { kind: 'management'; pos: Cursor; window: Window; dialect: Dialect; now: number }
  | { kind: 'logflare'; window: LogflareWindow; now: number };

/** The read position of a pass (a backfill up to now, or one poll). */
type Pass = { pos: Cursor; window: LogflareWindow | null };

interface Hold {
  state: SyncStateName;
  error: string | null;
  /** What kind of problem `error` is, and the remote's status behind it. */
  kind?: SyncErrorKind | null;
  status?: number | null;
  /** Sleep until then (µs); none: until poked. */
  until?: number;
  reason?: WaitReason;
}

/** A page's rows made into records. */
interface Batch {
  records: StoredRecord[];
  keys: Cursor[];
  rejected: number;
  reason?: string;
}

/** The rows of one page as records of `source`, each with the connection's project. */
export function convertRows(rows: readonly unknown[], source: SourceInfo, project: string, shape: 'query' | 'clickhouse'): Batch {
  const batch: Batch = { records: [], keys: [], rejected: 0 };
  const refuse = (reason: string) => {
    batch.rejected++;
    batch.reason ??= reason;
  };
  for (const row of rows) {
    if (!isObject(row)) {
      refuse('a row is not a JSON object');
      continue;
    }
    let rec: JsonObject;
    if (shape === 'clickhouse') {
      const c = fromClickHouseRow(row, source);
      if ('error' in c) {
        refuse(c.error);
        continue;
      }
      rec = c.record;
    } else rec = { ...row };
    const ts = parseRecordTimestamp(rec.timestamp);
    if (ts !== undefined) batch.keys.push({ ts, id: typeof row.id === 'string' ? row.id : row.id === undefined || row.id === null ? '' : String(row.id) });
    // Synced records are the connection's project's, wherever the source keeps it.
    if (source.project.in === 'record') setOwn(rec, 'project', project);
    const n = normalizeRecord(rec, source, project);
    if ('error' in n) refuse(n.error);
    else batch.records.push(n.record);
  }
  return batch;
}

/** convertRows in slices, letting other work run between them. */
async function convertInSlices(rows: readonly unknown[], source: SourceInfo, project: string, shape: 'query' | 'clickhouse'): Promise<Batch> {
  const out: Batch = { records: [], keys: [], rejected: 0 };
  for (let i = 0; i < rows.length; i += SLICE_ROWS) {
    if (i > 0) await turnForRequests();
    const b = spanOf('sync: convert rows', () => convertRows(rows.slice(i, i + SLICE_ROWS), source, project, shape));
    out.records.push(...b.records);
    out.keys.push(...b.keys);
    out.rejected += b.rejected;
    out.reason ??= b.reason;
  }
  return out;
}

export class SourceWorker {
  state: SyncStateName = 'backfilling';
  error: string | null = null;
  errorKind: SyncErrorKind | null = null;
  errorStatus: number | null = null;
  waitUntil: number | null = null;
  waitReason: WaitReason | null = null;
  /** When the last page was committed (µs): "synced 40 s ago". */
  syncedAt: number | null = null;
  warnings: string[] = [];
  committed: Committed | null;
  private phase: 'backfilling' | 'following' = 'backfilling';
  private pass: Pass | null = null;
  private nextPollAt = 0;
  /** The remote refused this source's requests (with its status, when it answered). */
  private failure: string | null = null;
  private failureStatus: number | null = null;
  private backoffs = 0;
  private backoffUntil = 0;
  private transient: string | null = null;
  private transientKind: 'remote' | 'store' = 'remote';
  private transientStatus: number | null = null;
  /** `detect`: dialects that were refused, with the remote's message. */
  private refusedDialects = new Map<Dialect, string>();
  private span = LOGFLARE_FIRST_WINDOW_US;
  private started = false;
  private stopped = false;
  private sleeping = false;
  private wake: (() => void) | null = null;
  private readonly stopCalls = new AbortController();
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: SyncContext,
    private readonly rt: ConnectionRuntime,
    readonly source: SourceInfo,
  ) {
    this.committed = readCommitted(ctx.store, this.key);
    const saved = ctx.saved(rt.conn.id, source);
    if (saved) this.restore(saved);
  }

  /** Takes up what the last run left (a restart): its time, its warnings, and what held it, shown at once. */
  private restore(s: SavedSourceState): void {
    this.syncedAt = s.syncedAt;
    this.warnings = s.warnings.slice(-MAX_WARNINGS);
    if (s.refused) {
      this.failure = s.refused.message;
      this.failureStatus = s.refused.status;
    }
    if (s.backoff) {
      this.backoffs = s.backoff.count;
      this.backoffUntil = s.backoff.until;
      this.transient = s.backoff.message;
      this.transientKind = s.backoff.kind;
      this.transientStatus = s.backoff.status;
    }
    const hold = this.hold(this.ctx.clock.now());
    if (hold) this.show(hold);
  }

  /** What a restart keeps of this source (state.ts). */
  saved(): SavedSourceState {
    return {
      syncedAt: this.syncedAt,
      refused: this.failure === null ? null : { message: this.failure, status: this.failureStatus },
      backoff: this.transient === null ? null : { until: this.backoffUntil, count: this.backoffs, message: this.transient, kind: this.transientKind, status: this.transientStatus },
      warnings: [...this.warnings],
    };
  }

  get key(): string {
    return cursorKey(this.rt.conn.id, this.source);
  }

  /** Not working: asleep (a timer or a poke will wake it), or stopped. */
  get idle(): boolean {
    return this.sleeping || this.stopped;
  }

  /** Starts the loop (once). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.done = this.run();
  }

  /** Stops after the page in hand (its commit, if it has begun, completes). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopCalls.abort();
    this.poke();
    await this.done;
    this.releaseDetection();
  }

  /** Another source may try to find the dialect now (this one settled it, failed or stopped). */
  private releaseDetection(): void {
    if (this.rt.detector !== this) return;
    this.rt.detector = null;
    this.rt.poke();
  }

  /** Wakes the loop now (a resume, a new token, a change of settings). */
  poke(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** Forgets failures and back-offs: the next step tries again at once. */
  retry(): void {
    this.failure = null;
    this.failureStatus = null;
    this.backoffs = 0;
    this.backoffUntil = 0;
    this.transient = null;
    this.refusedDialects.clear();
  }

  private cursor(): Cursor {
    return this.committed?.cursor ?? { ts: this.rt.conn.start, id: null };
  }

  private sleep(ms: number | null): Promise<void> {
    return new Promise((resolve) => {
      let handle: unknown;
      const finish = () => {
        if (!this.sleeping) return;
        this.sleeping = false;
        this.wake = null;
        if (handle !== undefined) this.ctx.timers.clear(handle);
        resolve();
      };
      this.sleeping = true;
      this.wake = finish;
      if (ms !== null) handle = this.ctx.timers.set(finish, Math.max(1, ms));
    });
  }

  /** Why no call may be made now, if any. */
  private hold(now: number): Hold | null {
    const rt = this.rt;
    if (rt.conn.paused) return { state: 'paused', error: null };
    if (rt.tokenProblem) return { state: 'failed', error: rt.tokenProblem, kind: 'token', status: null };
    if (rt.authFailure) return { state: 'failed', error: rt.authFailure, kind: 'auth', status: rt.authStatus };
    if (this.failure) return { state: 'failed', error: this.failure, kind: 'refused', status: this.failureStatus };
    if (rt.blockedUntil > now) return { state: 'waiting', error: rt.blockedMessage, kind: 'rate_limited', status: 429, until: rt.blockedUntil, reason: 'rate_limited' };
    if (this.backoffUntil > now) return { state: 'waiting', error: this.transient, kind: this.transientKind, status: this.transientStatus, until: this.backoffUntil, reason: 'backoff' };
    if (rt.conn.kind === 'supabase' && rt.conn.dialect === 'detect' && !rt.conn.detected && rt.detector && rt.detector !== this) {
      return { state: this.state, error: this.error, kind: this.errorKind, status: this.errorStatus };
    }
    if (!this.pass && this.phase === 'following') {
      // Caught up: following polls; with following off the source rests until it is turned on.
      if (!rt.conn.follow) return { state: 'paused', error: null };
      if (now < this.nextPollAt) return { state: 'following', error: null, until: this.nextPollAt };
    }
    return null;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const now = this.ctx.clock.now();
      const hold = this.hold(now);
      if (hold) {
        this.show(hold);
        await this.sleep(hold.until === undefined ? null : Math.ceil((hold.until - now) / 1000));
        continue;
      }
      const plan = this.plan(now);
      if (!plan) {
        this.endPass();
        continue;
      }
      const wait = this.ctx.budget.take(this.rt.conn.id);
      if (wait > 0) {
        this.waitReason = 'budget';
        this.waitUntil = now + wait * 1000;
        await this.sleep(wait);
        continue;
      }
      try {
        await this.step(plan);
        this.backoffs = 0;
        this.backoffUntil = 0;
        this.transient = null;
        this.waitReason = null;
        this.waitUntil = null;
        this.error = null;
        this.errorKind = null;
        this.errorStatus = null;
        this.state = this.phase;
      } catch (err) {
        if (this.stopped) break;
        this.failed(err, this.ctx.clock.now());
      }
    }
  }

  private show(hold: Hold): void {
    this.state = hold.state;
    this.error = hold.error;
    this.errorKind = hold.error === null ? null : (hold.kind ?? null);
    this.errorStatus = hold.error === null ? null : (hold.status ?? null);
    this.waitReason = hold.reason ?? null;
    this.waitUntil = hold.reason ? (hold.until ?? null) : null;
  }

  /** The next page to ask for, or null when this pass has reached now. */
  private plan(now: number): Plan | null {
    const conn = this.rt.conn;
    if (!this.pass) {
      const cursor = this.cursor();
      // A poll reads the last minutes again (never before the connection's start); a source
      // further behind than that is backfilling again (after a pause, an outage).
      const reread = Math.max(floorMinute(now) - REREAD_US, conn.start);
      if (cursor.ts < reread) this.phase = 'backfilling';
      const pos = this.phase === 'following' && compareCursor(cursor, { ts: reread, id: null }) > 0 ? { ts: reread, id: null } : cursor;
      this.pass = { pos, window: null };
    }
    const pass = this.pass;
    if (conn.kind === 'logflare') {
      pass.window ??= logflareWindow(pass.pos.ts, now, this.span);
      return pass.window ? { kind: 'logflare', window: pass.window, now } : null;
    }
    const window = managementWindow(pass.pos, now);
    if (!window) return null;
    if (conn.dialect === 'detect' && !conn.detected) this.rt.detector ??= this;
    const dialect: Dialect = conn.dialect !== 'detect' ? conn.dialect : (conn.detected ?? (this.refusedDialects.has('clickhouse') ? 'bigquery' : 'clickhouse'));
    return { kind: 'management', pos: pass.pos, window, dialect, now };
  }

  /** This pass has reached now: the source follows (polls) from here. */
  private endPass(): void {
    this.pass = null;
    this.phase = 'following';
    this.nextPollAt = this.ctx.clock.now() + this.ctx.pollMs * 1000;
  }

  private callOptions() {
    return { signal: this.stopCalls.signal, timeoutMs: this.ctx.requestTimeoutMs, clock: this.ctx.clock };
  }

  private async step(plan: Plan): Promise<void> {
    const { conn, token } = { conn: this.rt.conn, token: this.rt.token! };
    if (plan.kind === 'logflare') {
      const rows = await logflareQuery(conn.url, conn.ref, token, plan.window.from, plan.window.pageEnd, this.callOptions());
      const batch = await convertInSlices(rows, this.source, conn.ref, 'query');
      const outcome = afterLogflarePage(plan.window, batch.keys.map((k) => k.ts), this.span);
      if (outcome.warning) this.warn(outcome.warning);
      const cursor = outcome.done ? laterCursor(this.cursor(), { ts: outcome.cursor, id: null }) : this.cursor();
      await this.commit(batch, cursor);
      if (outcome.done) {
        this.span = outcome.nextSpan;
        this.pass = { pos: { ts: outcome.cursor, id: null }, window: null };
        if (outcome.caughtUp) this.endPass();
      } else this.pass = { pos: this.pass!.pos, window: outcome.window };
      return;
    }
    const table = clickHouseSourceOf(this.source);
    const sql = plan.dialect === 'bigquery' ? bigQueryPageSql(table, plan.pos) : clickHousePageSql(table, plan.pos);
    let rows: unknown[];
    try {
      rows = await managementQuery(conn.url, conn.ref, token, sql, plan.window, this.callOptions());
    } catch (err) {
      // `detect`: a refused query in one dialect is a cue to try the other (ClickHouse first).
      if (err instanceof RemoteError && err.failure.kind === 'refused' && conn.dialect === 'detect' && !conn.detected) {
        this.refusedDialects.set(plan.dialect, err.failure.message);
        if (this.refusedDialects.size < 2) return;
        const tried = [...this.refusedDialects].map(([d, m]) => `${d}: ${m}`).join('; ');
        throw new RemoteError({ ...err.failure, message: `the project answered neither dialect (${tried})` });
      }
      throw err;
    }
    if (conn.dialect === 'detect' && !conn.detected) {
      this.ctx.detected(this.rt, plan.dialect);
      this.releaseDetection();
    }
    const batch = await convertInSlices(rows, this.source, conn.ref, plan.dialect === 'clickhouse' ? 'clickhouse' : 'query');
    const outcome = afterManagementPage(plan.pos, plan.window, batch.keys, rows.length, plan.now);
    if ('error' in outcome) throw new SourceRefused(outcome.error);
    await this.commit(batch, laterCursor(this.cursor(), outcome.next));
    this.pass = { pos: outcome.next, window: null };
    if (outcome.caughtUp) this.endPass();
  }

  /** One commit: the page's records and the cursor after them, together. */
  private async commit(batch: Batch, cursor: Cursor): Promise<void> {
    const before = this.committed ?? { cursor, records: 0, rejected: 0 };
    let next: Committed | undefined;
    await this.ctx.store.withWriter(this.source.name, async (writer) => {
      let imported = 0;
      for (let i = 0; i < batch.records.length; i += SLICE_ROWS) {
        if (i > 0) await turnForRequests();
        imported += spanOf('sync: insert rows', () => writer.write(batch.records.slice(i, i + SLICE_ROWS))).imported;
      }
      next = { cursor, records: before.records + imported, rejected: before.rejected + batch.rejected };
      writer.setMeta(this.key, committedText(next));
    });
    this.committed = next!;
    this.syncedAt = this.ctx.clock.now();
    if (batch.rejected) this.warn(`${batch.rejected} record${batch.rejected === 1 ? '' : 's'} of a page could not be stored: ${batch.reason}`);
    this.ctx.changed();
  }

  private warn(message: string): void {
    this.warnings = [...this.warnings.filter((w) => w !== message), message].slice(-MAX_WARNINGS);
  }

  private failed(err: unknown, now: number): void {
    this.holdFor(err, now);
    this.ctx.changed();
  }

  private holdFor(err: unknown, now: number): void {
    const rt = this.rt;
    if (err instanceof RemoteError) {
      const f = err.failure;
      if (f.kind === 'auth') {
        rt.authFailure = f.message;
        rt.authStatus = f.status;
        rt.poke();
        return;
      }
      if (f.kind === 'rate') {
        rt.blockedUntil = Math.max(rt.blockedUntil, now + (f.retryAfterMs ?? RATE_LIMIT_PAUSE_MS) * 1000);
        rt.blockedMessage = f.message;
        rt.poke();
        return;
      }
      if (f.kind === 'refused') {
        this.failure = f.message;
        this.failureStatus = f.status;
        this.releaseDetection();
        return;
      }
      this.backoff(now, f.message, 'remote', f.status);
      return;
    }
    if (err instanceof SourceRefused) {
      this.failure = err.message;
      this.failureStatus = null;
      this.releaseDetection();
      return;
    }
    // The store refused the commit (a full disk, say): nothing was kept; try again later.
    const message = `could not store the page: ${(err as Error)?.message ?? String(err)}`;
    console.error(`sync ${rt.conn.id} ${this.source.alias}: ${message}`);
    this.backoff(now, message, 'store', null);
  }

  private backoff(now: number, message: string, kind: 'remote' | 'store', status: number | null): void {
    this.backoffs++;
    const ms = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.min(this.backoffs - 1, 20));
    this.backoffUntil = now + ms * 1000;
    // The message as the remote gave it; when the next try comes is in waitUntil.
    this.transient = message;
    this.transientKind = kind;
    this.transientStatus = status;
  }

  /** The answer's view of this source. */
  view(): SourceSyncView {
    const through = this.committed?.cursor.ts ?? null;
    return {
      records: this.committed?.records ?? 0,
      rejected: this.committed?.rejected ?? 0,
      through,
      throughIso: through === null ? null : formatIsoMicros(through),
      state: this.state,
      error: this.error,
      errorKind: this.errorKind,
      errorStatus: this.errorStatus,
      waitUntil: this.waitUntil,
      waitUntilIso: this.waitUntil === null ? null : formatIsoMicros(this.waitUntil),
      waitReason: this.waitReason,
      syncedAt: this.syncedAt,
      syncedAtIso: this.syncedAt === null ? null : formatIsoMicros(this.syncedAt),
      warnings: [...this.warnings],
    };
  }
}

/** The remote answered something the sync cannot go on from (a page that does not advance). */
export class SourceRefused extends Error {}
