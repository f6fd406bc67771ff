/**
 * Instants as the API carries them: an integer count of microseconds since the Unix epoch (UTC),
 * held in a JS number, written as ISO 8601. JavaScript's Date keeps milliseconds only and reads
 * years 0–99 as 1900–1999, so ISO strings are parsed and written by hand here, with calendar
 * arithmetic that is exact for every year 0001–9999. The server and the page both use these.
 *
 * A number holds microseconds exactly only within ±2^53 µs (about 1684–2255), so instants the
 * app accepts (clock, parameters) are limited to INSTANT_RANGE, a round span inside that.
 */

export const MICROS = {
  second: 1_000_000,
  minute: 60_000_000,
  hour: 3_600_000_000,
  day: 86_400_000_000,
} as const;

/** Seconds in a UTC day (the calendar arithmetic below works in seconds). */
const DAY_SECONDS = MICROS.day / MICROS.second;

/** An inclusive span of instants, µs, with the wording errors and docs use. */
export interface InstantRange {
  min: number;
  max: number;
  text: string;
}

/** Instants the clock and time parameters accept: years 1700–2199, all exact as µs in a number. */
export const INSTANT_RANGE: InstantRange = {
  min: -8_520_336_000 * MICROS.second, // 1700-01-01T00:00:00Z
  max: 7_258_118_400 * MICROS.second - 1, // 2199-12-31T23:59:59.999999Z
  text: '1700-01-01T00:00:00Z to 2199-12-31T23:59:59.999999Z',
};

export function inRange(us: number, range: InstantRange): boolean {
  return us >= range.min && us <= range.max;
}

/** Whole seconds since the epoch plus the microseconds within that second (0–999999). */
export interface IsoInstant {
  seconds: number;
  micros: number;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The inverse of daysFromCivil. */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day: doy - Math.floor((153 * mp + 2) / 5) + 1 };
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in epoch seconds: the ends of the 4-digit years. */
const FIRST_SECOND = -62_135_596_800;
const LAST_SECOND = 253_402_300_799;

// Four-digit years only (no 0000, no expanded ±YYYYYY); 1 to 9 fraction digits.
const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Parses an ISO 8601 date-time (any offset, 1 to 9 fraction digits) exactly, for any instant in
 * the years 0001–9999 UTC. Seconds since the epoch stay far below 2^53, so this is exact where
 * a µs count would not be.
 */
export function parseIsoInstant(text: string): IsoInstant | undefined {
  const m = ISO_RE.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetMinutes = 0;
  if (zone && /^[+-]/.test(zone)) {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  // A leap second (:60) reads as the first second of the next minute, as Date.UTC did.
  const seconds = daysFromCivil(year, month, day) * DAY_SECONDS + hour * 3600 + minute * 60 + second - offsetMinutes * 60;
  // An offset can push 0001-01-01 or 9999-12-31 out of the 4-digit years, where nothing formats.
  if (seconds < FIRST_SECOND || seconds > LAST_SECOND) return undefined;
  // Fractions beyond microseconds are truncated (floor), never rounded into the next µs.
  return { seconds, micros: frac ? Number(frac.slice(0, 6).padEnd(6, '0')) : 0 };
}

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ` for an instant in the years 0001–9999. */
export function formatIsoInstant({ seconds, micros }: IsoInstant): string {
  const days = Math.floor(seconds / DAY_SECONDS);
  const inDay = seconds - days * DAY_SECONDS;
  const { year, month, day } = civilFromDays(days);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const time = `${p(Math.floor(inDay / 3600))}:${p(Math.floor(inDay / 60) % 60)}:${p(inDay % 60)}`;
  return `${p(year, 4)}-${p(month)}-${p(day)}T${time}.${p(micros, 6)}Z`;
}

/** The instant's µs count; exact only within ±2^53, so callers compare it against a range first or after. */
export function isoInstantMicros(i: IsoInstant): number {
  return i.seconds * MICROS.second + i.micros;
}

export type IsoReading = { us: number } | { problem: 'not-iso' | 'out-of-range' };

/** Parses an ISO 8601 instant to µs, telling bad syntax from an instant outside INSTANT_RANGE. */
export function readIsoMicros(text: string): IsoReading {
  const i = parseIsoInstant(text);
  if (!i) return { problem: 'not-iso' };
  const us = isoInstantMicros(i);
  return inRange(us, INSTANT_RANGE) ? { us } : { problem: 'out-of-range' };
}

/** Parses an ISO 8601 date-time to microseconds; undefined when malformed or outside INSTANT_RANGE. */
export function parseIsoMicros(text: string): number | undefined {
  const r = readIsoMicros(text);
  return 'us' in r ? r.us : undefined;
}

/**
 * `2026-11-22T10:00:00.123456Z`: exact to the microsecond. Instants outside the 4-digit years
 * (never parsed; only an older version could have stored one) are clamped to the first or last
 * instant of 0001–9999, so an answer never carries an expanded year like `+010000`.
 */
export function formatIsoMicros(us: number): string {
  if (!Number.isFinite(us)) throw new RangeError(`not an instant: ${us}`);
  const seconds = Math.floor(us / MICROS.second);
  if (seconds < FIRST_SECOND) return formatIsoInstant({ seconds: FIRST_SECOND, micros: 0 });
  if (seconds > LAST_SECOND) return formatIsoInstant({ seconds: LAST_SECOND, micros: 999_999 });
  // Beyond ±2^53 the subtraction can stray out of the second; within it this is exact.
  const micros = Math.min(999_999, Math.max(0, Math.floor(us - seconds * MICROS.second)));
  return formatIsoInstant({ seconds, micros });
}

/** `YYYY-MM-DDTHH:MM:SS` with no zone, as BigQuery returns a DATETIME (api-counts' bucket labels). */
export function formatDatetime(us: number): string {
  return formatIsoMicros(us).slice(0, 19);
}

/** Truncates to a whole unit (all units divide evenly from the epoch, UTC). */
export function truncMicros(us: number, unit: number): number {
  return us - (((us % unit) + unit) % unit);
}
