/**
 * The connections of one data folder and their syncs (README, "Sync a live project"): one
 * SourceWorker per (connection, source), one call budget for the whole app, the connections
 * file, what the cards show kept across restarts (state.ts), and the operations the
 * `/api/connections` routes expose.
 */
import { randomUUID } from 'node:crypto';
import type { ConnectionRemoval, ConnectionTestResult, ConnectionView } from '../../contract/api-types.ts';
import { AppError } from '../errors.ts';
import { clickHouseSourceOf } from '../ingest/clickhouse-shape.ts';
import { sourceInfo, type SourceName } from '../sources.ts';
import type { LogStore } from '../store/log-store.ts';
import type { Clock } from '../time.ts';
import { formatIsoMicros, MICROS } from '../time.ts';
import { ConnectionFile, type ConnectionInput, type ConnectionPatch, type StoredConnection } from './connections.ts';
import { ConnectionRuntime, cursorKey, readCommitted, SourceWorker, type SyncContext } from './engine.ts';
import { bigQueryPageSql, clickHousePageSql, floorMinute } from './pages.ts';
import { RateBudget, DEFAULT_CALLS_PER_MINUTE } from './rate-budget.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS, logflareQuery, managementQuery, RemoteError, type Dialect } from './remote.ts';
import { SyncStateFile, type SavedConnectionState, type SavedState } from './state.ts';
import { systemTimers, type Timers } from './timers.ts';
import { plainVault, tokenHint, type TokenVault } from './vault.ts';

export const DEFAULT_POLL_SECONDS = 60;
export const MIN_POLL_SECONDS = 10;

export interface SyncOptions {
  store: LogStore;
  /** "Now" for the sync (windows, polls, waits). */
  clock: Clock;
  timers?: Timers;
  /** The app's budget of remote calls a minute (DEFAULT_CALLS_PER_MINUTE). */
  callsPerMinute?: number;
  /** Seconds between polls of a source that has caught up; at least MIN_POLL_SECONDS. */
  pollSeconds?: number;
  /** How tokens are kept at rest (vault.ts): plainVault in browser mode. */
  vault?: TokenVault;
  requestTimeoutMs?: number;
}

export class SyncManager {
  readonly budget: RateBudget;
  private readonly ctx: SyncContext;
  private readonly vault: TokenVault;
  private readonly runtimes = new Map<string, ConnectionRuntime>();
  /**
   * What was saved of each connection: read at open, and taken from a source's worker when it
   * stops, so that a worker made again for it (a change of settings) goes on from there.
   */
  private readonly saved: Map<string, SavedConnectionState>;
  private readonly state: SyncStateFile;
  private running = false;

  private constructor(
    private readonly store: LogStore,
    private readonly file: ConnectionFile,
    opts: SyncOptions,
  ) {
    this.state = SyncStateFile.open(store.dataDir, () => this.snapshot());
    this.saved = new Map(Object.entries(this.state.loaded.connections).filter(([id]) => file.list.some((c) => c.id === id)));
    const pollSeconds = opts.pollSeconds ?? DEFAULT_POLL_SECONDS;
    if (!(pollSeconds >= MIN_POLL_SECONDS)) throw new RangeError(`polls must be at least ${MIN_POLL_SECONDS} s apart, not ${pollSeconds}`);
    this.budget = new RateBudget(opts.clock, opts.callsPerMinute ?? DEFAULT_CALLS_PER_MINUTE);
    this.budget.restore(this.state.loaded.budget);
    this.vault = opts.vault ?? plainVault;
    this.ctx = {
      store,
      clock: opts.clock,
      timers: opts.timers ?? systemTimers,
      budget: this.budget,
      pollMs: pollSeconds * 1000,
      requestTimeoutMs: opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      detected: (rt, dialect) => this.detected(rt, dialect),
      saved: (id, source) => this.saved.get(id)?.sources[source.name],
      changed: () => this.state.changed(),
    };
    for (const conn of file.list) {
      const rt = new ConnectionRuntime(conn, this.vault.open(conn.token, conn.id));
      const saved = this.saved.get(conn.id);
      if (saved?.auth) {
        rt.authFailure = saved.auth.message;
        rt.authStatus = saved.auth.status;
      }
      if (saved?.rateLimited) {
        rt.blockedUntil = saved.rateLimited.until;
        rt.blockedMessage = saved.rateLimited.message;
      }
      this.runtimes.set(conn.id, rt);
    }
  }

