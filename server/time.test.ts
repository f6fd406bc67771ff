import { describe, expect, it } from 'vitest';
import {
  formatDatetime,
  formatIsoInstant,
  formatIsoMicros,
  INSTANT_RANGE,
  inRange,
  MICROS,
  parseIsoInstant,
  parseIsoMicros,
  parseRecordTimestamp,
  readIsoMicros,
  RECORD_RANGE,
  truncMicros,
} from './time.ts';

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

describe('parseRecordTimestamp', () => {
  it('16-digit number: microseconds, taken as is', () => {
    expect(parseRecordTimestamp(1_679_582_418_149_123)).toBe(US);
  });

  it('13-digit number: milliseconds', () => {
    expect(parseRecordTimestamp(1_679_582_418_149)).toBe(US_MS);
  });

  it('10-digit number with a 6-digit fraction: seconds, exact to the microsecond', () => {
    expect(parseRecordTimestamp(1679582418.149123)).toBe(US);
  });

  it('10-digit integer number: whole seconds', () => {
    expect(parseRecordTimestamp(1679582418)).toBe(BASE_MS * 1000);
  });

  it('digit strings are read like numbers of the same magnitude', () => {
    expect(parseRecordTimestamp('1679582418149123')).toBe(US);
    expect(parseRecordTimestamp('1679582418149')).toBe(US_MS);
    expect(parseRecordTimestamp('1679582418.149123')).toBe(US);
    expect(parseRecordTimestamp('1679582418')).toBe(BASE_MS * 1000);
  });

  it('a seconds string with 9 fraction digits is truncated to the microsecond', () => {
    expect(parseRecordTimestamp('1679582418.149123999')).toBe(US);
  });

  it('a 19-digit nanosecond string is truncated to microseconds', () => {
    expect(parseRecordTimestamp('1679582418149123999')).toBe(US);
  });

  it('surrounding whitespace in a string is ignored', () => {
    expect(parseRecordTimestamp(' 1679582418149123 ')).toBe(US);
  });

  it('ISO strings go through parseIsoMicros', () => {
    expect(parseRecordTimestamp('2023-03-23T14:40:18.149123Z')).toBe(US);
    expect(parseRecordTimestamp('2023-03-23 14:40:18.149 UTC')).toBe(US_MS);
  });

  it('zero, negatives, magnitudes that fit no unit and non-numbers are rejected', () => {
    expect(parseRecordTimestamp(0)).toBeUndefined();
    expect(parseRecordTimestamp(-1_679_582_418_149_123)).toBeUndefined();
    expect(parseRecordTimestamp(1_234_567)).toBeUndefined();
    expect(parseRecordTimestamp(Number.NaN)).toBeUndefined();
    expect(parseRecordTimestamp('0000')).toBeUndefined();
    expect(parseRecordTimestamp(true)).toBeUndefined();
    expect(parseRecordTimestamp(null)).toBeUndefined();
    expect(parseRecordTimestamp({ t: 1 })).toBeUndefined();
    expect(parseRecordTimestamp('not a time')).toBeUndefined();
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
const Y2000 = 946_684_800; // 2000-01-01T00:00:00Z
const Y2100 = 4_102_444_800; // 2100-01-01T00:00:00Z

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
    expect(parseRecordTimestamp('2023-03-23T14:40:18.1234567891Z')).toBeUndefined();
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

describe('RECORD_RANGE: what an import stores', () => {
  it('is 2000-01-01T00:00:00Z to 2099-12-31T23:59:59.999999Z', () => {
    expect(RECORD_RANGE.min).toBe(Y2000 * 1_000_000);
    expect(RECORD_RANGE.max).toBe(Y2100 * 1_000_000 - 1);
    expect(inRange(parseRecordTimestamp('2000-01-01T00:00:00Z')!, RECORD_RANGE)).toBe(true);
    expect(inRange(parseRecordTimestamp('2099-12-31T23:59:59.999999Z')!, RECORD_RANGE)).toBe(true);
    expect(inRange(parseRecordTimestamp('1999-12-31T23:59:59.999999Z')!, RECORD_RANGE)).toBe(false);
    expect(inRange(parseRecordTimestamp('2100-01-01T00:00:00Z')!, RECORD_RANGE)).toBe(false);
  });

  it('record timestamps read any 4-digit year, so the range check can name the real date', () => {
    expect(parseRecordTimestamp('0001-01-01T00:00:00Z')).toBe(Y0001 * 1_000_000);
    expect(inRange(parseRecordTimestamp('9999-12-31T23:59:59.999999Z')!, RECORD_RANGE)).toBe(false);
  });

  it('epoch numbers at the edges, in every unit', () => {
    expect(inRange(parseRecordTimestamp(946_684_800)!, RECORD_RANGE)).toBe(true);
    expect(inRange(parseRecordTimestamp(946_684_799)!, RECORD_RANGE)).toBe(false);
    expect(inRange(parseRecordTimestamp(4_102_444_799_999)!, RECORD_RANGE)).toBe(true);
    expect(inRange(parseRecordTimestamp(4_102_444_800_000)!, RECORD_RANGE)).toBe(false);
    expect(inRange(parseRecordTimestamp('4102444799999999')!, RECORD_RANGE)).toBe(true);
    expect(inRange(parseRecordTimestamp('4102444800000000')!, RECORD_RANGE)).toBe(false);
    expect(inRange(parseRecordTimestamp('946684799999999999')!, RECORD_RANGE)).toBe(false);
    expect(inRange(parseRecordTimestamp('946684800000000000')!, RECORD_RANGE)).toBe(true);
    // 11-digit seconds (year 5138) are read, then refused by the range.
    expect(inRange(parseRecordTimestamp(99_999_999_999)!, RECORD_RANGE)).toBe(false);
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
