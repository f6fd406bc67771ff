/**
 * Time at the edges. Inside the app every instant is an integer count of microseconds since
 * the Unix epoch (UTC), held in a JS number (safe up to year 2255). JavaScript's Date keeps
 * milliseconds only, so ISO strings are parsed by hand to keep 6 or 9 fraction digits.
 */

export const MICROS = {
  second: 1_000_000,
  minute: 60_000_000,
  hour: 3_600_000_000,
  day: 86_400_000_000,
} as const;

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/;

/** Parses an ISO 8601 date-time (any offset, up to nanosecond fractions) to microseconds. */
export function parseIsoMicros(text: string): number | undefined {
  const m = ISO_RE.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC silently rolls 2026-02-31 into March; reject dates that do not exist.
  const check = new Date(ms);
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return undefined;
  let offsetMinutes = 0;
  if (zone && /^[+-]/.test(zone)) {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  // Fractions beyond microseconds are truncated (floor), never rounded into the next µs.
  const fracMicros = frac ? Number(frac.slice(0, 6).padEnd(6, '0')) : 0;
  return ms * 1000 + fracMicros - offsetMinutes * MICROS.minute;
}

/**
 * Interprets a record timestamp: integer or fractional epoch numbers (by magnitude:
 * seconds ~10 digits, milliseconds ~13, microseconds ~16, nanoseconds ~19), digit strings
 * the same way (CSV cells are strings), or ISO 8601 strings.
 */
export function parseRecordTimestamp(value: unknown): number | undefined {
  if (typeof value === 'number') return fromEpochNumber(value);
  if (typeof value === 'string') {
    const t = value.trim();
    if (/^\d+(\.\d+)?$/.test(t)) return fromEpochDigits(t);
    return parseIsoMicros(t);
  }
  return undefined;
}

function fromEpochNumber(n: number): number | undefined {
  if (!Number.isFinite(n) || n <= 0) return undefined;
  const digits = Math.floor(n).toString().length;
  return scale(n, digits);
}

function fromEpochDigits(t: string): number | undefined {
  const [int = '', frac = ''] = t.split('.');
  const digits = int.replace(/^0+/, '').length;
  if (digits === 0) return undefined;
  // Seconds with a fraction keep their microseconds exactly via string arithmetic.
  if (digits <= 11 && frac) return Number(int) * 1_000_000 + Number(frac.slice(0, 6).padEnd(6, '0'));
  // Nanoseconds exceed 2^53 as a float; dropping the last three digits as text stays exact.
  if (digits >= 18 && digits <= 20) return Number(int.slice(0, -3));
  return scale(Number(t), digits);
}

function scale(n: number, digits: number): number | undefined {
  if (digits >= 9 && digits <= 11) return Math.round(n * 1_000_000);
  if (digits >= 12 && digits <= 14) return Math.round(n * 1_000);
  if (digits >= 15 && digits <= 17) return Math.trunc(n);
  if (digits >= 18 && digits <= 20) return Math.trunc(n / 1_000);
  return undefined;
}

/** `2026-11-22T10:00:00.123456Z`: exact to the microsecond. */
export function formatIsoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  const rest = us - ms * 1000;
  const base = new Date(ms).toISOString(); // ...:SS.mmmZ
  return `${base.slice(0, -1)}${String(rest).padStart(3, '0')}Z`;
}

/** `YYYY-MM-DDTHH:MM:SS` with no zone, as BigQuery returns a DATETIME. */
export function formatDatetime(us: number): string {
  return new Date(Math.floor(us / 1000)).toISOString().slice(0, 19);
}

/** Truncates to a whole unit (all units divide evenly from the epoch, UTC). */
export function truncMicros(us: number, unit: number): number {
  return us - (((us % unit) + unit) % unit);
}

/** The instant the app treats as "now": injected so tests and replays can fix it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() * 1000 };
