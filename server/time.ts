/**
 * The server's side of time: instants are parsed, written and bounded by the shared rules
 * (contract/instants.ts, re-exported here for the server's modules); this adds what only an
 * import needs (reading record timestamps in any epoch unit, RECORD_RANGE) and the clock.
 */
import { isoInstantMicros, MICROS, parseIsoInstant, type InstantRange } from '../contract/instants.ts';

export { formatDatetime, formatIsoMicros, INSTANT_RANGE, inRange, MICROS, parseIsoInstant, parseIsoMicros, readIsoMicros, truncMicros } from '../contract/instants.ts';

/**
 * Record timestamps an import accepts. Logflare and Supabase exports date from the 2010s on;
 * anything before 2000 or from 2100 on is a placeholder (0, 1970, 0001, 9999-12-31) or a unit
 * mix-up, and storing it would open a partition decades away and drag the "latest" clock there.
 */
export const RECORD_RANGE: InstantRange = {
  min: 946_684_800 * MICROS.second, // 2000-01-01T00:00:00Z
  max: 4_102_444_800 * MICROS.second - 1, // 2099-12-31T23:59:59.999999Z
  text: '2000-01-01T00:00:00Z to 2099-12-31T23:59:59.999999Z',
};

/**
 * Interprets a record timestamp: integer or fractional epoch numbers (by magnitude:
 * seconds ~10 digits, milliseconds ~13, microseconds ~16, nanoseconds ~19), digit strings
 * the same way (CSV cells are strings), or ISO 8601 strings. Any magnitude is read, and far
 * from today the µs are no longer exact: callers check RECORD_RANGE before storing.
 */
export function parseRecordTimestamp(value: unknown): number | undefined {
  if (typeof value === 'number') return fromEpochNumber(value);
  if (typeof value === 'string') {
    const t = value.trim();
    if (/^\d+(\.\d+)?$/.test(t)) return fromEpochDigits(t);
    const i = parseIsoInstant(t);
    return i ? isoInstantMicros(i) : undefined;
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

/** The instant the app treats as "now": injected so tests and replays can fix it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() * 1000 };
