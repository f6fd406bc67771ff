/**
 * Time at the renderer's edges. Every instant is integer microseconds since the epoch (UTC),
 * as the API returns it; JavaScript's Date keeps only milliseconds, so the microsecond part is
 * carried by hand. "Now" always comes from the server's clock (`/api/clock`), never Date.now().
 * ISO text is read and written by the shared rules (contract/instants.ts), as the server does;
 * this adds the wall-clock forms people read and type.
 */
import { MICROS } from '../../../contract/instants.ts';

export interface ZonedParts {
  year: string;
  month: string;
  day: string;
  hour: string;
  minute: string;
  second: string;
}

const partsFormatters = new Map<string, Intl.DateTimeFormat>();

/** Wall-clock parts of an instant in a time zone (default: the browser's). */
export function zonedParts(us: number, timeZone?: string): ZonedParts {
  const key = timeZone ?? '';
  let f = partsFormatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    partsFormatters.set(key, f);
  }
  const out: Record<string, string> = {};
  for (const p of f.formatToParts(new Date(Math.floor(us / 1000)))) out[p.type] = p.value;
  return {
    year: out.year ?? '',
    month: out.month ?? '',
    day: out.day ?? '',
    hour: out.hour === '24' ? '00' : (out.hour ?? ''),
    minute: out.minute ?? '',
    second: out.second ?? '',
  };
}

export type TimePrecision = 'minute' | 'second' | 'ms' | 'us';

function fraction(us: number, precision: TimePrecision): string {
  const sub = ((us % MICROS.second) + MICROS.second) % MICROS.second;
  if (precision === 'ms') return `.${String(Math.floor(sub / 1000)).padStart(3, '0')}`;
  if (precision === 'us') return `.${String(sub).padStart(6, '0')}`;
  return '';
}

/** `2026-11-22 11:00:00.123` in the given zone (default: the browser's local zone). */
export function formatDateTime(us: number, precision: TimePrecision = 'second', timeZone?: string): string {
  const p = zonedParts(us, timeZone);
  const hm = `${p.hour}:${p.minute}`;
  const time = precision === 'minute' ? hm : `${hm}:${p.second}${fraction(us, precision)}`;
  return `${p.year}-${p.month}-${p.day} ${time}`;
}

/** Same as formatDateTime in UTC, with a `UTC` suffix. */
export function formatUtc(us: number, precision: TimePrecision = 'second'): string {
  return `${formatDateTime(us, precision, 'UTC')} UTC`;
}

/** Time of day only: `11:00:00.123`. */
export function formatTime(us: number, precision: TimePrecision = 'second', timeZone?: string): string {
  const p = zonedParts(us, timeZone);
  const hm = `${p.hour}:${p.minute}`;
  return precision === 'minute' ? hm : `${hm}:${p.second}${fraction(us, precision)}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Nov 22`: a short date in the given zone. */
export function formatShortDate(us: number, timeZone?: string): string {
  const p = zonedParts(us, timeZone);
  return `${MONTHS[Number(p.month) - 1] ?? p.month} ${Number(p.day)}`;
}

/** The browser's zone name, for labels ("Europe/Berlin"). */
export function localZoneName(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';
}

/** A span in words: `15 min`, `1 h`, `7 days`. */
export function formatSpan(us: number): string {
  if (us % MICROS.day === 0) return `${us / MICROS.day} ${us === MICROS.day ? 'day' : 'days'}`;
  if (us % MICROS.hour === 0) return `${us / MICROS.hour} h`;
  if (us % MICROS.minute === 0) return `${us / MICROS.minute} min`;
  return `${us / MICROS.second} s`;
}

/**
 * The value for an `<input type="datetime-local" step="1">` showing an instant in the
 * browser's zone, and back. Seconds precision; the inputs are for humans.
 */
export function toLocalInputValue(us: number, timeZone?: string): string {
  const p = zonedParts(us, timeZone);
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
}

/**
 * A local wall-clock time as a Date. `new Date(y, …)` reads years 0–99 as 1900–1999; setting the
 * year with setFullYear keeps the year as typed.
 */
function localDate(year: number, month: number, day: number, hour: number, minute: number, second: number): Date {
  const date = new Date(0);
  date.setFullYear(year, month - 1, day);
  date.setHours(hour, minute, second, 0);
  return date;
}

/** Reads a datetime-local value as local wall-clock time (the browser resolves the zone). */
export function fromLocalInputValue(value: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = '0'] = m;
  const date = localDate(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s));
  const ms = date.getTime();
  return Number.isNaN(ms) ? undefined : ms * 1000;
}

/**
 * A bucket's range `[start, end)` as `2026-11-22 10:00 – 11:00` in a zone (default local);
 * the end repeats the date only when it falls on another day.
 */
export function formatRange(start: number, end: number, precision: TimePrecision = 'minute', timeZone?: string): string {
  const a = formatDateTime(start, precision, timeZone);
  const b = formatDateTime(end, precision, timeZone);
  const sameDay = a.slice(0, 10) === b.slice(0, 10);
  return `${a} – ${sameDay ? b.slice(11) : b}`;
}

/**
 * `2026-03-14 15:40:00`: an instant as local wall-clock time, 24-hour, for text inputs that read
 * like every other time on the page (a datetime-local input follows the browser's locale, which
 * made the custom range 12-hour under en-US).
 */
export function formatWallTime(us: number, timeZone?: string): string {
  return formatDateTime(us, 'second', timeZone);
}

/**
 * Reads `YYYY-MM-DD HH:MM[:SS[.ffffff]]` (a `T` instead of the space too) as local wall-clock
 * time; undefined when it is not one. Microseconds typed are kept.
 */
export function parseWallTime(text: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?$/.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = '0', frac = ''] = m;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  const date = localDate(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(date.getTime()) || date.getDate() !== Number(d) || date.getMonth() !== Number(mo) - 1) return undefined;
  return date.getTime() * 1000 + (frac ? Number(frac.padEnd(6, '0')) : 0);
}
