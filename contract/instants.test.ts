import { describe, expect, it } from 'vitest';
import {
  formatDatetime,
  formatIsoInstant,
  formatIsoMicros,
  INSTANT_RANGE,
  MICROS,
  parseIsoInstant,
  parseIsoMicros,
  readIsoMicros,
  truncMicros,
} from './instants.ts';

// 2023-03-23T14:40:18Z, the instant of the postgres sample record; fractions are added by hand.
const BASE_MS = Date.UTC(2023, 2, 23, 14, 40, 18);
const US = BASE_MS * 1000 + 149_123; // .149123
const US_MS = BASE_MS * 1000 + 149_000; // .149

describe('parseIsoMicros', () => {
  it('the hand-written epoch literals used below are 2023-03-23T14:40:18Z', () => {
    expect(BASE_MS).toBe(1_679_582_418_000);
  });

  it('Z with 6 fraction digits is exact to the microsecond', () => {
    expect(parseIsoMicros('2023-03-23T14:40:18.149123Z')).toBe(US);
  });

  it('9 fraction digits are truncated to the microsecond, never rounded up', () => {
    expect(parseIsoMicros('2023-03-23T14:40:18.149123999Z')).toBe(US);
    expect(parseIsoMicros('2023-03-23T14:40:18.999999999Z')).toBe(BASE_MS * 1000 + 999_999);
  });

  it('3 fraction digits are milliseconds; 1 digit is tenths', () => {
    expect(parseIsoMicros('2023-03-23T14:40:18.149Z')).toBe(US_MS);
    expect(parseIsoMicros('2023-03-23T14:40:18.5Z')).toBe(BASE_MS * 1000 + 500_000);
  });

  it('+05:30 is subtracted: 20:10:18.149123+05:30 is 14:40:18.149123Z', () => {
    expect(parseIsoMicros('2023-03-23T20:10:18.149123+05:30')).toBe(US);
  });

  it('-08:00 is added: 06:40:18.149123-08:00 is 14:40:18.149123Z', () => {
    expect(parseIsoMicros('2023-03-23T06:40:18.149123-08:00')).toBe(US);
  });

  it('compact offsets +0530 and +05 are accepted', () => {
    expect(parseIsoMicros('2023-03-23T20:10:18.149123+0530')).toBe(US);
    expect(parseIsoMicros('2023-03-23T19:40:18.149123+05')).toBe(US);
  });

  it('an offset that crosses midnight moves the date: 2023-03-24T01:10:18+10:30 is 2023-03-23T14:40:18Z', () => {
    expect(parseIsoMicros('2023-03-24T01:10:18+10:30')).toBe(BASE_MS * 1000);
  });

  it('postgres style "2023-03-23 14:40:18.149 UTC" (space separator, UTC suffix)', () => {
    expect(parseIsoMicros('2023-03-23 14:40:18.149 UTC')).toBe(US_MS);
  });

  it('no zone is read as UTC', () => {
    expect(parseIsoMicros('2023-03-23T14:40:18.149123')).toBe(US);
  });

  it('a comma decimal separator is accepted', () => {
    expect(parseIsoMicros('2023-03-23T14:40:18,149123Z')).toBe(US);
  });

  it('a date alone is midnight UTC; minutes without seconds are accepted', () => {
    expect(parseIsoMicros('2023-03-23')).toBe(Date.UTC(2023, 2, 23) * 1000);
    expect(parseIsoMicros('2023-03-23T14:40Z')).toBe(Date.UTC(2023, 2, 23, 14, 40) * 1000);
  });

  it('dates that do not exist are rejected, not rolled over', () => {
    expect(parseIsoMicros('2023-02-29T00:00:00Z')).toBeUndefined();
    expect(parseIsoMicros('2023-04-31T00:00:00Z')).toBeUndefined();
    expect(parseIsoMicros('2023-13-01T00:00:00Z')).toBeUndefined();
    expect(parseIsoMicros('2023-03-23T24:00:00Z')).toBeUndefined();
    expect(parseIsoMicros('2023-03-23T14:60:00Z')).toBeUndefined();
  });

  it('a leap day that exists is accepted', () => {
    expect(parseIsoMicros('2024-02-29T12:00:00Z')).toBe(Date.UTC(2024, 1, 29, 12) * 1000);
  });

  it('offsets out of range and text that is not a date are rejected', () => {
    expect(parseIsoMicros('2023-03-23T14:40:18+24:00')).toBeUndefined();
    expect(parseIsoMicros('2023-03-23T14:40:18+05:60')).toBeUndefined();
    expect(parseIsoMicros('yesterday')).toBeUndefined();
    expect(parseIsoMicros('')).toBeUndefined();
    expect(parseIsoMicros('23/03/2023 14:40')).toBeUndefined();
  });
});

