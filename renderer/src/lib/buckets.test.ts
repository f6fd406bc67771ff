import { describe, expect, it } from 'vitest';
import type { ApiCountsRow, EndpointListing } from '../../../contract/api-types.ts';
import { bucketedRules, MissingRule, tierRules } from '../api/rules.ts';
import {
  bucketStarts,
  chartBucketIndex,
  isUtcDayUnit,
  seriesOf,
  spanLabel,
  unitName,
  unitPrecision,
  usageTotals,
  zeroFillUsageBuckets,
  type SeriesRules,
} from './buckets.ts';
import { formatDatetime, formatIsoMicros } from '../../../contract/instants.ts';

const NOW = 1773500966535897; // 2026-03-14T15:09:26.535897Z
const ON_HOUR = 1773500400000000; // 2026-03-14T15:00:00Z

// The rules as a test states them, in µs written out here (not taken from the code under test).
const SEC = 1_000_000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const STATS: SeriesRules = {
  param: 'interval',
  windows: {
    '5min': { span: 5 * MIN, unit: SEC },
    '15min': { span: 15 * MIN, unit: MIN },
    '1hr': { span: HOUR, unit: MIN },
    '1day': { span: DAY, unit: HOUR },
    '7day': { span: 7 * DAY, unit: DAY },
  },
  fallback: '1day',
};

const USAGE: SeriesRules = {
  param: 'interval',
  windows: {
    hourly: { span: HOUR, unit: HOUR },
    daily: { span: 7 * DAY, unit: DAY },
    minutely: { span: HOUR, unit: MIN },
  },
};

const spec = (rules: SeriesRules, interval: string) => {
  const s = seriesOf(rules, interval);
  if (!s) throw new Error(`no window for ${interval}`);
  return s;
};

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
      const starts = bucketStarts(NOW, spec(STATS, interval));
      expect(starts).toHaveLength(count);
      expect(formatIsoMicros(starts[0]!)).toBe(first);
      expect(formatIsoMicros(starts.at(-1)!)).toBe(last);
    });
  }
  it('a now exactly on a boundary still gives N+1 buckets', () => {
    expect(bucketStarts(ON_HOUR, spec(STATS, '5min'))).toHaveLength(301);
    expect(bucketStarts(ON_HOUR, spec(STATS, '1day'))).toHaveLength(25);
  });
  it('an unknown interval gets the fallback’s window, as the server answers it', () => {
    expect(seriesOf(STATS, 'fortnight')).toEqual({ span: DAY, unit: HOUR });
  });
  it('without a fallback an unknown interval has no window', () => {
    expect(seriesOf(USAGE, 'weekly')).toBeUndefined();
  });
  it('the windows are the ones passed in: other rules give other buckets', () => {
    const halfHour: SeriesRules = { param: 'interval', windows: { '1day': { span: DAY, unit: 30 * MIN } } };
    // 24 h of 30 min buckets from trunc(now − 1 day) to trunc(now): 48 + 1.
    expect(bucketStarts(NOW, spec(halfHour, '1day'))).toHaveLength(49);
  });
});

describe('usage.api-counts windows', () => {
  it('hourly: the hour buckets from trunc(now − 1 h) to trunc(now)', () => {
    expect(bucketStarts(NOW, spec(USAGE, 'hourly')).map(formatDatetime)).toEqual(['2026-03-14T14:00:00', '2026-03-14T15:00:00']);
  });
  it('daily: 8 day buckets', () => {
    const labels = bucketStarts(NOW, spec(USAGE, 'daily')).map(formatDatetime);
    expect(labels).toHaveLength(8);
    expect(labels[0]).toBe('2026-03-07T00:00:00');
    expect(labels[7]).toBe('2026-03-14T00:00:00');
  });
  it('minutely: 61 minute buckets', () => {
    const labels = bucketStarts(NOW, spec(USAGE, 'minutely')).map(formatDatetime);
    expect(labels).toHaveLength(61);
    expect(labels[0]).toBe('2026-03-14T14:09:00');
    expect(labels[60]).toBe('2026-03-14T15:09:00');
  });
});

describe('labels from a window', () => {
  it('names spans and units in words', () => {
    expect([5 * MIN, 15 * MIN, HOUR, DAY, 7 * DAY].map(spanLabel)).toEqual(['5 min', '15 min', '1 hour', '1 day', '7 days']);
    expect([SEC, MIN, HOUR, DAY, 30 * MIN].map(unitName)).toEqual(['second', 'minute', 'hour', 'day', '30 minutes']);
  });
  it('writes sub-minute buckets to the second, day buckets as UTC days', () => {
    expect([SEC, MIN, DAY].map(unitPrecision)).toEqual(['second', 'minute', 'minute']);
    expect([HOUR, DAY, 7 * DAY].map(isUtcDayUnit)).toEqual([false, true, true]);
  });
});

