/**
 * The few calls the main process makes to the server's app API (docs/ARCHITECTURE.md, "App API"), over the same
 * HTTP + X-API-KEY the page uses. No business logic: the server decides, the shell asks.
 */
import type { ClockView, EndpointListing, ImportReport, SourceListing } from '../contract/api-types.ts';

export interface ServerAddress {
  url: string;
  apiKey: string;
}

export type Fetch = typeof fetch;

export class AppApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function call<T>(server: ServerAddress, method: string, route: string, fetchImpl: Fetch, timeoutMs: number): Promise<T> {
  const res = await fetchImpl(`${server.url}${route}`, {
    method,
    headers: { 'X-API-KEY': server.apiKey },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  if (!res.ok) {
    let message = `${method} ${route}: HTTP ${res.status}`;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      // not JSON: keep the status line
    }
    throw new AppApiError(message, res.status);
  }
  return (JSON.parse(text) as { result: T }).result;
}

export function appApi(server: ServerAddress, fetchImpl: Fetch = fetch) {
  return {
    clock: () => call<ClockView>(server, 'GET', '/api/clock', fetchImpl, 10_000),
    sources: () => call<SourceListing[]>(server, 'GET', '/api/sources', fetchImpl, 30_000),
    endpoints: () => call<EndpointListing[]>(server, 'GET', '/api/endpoints', fetchImpl, 10_000),
    /** Loads the embedded demo data; undefined when this server has no demo loader (404). */
    async loadDemo(): Promise<ImportReport[] | undefined> {
      try {
        // Generating and importing the demo set can take a while on a slow disk.
        return await call<ImportReport[]>(server, 'POST', '/api/demo', fetchImpl, 10 * 60_000);
      } catch (err) {
        if (err instanceof AppApiError && err.status === 404) return undefined;
        throw err;
      }
    },
    deleteSource: (name: string) => call<{ source: string; deleted: number }>(server, 'DELETE', `/api/sources/${encodeURIComponent(name)}`, fetchImpl, 5 * 60_000),
  };
}

export type AppApi = ReturnType<typeof appApi>;

/**
 * Resolves once GET /api/clock answers 200 with the key: the server listens, the store is
 * open and the key is the one we hold. Rejects after `timeoutMs`.
 */
export async function waitForServer(server: ServerAddress, opts: { timeoutMs?: number; intervalMs?: number; fetch?: Fetch } = {}): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const interval = opts.intervalMs ?? 100;
  let last = 'no answer yet';
  for (;;) {
    try {
      const res = await (opts.fetch ?? fetch)(`${server.url}/api/clock`, { headers: { 'X-API-KEY': server.apiKey }, signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() + interval > deadline) throw new Error(`the server at ${server.url} did not answer GET /api/clock (${last})`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** True when no source holds a record: the store is as a first start leaves it. */
export function storeIsEmpty(sources: readonly SourceListing[]): boolean {
  return sources.every((s) => s.count === 0);
}

/** The sources a demo load wrote into, each once, for "clear demo data". */
export function demoSources(reports: readonly ImportReport[]): string[] {
  return [...new Set(reports.filter((r) => r.imported > 0 || r.duplicates > 0).map((r) => r.source))];
}