describe('formatting and truncation', () => {
  it('formatIsoMicros writes all six fraction digits', () => {
    expect(formatIsoMicros(US)).toBe('2023-03-23T14:40:18.149123Z');
    expect(formatIsoMicros(BASE_MS * 1000 + 7)).toBe('2023-03-23T14:40:18.000007Z');
  });

  it('formatIsoMicros and parseIsoMicros round-trip', () => {
    expect(parseIsoMicros(formatIsoMicros(US))).toBe(US);
  });

  it('formatDatetime is YYYY-MM-DDTHH:MM:SS with no zone and no fraction', () => {
    expect(formatDatetime(US)).toBe('2023-03-23T14:40:18');
  });

  it('truncMicros floors to the unit, also before the epoch', () => {
    expect(truncMicros(US, MICROS.hour)).toBe(Date.UTC(2023, 2, 23, 14) * 1000);
    expect(truncMicros(US, MICROS.day)).toBe(Date.UTC(2023, 2, 23) * 1000);
    expect(truncMicros(-1, MICROS.second)).toBe(-1_000_000);
  });
});

// Epoch seconds below were computed independently (Python's datetime), not by this module.
const Y0001 = -62_135_596_800; // 0001-01-01T00:00:00Z
const Y9999_LAST = 253_402_300_799; // 9999-12-31T23:59:59Z
const Y1700 = -8_520_336_000; // 1700-01-01T00:00:00Z
const Y2200 = 7_258_118_400; // 2200-01-01T00:00:00Z

