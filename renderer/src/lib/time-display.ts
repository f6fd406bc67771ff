/**
 * How times are shown: in the browser's zone, in UTC, or relative to the server's
 * clock ("3 min 12 s ago"). A record's time is shown in the chosen form; a range bound, an
 * axis tick or a bucket cannot read as "ago", so in relative mode they keep the local zone.
 */
import { MICROS } from '../../../contract/instants.ts';
import { formatDateTime, localZoneName, type TimePrecision } from './time.ts';

export const TIME_MODES = ['local', 'utc', 'relative'] as const;
export type TimeMode = (typeof TIME_MODES)[number];

export const TIME_MODE_LABELS: Record<TimeMode, string> = { local: 'Local', utc: 'UTC', relative: 'Relative' };

export function isTimeMode(v: unknown): v is TimeMode {
  return typeof v === 'string' && (TIME_MODES as readonly string[]).includes(v);
}

/** The zone absolute times are written in: `UTC`, or undefined for the browser's own. */
export function zoneOf(mode: TimeMode): string | undefined {
  return mode === 'utc' ? 'UTC' : undefined;
}

/** `Europe/Berlin`, `UTC`: what the page says its times are in. */
export function zoneLabel(mode: TimeMode): string {
  return mode === 'utc' ? 'UTC' : localZoneName();
}

function unitText(us: number): string {
  const a = Math.abs(us);
  if (a < MICROS.second) return `${Math.floor(a / 1000)} ms`;
  if (a < 10 * MICROS.second) return `${(Math.floor(a / 100_000) / 10).toFixed(1)} s`;
  if (a < MICROS.minute) return `${Math.floor(a / MICROS.second)} s`;
  const two = (big: number, bigName: string, small: number, smallName: string) => {
    const n = Math.floor(a / big);
    const rest = Math.floor((a - n * big) / small);
    return rest ? `${n} ${bigName} ${rest} ${smallName}` : `${n} ${bigName}`;
  };
  if (a < MICROS.hour) return two(MICROS.minute, 'min', MICROS.second, 's');
  if (a < MICROS.day) return two(MICROS.hour, 'h', MICROS.minute, 'min');
  return two(MICROS.day, a < 2 * MICROS.day ? 'day' : 'days', MICROS.hour, 'h');
}

/** `3 min 12 s ago`, `4.2 s ago`, `2 days 3 h ago`; `in 5 min` for an instant after now. */
export function relativeText(us: number, now: number): string {
  const d = now - us;
  if (d === 0) return 'now';
  return d > 0 ? `${unitText(d)} ago` : `in ${unitText(-d)}`;
}

/**
 * An instant as the mode shows it (relative needs the clock's now; without it, local time).
 * `2026-03-14 16:04:56.097` local or UTC, or `3 min 12 s ago`.
 */
export function formatInstant(us: number, mode: TimeMode, now: number | undefined, precision: TimePrecision = 'second'): string {
  if (mode === 'relative' && now !== undefined) return relativeText(us, now);
  return formatDateTime(us, precision, zoneOf(mode));
}