  /** What a restart keeps of every connection (state.ts); a stopped source keeps what it had. */
  private snapshot(): SavedState {
    const now = this.ctx.clock.now();
    const out: SavedState = { connections: {}, budget: this.budget.recent() };
    for (const [id, rt] of this.runtimes) {
      const sources: SavedConnectionState['sources'] = {};
      for (const name of rt.conn.sources) {
        const s = rt.workers.get(name)?.saved() ?? this.saved.get(id)?.sources[name];
        if (s) sources[name] = s;
      }
      out.connections[id] = {
        auth: rt.authFailure === null ? null : { message: rt.authFailure, status: rt.authStatus },
        rateLimited: rt.blockedUntil > now ? { until: rt.blockedUntil, message: rt.blockedMessage } : null,
        sources,
      };
    }
    return out;
  }

  /** Keeps what a stopping worker holds, for the worker made after it. */
  private remember(id: string, name: string, saved: SavedConnectionState['sources'][string] | null): void {
    const conn = this.saved.get(id) ?? { auth: null, rateLimited: null, sources: {} };
    if (saved) conn.sources[name] = saved;
    else delete conn.sources[name];
    this.saved.set(id, conn);
  }

  /** The sync's "now" (windows, polls, a connection's start). */
  get clock(): Clock {
    return this.ctx.clock;
  }

  /** Reads the data folder's connections (none are synced until `start`). */
  static open(opts: SyncOptions): SyncManager {
    return new SyncManager(opts.store, ConnectionFile.open(opts.store.dataDir), opts);
  }

  /** Starts every connection's sources; tokens saved in browser mode are sealed now if this vault seals. */
  start(): void {
    if (this.running) return;
    this.running = true;
    for (const rt of this.runtimes.values()) this.startWorkers(rt);
    const unsealed = this.file.list.filter((c) => 'plain' in c.token && this.vault.protection !== 'owner-only file');
    if (unsealed.length) {
      void this.file
        .change((cur) => ({ next: cur.map((c) => (unsealed.some((u) => u.id === c.id) && 'plain' in c.token ? { ...c, token: this.vault.seal(c.token.plain, c.id) } : c)), result: undefined }))
        .catch((err: Error) => console.warn(`connections: could not seal the stored tokens: ${err.message}`));
    }
  }

  /** Stops every sync (the pages in hand are committed or dropped, never half-kept) and saves what the cards show. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all([...this.runtimes.values()].map((rt) => this.stopWorkers(rt)));
    await this.state.flush();
  }

  /** True when no source is working (all asleep or stopped): for tests driving virtual time. */
  isIdle(): boolean {
    for (const rt of this.runtimes.values()) for (const w of rt.workers.values()) if (!w.idle) return false;
    return true;
  }

  private startWorkers(rt: ConnectionRuntime): void {
    for (const name of rt.conn.sources) {
      let w = rt.workers.get(name);
      if (!w) rt.workers.set(name, (w = new SourceWorker(this.ctx, rt, sourceInfo(name))));
      if (this.running) w.start();
    }
  }

  private async stopWorkers(rt: ConnectionRuntime, only?: (name: string) => boolean): Promise<void> {
    const stopping: Promise<void>[] = [];
    for (const [name, w] of rt.workers) {
      if (only && !only(name)) continue;
      rt.workers.delete(name);
      stopping.push(w.stop().then(() => this.remember(rt.conn.id, name, w.saved())));
    }
    await Promise.all(stopping);
  }

