/**
 * Log-scale helpers for the execution-time chart: one slow outlier (max) would otherwise
 * flatten avg and p95 against the axis.
 */

export interface LogAxis {
  domain: [number, number];
  /** Powers of ten inside the domain. */
  ticks: number[];
}

/** A domain from the power of ten at or below the smallest positive value to the one at or above the largest. */
export function logAxis(values: Iterable<number | null | undefined>): LogAxis {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v === null || v === undefined || !(v > 0) || !Number.isFinite(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (min === Infinity) return { domain: [1, 10], ticks: [1, 10] };
  let lo = Math.floor(Math.log10(min));
  let hi = Math.ceil(Math.log10(max));
  if (hi === lo) hi = lo + 1;
  lo = Math.max(lo, -3);
  const ticks: number[] = [];
  for (let e = lo; e <= hi; e++) ticks.push(Number(`1e${e}`));
  return { domain: [ticks[0]!, ticks[ticks.length - 1]!], ticks };
}

/** Values a log axis can place: non-positive ones sit on the floor (null stays a gap). */
export function clampForLog(v: number | null, floor: number): number | null {
  if (v === null) return null;
  return v > floor ? v : floor;
}
