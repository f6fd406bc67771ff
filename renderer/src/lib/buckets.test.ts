import { describe, expect, it } from 'vitest';
import type { ApiCountsRow } from '../../../server/api-types.ts';
import { bucketStarts, datetimeLabel, FUNCTION_SERIES, USAGE_SERIES, usageTotals, zeroFillUsage } from './buckets.ts';
import { isoMicros } from './time.ts';

const NOW = 1773500966535897; // 2026-03-14T15:09:26.535897Z
const ON_HOUR = 1773500400000000; // 2026-03-14T15:00:00Z

const row = (timestamp: string, rest = 0, storage = 0, auth = 0, realtime = 0): ApiCountsRow => ({
  timestamp,
  total_rest_requests: rest,
  total_storage_requests: storage,
  total_auth_requests: auth,
  total_realtime_requests: realtime,
});

describe('functions.invocation-stats buckets from a given now', () => {
  const cases = [
    ['5min', 301, '2026-03-14T15:04:26.000000Z', '2026-03-14T15:09:26.000000Z'],
    ['15min', 16, '2026-03-14T14:54:00.000000Z', '2026-03-14T15:09:00.000000Z'],
    ['1hr', 61, '2026-03-14T14:09:00.000000Z', '2026-03-14T15:09:00.000000Z'],
    ['1day', 25, '2026-03-13T15:00:00.000000Z', '2026-03-14T15:00:00.000000Z'],
    ['7day', 8, '2026-03-07T00:00:00.000000Z', '2026-03-14T00:00:00.000000Z'],
  ] as const;
  for (const [interval, count, first, last] of cases) {
    it(`${interval}: ${count} buckets from ${first} to ${last}`, () => {
      const starts = bucketStarts(NOW, FUNCTION_SERIES[interval]);
      expect(starts).toHaveLength(count);
      expect(isoMicros(starts[0]!)).toBe(first);
      expect(isoMicros(starts.at(-1)!)).toBe(last);
    });
  }
  it('a now exactly on a boundary still gives N+1 buckets', () => {
    expect(bucketStarts(ON_HOUR, FUNCTION_SERIES['5min'])).toHaveLength(301);
    expect(bucketStarts(ON_HOUR, FUNCTION_SERIES['1day'])).toHaveLength(25);
  });
});

describe('usage.api-counts windows', () => {
  it('hourly: the hour buckets from trunc(now − 1 h) to trunc(now)', () => {
    expect(bucketStarts(NOW, USAGE_SERIES.hourly).map(datetimeLabel)).toEqual(['2026-03-14T14:00:00', '2026-03-14T15:00:00']);
  });
  it('daily: 8 day buckets', () => {
    const labels = bucketStarts(NOW, USAGE_SERIES.daily).map(datetimeLabel);
    expect(labels).toHaveLength(8);
    expect(labels[0]).toBe('2026-03-07T00:00:00');
    expect(labels[7]).toBe('2026-03-14T00:00:00');
  });
  it('minutely: 61 minute buckets', () => {
    const labels = bucketStarts(NOW, USAGE_SERIES.minutely).map(datetimeLabel);
    expect(labels).toHaveLength(61);
    expect(labels[0]).toBe('2026-03-14T14:09:00');
    expect(labels[60]).toBe('2026-03-14T15:09:00');
  });
});

describe('zeroFillUsage', () => {
  it('fills every missing bucket with zeros and keeps the API values', () => {
    const filled = zeroFillUsage([row('2026-03-14T15:00:00', 3, 1, 2, 0)], NOW, 'hourly');
    expect(filled.map((b) => [b.timestamp, b.rest, b.storage, b.auth, b.realtime, b.filled])).toEqual([
      ['2026-03-14T14:00:00', 0, 0, 0, 0, true],
      ['2026-03-14T15:00:00', 3, 1, 2, 0, false],
    ]);
  });
  it('minutely gaps: 61 buckets, only the returned ones non-zero', () => {
    const filled = zeroFillUsage([row('2026-03-14T14:10:00', 5), row('2026-03-14T15:09:00', 0, 0, 0, 7)], NOW, 'minutely');
    expect(filled).toHaveLength(61);
    expect(filled.filter((b) => !b.filled).map((b) => b.timestamp)).toEqual(['2026-03-14T14:10:00', '2026-03-14T15:09:00']);
    expect(filled[1]!.rest).toBe(5);
    expect(filled[60]!.realtime).toBe(7);
  });
  it('keeps rows outside the window (records stamped after now), so totals match the API', () => {
    const rows = [row('2026-03-14T00:00:00', 1), row('2026-03-15T00:00:00', 4)];
    const filled = zeroFillUsage(rows, NOW, 'daily');
    expect(filled).toHaveLength(9);
    expect(filled.at(-1)!.timestamp).toBe('2026-03-15T00:00:00');
    expect(filled.reduce((n, b) => n + b.rest, 0)).toBe(usageTotals(rows).rest);
  });
  it('returns the full empty series when the API returns nothing', () => {
    const filled = zeroFillUsage([], NOW, 'daily');
    expect(filled).toHaveLength(8);
    expect(filled.every((b) => b.filled && b.rest + b.storage + b.auth + b.realtime === 0)).toBe(true);
  });
});

describe('usageTotals', () => {
  it('sums each family separately', () => {
    expect(usageTotals([row('a', 1, 2, 3, 4), row('b', 10, 20, 30, 40)])).toEqual({ rest: 11, storage: 22, auth: 33, realtime: 44 });
  });
});
