/**
 * Period figures for the Functions page, derived from per-bucket rows. The period average
 * is the bucket averages weighted by invocation counts; a period percentile cannot be
 * recovered from bucket percentiles, so only the largest bucket p95 is offered, labelled as such.
 */
import type { InvocationStatsRow } from '../../../server/api-types.ts';

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
