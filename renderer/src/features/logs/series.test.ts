import { describe, expect, it } from 'vitest';
import type { HistogramBucket } from '../../api/logs.ts';
import { alignPrevious, levelTone, partialBucket, selectionRange, seriesOf, statusTone, toneColor } from './series.ts';

const bucket = (by: Record<string, number>): HistogramBucket => ({ timestamp: 0, count: Object.values(by).reduce((a, b) => a + b, 0), by });

describe('seriesOf', () => {
  it('status classes stack 2xx, 3xx, 4xx, 5xx, others, none, in their colours; all-zero keys are left out', () => {
    const s = seriesOf([bucket({ '5xx': 1, none: 2, '2xx': 3, '1xx': 1, '3xx': 0 }), bucket({ '4xx': 1 })], 'status');
    expect(s.map((x) => x.key)).toEqual(['2xx', '4xx', '5xx', '1xx', 'none']);
    expect(s.map((x) => x.tone)).toEqual(['green', 'amber', 'red', 'neutral', 'grey']);
  });
  it('levels stack by severity, errors on top, whatever their case', () => {
    const s = seriesOf([bucket({ ERROR: 1, LOG: 5, WARNING: 2, FATAL: 1, custom: 1, debug: 1 })], 'level');
    expect(s.map((x) => x.key)).toEqual(['debug', 'LOG', 'custom', 'WARNING', 'ERROR', 'FATAL']);
  });
  it('tones: 2xx green, 3xx blue, 4xx amber, 5xx red, none grey; error red, warn amber, info blue, log teal, debug grey, no level slate', () => {
    expect(['2xx', '3xx', '4xx', '5xx', 'none'].map(statusTone)).toEqual(['green', 'blue', 'amber', 'red', 'grey']);
    expect(['error', 'FATAL', 'panic', 'warning', 'warn', 'info', 'LOG', 'debug', 'notice', 'none'].map(levelTone)).toEqual([
      'red',
      'darkred',
      'darkred',
      'amber',
      'amber',
      'blue',
      'teal',
      'grey',
      'neutral',
      'slate',
    ]);
  });
  // Regression: `log` and `info` were both blue, `debug` and no level both grey.
  it('no two stacks of one chart share a colour, in either theme, whatever levels the records carry', () => {
    const levels = seriesOf([bucket({ debug: 1, LOG: 1, info: 1, notice: 1, warning: 1, warn: 1, error: 1, fatal: 1, panic: 1, none: 1, trace: 1, custom: 1 })], 'level');
    const status = seriesOf([bucket({ '1xx': 1, '2xx': 1, '3xx': 1, '4xx': 1, '5xx': 1, none: 1, '9xx': 1 })], 'status');
    for (const theme of ['light', 'dark'] as const) {
      for (const s of [levels, status]) {
        const colours = s.map((x) => toneColor(x.tone, theme));
        expect(new Set(colours).size).toBe(colours.length);
      }
    }
    // Known levels keep their own colour; only the later duplicate moves.
    const tone = (key: string) => levels.find((x) => x.key === key)!.tone;
    expect([tone('info'), tone('LOG'), tone('debug'), tone('none'), tone('error'), tone('fatal')]).toEqual(['blue', 'teal', 'grey', 'slate', 'red', 'darkred']);
    expect([tone('warn'), tone('warning')].filter((t) => t === 'amber')).toHaveLength(1);
    expect(tone('panic')).not.toBe('darkred');
  });
});

describe('partialBucket', () => {
  const W = 60_000_000;
  it('a bucket that holds instants outside (start, end] is partial at its end', () => {
    // The range (10W − 1, 12W + 30 s]: the last bucket [12W, 13W) is cut at 12W + 30 s.
    const range = { start: 10 * W - 1, end: 12 * W + 30_000_000 };
    expect([10, 11, 12].map((k) => partialBucket(k * W, W, range))).toEqual([null, null, 'end']);
    expect(partialBucket(10 * W, W, { start: 10 * W, end: 12 * W })).toBe('start');
    // A bucket click's range (t − 1, t + w − 1] is exactly one whole bucket.
    expect(partialBucket(10 * W, W, { start: 10 * W - 1, end: 11 * W - 1 })).toBeNull();
  });
});

describe('alignPrevious', () => {
  const W = 60_000_000;
  const b = (t: number, count: number): HistogramBucket => ({ timestamp: t, count, by: {} });
  it('moves each earlier bucket forward by the offset onto the bucket it lands in; uncovered buckets are null', () => {
    const current = [b(100 * W, 5), b(101 * W, 6), b(102 * W, 7)];
    // One day earlier (1440 minutes): 100W − 1440W lands on bucket 0, and so on; 102 is not covered.
    const previous = [b(100 * W - 1440 * W, 3), b(101 * W - 1440 * W, 0)];
    expect(alignPrevious(current, W, previous, 1440 * W)).toEqual([3, 0, null]);
  });
  it('an offset that is not a whole number of widths adds an earlier bucket to the one holding its start', () => {
    const current = [b(0, 1), b(W, 1)];
    expect(alignPrevious(current, W, [b(-W / 2, 4), b(W / 2, 2)], W / 2)).toEqual([4, 2]);
  });
});

describe('selectionRange', () => {
  const W = 60_000_000;
  it('one bucket [t, t+w) is the API range (t−1, t+w−1]', () => {
    expect(selectionRange(10 * W, 10 * W, W)).toEqual({ start: 10 * W - 1, end: 11 * W - 1 });
  });
  it('a drag either way covers both ends', () => {
    expect(selectionRange(14 * W, 11 * W, W)).toEqual({ start: 11 * W - 1, end: 15 * W - 1 });
  });
  it('never reaches past the range on screen', () => {
    expect(selectionRange(10 * W, 12 * W, W, { start: 10 * W + 5, end: 12 * W + 7 })).toEqual({ start: 10 * W + 5, end: 12 * W + 7 });
  });
});
