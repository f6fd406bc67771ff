/**
 * createApp(deps): every route, the host/origin/key checks and error rendering, with no
 * port and no listening, so tests call it in-process (`app.request(...)`).
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono, type Context } from 'hono';
import { ENDPOINTS, findEndpoint, type EndpointDefinition } from '../queries/registry.ts';
import type { ImportRun, SourceListing, EndpointListing } from './api-types.ts';
import type { AppClock } from './clock.ts';
import { ResultsCache } from './endpoints/cache.ts';
import { rawParams, validateParams } from './endpoints/params.ts';
import { DEFAULT_QUERY_TIMEOUT_MS, runEndpointWithin, serializeResult } from './endpoints/run.ts';
import { AppError, badParam, errorBody, methodNotAllowed, type ErrorDetail } from './errors.ts';
import { registerViewRoutes } from './routes/views.ts';
import { ImportCancelled, ImportFailure, importStream, ImportTooLarge, type ImportReport } from './ingest/import.ts';
import { registerFunctionRoutes } from './routes/functions.ts';
import { registerLogRoutes } from './routes/logs.ts';
import { registerConnectionRoutes } from './routes/connections.ts';
import type { SyncManager } from './sync/manager.ts';
import { findSource, findSourceExact, SOURCE_NAMES } from './sources.ts';
import { EngineTrapped } from './store/db.ts';
import { StoreFileDamaged } from './store/damage.ts';
import { isDiskFull, type LogStore } from './store/log-store.ts';
import { formatIsoMicros, INSTANT_RANGE, readIsoMicros } from './time.ts';
import { json } from './http.ts';

export interface AppDeps {
  store: LogStore;
  clock: AppClock;
  apiKey: string;
  /** The port the server listens on; Host headers must name it. */
  port: () => number | undefined;
  registry?: readonly EndpointDefinition[];
  cache?: ResultsCache;
  /** Built renderer to serve at `/`, if any. */
  rendererDir?: string;
  /** Largest accepted import upload, bytes. */
  maxUploadBytes?: number;
  /** Longest an endpoint computation may run before it is stopped with a 503, ms. */
  queryTimeoutMs?: number;
  /** Loads the embedded demo data (the UI's "load demo data"). */
  loadDemo?: () => Promise<ImportReport[]>;
  /** The body window, ms (DEFAULT_BODY_TIMEOUT_MS): 408 for a body that is too slow. */
  bodyTimeoutMs?: number;
  /** Connections and their syncs (`/api/connections`); the caller starts and stops it. */
  sync?: SyncManager;
}

/** Imports stream to disk and never sit in memory: the limit only stops runaway uploads. */
export const DEFAULT_MAX_UPLOAD_BYTES = 64 * 1024 ** 3;
/** Largest JSON body of parameters (endpoints, clock); read whole, so kept small. */
export const MAX_PARAMS_BODY_BYTES = 1024 ** 2;
/**
 * The body window: a body of parameters must arrive within it, and an upload (which may take
 * hours) must bring MIN_UPLOAD_BYTES_PER_WINDOW in each window the server waits for it.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;
/** About 0.5 KiB/s at the default window: far below any real upload, far above a trickle meant to hold the connection. */
export const MIN_UPLOAD_BYTES_PER_WINDOW = 16 * 1024;
const DISK_FULL_MESSAGE = 'the disk is full: nothing from this request was kept, and the data saved before is intact; free some space and try again';
const ENDPOINT_METHODS = ['GET', 'HEAD', 'POST'] as const;
const KEEP_FINISHED_IMPORTS = 50;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Constant-time key check over digests, so neither content nor length leaks through timing. */
export function keyMatches(given: string | undefined, expected: Buffer): boolean {
  if (!given) return false;
  return timingSafeEqual(sha256(given), expected);
}

function renderError(c: Context, err: AppError): Response {
  return json(c, errorBody(err), err.httpStatus, err.headers);
}

