/**
 * The app API's requests and answers (docs/ARCHITECTURE.md, "App API"): the server builds them
 * and the page reads them by these types, so both sides agree on every field.
 */
import type { ApiFamilyColumn, ErrorRule, IntervalWindow, ParamKind, TierRule } from './registry.ts';
import type { FilterField } from './filters.ts';
import type { SourceName } from './sources.ts';

// ---- errors ----

export interface ErrorDetail {
  reason: string;
  /** The parameter (or header) at fault. */
  location?: string;
  message: string;
}

/** Every error answer: `{"error": {code, status, message, errors: [{reason, location, message}]}}`. */
export interface ErrorBody {
  error: { code: number; status: string; message: string; errors: ErrorDetail[] };
}

// ---- imports ----

/** The formats an import reads a file as. */
export type ExportFormat = 'ndjson' | 'json-array' | 'result' | 'csv';

/** One rejected record (or the file as a whole) in an import's report. */
export interface ImportErrorEntry {
  /** 1-based line of NDJSON/CSV input (of the decompressed content, for a gzip file). */
  line?: number;
  /** 0-based element of a JSON array or a `result` array. */
  index?: number;
  /**
   * Without a line or an index, it is about the file as a whole. A damaged gzip archive is
   * reported at the line where its good content ends (NDJSON, CSV), else as a whole.
   */
  reason: string;
}

/** One source's share of an import's counts. */
export interface ImportSourceCounts {
  imported: number;
  duplicates: number;
  rejected: number;
}

export interface ImportReport {
  file?: string;
  /** The import's source: given, named by the file, or told from the first records. */
  source: SourceName;
  format: ExportFormat;
  imported: number;
  duplicates: number;
  rejected: number;
  /**
   * The counts per source stored in (a file of ClickHouse's `logs` table may mix sources); they
   * add up to the totals above. `source` is always listed; a rejected record counts under the
   * source it names, or under `source` when it names none known (an unreadable line, say).
   * Set on every report; optional in the type for reports written by hand (UI tests).
   */
  sources?: Partial<Record<SourceName, ImportSourceCounts>>;
  errors: ImportErrorEntry[];
  /** Rejections beyond the listed errors (the list is capped to keep memory bounded). */
  errorsOmitted: number;
  /**
   * CSV only, present when some lines were not valid UTF-8: they were read as Windows-1252
   * (Latin-1, what spreadsheet tools save) instead of being rejected.
   */
  recoded?: { encoding: 'windows-1252'; lines: number; firstLine: number };
  /** Said of the file as a whole when there is nothing else to show: "the file held no records". */
  note?: string;
}

// ---- sources and the clock ----

/** A stored source: its records, their time span, projects and function ids. */
export interface SourceSummary {
  source: SourceName;
  alias: string;
  count: number;
  /** Microseconds; null when the source is empty. */
  minTimestamp: number | null;
  maxTimestamp: number | null;
  projects: Array<{ ref: string; count: number }>;
  functionIds: Array<{ functionId: string; project: string; count: number }>;
}

/** Where "now" comes from: the system clock, a fixed instant, or the newest stored record. */
export type ClockMode = 'system' | 'fixed' | 'latest';

// ---- runs, listings and rows ----

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

/**
 * A registry entry with its rules (queries/registry.ts, with the values of contract/registry.ts),
 * the ones the endpoint's SQL is bound with and its speed path answers by.
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
  intervals?: Record<string, IntervalWindow>;
  intervalParam?: string;
  /** What any other interval behaves as; absent when other values are a 400. */
  fallbackInterval?: string;
  /** logs.all: retention per value of `tierParam`, µs (records strictly newer than now − retentionUs). */
  tiers?: Record<string, TierRule>;
  tierParam?: string;
  /** The tier any other value behaves as. */
  fallbackTier?: string;
  /** The endpoint's own row cut (logs.all: the newest 100). */
  rows?: number;
  /** Endpoints that count errors: a status at least statusAtLeast is an error. */
  errorRule?: ErrorRule;
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

/**
 * `GET /api/functions/buckets`: functions.invocation-stats' rows for an explicit window and
 * bucket width (the Functions page's compared period), with the window as it was read.
 */
export interface FunctionBucketsAnswer {
  result: InvocationStatsRow[];
  window: {
    /** µs UTC: the first bucket's start, inclusive. */
    start: number;
    /** µs UTC: the last bucket's end, exclusive. */
    end: number;
    /** Bucket width, µs. */
    width: number;
    startIso: string;
    endIso: string;
  };
}

export interface LogRow {
  id: string;
  timestamp: number;
  event_message: string;
  metadata: unknown[];
}

/** A bucket of usage.api-counts: its requests in each API family's column (API_FAMILIES). */
export type ApiCountsRow = {
  /** `YYYY-MM-DDTHH:MM:SS`, UTC, no zone. */
  timestamp: string;
} & Record<ApiFamilyColumn, number>;

// ---- the explorer (`/api/logs*`, server/routes/logs.ts) ----

/** Columns a source's table can show (`columns` of `/api/logs/fields`). */
export type ExplorerColumn = 'timestamp' | 'status' | 'method' | 'path' | 'level' | 'function_id' | 'event_message';

