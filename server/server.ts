/**
 * Opens the store, builds the app and listens on 127.0.0.1 only. Used by the CLI
 * (`npm run serve`), by `npm start` and by the Electron shell's server process.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createApp } from './app.ts';
import { AppClock } from './clock.ts';
import type { ImportReport } from './ingest/import.ts';
import { LogStore } from './store/log-store.ts';

export interface ServerOptions {
  dataDir: string;
  /** 0 picks a free port. */
  port: number;
  apiKey?: string;
  /** Fixes the clock (µs). */
  now?: number;
  rendererDir?: string;
  loadDemo?: (store: LogStore, now: number) => Promise<ImportReport[]>;
  /** Largest accepted request header block, bytes (Node answers 431 beyond it). */
  maxHeaderBytes?: number;
}

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
  const store = await LogStore.open(opts.dataDir);
  const clock = new AppClock(() => {
    const max = store.summary().reduce<number | null>((m, s) => (s.maxTimestamp !== null && (m === null || s.maxTimestamp > m) ? s.maxTimestamp : m), null);
    return max;
  });
  if (opts.now !== undefined) clock.set('fixed', opts.now);
  const apiKey = opts.apiKey ?? generateApiKey();
  let port: number | undefined;
  const { app, cache } = createApp({
    store,
    clock,
    apiKey,
    port: () => port,
    rendererDir: opts.rendererDir,
    loadDemo: opts.loadDemo ? () => opts.loadDemo!(store, clock.now()) : undefined,
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve(
      {
        fetch: app.fetch,
        hostname: '127.0.0.1',
        port: opts.port,
        serverOptions: { maxHeaderSize: opts.maxHeaderBytes ?? 16 * 1024, headersTimeout: 10_000, requestTimeout: 0 },
      },
      () => resolve(s),
    );
    s.once('error', reject);
  });
  port = (server.address() as AddressInfo).port;
  const warm = setInterval(() => void cache.tick(), 5_000);
  warm.unref();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    apiKey,
    store,
    clock,
    async close() {
      clearInterval(warm);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.save();
      await store.close();
    },
  };
}