  private runtime(id: string): ConnectionRuntime {
    const rt = this.runtimes.get(id);
    if (!rt) {
      const message = `no connection with id ${id}`;
      throw new AppError('not_found', message, [{ reason: 'not_found', location: 'id', message }]);
    }
    return rt;
  }

  list(): ConnectionView[] {
    return [...this.runtimes.values()].map((rt) => this.viewOf(rt));
  }

  view(id: string): ConnectionView {
    return this.viewOf(this.runtime(id));
  }

  private viewOf(rt: ConnectionRuntime): ConnectionView {
    const c = rt.conn;
    const asOf = this.ctx.clock.now();
    const sources: ConnectionView['sources'] = {};
    for (const name of c.sources) {
      const w = rt.workers.get(name) ?? new SourceWorker(this.ctx, rt, sourceInfo(name));
      sources[name] = w.view();
    }
    return {
      id: c.id,
      kind: c.kind,
      ref: c.ref,
      url: c.url,
      token: c.tokenHint,
      dialect: c.kind === 'logflare' ? null : c.dialect,
      detectedDialect: c.detected,
      follow: c.follow,
      paused: c.paused,
      start: c.start,
      startIso: formatIsoMicros(c.start),
      sources,
      callsLastMinute: this.budget.callsLastMinute(c.id),
      asOf,
      asOfIso: formatIsoMicros(asOf),
      tokenProtection: this.vault.protection,
    };
  }

  /** Adds a connection (written to the file before it syncs) and starts it. */
  async create(input: ConnectionInput): Promise<ConnectionView> {
    const id = randomUUID();
    const conn: StoredConnection = {
      id,
      kind: input.kind,
      ref: input.ref,
      url: input.url,
      token: this.vault.seal(input.token, id),
      tokenHint: tokenHint(input.token),
      dialect: input.kind === 'supabase' ? input.dialect : 'detect',
      detected: null,
      follow: input.follow,
      paused: false,
      sources: input.sources,
      start: input.start,
      createdAt: formatIsoMicros(this.ctx.clock.now()),
    };
    await this.file.change((cur) => {
      const same = cur.find((c) => c.kind === conn.kind && c.url === conn.url && c.ref === conn.ref);
      if (same) {
        const message = `a connection to ${conn.ref} at ${conn.url} exists already (id ${same.id}); change it with PATCH /api/connections/${same.id}`;
        throw new AppError('conflict', message, [{ reason: 'duplicate', location: 'ref', message }]);
      }
      return { next: [...cur, conn], result: undefined };
    });
    const rt = new ConnectionRuntime(conn, { token: input.token });
    this.runtimes.set(id, rt);
    this.startWorkers(rt);
    return this.viewOf(rt);
  }

  /** Pause, resume, following, sources, start, token. */
  async update(id: string, patch: ConnectionPatch): Promise<ConnectionView> {
    const rt = this.runtime(id);
    const next: StoredConnection = {
      ...rt.conn,
      ...(patch.paused !== undefined ? { paused: patch.paused } : {}),
      ...(patch.follow !== undefined ? { follow: patch.follow } : {}),
      ...(patch.sources ? { sources: patch.sources } : {}),
      ...(patch.start !== undefined ? { start: patch.start } : {}),
      ...(patch.token !== undefined ? { token: this.vault.seal(patch.token, id), tokenHint: tokenHint(patch.token) } : {}),
    };
    // A dialect `detect` settles meanwhile is kept (it is written by its own change).
    await this.file.change((cur) => ({ next: cur.map((c) => (c.id === id ? { ...next, detected: c.detected ?? next.detected } : c)), result: undefined }));
    const startMoved = patch.start !== undefined && patch.start !== rt.conn.start;
    rt.conn = { ...next, detected: rt.conn.detected ?? next.detected };
    if (patch.token !== undefined) {
      rt.token = patch.token;
      rt.tokenProblem = null;
    }
    // A resume or a new token tries again at once: failures, back-offs and the 429 pause are forgotten.
    if (patch.paused === false || patch.token !== undefined) {
      rt.authFailure = null;
      rt.authStatus = null;
      rt.blockedUntil = 0;
      for (const w of rt.workers.values()) w.retry();
    }
    if (startMoved) {
      // History starts elsewhere: each source reads again from there (what is stored already dedupes).
      await this.stopWorkers(rt);
      for (const name of next.sources) await this.resetCursor(rt, name, next.start);
    } else {
      await this.stopWorkers(rt, (name) => !next.sources.includes(name as SourceName));
    }
    this.startWorkers(rt);
    rt.poke();
    this.state.changed();
    return this.viewOf(rt);
  }

