import { describe, expect, it } from 'vitest';
import { MICROS } from '../../../contract/instants.ts';
import { formatDateTime, formatRange, formatSpan, formatUtc } from './time.ts';

// 2026-03-14T15:09:26.535897Z, computed independently (Python datetime).
const T = 1773500966535897;

describe('formatDateTime (µs → wall clock in a zone)', () => {
  it('formats UTC at each precision', () => {
    expect(formatDateTime(T, 'minute', 'UTC')).toBe('2026-03-14 15:09');
    expect(formatDateTime(T, 'second', 'UTC')).toBe('2026-03-14 15:09:26');
    expect(formatDateTime(T, 'ms', 'UTC')).toBe('2026-03-14 15:09:26.535');
    expect(formatDateTime(T, 'us', 'UTC')).toBe('2026-03-14 15:09:26.535897');
  });
  it('formats other zones, including half-hour offsets and date changes', () => {
    expect(formatDateTime(T, 'ms', 'Europe/Berlin')).toBe('2026-03-14 16:09:26.535');
    expect(formatDateTime(T, 'second', 'Asia/Kolkata')).toBe('2026-03-14 20:39:26');
    expect(formatDateTime(T, 'second', 'Pacific/Kiritimati')).toBe('2026-03-15 05:09:26');
  });
  it('shows midnight as 00, not 24', () => {
    expect(formatDateTime(1773446400000000, 'minute', 'UTC')).toBe('2026-03-14 00:00');
  });
  it('formatUtc adds the zone', () => {
    expect(formatUtc(T, 'us')).toBe('2026-03-14 15:09:26.535897 UTC');
  });
});

describe('formatRange', () => {
  it('omits the repeated date', () => {
    expect(formatRange(1773500400000000, 1773500400000000 + MICROS.hour, 'minute', 'UTC')).toBe('2026-03-14 15:00 – 16:00');
  });
  it('keeps the date when the range crosses midnight', () => {
    expect(formatRange(1773446400000000 - MICROS.hour, 1773446400000000, 'minute', 'UTC')).toBe('2026-03-13 23:00 – 2026-03-14 00:00');
  });
});

describe('formatSpan', () => {
  it('names spans', () => {
    expect(formatSpan(15 * MICROS.minute)).toBe('15 min');
    expect(formatSpan(MICROS.hour)).toBe('1 h');
    expect(formatSpan(MICROS.day)).toBe('1 day');
    expect(formatSpan(90 * MICROS.day)).toBe('90 days');
  });
});

describe('wall-clock text for the custom range (24-hour)', () => {
  // Regression: the custom range's inputs were 12-hour while every other time on the page is 24-hour.
  it('writes 24-hour local time and reads it back, seconds and typed microseconds kept', async () => {
    const { formatWallTime, parseWallTime } = await import('./time.ts');
    const us = Date.UTC(2026, 2, 14, 15, 40, 0) * 1000;
    expect(formatWallTime(us, 'UTC')).toBe('2026-03-14 15:40:00');
    expect(formatWallTime(us + 7 * 3_600_000_000, 'UTC')).toBe('2026-03-14 22:40:00');
    const local = parseWallTime(formatWallTime(us));
    expect(local).toBe(us);
    expect(parseWallTime(`${formatWallTime(us).replace(' ', 'T')}.000250`)).toBe(us + 250);
    expect(parseWallTime(formatWallTime(us).slice(0, 16))).toBe(us);
  });
  it('refuses what is not a time: 12-hour forms, impossible dates and hours', async () => {
    const { parseWallTime } = await import('./time.ts');
    expect(parseWallTime('03/14/2026 03:40 PM')).toBeUndefined();
    expect(parseWallTime('2026-02-30 10:00:00')).toBeUndefined();
    expect(parseWallTime('2026-03-14 24:00:00')).toBeUndefined();
    expect(parseWallTime('')).toBeUndefined();
  });
});

describe('typed years 0–99 stay as typed (new Date(y, …) read them as 19xx)', () => {
  // 0099-03-14 15:09:26 UTC by hand: 98 years from 0001 with 24 leap days = 35,794 days, + 31 + 28
  // + 13 = day 35,866; 1970-01-01 is day 719,162; so −683,296 days × 86,400 s + 54,566 s.
  const Y99 = -59_036_719_834 * 1_000_000;
  const withZone = async (tz: string, run: () => Promise<void>) => {
    const before = process.env.TZ;
    process.env.TZ = tz; // Node re-reads the zone when TZ is set
    try {
      await run();
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  };
  it('parseWallTime and fromLocalInputValue in UTC', () =>
    withZone('UTC', async () => {
      const { fromLocalInputValue, parseWallTime } = await import('./time.ts');
      expect(parseWallTime('0099-03-14 15:09:26')).toBe(Y99);
      expect(parseWallTime('0099-03-14 15:09:26.000250')).toBe(Y99 + 250);
      expect(fromLocalInputValue('0099-03-14T15:09:26')).toBe(Y99);
      expect(fromLocalInputValue('0099-03-14T15:09')).toBe(Y99 - 26 * 1_000_000);
      // 0099 is not a leap year: 29 February does not exist.
      expect(parseWallTime('0099-02-29 10:00:00')).toBeUndefined();
    }));
  it('in a zone 5 hours east of UTC the same wall time is 5 hours earlier', () =>
    withZone('Etc/GMT-5', async () => {
      const { fromLocalInputValue, parseWallTime } = await import('./time.ts');
      expect(parseWallTime('0099-03-14 15:09:26')).toBe(Y99 - 5 * 3_600_000_000);
      expect(fromLocalInputValue('0099-03-14T15:09:26')).toBe(Y99 - 5 * 3_600_000_000);
    }));
});
