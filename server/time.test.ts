import { describe, expect, it } from 'vitest';
import { inRange, parseRecordTimestamp, RECORD_RANGE } from './time.ts';

// 2023-03-23T14:40:18Z, the instant of the postgres sample record; fractions are added by hand.
const BASE_MS = Date.UTC(2023, 2, 23, 14, 40, 18);
const US = BASE_MS * 1000 + 149_123; // .149123
const US_MS = BASE_MS * 1000 + 149_000; // .149

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
    expect(parseRecordTimestamp('2023-03-23T14:40:18.1234567891Z')).toBeUndefined();
  });
});

// Epoch seconds below were computed independently (Python's datetime), not by this module.
const Y0001 = -62_135_596_800; // 0001-01-01T00:00:00Z
const Y2000 = 946_684_800; // 2000-01-01T00:00:00Z
const Y2100 = 4_102_444_800; // 2100-01-01T00:00:00Z

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
