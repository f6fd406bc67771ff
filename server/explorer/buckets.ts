/**
 * The histogram's bucket widths: round widths, the narrowest that covers a window in at most the
 * buckets asked. A search's shared walk (search-summary.ts) counts its window in fine bins that
 * every width a histogram of that window can take is summed from.
 */
import { MICROS } from '../time.ts';

/** Round bucket widths, narrowest first; a histogram takes the narrowest that covers its range in about N buckets. */
export const BUCKET_WIDTHS: readonly number[] = [
  MICROS.second, 5 * MICROS.second, 10 * MICROS.second, 30 * MICROS.second,
  MICROS.minute, 5 * MICROS.minute, 10 * MICROS.minute, 15 * MICROS.minute, 30 * MICROS.minute,
  MICROS.hour, 3 * MICROS.hour, 6 * MICROS.hour, 12 * MICROS.hour, MICROS.day, 7 * MICROS.day,
];
export const DEFAULT_BUCKETS = 60;
export const MAX_BUCKETS = 500;

export function bucketWidth(start: number, end: number, buckets: number): number {
  const span = Math.max(1, end - start);
  return BUCKET_WIDTHS.find((w) => span / w <= buckets) ?? BUCKET_WIDTHS[BUCKET_WIDTHS.length - 1]!;
}

/**
 * The widest bin that every bucket width a histogram of (start, end] can take (MAX_BUCKETS
 * buckets at most) is a whole number of: 30 minutes for a week, where 1-second bins made a
 * week's search count 120,960 bins per key and each histogram answer add them all up.
 */
export function fineWidth(start: number, end: number): number {
  const narrowest = bucketWidth(start, end, MAX_BUCKETS);
  const wider = BUCKET_WIDTHS.filter((w) => w >= narrowest);
  const fits = BUCKET_WIDTHS.filter((w) => w <= narrowest && wider.every((x) => x % w === 0));
  return fits[fits.length - 1]!;
}