type ChunkRead = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;

/** A timer this late means the event loop was busy (a long synchronous query, say), not that the client was silent. */
const TIMER_LATE_MS = 100;

/**
 * Reads a request body under a watch: each `windowMs` the app spends waiting for it must bring
 * `minBytes` or the body's end, else `stalled()` is thrown (a 408). Only waiting counts, so a busy
 * consumer (an import committing a batch) never makes the client look slow; a window in which the
 * event loop itself stalled starts over rather than blaming the client.
 */
class BodyWatch {
  #waited = 0;
  #bytes = 0;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly windowMs: number,
    private readonly minBytes: number,
    private readonly stalled: () => AppError,
  ) {}

  async read(): Promise<ChunkRead> {
    // race() handles this read's rejection too, should it lose and the connection close later.
    const next = this.reader.read().then((r) => ({ r }));
    for (;;) {
      const remaining = this.windowMs - this.#waited;
      const started = performance.now();
      let late = false;
      let timer: NodeJS.Timeout | undefined;
      const elapsed = new Promise<null>((resolve) => {
        timer = setTimeout(() => {
          late = performance.now() - started - remaining > TIMER_LATE_MS;
          // After setImmediate: data already in the socket is read first, not taken for silence.
          setImmediate(resolve, null);
        }, remaining);
      });
      const got = await Promise.race([next, elapsed]);
      clearTimeout(timer);
      const bytes = got && !got.r.done ? got.r.value.byteLength : 0;
      // Data can also win the race after a stall: the loop reads sockets before late timers.
      if (late || performance.now() - started - remaining > TIMER_LATE_MS) {
        this.#waited = 0;
        this.#bytes = bytes;
      } else {
        this.#waited += Math.min(performance.now() - started, remaining);
        this.#bytes += bytes;
        if (this.#waited >= this.windowMs) {
          if (this.#bytes < this.minBytes && !got?.r.done) throw this.stalled();
          this.#waited = this.#bytes = 0;
        }
      }
      if (got) return got.r;
    }
  }
}

/** The 408 of a body given up on; the rest of it will never be read, so the connection closes. */
function bodyStalled(message: string): AppError {
  return new AppError('timeout', message, [], { Connection: 'close' });
}

/** A small body (endpoint parameters, the clock) as text: at most MAX_PARAMS_BODY_BYTES (413), within one body window (408). */
export async function readSmallBody(c: Context, windowMs: number): Promise<string> {
  const tooLarge = () => new AppError('payload_too_large', `a request body of parameters is limited to ${MAX_PARAMS_BODY_BYTES} bytes`);
  if (Number(c.req.header('content-length') ?? 0) > MAX_PARAMS_BODY_BYTES) throw tooLarge();
  const body = c.req.raw.body;
  if (!body) return '';
  // At most 1 MiB: it must arrive whole within one window.
  const watch = new BodyWatch(body.getReader(), windowMs, Infinity, () => bodyStalled(`the request body did not arrive within ${windowMs / 1000} s`));
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await watch.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_PARAMS_BODY_BYTES) throw tooLarge();
    parts.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(parts));
}

/** A JSON object body, or a 400 with `help`. */
function parseObjectBody(text: string, help: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badParam('body', help);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badParam('body', help);
  return body as Record<string, unknown>;
}

/** An own property only: nothing inherited from a prototype counts as sent. */
function own(o: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}

