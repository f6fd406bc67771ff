import { describe, expect, it } from 'vitest';
import type { HistogramBucket } from '../../api/logs.ts';
import { levelTone, selectionRange, seriesOf, statusTone } from './series.ts';

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
  it('tones follow the issue: 2xx green, 3xx blue, 4xx amber, 5xx red, none grey; error red, warn amber, info blue, debug grey', () => {
    expect(['2xx', '3xx', '4xx', '5xx', 'none'].map(statusTone)).toEqual(['green', 'blue', 'amber', 'red', 'grey']);
    expect(['error', 'FATAL', 'panic', 'warning', 'warn', 'info', 'LOG', 'debug', 'notice'].map(levelTone)).toEqual(['red', 'darkred', 'darkred', 'amber', 'amber', 'blue', 'blue', 'grey', 'neutral']);
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
