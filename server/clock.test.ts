import { describe, expect, it } from 'vitest';
import { AppClock } from './clock.ts';

const SYSTEM = 1_795_341_600_000_000; // 2026-11-22T10:00:00Z
const system = { now: () => SYSTEM };

describe('AppClock', () => {
  it("'latest' follows the newest record inside the record range", () => {
    const newest = 4_102_444_799_999_999; // 2099-12-31T23:59:59.999999Z, the last accepted instant
    const clock = new AppClock(() => newest, system);
    clock.set('latest');
    expect(clock.now()).toBe(newest);
  });

  it("'latest' ignores a newest record outside the record range (stored by an older version) and uses system time", () => {
    for (const newest of [4_102_444_800_000_000 /* 2100-01-01 */, 253_402_300_799_999_999 /* 9999-12-31 */, -2_177_452_800_000_000 /* 1901-01-01 */]) {
      const clock = new AppClock(() => newest, system);
      clock.set('latest');
      expect(clock.now()).toBe(SYSTEM);
    }
  });

  it("'latest' with no records is system time", () => {
    const clock = new AppClock(() => null, system);
    clock.set('latest');
    expect(clock.now()).toBe(SYSTEM);
  });

  it('a fixed instant outside 1700–2199 is refused; the ends are accepted', () => {
    const clock = new AppClock(() => null, system);
    clock.set('fixed', -8_520_336_000_000_000); // 1700-01-01T00:00:00Z
    expect(clock.now()).toBe(-8_520_336_000_000_000);
    clock.set('fixed', 7_258_118_399_999_999); // 2199-12-31T23:59:59.999999Z
    expect(clock.now()).toBe(7_258_118_399_999_999);
    expect(() => clock.set('fixed', 7_258_118_400_000_000)).toThrow(RangeError);
    expect(() => clock.set('fixed', -8_520_336_000_000_001)).toThrow(RangeError);
    expect(() => clock.set('fixed', Number.NaN)).toThrow(RangeError);
    expect(clock.now()).toBe(7_258_118_399_999_999);
  });
});
