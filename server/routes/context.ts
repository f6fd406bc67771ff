/**
 * What every route module is given: the app's dependencies (createApp's argument) and the state
 * the app's routes share. Kept apart from app.ts, which mounts the route modules, so that no
 * route imports the app.
 */
import type { EndpointDefinition } from '../../queries/registry.ts';
import type { ImportRun } from '../../contract/api-types.ts';
import type { AppClock } from '../clock.ts';
import type { ResultsCache } from '../endpoints/cache.ts';
import type { ImportReport } from '../ingest/import.ts';
import type { LogStore } from '../store/log-store.ts';
import type { SyncManager } from '../sync/manager.ts';

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

/** The state createApp keeps for its routes. */
export interface AppShared {
  /** The endpoints' results cache: imports, deletes and clock changes clear it. */
  cache: ResultsCache;
  /** Imports running and recently finished, by id (`GET /api/imports`). */
  imports: Map<string, ImportRun>;
  /** The body window, ms: deps.bodyTimeoutMs or DEFAULT_BODY_TIMEOUT_MS. */
  bodyWindowMs: number;
}

/** A full disk answers 507 with this (the views file has its own wording). */
export const DISK_FULL_MESSAGE = 'the disk is full: nothing from this request was kept, and the data saved before is intact; free some space and try again';
