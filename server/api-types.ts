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
