/**
 * createApp(deps): the app assembled from its parts, with no port and no listening, so tests
 * call it in-process (`app.request(...)`): the host, origin and key checks, the one error
 * renderer, the route modules (server/routes/, each a Hono sub-app mounted with the one 405
 * rule), the 404 of unknown API routes, and the built renderer.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono, type Context } from 'hono';
import type { ImportRun } from '../contract/api-types.ts';
import { ResultsCache } from './endpoints/cache.ts';
import { AppError, errorBody } from './errors.ts';
import { json, mountRoutes } from './http.ts';
import { answeringStarted } from './turns.ts';
import { DEFAULT_BODY_TIMEOUT_MS } from './request.ts';
import { clockRoutes } from './routes/clock.ts';
import { connectionRoutes } from './routes/connections.ts';
import { DISK_FULL_MESSAGE, type AppDeps, type AppShared } from './routes/context.ts';
import { endpointNotAllowed, endpointRoutes } from './routes/endpoints.ts';
import { functionRoutes } from './routes/functions.ts';
import { importRoutes } from './routes/imports.ts';
import { logRoutes } from './routes/logs.ts';
import { sourceRoutes } from './routes/sources.ts';
import { viewRoutes } from './routes/views.ts';
import { EngineTrapped } from './store/db.ts';
import { StoreFileDamaged } from './store/damage.ts';
import { isDiskFull } from './store/log-store.ts';

/** Sent with every answer. */
const SECURITY_HEADERS = [
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'no-referrer'],
] as const;

export type { AppDeps };

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

export function createApp(deps: AppDeps) {
  const cache = deps.cache ?? new ResultsCache();
  const keyDigest = sha256(deps.apiKey);
  const imports = new Map<string, ImportRun>();
  const shared: AppShared = { cache, imports, bodyWindowMs: deps.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS };
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
    // Set before the answer exists, where every answer made with the context (errors too) takes
    // them. Set after, Hono copies the answer into a new Response whose body is a stream: 1.5 ms
    // of a 170 KB logs.all answer. An answer made without the context still gets them below.
    for (const [name, value] of SECURITY_HEADERS) c.header(name, value);
    const host = (c.req.header('host') ?? '').toLowerCase();
    if (!allowedHosts().includes(host)) throw new AppError('forbidden', `host ${host || '(none)'} is not allowed`);
    const origin = c.req.header('origin');
    if (origin !== undefined && origin !== `http://${host}`) {
      throw new AppError('forbidden', `cross-origin requests are not allowed (origin ${origin})`);
    }
    if (c.req.method === 'OPTIONS') throw new AppError('forbidden', 'cross-origin requests are not allowed');
    await next();
    for (const [name, value] of SECURITY_HEADERS) if (!c.res.headers.has(name)) c.header(name, value);
  });

  app.use('/api/*', async (c, next) => {
    if (!keyMatches(c.req.header('x-api-key'), keyDigest)) {
      throw new AppError('unauthorized', 'a valid X-API-KEY header is required');
    }
    await next();
  });

  // Reads are answered before an import's or a sync's next turn (server/turns.ts): the import
  // upload and other writes are not reads (an upload lasts as long as its import).
  app.use('*', async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD' && !c.req.path.startsWith('/api/endpoints/')) return next();
    const answered = answeringStarted();
    try {
      await next();
    } finally {
      answered();
    }
  });

  // ---- the API: each module's routes, other methods a 405 (server/http.ts, mountRoutes) ----
  mountRoutes(app, endpointRoutes(deps, shared), endpointNotAllowed);
  mountRoutes(app, importRoutes(deps, shared));
  mountRoutes(app, sourceRoutes(deps));
  mountRoutes(app, clockRoutes(deps, shared));
  mountRoutes(app, viewRoutes(deps, shared));
  mountRoutes(app, functionRoutes(deps));
  mountRoutes(app, logRoutes(deps));
  if (deps.sync) mountRoutes(app, connectionRoutes(deps.sync, shared.bodyWindowMs));

  app.all('/api/*', (c) => {
    throw new AppError('not_found', `no route ${c.req.method} ${c.req.path}`);
  });

  // ---- the renderer ----
  if (deps.rendererDir && fs.existsSync(path.join(deps.rendererDir, 'index.html'))) {
    const root = path.relative(process.cwd(), deps.rendererDir) || '.';
    const indexHtml = fs.readFileSync(path.join(deps.rendererDir, 'index.html'), 'utf8');
    app.use('*', async (c, next) => {
      c.header('Content-Security-Policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'; form-action 'self'");
      await next();
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