/** One source as `/api/logs/fields` lists it. */
export interface ExplorerSource {
  /** Logflare's name, e.g. `cloudflare.logs.prod`. */
  source: string;
  /** Supabase's table name, e.g. `edge_logs`. */
  alias: string;
  label: string;
  /** The filter and facet fields this source has. */
  fields: FilterField[];
  /** What the histogram stacks by. */
  split: 'status' | 'level';
  columns: ExplorerColumn[];
}

/**
 * How far back a search has looked (µs): every record from `through` to the range's end is
 * counted. An aggregate answer without it was computed whole (no text search).
 */
export interface ScanProgress {
  through: number;
  throughIso?: string;
  complete: boolean;
}

export interface ExplorerFields {
  status?: number | string | null;
  method?: string | null;
  path?: string | null;
  level?: string | null;
  function_id?: string | null;
  /** The function's slug, from its records, where one names it. */
  function_slug?: string | null;
}

export interface ExplorerRow {
  id: string;
  /** µs UTC */
  timestamp: number;
  event_message: string;
  metadata: unknown[];
  fields: ExplorerFields;
}

/** A field inside a source's records, as `GET /api/logs/field-paths` lists it. */
export interface FieldPath {
  /** Dotted path inside `metadata`, e.g. `request.headers.cf_ipcountry`. */
  path: string;
  /** The source indexes it: its filters and facets read the field index, not the records. */
  indexed?: true;
  /** JSON types seen there, most common first (`string`, `number`, `boolean`, `null`, `array`). */
  types: string[];
  /** Records of the sample holding it. */
  count: number;
  /** A few distinct values, as text. */
  examples: string[];
}

/** `GET /api/logs/field-paths`: the fields the newest records of a query carry. */
export interface FieldPathsAnswer {
  result: FieldPath[];
  /** Records the list was read from. */
  sampled: number;
  /** Every path the source indexes, whether the sample holds it or not. */
  indexed: string[];
}

/** `GET /api/logs`: one page of rows, newest first. */
export interface ExplorerPage {
  result: ExplorerRow[];
  /** The cursor of the next (older) page; null when the range is exhausted. */
  next: string | null;
  /** How far back this page's search looked: a search stops early to stay fast. */
  scanned: ScanProgress;
}

export interface HistogramBucket {
  /** Bucket start, µs. */
  timestamp: number;
  count: number;
  by: Record<string, number>;
}

/** `GET /api/logs/histogram`. */
export interface HistogramAnswer {
  result: HistogramBucket[];
  /** Bucket width, µs. */
  width: number;
  split: 'status' | 'level';
  /** A text search still counting: the buckets cover `through` to the range's end so far. */
  scanned?: ScanProgress;
}

export interface FacetValue {
  value: string | number | null;
  count: number;
}

/** `GET /api/logs/facets`. */
export interface FacetsAnswer {
  result: Partial<Record<FilterField, FacetValue[]>>;
  /** How many other values each field has beyond the top ones. */
  others: Partial<Record<FilterField, number>>;
  scanned?: ScanProgress;
}

/** `GET /api/logs/count`'s `result`: what an export of the search would hold. */
export interface CountResult {
  count: number;
  /** The export's estimated size. */
  bytes: number;
}

/** `GET /api/logs/count`: the result with how far the search got. */
export interface CountBody {
  result: CountResult;
  scanned?: ScanProgress;
}

/** The count as the page keeps it: the result and its `scanned` together. */
export interface CountAnswer extends CountResult {
  scanned?: ScanProgress;
}

// ---- functions (`GET /api/functions`, `GET /api/functions/total`) ----

/**
 * How p95/p99 were computed: `exact` (nearest rank over the records: 5min, 15min, 1hr) or
 * `approximate` (merged hour or day sketches: 1day, 7day; within 0.5% of nearest rank).
 */
export type PercentileKind = 'exact' | 'approximate';

/** Invocation figures over a whole window; times in ms, null without a timed invocation. */
export interface FunctionPeriodStats {
  invocations: number;
  /** Invocations answered with status >= 400. */
  errors: number;
  /** errors / invocations; null without invocations. */
  errorRate: number | null;
  avgMs: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  minMs: number | null;
  maxMs: number | null;
  percentiles: PercentileKind;
}

/** One function of the project. */
export interface FunctionStatsRow extends FunctionPeriodStats {
  functionId: string;
  /** From `/functions/v1/<slug>` in its newest records; null when none names one. */
  slug: string | null;
}

/** The window: the one functions.invocation-stats covers for the interval, [start, end). */
export interface FunctionWindow {
  interval: string;
  /** µs UTC, inclusive. */
  start: number;
  /** µs UTC, exclusive. */
  end: number;
  startIso: string;
  endIso: string;
  /** The clock instant the window was computed from, µs. */
  now: number;
}

/** `GET /api/functions`: `result` is every function of the project, busiest first. */
export interface FunctionListAnswer {
  result: FunctionStatsRow[];
  percentiles: PercentileKind;
  window: FunctionWindow;
  /** All functions of the project together. */
  total: FunctionPeriodStats;
}

/** `GET /api/functions/total`: the project's functions together, with the window. */
export interface FunctionTotal extends FunctionPeriodStats {
  window: FunctionWindow;
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