export function createApp(deps: AppDeps) {
  const registry = deps.registry ?? ENDPOINTS;
  const cache = deps.cache ?? new ResultsCache();
  const keyDigest = sha256(deps.apiKey);
  const maxUpload = deps.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  const bodyWindowMs = deps.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const imports = new Map<string, ImportRun>();
  const serialized = new WeakMap<object, string>();
  deps.store.onChange(() => cache.clear());

  const app = new Hono();

  app.onError((err, c) => {
    if (err instanceof AppError) return renderError(c, err);
    if (err instanceof StoreFileDamaged) {
      // Named (relative to the data folder) with what to do; the requests that do not need the file go on.
      deps.store.damage.note(err);
      return renderError(c, new AppError('unavailable', err.message, [{ reason: 'damaged', location: err.file, message: err.message }]));
    }
    // Internal details (SQL text, stack) stay in the server log, never in the answer.
    console.error(err);
    if (isDiskFull(err)) return renderError(c, new AppError('insufficient_storage', DISK_FULL_MESSAGE));
    if (err instanceof EngineTrapped) {
      // The store is reopening from its last commit (docs/ARCHITECTURE.md, "Engine failures").
      return renderError(c, new AppError('unavailable', 'the database engine failed on a request and is reopening from the last saved state; try again in a moment', [], { 'Retry-After': '1' }));
    }
    return renderError(c, new AppError('internal', 'internal error while answering the request'));
  });
  app.notFound((c) => renderError(c, new AppError('not_found', `no route ${c.req.method} ${c.req.path}`)));

  const allowedHosts = () => {
    const port = deps.port();
    return port === undefined ? [] : [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  };

  // DNS rebinding: a page on evil.com resolving to 127.0.0.1 still sends Host: evil.com.
  app.use('*', async (c, next) => {
    const host = (c.req.header('host') ?? '').toLowerCase();
    if (!allowedHosts().includes(host)) throw new AppError('forbidden', `host ${host || '(none)'} is not allowed`);
    const origin = c.req.header('origin');
    if (origin !== undefined && origin !== `http://${host}`) {
      throw new AppError('forbidden', `cross-origin requests are not allowed (origin ${origin})`);
    }
    if (c.req.method === 'OPTIONS') throw new AppError('forbidden', 'cross-origin requests are not allowed');
    await next();
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
  });

  app.use('/api/*', async (c, next) => {
    if (!keyMatches(c.req.header('x-api-key'), keyDigest)) {
      throw new AppError('unauthorized', 'a valid X-API-KEY header is required');
    }
    await next();
  });

  // ---- the three endpoints (docs/ARCHITECTURE.md, "Endpoint rules and where they live") ----
  app.get('/api/endpoints', (c) => {
    const result: EndpointListing[] = registry.map((e) => ({
      name: e.name,
      id: e.id,
      description: e.description,
      parameters: e.params.map((p) => ({
        name: p.name,
        required: p.required,
        kind: p.kind,
        description: p.description,
        ...(p.allowed ? { allowed: [...p.allowed] } : {}),
        ...(p.default !== undefined ? { default: p.default } : {}),
      })),
      maxRows: e.maxRows,
      cacheSeconds: e.cacheSeconds,
      warmSeconds: e.warmSeconds,
      sandboxable: e.sandboxable,
      // The entry's rules, copied: the renderer reads windows, tiers and cuts from here.
      ...(e.intervals
        ? {
            intervals: Object.fromEntries(Object.entries(e.intervals.windows).map(([k, w]) => [k, { spanUs: w.spanUs, unitUs: w.unitUs }])),
            intervalParam: e.intervals.param,
            ...(e.intervals.fallback !== undefined ? { fallbackInterval: e.intervals.fallback } : {}),
          }
        : {}),
      ...(e.tiers
        ? {
            tiers: Object.fromEntries(Object.entries(e.tiers.tiers).map(([k, t]) => [k, { retentionUs: t.retentionUs }])),
            tierParam: e.tiers.param,
            fallbackTier: e.tiers.fallback,
          }
        : {}),
      ...(e.rows !== undefined ? { rows: e.rows } : {}),
      ...(e.errorRule ? { errorRule: { statusAtLeast: e.errorRule.statusAtLeast } } : {}),
    }));
    return json(c, { result });
  });

  const runRoute = async (c: Context, key: string) => {
    const def = findEndpoint(key, registry);
    if (!def) throw new AppError('not_found', `no endpoint named or identified ${key}`);
    // HEAD is answered as GET (Hono drops the body).
    if (!(ENDPOINT_METHODS as readonly string[]).includes(c.req.method)) {
      throw methodNotAllowed(c.req.method, ENDPOINT_METHODS, `${c.req.method} is not allowed on endpoints; use GET or POST`);
    }
    // No prototype: a `__proto__` key from the body is copied as a key, never as the prototype.
    const raw = rawParams();
    for (const [k, v] of Object.entries(c.req.queries())) raw[k] = v;
    if (c.req.method === 'POST') {
      const text = await readSmallBody(c, bodyWindowMs);
      if (text.trim() !== '') {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          throw badParam('body', 'the request body is not valid JSON');
        }
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          throw badParam('body', 'the request body must be a JSON object of parameters');
        }
        // A parameter in both the query string and the body is a repeat (a 400), not an override.
        for (const [k, v] of Object.entries(body)) raw[k] = Object.hasOwn(raw, k) ? [raw[k], v].flat() : v;
      }
    }
    const params = validateParams(def, raw);
    // Setting the clock clears the cache, so the key needs only the declared values.
    const result = await cache.get(def, params.key, async () => {
      const now = deps.clock.now();
      return { rows: await runEndpointWithin(deps.store, def, params, now, deps.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS), now };
    });
    // The instant the windows were computed from: a cached result can be older than the clock.
    c.header('X-Log-Explorer-Now', String(result.now));
    c.header(
      'Cache-Status',
      def.cacheSeconds <= 0 ? 'LogExplorer; fwd=bypass' : result.hit ? `LogExplorer; hit${result.ttl !== undefined ? `; ttl=${result.ttl}` : ''}` : 'LogExplorer; fwd=miss; stored',
    );
    // A cache hit hands back the same rows array: serialize it once, not on every hit.
    let body = serialized.get(result.rows);
    if (body === undefined) serialized.set(result.rows, (body = serializeResult(result.rows)));
    return c.body(body, 200, { 'Content-Type': 'application/json; charset=utf-8' });
  };
  app.all('/api/endpoints/query/:key', (c) => runRoute(c, c.req.param('key')));
  app.all('/api/endpoints/:name', (c) => runRoute(c, c.req.param('name')));

  // ---- the app's own API (docs/ARCHITECTURE.md, "App API") ----
  app.post('/api/imports', async (c) => {
    // Each parameter once, as on the endpoints: a repeat is a 400, never "the first one wins".
    const repeated: ErrorDetail[] = [];
    const query = (name: string): string | undefined => {
      const all = c.req.queries(name) ?? [];
      if (all.length > 1) repeated.push({ reason: 'duplicate', location: name, message: `${name} is given more than once` });
      return all[0] || undefined;
    };
    const sourceParam = query('source');
    const idParam = query('id');
    const fileParam = query('filename');
    const projectParam = query('project');
    if (repeated.length) throw new AppError('bad_request', repeated.map((d) => d.message).join('; '), repeated);
    if (sourceParam && !findSource(sourceParam)) {
      throw badParam('source', `source must be one of ${SOURCE_NAMES.join(', ')} or their aliases`);
    }
    // A reused id would overwrite the earlier run's progress, which a client may still be polling.
    if (idParam !== undefined && imports.has(idParam)) {
      const message = `an import with id ${idParam} exists already; give each import its own id`;
      throw new AppError('conflict', message, [{ reason: 'duplicate', location: 'id', message }]);
    }
    const length = Number(c.req.header('content-length') ?? NaN);
    if (Number.isFinite(length) && length > maxUpload) {
      throw new AppError('payload_too_large', `the upload is ${length} bytes; the limit is ${maxUpload}`);
    }
    const body = c.req.raw.body;
    if (!body) throw badParam('body', 'the request body (the export file) is empty');
    const run: ImportRun = {
      id: idParam ?? randomUUID(),
      file: fileParam,
      state: 'running',
      bytes: 0,
      totalBytes: Number.isFinite(length) ? length : undefined,
      records: 0,
      startedAt: Date.now(),
    };
    imports.set(run.id, run);
    let tooLarge = false;
    const stalledMessage = `the upload stalled: less than ${MIN_UPLOAD_BYTES_PER_WINDOW / 1024} KiB arrived in ${bodyWindowMs / 1000} s`;
    let stalled = false;
    const watch = new BodyWatch(body.getReader(), bodyWindowMs, MIN_UPLOAD_BYTES_PER_WINDOW, () => {
      stalled = true;
      return bodyStalled(stalledMessage);
    });
    async function* chunks(): AsyncGenerator<Buffer> {
      let seen = 0;
      for (;;) {
        const next = await watch.read();
        if (next.done) return;
        const chunk = next.value;
        seen += chunk.byteLength;
        if (seen > maxUpload) {
          tooLarge = true;
          throw new Error('upload too large');
        }
        yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      }
    }
    try {
      const report = await importStream(deps.store, chunks(), {
        source: sourceParam,
        project: projectParam,
        fileName: run.file,
        onProgress: (p) => {
          run.bytes = p.bytes;
          run.records = p.records;
        },
        // A small gzip may inflate without end: its content counts against the same limit.
        maxContentBytes: maxUpload,
        // The client went away: stop the import (and its parser) now, not when the file is read.
        signal: c.req.raw.signal,
      });
      run.state = 'done';
      run.report = report;
      return json(c, { result: report });
    } catch (err) {
      run.state = 'failed';
      if (tooLarge) {
        run.error = 'upload too large';
        throw new AppError('payload_too_large', `the upload is larger than the limit of ${maxUpload} bytes`);
      }
      if (stalled) {
        run.error = stalledMessage;
        throw bodyStalled(stalledMessage);
      }
      if (err instanceof ImportTooLarge) {
        run.error = `the decompressed size of the body passed the limit of ${err.limit} bytes; the import failed and nothing from this file was kept (a failed import leaves the store as it was)`;
        throw new AppError('payload_too_large', run.error, [{ reason: 'too_large', location: 'body', message: run.error }]);
      }
      if (err instanceof ImportCancelled) {
        // Nobody reads this answer (the client has gone); the progress entry says what happened.
        run.error = err.message;
        throw new AppError('bad_request', err.message, [{ reason: 'cancelled', location: 'body', message: err.message }]);
      }
      if (err instanceof ImportFailure) {
        run.error = err.message;
        throw badParam('body', err.message, 'import_failed');
      }
      run.error = isDiskFull(err) ? DISK_FULL_MESSAGE : 'internal error';
      throw err;
    } finally {
      run.finishedAt = Date.now();
      pruneImports(imports);
    }
  });

  app.get('/api/imports', (c) => json(c, { result: [...imports.values()].reverse() }));

  app.get('/api/sources', (c) => {
    const result: SourceListing[] = deps.store.summary().map((s) => ({
      ...s,
      minIso: s.minTimestamp === null ? null : formatIsoMicros(s.minTimestamp),
      maxIso: s.maxTimestamp === null ? null : formatIsoMicros(s.maxTimestamp),
    }));
    return json(c, { result });
  });

  app.delete('/api/sources/:name', async (c) => {
    // Exact name or alias only: a delete must not reach a source through a near-miss spelling.
    const source = findSourceExact(c.req.param('name'));
    if (!source) throw new AppError('not_found', `no source ${c.req.param('name')}`);
    const deleted = await deps.store.deleteSource(source.name);
    return json(c, { result: { source: source.name, deleted } });
  });

  app.get('/api/clock', (c) => json(c, { result: clockView(deps.clock) }));
  app.on(['PUT', 'POST'], '/api/clock', async (c) => {
    const body = parseObjectBody(await readSmallBody(c, bodyWindowMs), 'the request body must be JSON like {"mode": "fixed", "now": "2026-01-01T00:00:00Z"}');
    const mode = own(body, 'mode');
    const now = own(body, 'now');
    if (mode === 'fixed') {
      const read = typeof now === 'string' ? readIsoMicros(now) : undefined;
      if (read && 'problem' in read && read.problem === 'out-of-range') throw badParam('now', `now must be within ${INSTANT_RANGE.text}`);
      if (!read || !('us' in read)) throw badParam('now', 'now must be an ISO 8601 timestamp');
      deps.clock.set('fixed', read.us);
    } else if (mode === 'system' || mode === 'latest') {
      deps.clock.set(mode);
    } else {
      throw badParam('mode', 'mode must be one of system, fixed, latest');
    }
    cache.clear();
    return json(c, { result: clockView(deps.clock) });
  });

  app.post('/api/demo', async (c) => {
    if (!deps.loadDemo) throw new AppError('not_found', 'this server has no demo data');
    return json(c, { result: await deps.loadDemo() });
  });

  registerViewRoutes(app, deps);

  registerFunctionRoutes(app, deps);

  registerLogRoutes(app, deps);

  if (deps.sync) registerConnectionRoutes(app, deps.sync, bodyWindowMs);

  // A known route asked with another method is a 405 naming the ones it takes (HEAD comes with GET).
  const routeMethods: Array<[string, readonly string[]]> = [
    ['/api/endpoints', ['GET', 'HEAD']],
    ['/api/imports', ['GET', 'HEAD', 'POST']],
    ['/api/sources', ['GET', 'HEAD']],
    ['/api/sources/:name', ['DELETE']],
    ['/api/clock', ['GET', 'HEAD', 'PUT', 'POST']],
    ['/api/demo', ['POST']],
    ['/api/views', ['GET', 'HEAD', 'POST']],
    ['/api/views/:id', ['PATCH', 'DELETE']],
    ['/api/searches', ['GET', 'HEAD', 'POST', 'DELETE']],
    ['/api/connections', ['GET', 'HEAD', 'POST']],
    ['/api/connections/test', ['POST']],
    ['/api/connections/:id', ['GET', 'HEAD', 'PATCH', 'DELETE']],
  ];
  for (const [route, allowed] of routeMethods) {
    app.all(route, (c) => {
      throw methodNotAllowed(c.req.method, allowed);
    });
  }

  app.all('/api/*', (c) => {
    throw new AppError('not_found', `no route ${c.req.method} ${c.req.path}`);
  });

  // ---- the renderer ----
  if (deps.rendererDir && fs.existsSync(path.join(deps.rendererDir, 'index.html'))) {
    const root = path.relative(process.cwd(), deps.rendererDir) || '.';
    const indexHtml = fs.readFileSync(path.join(deps.rendererDir, 'index.html'), 'utf8');
    app.use('*', async (c, next) => {
      await next();
      c.header('Content-Security-Policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'; form-action 'self'");
    });
    app.get('*', serveStatic({ root }));
    // Client-side routes (/logs, /usage: no extension) fall back to the app shell; a missing
    // file is a 404, or a stale page would run index.html as its script.
    app.get('*', (c) => {
      if (c.req.path.startsWith('/assets/') || /\.[^/.]+$/.test(c.req.path)) throw new AppError('not_found', `no file ${c.req.path}`);
      return c.html(indexHtml);
    });
  }

  return { app, cache, imports };
}

function clockView(clock: AppClock) {
  const s = clock.state();
  return { ...s, iso: formatIsoMicros(s.now), ...(s.fixed !== undefined ? { fixedIso: formatIsoMicros(s.fixed) } : {}) };
}

function pruneImports(imports: Map<string, ImportRun>): void {
  const finished = [...imports.values()].filter((r) => r.state !== 'running');
  for (const r of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED_IMPORTS))) imports.delete(r.id);
}
