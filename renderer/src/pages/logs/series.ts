/**
 * The histogram's stacks: which keys of `by` are drawn, in which order, in which colour.
 * Status classes: 2xx green, 3xx blue, 4xx amber, 5xx red, none grey. Levels: error, fatal and
 * panic red, warning amber, info and log blue, debug grey, anything else neutral.
 */
import type { HistogramBucket } from '../../api/logs.ts';
import type { Theme } from '../../lib/theme.ts';

export type Tone = 'green' | 'blue' | 'amber' | 'red' | 'darkred' | 'grey' | 'neutral';

export interface Series {
  key: string;
  label: string;
  tone: Tone;
}

const TONES: Record<Theme, Record<Tone, string>> = {
  light: { green: '#1f9d6c', blue: '#2f74d0', amber: '#d08a12', red: '#d93f3f', darkred: '#9e2020', grey: '#a3acb8', neutral: '#8a6fc0' },
  dark: { green: '#3fb98c', blue: '#5aa9ff', amber: '#e3a33b', red: '#f26d6d', darkred: '#c24848', grey: '#6b7480', neutral: '#a98ee0' },
};

export function toneColor(tone: Tone, theme: Theme): string {
  return TONES[theme][tone];
}

const STATUS_ORDER = ['2xx', '3xx', '4xx', '5xx', '1xx', 'none'];

export function statusTone(key: string): Tone {
  switch (key) {
    case '2xx':
      return 'green';
    case '3xx':
      return 'blue';
    case '4xx':
      return 'amber';
    case '5xx':
      return 'red';
    case 'none':
      return 'grey';
    default:
      return 'neutral';
  }
}

/** Levels as sources write them (`ERROR`, `warning`, `LOG`…), by severity. */
export function levelTone(key: string): Tone {
  switch (key.toLowerCase()) {
    case 'fatal':
    case 'panic':
      return 'darkred';
    case 'error':
      return 'red';
    case 'warning':
    case 'warn':
      return 'amber';
    case 'info':
    case 'log':
      return 'blue';
    case 'debug':
      return 'grey';
    case 'none':
      return 'grey';
    default:
      return 'neutral';
  }
}

const LEVEL_RANK: Record<string, number> = { debug: 0, log: 1, info: 2, notice: 3, warning: 4, warn: 4, error: 5, fatal: 6, panic: 7 };

/** Stacks from the bottom: the common, harmless ones first, errors on top where the eye goes. */
function levelRank(key: string): number {
  if (key === 'none') return -1;
  return LEVEL_RANK[key.toLowerCase()] ?? 3.5;
}

/** Every key any bucket has, ordered for stacking, each with its colour. */
export function seriesOf(buckets: readonly HistogramBucket[], split: 'status' | 'level'): Series[] {
  const keys = new Set<string>();
  for (const b of buckets) for (const [k, n] of Object.entries(b.by)) if (n > 0) keys.add(k);
  const list = [...keys];
  if (split === 'status') {
    const rank = (k: string) => {
      const i = STATUS_ORDER.indexOf(k);
      return i < 0 ? STATUS_ORDER.length - 1.5 : i;
    };
    list.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    return list.map((key) => ({ key, label: key === 'none' ? 'no status' : key, tone: statusTone(key) }));
  }
  list.sort((a, b) => levelRank(a) - levelRank(b) || a.localeCompare(b));
  return list.map((key) => ({ key, label: key === 'none' ? 'no level' : key, tone: levelTone(key) }));
}

/**
 * The range a drag (or a click) over buckets selects, as the API's bounds: buckets hold
 * [t, t + width) and the API's range is (start, end], so start = t − 1 µs and end = the last
 * bucket's end − 1 µs select exactly their records, whichever way the mouse went. Clamped to
 * the range on screen (the first and last buckets stick out of it), so a zoom never widens it.
 */
export function selectionRange(a: number, b: number, width: number, within: { start?: number; end?: number } = {}): { start: number; end: number } {
  let start = Math.min(a, b) - 1;
  let end = Math.max(a, b) + width - 1;
  if (within.start !== undefined) start = Math.max(start, within.start);
  if (within.end !== undefined) end = Math.min(end, within.end);
  return { start, end };
}
