/**
 * createApp(deps): every route, the host/origin/key checks and error rendering, with no
 * port and no listening, so tests call it in-process (`app.request(...)`).
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ENDPOINTS, findEndpoint, type EndpointDefinition } from '../queries/registry.ts';
import type { ImportRun, SourceListing, EndpointListing } from './api-types.ts';
import type { AppClock } from './clock.ts';
import { ResultsCache } from './endpoints/cache.ts';
import { validateParams, type RawParams } from './endpoints/params.ts';
import { DEFAULT_QUERY_TIMEOUT_MS, runEndpointWithin, serializeResult } from './endpoints/run.ts';
import { AppError, badParam, errorBody } from './errors.ts';
import { ImportFailure, importStream, type ImportReport } from './ingest/import.ts';
import { findSource, SOURCE_NAMES } from './sources.ts';
import { isDiskFull, type LogStore } from './store/log-store.ts';
import { formatIsoMicros, parseIsoMicros } from './time.ts';

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
}

/** Imports stream to disk and never sit in memory: the limit only stops runaway uploads. */
export const DEFAULT_MAX_UPLOAD_BYTES = 64 * 1024 ** 3;
/** Largest JSON body of parameters (endpoints, clock); read whole, so kept small. */
export const MAX_PARAMS_BODY_BYTES = 1024 ** 2;
const KEEP_FINISHED_IMPORTS = 50;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Constant-time key check over digests, so neither content nor length leaks through timing. */
export function keyMatches(given: string | undefined, expected: Buffer): boolean {
  if (!given) return false;
  return timingSafeEqual(sha256(given), expected);
}

function json(c: Context, body: unknown, status = 200): Response {
  return c.body(JSON.stringify(body), status as 200, { 'Content-Type': 'application/json; charset=utf-8' });
}

function renderError(c: Context, err: AppError): Response {
  return json(c, errorBody(err), err.httpStatus);
}

export function createApp(deps: AppDeps) {
  const registry = deps.registry ?? ENDPOINTS;
  const cache = deps.cache ?? new ResultsCache();
  const keyDigest = sha256(deps.apiKey);
  const maxUpload = deps.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  const imports = new Map<string, ImportRun>();
  const serialized = new WeakMap<object, string>();
  deps.store.onChange(() => cache.clear());

  const app = new Hono();

  app.onError((err, c) => {
    if (err instanceof AppError) return renderError(c, err);
    // Internal details (SQL text, stack) stay in the server log, never in the answer.
    console.error(err);
    if (isDiskFull(err)) {
      return renderError(c, new AppError('insufficient_storage', 'the disk is full: nothing from this request was kept, and the data saved before is intact; free some space and try again'));
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
  const paramsBodyLimit = bodyLimit({
    maxSize: MAX_PARAMS_BODY_BYTES,
    onError: () => {
      throw new AppError('payload_too_large', `a request body of parameters is limited to ${MAX_PARAMS_BODY_BYTES} bytes`);
    },
  });
  app.use('/api/endpoints/*', paramsBodyLimit);
  app.use('/api/clock', paramsBodyLimit);

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
    }));
    return json(c, { result });
  });

  const runRoute = async (c: Context, key: string) => {
    const def = findEndpoint(key, registry);
    if (!def) throw new AppError('not_found', `no endpoint named or identified ${key}`);
    if (c.req.method !== 'GET' && c.req.method !== 'POST') {
      throw new AppError('method_not_allowed', `${c.req.method} is not allowed on endpoints; use GET or POST`);
    }
    const raw: RawParams = { ...c.req.queries() };
    if (c.req.method === 'POST') {
      const text = await c.req.text();
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
    const sourceParam = c.req.query('source') || undefined;
    if (sourceParam && !findSource(sourceParam)) {
      throw badParam('source', `source must be one of ${SOURCE_NAMES.join(', ')} or their aliases`);
    }
    const length = Number(c.req.header('content-length') ?? NaN);
    if (Number.isFinite(length) && length > maxUpload) {
      throw new AppError('payload_too_large', `the upload is ${length} bytes; the limit is ${maxUpload}`);
    }
    const body = c.req.raw.body;
    if (!body) throw badParam('body', 'the request body (the export file) is empty');
    const run: ImportRun = {
      id: c.req.query('id') || randomUUID(),
      file: c.req.query('filename') || undefined,
      state: 'running',
      bytes: 0,
      totalBytes: Number.isFinite(length) ? length : undefined,
      records: 0,
      startedAt: Date.now(),
    };
    imports.set(run.id, run);
    let tooLarge = false;
    async function* chunks(): AsyncGenerator<Buffer> {
      let seen = 0;
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
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
        project: c.req.query('project') || undefined,
        fileName: run.file,
        onProgress: (p) => {
          run.bytes = p.bytes;
          run.records = p.records;
        },
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
      if (err instanceof ImportFailure) {
        run.error = err.message;
        throw badParam('body', err.message, 'import_failed');
      }
      run.error = 'internal error';
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
    const source = findSource(c.req.param('name'));
    if (!source) throw new AppError('not_found', `no source ${c.req.param('name')}`);
    const deleted = await deps.store.deleteSource(source.name);
    return json(c, { result: { source: source.name, deleted } });
  });

  app.get('/api/clock', (c) => json(c, { result: clockView(deps.clock) }));
  app.on(['PUT', 'POST'], '/api/clock', async (c) => {
    let body: { mode?: unknown; now?: unknown };
    try {
      body = (await c.req.json()) as typeof body;
    } catch {
      throw badParam('body', 'the request body must be JSON like {"mode": "fixed", "now": "2026-01-01T00:00:00Z"}');
    }
    if (body.mode === 'fixed') {
      const us = typeof body.now === 'string' ? parseIsoMicros(body.now) : undefined;
      if (us === undefined) throw badParam('now', 'now must be an ISO 8601 timestamp');
      deps.clock.set('fixed', us);
    } else if (body.mode === 'system' || body.mode === 'latest') {
      deps.clock.set(body.mode);
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
    // Client-side routes fall back to the app shell.
    app.get('*', (c) => c.html(indexHtml));
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
