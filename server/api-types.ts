/**
 * Shapes of the app API's answers (docs/ARCHITECTURE.md, "App API"), shared with the renderer as types only
 * (`import type`), so both sides agree on every field.
 */
import type { ParamKind } from '../queries/registry.ts';
import type { ErrorBody } from './errors.ts';
import type { ImportReport } from './ingest/import.ts';
import type { SourceSummary } from './store/log-store.ts';
import type { ClockMode } from './clock.ts';

export type { ErrorBody, ImportReport, ClockMode };

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

export interface EndpointListing {
  name: string;
  id: string;
  description: string;
  parameters: Array<{ name: string; required: boolean; kind: ParamKind; description: string; allowed?: string[]; default?: string }>;
  maxRows: number;
  cacheSeconds: number;
  warmSeconds: number;
  sandboxable: boolean;
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
