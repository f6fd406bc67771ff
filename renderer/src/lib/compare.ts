/**
 * Comparing with another period: the previous window of the same length, or the
 * same window one day or one week earlier. The pages fetch the shifted window with the same
 * parameters and draw it over the current one; these are the pure parts.
 */
import { formatInt } from './format.ts';
import { MICROS } from '../../../contract/instants.ts';

export const COMPARE_CHOICES = ['prev', '1d', '7d'] as const;
export type CompareChoice = (typeof COMPARE_CHOICES)[number];

export const COMPARE_LABELS: Record<CompareChoice, string> = {
  prev: 'Previous period',
  '1d': '1 day earlier',
  '7d': '1 week earlier',
};

/** How far back the compared window lies, µs: the window's own length for `prev`. */
export function compareOffset(choice: CompareChoice, spanUs: number): number {
  switch (choice) {
    case 'prev':
      return spanUs;
    case '1d':
      return MICROS.day;
    case '7d':
      return 7 * MICROS.day;
  }
}

/** A range moved back by `offset` (both bounds; undefined stays undefined). */
export function shiftRange<R extends { start?: number; end?: number }>(range: R, offset: number): R {
  return {
    ...range,
    ...(range.start !== undefined ? { start: range.start - offset } : {}),
    ...(range.end !== undefined ? { end: range.end - offset } : {}),
  };
}

/**
 * A facet value's change from the compared period. The compared answer lists only its top
 * values: a value missing from it had at most its last listed count, unless it listed every
 * value (no others), in which case it had none.
 */
export type FacetChange =
  | { kind: 'change'; diff: number; previous: number; ratio: number | null }
  | { kind: 'new' }
  | { kind: 'unknown'; atMost: number };

export function facetChange(count: number, value: string | number | null, previous: ReadonlyArray<{ value: string | number | null; count: number }>, previousOthers: number): FacetChange {
  const hit = previous.find((p) => p.value === value);
  if (hit) return { kind: 'change', diff: count - hit.count, previous: hit.count, ratio: hit.count > 0 ? (count - hit.count) / hit.count : null };
  if (previousOthers === 0) return count > 0 ? { kind: 'new' } : { kind: 'change', diff: 0, previous: 0, ratio: null };
  return { kind: 'unknown', atMost: previous.reduce((m, p) => Math.min(m, p.count), Infinity) };
}

/** `+12%`, `−3%`, `±0`, `new`, or `+5` where a percentage says nothing (from 0). */
export function facetChangeText(c: FacetChange): string {
  if (c.kind === 'new') return 'new';
  if (c.kind === 'unknown') return '?';
  if (c.diff === 0) return '±0';
  if (c.ratio === null) return `${c.diff > 0 ? '+' : '−'}${formatInt(Math.abs(c.diff))}`;
  const pct = Math.round(c.ratio * 100);
  if (pct === 0) return c.diff > 0 ? '+<1%' : '−<1%';
  return `${pct > 0 ? '+' : '−'}${formatInt(Math.abs(pct))}%`;
}

/** The hover text of a facet change: the compared count, exactly. */
export function facetChangeTitle(c: FacetChange, label: string): string {
  if (c.kind === 'new') return `None in the compared period (${label})`;
  if (c.kind === 'unknown') return `Not among the compared period's top values (${label}): at most ${formatInt(c.atMost)}`;
  return `${formatInt(c.previous)} in the compared period (${label}), ${c.diff >= 0 ? '+' : '−'}${formatInt(Math.abs(c.diff))}`;
}

/** A view state with its compared period set, or taken out (absent = none, so the URL omits it). */
export function withCompare<T extends { compare?: CompareChoice }>(state: T, choice: CompareChoice | undefined): T {
  const { compare: _old, ...rest } = state;
  return choice ? ({ ...rest, compare: choice } as T) : (rest as T);
}

/**
 * The compared period's bucket for each current bucket: the earlier bucket that lies `offset`
 * before it (null where the answer has none). The widths are the same and every offset choice
 * is a whole number of widths, so each current bucket has at most one.
 */
export function comparedBuckets<B extends { timestamp: number }>(current: ReadonlyArray<{ timestamp: number }>, previous: readonly B[], offset: number): Array<B | null> {
  const byStart = new Map(previous.map((p) => [p.timestamp + offset, p]));
  return current.map((c) => byStart.get(c.timestamp) ?? null);
}

/** A facets answer as the compared period gives it: top values per field, and how many others. */
export interface ComparedFacets {
  result: Readonly<Partial<Record<string, ReadonlyArray<{ value: string | number | null; count: number }>>>>;
  others: Readonly<Partial<Record<string, number>>>;
}

/** A value's change against the compared answer's `field` (null when there is no compared answer yet). */
export function facetChangeOf(compared: ComparedFacets | undefined, field: string, v: { value: string | number | null; count: number }): FacetChange | null {
  return compared ? facetChange(v.count, v.value, compared.result[field] ?? [], compared.others[field] ?? 0) : null;
}