describe('the rules from the listing', () => {
  // The shape GET /api/endpoints answers with (server/api-types.ts EndpointListing).
  const listing: EndpointListing[] = [
    {
      name: 'functions.invocation-stats',
      id: 'x',
      description: '',
      parameters: [],
      maxRows: 1000,
      cacheSeconds: 900,
      warmSeconds: 300,
      sandboxable: false,
      intervals: { '5min': { spanUs: 300_000_000, unitUs: 1_000_000 }, '1day': { spanUs: 86_400_000_000, unitUs: 3_600_000_000 } },
      intervalParam: 'interval',
      fallbackInterval: '1day',
      errorRule: { statusAtLeast: 400 },
    },
    {
      name: 'logs.all',
      id: 'y',
      description: '',
      parameters: [],
      maxRows: 1000,
      cacheSeconds: 0,
      warmSeconds: 0,
      sandboxable: false,
      tiers: { FREE: { retentionUs: 86_400_000_000 }, PRO: { retentionUs: 604_800_000_000 } },
      tierParam: 'project_tier',
      fallbackTier: 'FREE',
      rows: 100,
    },
  ];
  it('reads windows, fallback and error rule of a bucketed endpoint', () => {
    expect(bucketedRules(listing, 'functions.invocation-stats')).toEqual({
      param: 'interval',
      windows: { '5min': { span: 5 * MIN, unit: SEC }, '1day': { span: DAY, unit: HOUR } },
      fallback: '1day',
      errorStatusAtLeast: 400,
    });
  });
  it('reads logs.all’s tiers and its own row cut beside the general cap', () => {
    expect(tierRules(listing)).toEqual({ param: 'project_tier', retentionUs: { FREE: DAY, PRO: 7 * DAY }, fallback: 'FREE', rows: 100, maxRows: 1000 });
  });
  it('says which rule is missing instead of guessing one', () => {
    expect(() => bucketedRules(listing, 'logs.all')).toThrow(MissingRule);
    expect(() => bucketedRules(listing, 'usage.api-counts')).toThrow(/usage\.api-counts/);
  });
});

describe('zeroFillUsageBuckets', () => {
  it('fills every missing bucket with zeros and keeps the API values', () => {
    const filled = zeroFillUsageBuckets([row('2026-03-14T15:00:00', 3, 1, 2, 0)], NOW, spec(USAGE, 'hourly'));
    expect(filled.map((b) => [b.timestamp, b.rest, b.storage, b.auth, b.realtime, b.filled])).toEqual([
      ['2026-03-14T14:00:00', 0, 0, 0, 0, true],
      ['2026-03-14T15:00:00', 3, 1, 2, 0, false],
    ]);
  });
  it('minutely gaps: 61 buckets, only the returned ones non-zero', () => {
    const filled = zeroFillUsageBuckets([row('2026-03-14T14:10:00', 5), row('2026-03-14T15:09:00', 0, 0, 0, 7)], NOW, spec(USAGE, 'minutely'));
    expect(filled).toHaveLength(61);
    expect(filled.filter((b) => !b.filled).map((b) => b.timestamp)).toEqual(['2026-03-14T14:10:00', '2026-03-14T15:09:00']);
    expect(filled[1]!.rest).toBe(5);
    expect(filled[60]!.realtime).toBe(7);
  });
  it('keeps rows outside the window (records stamped after now), so totals match the API', () => {
    const rows = [row('2026-03-14T00:00:00', 1), row('2026-03-15T00:00:00', 4)];
    const filled = zeroFillUsageBuckets(rows, NOW, spec(USAGE, 'daily'));
    expect(filled).toHaveLength(9);
    expect(filled.at(-1)!.timestamp).toBe('2026-03-15T00:00:00');
    expect(filled.reduce((n, b) => n + b.rest, 0)).toBe(usageTotals(rows).rest);
  });
  it('returns the full empty series when the API returns nothing', () => {
    const filled = zeroFillUsageBuckets([], NOW, spec(USAGE, 'daily'));
    expect(filled).toHaveLength(8);
    expect(filled.every((b) => b.filled && b.rest + b.storage + b.auth + b.realtime === 0)).toBe(true);
  });
});

describe('usageTotals', () => {
  it('sums each family separately', () => {
    expect(usageTotals([row('a', 1, 2, 3, 4), row('b', 10, 20, 30, 40)])).toEqual({ rest: 11, storage: 22, auth: 33, realtime: 44 });
  });
});

describe('chartBucketIndex', () => {
  it('reads an index given as a number or a string; anything else is none', () => {
    expect([3, '3', 0, '0'].map(chartBucketIndex)).toEqual([3, 3, 0, 0]);
    expect([-1, '1.5', 'x', null, undefined, NaN, 2.5].map(chartBucketIndex)).toEqual([null, null, null, null, null, null, null]);
  });
});
