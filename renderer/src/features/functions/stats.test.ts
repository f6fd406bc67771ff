import { describe, expect, it } from 'vitest';
import type { InvocationStatsRow } from '../../../../contract/api-types.ts';
import { bucketPercentileKind, percentileAccuracy, summarizeInvocations } from './stats.ts';

const b = (count: number, error_count: number, avg: number | null, p95: number | null, max: number | null = p95): InvocationStatsRow => ({
  timestamp: 0,
  count,
  error_count,
  avg_execution_time: avg,
  p95_execution_time: p95,
  p99_execution_time: p95,
  max_execution_time: max,
  min_execution_time: avg,
});

describe('summarizeInvocations', () => {
  it('weights bucket averages by counts and takes the largest bucket p95', () => {
    // (10·1 + 30·3) / 4 = 25
    const s = summarizeInvocations([b(1, 0, 10, 12), b(0, 0, null, null), b(3, 1, 30, 40, 55)]);
    expect(s.invocations).toBe(4);
    expect(s.errors).toBe(1);
    expect(s.errorRate).toBe(0.25);
    expect(s.avgMs).toBe(25);
    expect(s.maxBucketP95Ms).toBe(40);
    expect(s.maxMs).toBe(55);
    expect(s.activeBuckets).toBe(2);
  });
  it('an empty period has no rate or times', () => {
    const s = summarizeInvocations([b(0, 0, null, null)]);
    expect(s).toMatchObject({ invocations: 0, errorRate: null, avgMs: null, maxBucketP95Ms: null });
  });
});

describe('p95/p99 accuracy', () => {
  const SEC = 1_000_000;
  it('second buckets are computed from the records; minute, hour and day buckets from sketches', () => {
    expect([SEC, 60 * SEC, 3600 * SEC, 86400 * SEC].map(bucketPercentileKind)).toEqual(['exact', 'approximate', 'approximate', 'approximate']);
  });
  it('says exact or approximate with the bound of where the figure comes from', () => {
    expect(percentileAccuracy('exact', 'bucket')).toBe('exact (nearest rank)');
    expect(percentileAccuracy('exact', 'window')).toBe('exact (nearest rank)');
    expect(percentileAccuracy('approximate', 'bucket')).toBe('approximate (±1%)');
    expect(percentileAccuracy('approximate', 'window')).toBe('approximate (±0.5%)');
  });
});

import { clampForLog, logAxis } from './chart-scale.ts';

describe('logAxis', () => {
  it('spans whole powers of ten around the data', () => {
    expect(logAxis([42, null, 597, 32528])).toEqual({ domain: [10, 100000], ticks: [10, 100, 1000, 10000, 100000] });
  });
  it('ignores zero, negative and missing values; widens a single decade', () => {
    expect(logAxis([0, -1, 100, null])).toEqual({ domain: [100, 1000], ticks: [100, 1000] });
  });
  it('has a default for no data', () => {
    expect(logAxis([null, 0])).toEqual({ domain: [1, 10], ticks: [1, 10] });
  });
  it('clampForLog keeps gaps and lifts zeros to the floor', () => {
    expect([clampForLog(null, 1), clampForLog(0, 1), clampForLog(5, 1)]).toEqual([null, 1, 5]);
  });
});
