/**
 * Shapes of the app API's answers (docs/ARCHITECTURE.md, "App API"), shared with the renderer as types only
 * (`import type`), so both sides agree on every field.
 */
import type { ParamKind } from '../queries/registry.ts';
import type { ErrorBody } from './errors.ts';
import type { ImportReport, ImportSourceCounts } from './ingest/import.ts';
import type { SourceSummary } from './store/log-store.ts';
import type { ClockMode } from './clock.ts';

// An import's report carries its counts per source too (`sources`: a file may mix sources).
export type { ErrorBody, ImportReport, ImportSourceCounts, ClockMode };

export interface ImportRun {
  id: string;
  file?: string;
  state: 'running' | 'done' | 'failed';
  bytes: number;
  totalBytes?: number;
  records: number;
  startedAt: number;
  finishedAt?: number;
  report?: ImportReport;
  error?: string;
}

export interface SourceListing extends SourceSummary {
  minIso: string | null;
  maxIso: string | null;
}

/** One window of a bucketed endpoint, µs: the window reaches spanUs back from now, in buckets of unitUs. */
export interface EndpointWindow {
  spanUs: number;
  unitUs: number;
}

/**
 * A registry entry with its rules (queries/registry.ts), the ones the endpoint's SQL is bound
 * with and its speed path answers by: clients read them here instead of restating them.
 */
export interface EndpointListing {
  name: string;
  id: string;
  description: string;
  parameters: Array<{ name: string; required: boolean; kind: ParamKind; description: string; allowed?: string[]; default?: string }>;
  /** Rows an answer is cut to, after `rows`. */
  maxRows: number;
  cacheSeconds: number;
  warmSeconds: number;
  sandboxable: boolean;
  /** Bucketed endpoints: the window of each value of `intervalParam`. */
  intervals?: Record<string, EndpointWindow>;
  intervalParam?: string;
  /** What any other interval behaves as; absent when other values are a 400. */
  fallbackInterval?: string;
  /** logs.all: retention per value of `tierParam`, µs (records strictly newer than now − retentionUs). */
  tiers?: Record<string, { retentionUs: number }>;
  tierParam?: string;
  /** The tier any other value behaves as. */
  fallbackTier?: string;
  /** The endpoint's own row cut (logs.all: the newest 100). */
  rows?: number;
  /** Endpoints that count errors: a status at least statusAtLeast is an error. */
  errorRule?: { statusAtLeast: number };
}

export interface ClockView {
  mode: ClockMode;
  now: number;
  iso: string;
  fixed?: number;
  fixedIso?: string;
}

/** Rows of the three endpoints. Timestamps are integer microseconds UTC. */
export interface InvocationStatsRow {
  timestamp: number;
  min_execution_time: number | null;
  max_execution_time: number | null;
  avg_execution_time: number | null;
  p95_execution_time: number | null;
  p99_execution_time: number | null;
  count: number;
  error_count: number;
}

export interface LogRow {
  id: string;
  timestamp: number;
  event_message: string;
  metadata: unknown[];
}

export interface ApiCountsRow {
  /** `YYYY-MM-DDTHH:MM:SS`, UTC, no zone. */
  timestamp: string;
  total_rest_requests: number;
  total_storage_requests: number;
  total_auth_requests: number;
  total_realtime_requests: number;
}

// ---- connections and sync (server/sync/, server/routes/connections.ts) ----

export type SyncStateName = 'backfilling' | 'following' | 'waiting' | 'paused' | 'failed';
/** Why a source is not calling now: a 429 (rate_limited), a 5xx or network failure (backoff), the app's own call budget (budget). */
export type WaitReason = 'rate_limited' | 'backoff' | 'budget';
/**
 * What kind of problem a source's `error` is, so a client can say what to do about it: the remote
 * refused the token (auth: 401/403), the stored token cannot be opened here (token), the remote
 * refused this source's request (refused: a 4xx, a redirect, neither dialect, a page that does
 * not advance), a 429 (rate_limited), a 5xx, a timeout or no answer (remote), or the store could
 * not keep a page (store).
 */
export type SyncErrorKind = 'auth' | 'token' | 'refused' | 'rate_limited' | 'remote' | 'store';

/** Where one source of a connection stands. Instants are integer µs UTC, with ISO twins. */
export interface SourceSyncView {
  /** Records this connection stored in this source (not counting duplicates). */
  records: number;
  /** Rows the remote gave that could not be stored (no timestamp, say): skipped, counted. */
  rejected: number;
  /** Everything before this instant is synced; null before the first commit. */
  through: number | null;
  throughIso: string | null;
  state: SyncStateName;
  /** The remote's message as it gave it (or why the app cannot go on), else null. */
  error: string | null;
  /** What kind of problem `error` is; null when there is none. */
  errorKind: SyncErrorKind | null;
  /** The remote's HTTP status behind `error`; null without an answer (no connection, a timeout) or without an error. */
  errorStatus: number | null;
  /** While waiting, or held by the app's call budget: when the next call may go. */
  waitUntil: number | null;
  waitUntilIso: string | null;
  waitReason: WaitReason | null;
  /** When a page was last committed. */
  syncedAt: number | null;
  syncedAtIso: string | null;
  /** Things the sync skipped and says so (a logs.all instant holding more than a page, refused rows). */
  warnings: string[];
}

export interface ConnectionView {
  id: string;
  kind: 'supabase' | 'logflare';
  ref: string;
  url: string;
  /** The token's last four characters only: `…abcd`. */
  token: string;
  /** The SQL dialect of a supabase connection; null for a logflare one (it sends no SQL). */
  dialect: 'bigquery' | 'clickhouse' | 'detect' | null;
  /** What `detect` settled on (null until a remote answered). */
  detectedDialect: 'bigquery' | 'clickhouse' | null;
  follow: boolean;
  paused: boolean;
  /** Where history starts. */
  start: number;
  startIso: string;
  /** Per source name. */
  sources: Record<string, SourceSyncView>;
  /** Remote calls this connection made in the last minute (the app's budget is shared by all). */
  callsLastMinute: number;
  /** When this view was taken, on the sync's clock (µs): ages ("synced 40 s ago") and waits are measured from it. */
  asOf: number;
  asOfIso: string;
  /** What protects the stored token: 'owner-only file' (browser mode) or 'os keychain key' (desktop app). */
  tokenProtection: string;
}

/** POST /api/connections/test: what one call to the remote answered. */
export interface ConnectionTestResult {
  ok: boolean;
  /** The remote's HTTP status; null when it could not be reached. */
  status: number | null;
  /** The remote's message when it refused, else null. */
  message: string | null;
  /** The dialect that answered (supabase connections). */
  dialect: 'bigquery' | 'clickhouse' | null;
  /** Rows the call returned. */
  rows: number;
}

/** DELETE /api/connections/:id. */
export interface ConnectionRemoval {
  id: string;
  /** `data=delete`: the sources deleted, with how many records each held. */
  deleted: Array<{ source: string; records: number }>;
}
