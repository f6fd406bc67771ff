/**
 * Opens the store, builds the app and listens on 127.0.0.1 only. Used by the CLI
 * (`npm run serve`), by `npm start` and by the Electron shell's server process.
 */
import { randomBytes } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { serve } from '@hono/node-server';
import { createApp } from './app.ts';
import { DEFAULT_BODY_TIMEOUT_MS } from './request.ts';
import { AppClock } from './clock.ts';
import { CACHE_TICK_MS } from './endpoints/cache.ts';
import { AppError, errorBody, type ErrorKind } from './errors.ts';
import type { ImportReport } from './ingest/import.ts';
import type { DataLockKind } from './store/data-lock.ts';
import { LogStore } from './store/log-store.ts';
import { SyncManager } from './sync/manager.ts';
import { keyedVault, plainVault } from './sync/vault.ts';
import { systemClock } from './time.ts';

export interface ServerOptions {
  dataDir: string;
  /** Who holds the data folder's lock: 'serve' (npm run serve, npm start), 'desktop' (the app's server process). */
  lockKind?: DataLockKind;
  /** 0 picks a free port. */
  port: number;
  apiKey?: string;
  /** Fixes the clock (µs). */
  now?: number;
  rendererDir?: string;
  loadDemo?: (store: LogStore, now: number) => Promise<ImportReport[]>;
  /** Largest accepted request header block, bytes (431 beyond it). */
  maxHeaderBytes?: number;
  /** A client must send its whole header block within this time, ms (408 after it). */
  headersTimeoutMs?: number;
  /** Longest an endpoint query may run, ms (503 after it). */
  queryTimeoutMs?: number;
  /** Largest accepted import upload, bytes (413 beyond it). */
  maxUploadBytes?: number;
  /**
   * The body window, ms (DEFAULT_BODY_TIMEOUT_MS): a body of parameters must arrive within it, an
   * upload must bring 16 KiB in each window the server waits for it (408 otherwise).
   */
  bodyTimeoutMs?: number;
  /** Connections' syncs: the app's call budget a minute and the seconds between polls (server/sync/manager.ts). */
  sync?: { callsPerMinute?: number; pollSeconds?: number };
  /**
   * The desktop app's token key (32 bytes, kept by Electron's safeStorage): connection tokens
   * are stored encrypted with it. Without it they are stored in the owner-only connections file.
   */
  tokenKey?: Buffer;
}

export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

export interface RunningServer {
  url: string;
  port: number;
  apiKey: string;
  store: LogStore;
  clock: AppClock;
  /** Stops listening, waits for running work and saves the store. */
  close(): Promise<void>;
}

export function generateApiKey(): string {
  return randomBytes(24).toString('base64url');
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  // Throws DataFolderLocked when another live process owns the folder.
  const store = await LogStore.open(opts.dataDir, { lockKind: opts.lockKind });
  const clock = new AppClock(() => {
    const max = store.summary().reduce<number | null>((m, s) => (s.maxTimestamp !== null && (m === null || s.maxTimestamp > m) ? s.maxTimestamp : m), null);
    return max;
  });
  if (opts.now !== undefined) clock.set('fixed', opts.now);
  const apiKey = opts.apiKey ?? generateApiKey();
  // The sync's now: the system clock, or the fixed instant (--now, tests); never the newest record.
  const syncClock = { now: () => (clock.state().mode === 'fixed' ? clock.now() : systemClock.now()) };
  const sync = SyncManager.open({ store, clock: syncClock, vault: opts.tokenKey ? keyedVault(opts.tokenKey) : plainVault, ...opts.sync });
  let port: number | undefined;
  const { app, cache } = createApp({
    store,
    clock,
    apiKey,
    port: () => port,
    rendererDir: opts.rendererDir,
    loadDemo: opts.loadDemo ? () => opts.loadDemo!(store, clock.now()) : undefined,
    queryTimeoutMs: opts.queryTimeoutMs,
    maxUploadBytes: opts.maxUploadBytes,
    bodyTimeoutMs: opts.bodyTimeoutMs,
    sync,
  });
  const headersTimeout = opts.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const listening = new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve(
      {
        fetch: app.fetch,
        hostname: '127.0.0.1',
        port: opts.port,
        serverOptions: {
          maxHeaderSize: opts.maxHeaderBytes ?? 16 * 1024,
          headersTimeout,
          // Node checks the timeouts on this period (30 s by default): a slow client would get
          // up to headersTimeout + 30 s. Uploads of several GB may take long: no whole-request limit.
          connectionsCheckingInterval: Math.min(1_000, headersTimeout),
          requestTimeout: 0,
        },
      },
      () => resolve(s),
    );
    s.once('error', reject);
  });
  let server: ReturnType<typeof serve>;
  try {
    server = await listening;
  } catch (err) {
    // Port in use: give the folder (and its lock) back, so the caller may retry on another port.
    await store.close();
    throw err;
  }
  server.on('clientError', answerClientError);
  const bodyWindow = opts.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => limitUnreadBody(req, res, bodyWindow));
  port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  // The lock now tells `npm run import` where to send files instead of opening the folder itself.
  store.lock?.update({ url, apiKey });
  // Each tick refreshes a bounded batch (endpoints/cache.ts), so it runs often.
  const warm = setInterval(() => void cache.tick(), CACHE_TICK_MS);
  warm.unref();
  sync.start();
  return {
    url,
    port,
    apiKey,
    store,
    clock,
    async close() {
      clearInterval(warm);
      await sync.stop();
      // Stops a running tick's batch before the store closes under it.
      cache.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      try {
        await store.save();
      } finally {
        // A failed save (a full disk) still lets the folder go: the lock and open files.
        await store.close();
      }
    },
  };
}

/**
 * A body still arriving once its answer is out (one the app never reads: a GET's, a refused
 * request's) is only discarded; it gets one body window more, then the connection closes, so a
 * trickle cannot hold it. Keep-alive connections whose requests are complete are not touched.
 */
function limitUnreadBody(req: IncomingMessage, res: ServerResponse, windowMs: number): void {
  res.once('finish', () => {
    if (req.complete) return;
    const timer = setTimeout(() => {
      if (!req.complete) req.socket.destroy();
    }, windowMs);
    timer.unref();
    req.once('close', () => clearTimeout(timer));
  });
}

/** What Node's parser refused (before the app sees a request), in the one error envelope. */
const CLIENT_ERRORS: Record<string, [ErrorKind, string]> = {
  HPE_HEADER_OVERFLOW: ['headers_too_large', 'the request headers are larger than the limit'],
  ERR_HTTP_REQUEST_TIMEOUT: ['timeout', 'the request headers did not arrive in time'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: ['payload_too_large', 'the chunk extensions are larger than the limit'],
};

function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // Node's own handler answers with a bare status line; ours renders the JSON envelope.
  const sent = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (err.code === 'ECONNRESET' || !socket.writable || sent) {
    socket.destroy();
    return;
  }
  const [kind, message] = CLIENT_ERRORS[err.code ?? ''] ?? ['bad_request', 'the request could not be parsed as HTTP/1.1'];
  const e = new AppError(kind, message);
  const body = JSON.stringify(errorBody(e));
  socket.end(
    `HTTP/1.1 ${e.httpStatus} ${STATUS_CODES[e.httpStatus]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  socket.destroySoon();
}
