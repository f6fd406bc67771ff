import { describe, expect, it } from 'vitest';
import { formatDatetime, formatIsoMicros, MICROS, parseIsoMicros, parseRecordTimestamp, truncMicros } from './time.ts';

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
