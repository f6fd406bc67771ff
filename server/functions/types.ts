/**
 * Answer shapes of `GET /api/functions` and `GET /api/functions/total`, shared with the
 * renderer as types only. Kept free of imports so the renderer's type check reads nothing else.
 */

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