  private async resetCursor(rt: ConnectionRuntime, name: SourceName, start: number): Promise<void> {
    const info = sourceInfo(name);
    const key = cursorKey(rt.conn.id, info);
    const before = readCommitted(this.store, key);
    if (!before) return;
    await this.store.withWriter(name, async (w) => {
      w.setMeta(key, JSON.stringify({ v: 1, ts: start, id: null, records: before.records, rejected: before.rejected }));
    });
  }

  /**
   * Removes a connection. `data=delete` also deletes the records of its sources, which the
   * store can do per source only: it refuses (409, nothing changed) when a source holds
   * records of another project too.
   */
  async remove(id: string, data: 'keep' | 'delete'): Promise<ConnectionRemoval> {
    const rt = this.runtime(id);
    const sources = rt.conn.sources;
    if (data === 'delete') {
      const summary = this.store.summary();
      const mixed = summary.filter((s) => sources.includes(s.source) && s.projects.some((p) => p.ref !== rt.conn.ref));
      if (mixed.length) {
        const message = `cannot delete the data of ${mixed.map((s) => s.alias).join(', ')}: ${mixed.length === 1 ? 'it holds' : 'they hold'} records of other projects too, and sources are deleted whole; remove the connection with data=keep, or delete the sources from the Data page`;
        throw new AppError('conflict', message, [{ reason: 'conflict', location: 'data', message }]);
      }
    }
    await this.stopWorkers(rt);
    this.runtimes.delete(id);
    try {
      await this.file.change((cur) => ({ next: cur.filter((c) => c.id !== id), result: undefined }));
    } catch (err) {
      this.runtimes.set(id, rt);
      this.startWorkers(rt);
      throw err;
    }
    this.saved.delete(id);
    this.state.changed();
    const deleted: ConnectionRemoval['deleted'] = [];
    if (data === 'delete') {
      for (const name of sources) {
        const count = this.store.summary().find((s) => s.source === name)?.count ?? 0;
        // Another connection to the same project may sync the source too: it reads it again.
        if (count > 0) deleted.push({ source: name, records: await this.deleteSource(name) });
      }
    }
    // Its cursors go too (a leftover key would only be unused: ids are never reused).
    const keys = sources.map((name) => cursorKey(id, sourceInfo(name))).filter((k) => readCommitted(this.store, k));
    if (keys.length) {
      await this.store.withWriter(sources[0]!, async (w) => {
        for (const k of keys) w.setMeta(k, null);
      });
    }
    return { id, deleted };
  }

  /**
   * Deletes every record of a source (`DELETE /api/sources/<name>`, and `data=delete` above): each
   * connection that syncs it reads its history again from the connection's start, so what the
   * remote still holds comes back. Returns how many records the source held.
   */
  async deleteSource(name: SourceName): Promise<number> {
    const syncing = [...this.runtimes.values()].filter((rt) => rt.conn.sources.includes(name));
    // Stopped first: a page in flight must not commit a cursor past the records deleted.
    await Promise.all(syncing.map((rt) => this.stopWorkers(rt, (n) => n === name)));
    try {
      // The cursors go in a commit before the records': a crash between the two leaves a source
      // that is read again (the store's dedupe drops what it still holds), never one emptied
      // with its cursor at the end, which no sync would fill again.
      const keys = syncing.map((rt) => cursorKey(rt.conn.id, sourceInfo(name))).filter((k) => readCommitted(this.store, k));
      if (keys.length) {
        await this.store.withWriter(name, async (w) => {
          for (const k of keys) w.setMeta(k, null);
        });
      }
      // Its time, problems and warnings were about the records gone: the source starts afresh.
      for (const rt of syncing) this.remember(rt.conn.id, name, null);
      return await this.store.deleteSource(name);
    } finally {
      for (const rt of syncing) if (this.runtimes.get(rt.conn.id) === rt) this.startWorkers(rt);
      this.state.changed();
    }
  }

