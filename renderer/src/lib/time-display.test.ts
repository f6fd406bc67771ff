import { describe, expect, it } from 'vitest';
import { formatInstant, relativeText } from './time-display.ts';
import { MICROS } from '../../../contract/instants.ts';

const NOW = 1773500966535897; // 2026-03-14T15:09:26.535897Z

describe('relative times', () => {
  it('counts back from the clock in the two largest units', () => {
    expect(relativeText(NOW, NOW)).toBe('now');
    expect(relativeText(NOW - 250_000, NOW)).toBe('250 ms ago');
    expect(relativeText(NOW - 4_260_000, NOW)).toBe('4.2 s ago');
    expect(relativeText(NOW - 42 * MICROS.second, NOW)).toBe('42 s ago');
    expect(relativeText(NOW - 3 * MICROS.minute - 12 * MICROS.second - 999_999, NOW)).toBe('3 min 12 s ago');
    expect(relativeText(NOW - 2 * MICROS.hour, NOW)).toBe('2 h ago');
    expect(relativeText(NOW - 26 * MICROS.hour - 5 * MICROS.minute, NOW)).toBe('1 day 2 h ago');
    expect(relativeText(NOW - 3 * MICROS.day, NOW)).toBe('3 days ago');
  });

  it('an instant after now (a fixed clock before the newest record) reads as “in”', () => {
    expect(relativeText(NOW + 5 * MICROS.minute, NOW)).toBe('in 5 min');
  });
});

describe('formatInstant', () => {
  it('UTC writes the instant in UTC; relative without a clock falls back to absolute', () => {
    expect(formatInstant(NOW, 'utc', NOW, 'ms')).toBe('2026-03-14 15:09:26.535');
    expect(formatInstant(NOW - MICROS.minute, 'relative', NOW)).toBe('1 min ago');
    expect(formatInstant(NOW, 'relative', undefined, 'second')).toBe(formatInstant(NOW, 'local', undefined, 'second'));
  });
});