describe('years 0001–9999 are parsed and written exactly', () => {
  it('the first and last instants of the 4-digit years', () => {
    expect(parseIsoInstant('0001-01-01T00:00:00Z')).toEqual({ seconds: Y0001, micros: 0 });
    expect(parseIsoInstant('9999-12-31T23:59:59.999999Z')).toEqual({ seconds: Y9999_LAST, micros: 999_999 });
    expect(parseIsoInstant('9999-12-31T23:59:59.999999999Z')).toEqual({ seconds: Y9999_LAST, micros: 999_999 });
  });

  it('9999-12-31T23:59:59.999999Z and 0001-01-01T00:00:00Z round-trip as text', () => {
    for (const text of ['9999-12-31T23:59:59.999999Z', '0001-01-01T00:00:00.000000Z', '0099-12-31T23:59:59.000001Z']) {
      expect(formatIsoInstant(parseIsoInstant(text)!)).toBe(text);
    }
  });

  it('two-digit years are not read as 19xx: 0099-12-31 is year 99, not 1999', () => {
    expect(parseIsoInstant('0099-12-31T00:00:00Z')).toEqual({ seconds: -59_011_545_600, micros: 0 });
    expect(parseIsoInstant('0100-03-01')).toEqual({ seconds: -59_006_361_600, micros: 0 });
    expect(parseIsoInstant('0001-01-01T00:00:00Z')!.seconds).not.toBe(-2_177_452_800); // 1901-01-01
  });

  it('the Gregorian leap rule: 1600 and 2400 have Feb 29; 100, 1900 and 2100 do not', () => {
    expect(parseIsoInstant('1600-02-29')).toEqual({ seconds: -11_670_998_400, micros: 0 });
    expect(parseIsoInstant('2400-02-29')).toEqual({ seconds: 13_574_563_200, micros: 0 });
    for (const y of ['0100', '1900', '2100']) expect(parseIsoInstant(`${y}-02-29`), y).toBeUndefined();
  });

  it('every 1 January, 28 February and 1 March of 0001–9999 agrees with Date.setUTCFullYear', () => {
    // setUTCFullYear (unlike Date.UTC) takes years 0–99 literally: an independent oracle.
    const oracle = (y: number, m: number, d: number) => {
      const t = new Date(0);
      t.setUTCFullYear(y, m - 1, d);
      return t.getTime() / 1000;
    };
    for (let y = 1; y <= 9999; y++) {
      for (const [m, d] of [[1, 1], [2, 28], [3, 1]] as const) {
        const text = `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
        const got = parseIsoInstant(text);
        if (got?.seconds !== oracle(y, m, d)) expect(got?.seconds, text).toBe(oracle(y, m, d));
        const back = formatIsoInstant(got!);
        if (back !== `${text}T00:00:00.000000Z`) expect(back).toBe(`${text}T00:00:00.000000Z`);
      }
    }
  });

  it('year 0000, expanded and 5-digit years are refused', () => {
    for (const text of ['0000-01-01T00:00:00Z', '0000-12-31', '10000-01-01T00:00:00Z', '+010000-01-01T00:00:00.000000Z', '-000001-01-01T00:00:00Z', '+002026-01-01T00:00:00Z', '999-01-01']) {
      expect(parseIsoInstant(text), text).toBeUndefined();
      expect(parseIsoMicros(text), text).toBeUndefined();
    }
  });

  it('an offset that leaves the 4-digit years is refused; one that stays inside is applied', () => {
    expect(parseIsoInstant('0001-01-01T00:00:00+00:01')).toBeUndefined();
    expect(parseIsoInstant('9999-12-31T23:59:59-00:01')).toBeUndefined();
    expect(parseIsoInstant('0001-01-01T00:00:00-01:00')).toEqual({ seconds: Y0001 + 3600, micros: 0 });
    expect(parseIsoInstant('9999-12-31T23:59:59+01:00')).toEqual({ seconds: Y9999_LAST - 3600, micros: 0 });
  });
});

describe('fraction digits', () => {
  it('1 to 9 digits are accepted; 10 or more, or none after the point, are refused', () => {
    expect(parseIsoMicros('2023-03-23T14:40:18.1Z')).toBe(BASE_MS * 1000 + 100_000);
    expect(parseIsoMicros('2023-03-23T14:40:18.123456789Z')).toBe(BASE_MS * 1000 + 123_456);
    expect(parseIsoMicros('2023-03-23T14:40:18.1234567891Z')).toBeUndefined();
    expect(parseIsoMicros('2023-03-23T14:40:18.000000000000Z')).toBeUndefined();
    expect(parseIsoMicros('2023-03-23T14:40:18.Z')).toBeUndefined();
  });
});

describe('INSTANT_RANGE: what the clock and time parameters accept', () => {
  it('its ends are 1700-01-01T00:00:00Z and 2199-12-31T23:59:59.999999Z, both exact in a number', () => {
    expect(INSTANT_RANGE.min).toBe(Y1700 * 1_000_000);
    expect(INSTANT_RANGE.max).toBe(Y2200 * 1_000_000 - 1);
    expect(INSTANT_RANGE.min).toBe(-8_520_336_000_000_000);
    expect(INSTANT_RANGE.max).toBe(7_258_118_399_999_999);
    expect(Number.isSafeInteger(INSTANT_RANGE.min) && Number.isSafeInteger(INSTANT_RANGE.max)).toBe(true);
  });

  it('the ends are accepted and round-trip; one µs outside is out of range', () => {
    expect(readIsoMicros('1700-01-01T00:00:00Z')).toEqual({ us: -8_520_336_000_000_000 });
    expect(readIsoMicros('2199-12-31T23:59:59.999999Z')).toEqual({ us: 7_258_118_399_999_999 });
    expect(formatIsoMicros(INSTANT_RANGE.min)).toBe('1700-01-01T00:00:00.000000Z');
    expect(formatIsoMicros(INSTANT_RANGE.max)).toBe('2199-12-31T23:59:59.999999Z');
    expect(readIsoMicros('1699-12-31T23:59:59.999999Z')).toEqual({ problem: 'out-of-range' });
    expect(readIsoMicros('2200-01-01T00:00:00Z')).toEqual({ problem: 'out-of-range' });
    expect(readIsoMicros('2199-12-31T23:59:59.999999-00:01')).toEqual({ problem: 'out-of-range' });
    expect(parseIsoMicros('2200-01-01T00:00:00Z')).toBeUndefined();
  });

  it('0001 and 9999 are valid ISO but out of range, not misread', () => {
    expect(readIsoMicros('0001-01-01T00:00:00Z')).toEqual({ problem: 'out-of-range' });
    expect(readIsoMicros('9999-12-31T23:59:59.999999Z')).toEqual({ problem: 'out-of-range' });
    expect(readIsoMicros('0000-01-01T00:00:00Z')).toEqual({ problem: 'not-iso' });
    expect(readIsoMicros('2023-03-23T14:40:18.1234567891Z')).toEqual({ problem: 'not-iso' });
  });

  it('an instant before 1970 inside the range is exact', () => {
    expect(parseIsoMicros('1900-01-01T00:00:00.000001Z')).toBe(-2_208_988_800_000_000 + 1);
    expect(formatIsoMicros(-2_208_988_800_000_000 + 1)).toBe('1900-01-01T00:00:00.000001Z');
    expect(formatIsoMicros(-1)).toBe('1969-12-31T23:59:59.999999Z');
  });
});

describe('formatting never leaves the 4-digit years', () => {
  it('a µs count past 9999 (only an older store could hold one) is clamped, never +010000', () => {
    // 9999-12-31T23:59:59.999999Z as µs is not exact in a double: it rounds up into year 10000.
    expect(formatIsoMicros(253_402_300_799_999_999)).toBe('9999-12-31T23:59:59.999999Z');
    expect(formatIsoMicros(1e20)).toBe('9999-12-31T23:59:59.999999Z');
    expect(formatIsoMicros(-1e20)).toBe('0001-01-01T00:00:00.000000Z');
    expect(formatDatetime(1e20)).toBe('9999-12-31T23:59:59');
  });

  it('a non-finite value is a programming error', () => {
    expect(() => formatIsoMicros(Number.NaN)).toThrow(RangeError);
  });
});

// The page reads and writes instants with these too: 2026-03-14T15:09:26.535897Z, computed
// independently (Python datetime).
const T = 1773500966535897;

describe('formatIsoMicros, as the page writes instants', () => {
  it('writes all six fraction digits, UTC', () => {
    expect(formatIsoMicros(T)).toBe('2026-03-14T15:09:26.535897Z');
  });
  it('pads small sub-millisecond parts', () => {
    expect(formatIsoMicros(1773500400000007)).toBe('2026-03-14T15:00:00.000007Z');
    expect(formatIsoMicros(0)).toBe('1970-01-01T00:00:00.000000Z');
  });
  it('round-trips through parseIsoMicros', () => {
    for (const us of [T, T + 1, T - 999, 1773500400000000]) expect(parseIsoMicros(formatIsoMicros(us))).toBe(us);
  });
});

describe('parseIsoMicros, as the page reads instants', () => {
  it('reads offsets', () => {
    expect(parseIsoMicros('2026-03-14T16:09:26.535897+01:00')).toBe(T);
    expect(parseIsoMicros('2026-03-14T10:09:26.535897-0500')).toBe(T);
  });
  it('truncates nanoseconds instead of rounding up', () => {
    expect(parseIsoMicros('2026-03-14T15:09:26.535897999Z')).toBe(T);
  });
  it('reads a zone-less api-counts DATETIME as UTC', () => {
    expect(parseIsoMicros('2026-03-14T15:00:00')).toBe(1773500400000000);
  });
  it('rejects dates that do not exist and garbage', () => {
    expect(parseIsoMicros('2026-02-31T00:00:00Z')).toBeUndefined();
    expect(parseIsoMicros('yesterday')).toBeUndefined();
  });
});

describe('truncMicros', () => {
  it('truncates to whole units from the epoch', () => {
    expect(truncMicros(T, MICROS.hour)).toBe(1773500400000000);
    expect(truncMicros(T, MICROS.second)).toBe(1773500966000000);
    expect(truncMicros(1773500400000000, MICROS.hour)).toBe(1773500400000000);
  });
});

describe('years 0–99 on the page', () => {
  // The page once read ISO text with Date.UTC, which takes years 0–99 as 1900–1999.
  // 0050-03-01: 49 whole years after 0001-01-01 hold 12 leap days (4, 8, …, 48), so the day is
  // 49 × 365 + 12 + 31 + 28 = 17,956 days after 0001-01-01, whose epoch second is −62,135,596,800:
  // −62,135,596,800 + 17,956 × 86,400 = −60,584,198,400. (1950-03-01 would be −626,054,400.)
  it('0050-03-01 is year 50, never 1950', () => {
    expect(parseIsoInstant('0050-03-01T00:00:00Z')).toEqual({ seconds: -60_584_198_400, micros: 0 });
    expect(formatIsoInstant({ seconds: -60_584_198_400, micros: 0 })).toBe('0050-03-01T00:00:00.000000Z');
  });
  it('is outside what a time parameter takes, so the page drops it rather than send 1950', () => {
    expect(readIsoMicros('0050-03-01T00:00:00Z')).toEqual({ problem: 'out-of-range' });
    expect(parseIsoMicros('0050-03-01T00:00:00Z')).toBeUndefined();
  });
});