  /** A `detect` connection's dialect, settled by its first answer. */
  private detected(rt: ConnectionRuntime, dialect: Dialect): void {
    if (rt.conn.detected) return;
    rt.conn = { ...rt.conn, detected: dialect };
    const id = rt.conn.id;
    void this.file
      .change((cur) => ({ next: cur.map((c) => (c.id === id ? { ...c, detected: dialect } : c)), result: undefined }))
      .catch((err: Error) => console.warn(`connections: could not save the dialect of ${id}: ${err.message}`));
  }

  /**
   * One call to the remote with a connection's settings (a body as for POST, or an existing
   * connection's id): the first page of its first source over the last whole minute. `detect`
   * tries ClickHouse, then BigQuery (two calls at most).
   */
  async test(target: ConnectionInput | { id: string }): Promise<ConnectionTestResult> {
    let kind: StoredConnection['kind'];
    let url: string;
    let ref: string;
    let token: string;
    let dialect: Dialect | 'detect';
    let source: SourceName;
    if ('id' in target) {
      const rt = this.runtime(target.id);
      if (!rt.token) throw new AppError('bad_request', rt.tokenProblem ?? 'the connection has no usable token', [{ reason: 'invalid', location: 'token', message: rt.tokenProblem ?? 'no usable token' }]);
      ({ kind, url, ref } = rt.conn);
      token = rt.token;
      dialect = rt.conn.detected ?? rt.conn.dialect;
      source = rt.conn.sources[0]!;
    } else {
      ({ kind, url, ref, token, dialect } = target);
      source = target.sources[0]!;
    }
    const now = this.ctx.clock.now();
    const opts = { timeoutMs: this.ctx.requestTimeoutMs, clock: this.ctx.clock };
    const take = () => {
      const wait = this.budget.take('test');
      if (wait > 0) {
        const message = `the app has used its ${this.budget.perMinute} calls of this minute; try again in ${Math.ceil(wait / 1000)} s`;
        throw new AppError('unavailable', message, [{ reason: 'rate_limited', message }], { 'Retry-After': String(Math.ceil(wait / 1000)) });
      }
    };
    const attempt = async (d: Dialect | null): Promise<ConnectionTestResult> => {
      take();
      try {
        let rows: unknown[];
        if (kind === 'logflare') rows = await logflareQuery(url, ref, token, now - MICROS.minute, now, opts);
        else {
          const end = floorMinute(now);
          const window = { start: end - MICROS.minute, end };
          const table = clickHouseSourceOf(sourceInfo(source));
          const sql = d === 'bigquery' ? bigQueryPageSql(table, { ts: window.start, id: null }) : clickHousePageSql(table, { ts: window.start, id: null });
          rows = await managementQuery(url, ref, token, sql, window, opts);
        }
        return { ok: true, status: 200, message: null, dialect: d, rows: rows.length };
      } catch (err) {
        if (!(err instanceof RemoteError)) throw err;
        return { ok: false, status: err.failure.status, message: err.failure.message, dialect: null, rows: 0 };
      }
    };
    if (kind === 'logflare') return attempt(null);
    if (dialect !== 'detect') return attempt(dialect);
    const first = await attempt('clickhouse');
    if (first.ok || first.status === null || first.status === 401 || first.status === 403 || first.status === 429 || first.status >= 500) return first;
    const second = await attempt('bigquery');
    return second.ok ? second : { ...second, message: `the project answered neither dialect (clickhouse: ${first.message}; bigquery: ${second.message})` };
  }
}
