/**
 * Period figures for the Functions page, derived from per-bucket rows. The period average
 * is the bucket averages weighted by invocation counts; a period percentile cannot be
 * recovered from bucket percentiles, so only the largest bucket p95 is offered, labelled as such.
 */
import type { InvocationStatsRow, PercentileKind } from '../../../../contract/api-types.ts';
import { MICROS } from '../../../../contract/instants.ts';

export type { PercentileKind };

export interface InvocationSummary {
  invocations: number;
  errors: number;
  /** errors / invocations, or null with no invocations. */
  errorRate: number | null;
  /** Σ(avg·count) / Σcount over buckets that have an average. */
  avgMs: number | null;
  /** The largest bucket p95 (an upper-side estimate, not the period's p95). */
  maxBucketP95Ms: number | null;
  maxBucketP99Ms: number | null;
  maxMs: number | null;
  minMs: number | null;
  /** Buckets with at least one invocation. */
  activeBuckets: number;
}

const maxOf = (a: number | null, b: number | null) => (b === null ? a : a === null ? b : Math.max(a, b));
const minOf = (a: number | null, b: number | null) => (b === null ? a : a === null ? b : Math.min(a, b));

export function summarizeInvocations(rows: readonly InvocationStatsRow[]): InvocationSummary {
  let invocations = 0;
  let errors = 0;
  let weighted = 0;
  let weight = 0;
  let p95: number | null = null;
  let p99: number | null = null;
  let max: number | null = null;
  let min: number | null = null;
  let active = 0;
  for (const r of rows) {
    invocations += r.count;
    errors += r.error_count;
    if (r.count > 0) active += 1;
    if (r.avg_execution_time !== null && r.count > 0) {
      weighted += r.avg_execution_time * r.count;
      weight += r.count;
    }
    p95 = maxOf(p95, r.p95_execution_time);
    p99 = maxOf(p99, r.p99_execution_time);
    max = maxOf(max, r.max_execution_time);
    min = minOf(min, r.min_execution_time);
  }
  return {
    invocations,
    errors,
    errorRate: invocations > 0 ? errors / invocations : null,
    avgMs: weight > 0 ? weighted / weight : null,
    maxBucketP95Ms: p95,
    maxBucketP99Ms: p99,
    maxMs: max,
    minMs: min,
    activeBuckets: active,
  };
}

/**
 * Where a bucket's p95/p99 come from (docs/ARCHITECTURE.md, "Endpoint rules and where they
 * live"): second buckets are computed from the records (exact nearest rank); minute, hour and
 * day buckets from the minute, hour and day rollups' sketches. The finest rollup is the minute,
 * so anything finer than a minute is exact.
 */
export function bucketPercentileKind(unitUs: number): PercentileKind {
  return unitUs < MICROS.minute ? 'exact' : 'approximate';
}

/**
 * How far approximate p95/p99 may be from nearest rank, relative: per bucket the endpoint
 * rules allow 1%; the whole-window figures merge the hour and day sketches directly, whose
 * relative accuracy is 0.5% (server/functions/stats.ts).
 */
export const PERCENTILE_BOUND = { bucket: 0.01, window: 0.005 } as const;

/**
 * The one wording of p95/p99 accuracy, for tooltips, notes and headlines alike:
 * `exact (nearest rank)` or `approximate (±1%)`.
 */
export function percentileAccuracy(kind: PercentileKind, scope: keyof typeof PERCENTILE_BOUND): string {
  if (kind === 'exact') return 'exact (nearest rank)';
  return `approximate (±${+(PERCENTILE_BOUND[scope] * 100).toFixed(2)}%)`;
}
