/**
 * The histogram's stacks: which keys of `by` are drawn, in which order, in which colour.
 * Status classes: 2xx green, 3xx blue, 4xx amber, 5xx red, 1xx purple, none grey. Levels: error
 * red, fatal and panic dark red, warning amber, info blue, log teal, notice purple, debug grey,
 * none a pale slate. Two stacks of one chart never share a colour (`log`/`info` and
 * `debug`/none did): a tone already taken goes to the next free one.
 */
import type { HistogramBucket } from '../../api/logs.ts';
import type { Theme } from '../../lib/theme.ts';

export type Tone = 'green' | 'blue' | 'amber' | 'red' | 'darkred' | 'grey' | 'neutral' | 'teal' | 'slate' | 'pink' | 'olive' | 'brown' | 'orange';

/** Tones handed out, in order, to a stack whose own tone another stack of the chart already has. */
const SPARE_TONES: readonly Tone[] = ['pink', 'olive', 'brown', 'orange', 'teal', 'neutral', 'slate', 'darkred'];

export interface Series {
  key: string;
  label: string;
  tone: Tone;
}

const TONES: Record<Theme, Record<Tone, string>> = {
  light: {
    green: '#1f9d6c',
    blue: '#2f74d0',
    amber: '#d08a12',
    red: '#d93f3f',
    darkred: '#9e2020',
    grey: '#8a94a2',
    neutral: '#8a6fc0',
    teal: '#12a3b4',
    slate: '#cdd3dc',
    pink: '#d0489a',
    olive: '#8a9a2b',
    brown: '#9a6a3a',
    orange: '#ef6c1a',
  },
  dark: {
    green: '#3fb98c',
    blue: '#5aa9ff',
    amber: '#e3a33b',
    red: '#f26d6d',
    darkred: '#c24848',
    grey: '#7d8794',
    neutral: '#a98ee0',
    teal: '#3cc8d6',
    slate: '#4a525d',
    pink: '#e572b5',
    olive: '#a8b94a',
    brown: '#b88a5c',
    orange: '#f28a45',
  },
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
      return 'blue';
    case 'log':
      return 'teal';
    case 'notice':
      return 'neutral';
    case 'debug':
      return 'grey';
    case 'none':
      return 'slate';
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
    return distinctTones(
      list.map((key) => ({ key, label: key === 'none' ? 'no status' : key, tone: statusTone(key) })),
      (k) => STATUS_ORDER.includes(k),
    );
  }
  list.sort((a, b) => levelRank(a) - levelRank(b) || a.localeCompare(b));
  return distinctTones(
    list.map((key) => ({ key, label: key === 'none' ? 'no level' : key, tone: levelTone(key) })),
    (k) => k === 'none' || Object.hasOwn(LEVEL_RANK, k.toLowerCase()),
  );
}

/**
 * A stack whose tone an earlier one took (`warn` beside `warning`, two unknown levels) gets a
 * spare one. Known keys keep theirs first, so an unknown level never pushes a known one off its colour.
 */
function distinctTones(series: Series[], known: (key: string) => boolean): Series[] {
  const taken = new Set<Tone>();
  const keep = new Set<string>();
  for (const pass of [true, false]) {
    for (const s of series) {
      if (known(s.key) !== pass || taken.has(s.tone)) continue;
      taken.add(s.tone);
      keep.add(s.key);
    }
  }
  const spare = [...SPARE_TONES, ...(Object.keys(TONES.light) as Tone[])];
  return series.map((s) => {
    if (keep.has(s.key)) return s;
    const tone = spare.find((t) => !taken.has(t));
    if (!tone) return s;
    taken.add(tone);
    return { ...s, tone };
  });
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

/**
 * Whether a bucket [t, t + width) sticks out of the range (start, end]: the first bucket may
 * begin before the range and the last one end after it (or after now), so they hold fewer
 * records than a whole bucket would and must not read as a drop.
 */
export function partialBucket(t: number, width: number, range: { start?: number; end?: number }): 'start' | 'end' | null {
  if (range.end !== undefined && t + width - 1 > range.end) return 'end';
  if (range.start !== undefined && t <= range.start) return 'start';
  return null;
}

/**
 * The previous period's counts drawn over the current buckets: each earlier bucket, moved
 * forward by `offset`, is added to the current bucket that holds its start (the widths are the
 * same; they line up exactly when the offset is a whole number of widths, which every preset
 * and offset choice is). A current bucket no earlier one reaches is null (no line there).
 */
export function alignPrevious(current: readonly HistogramBucket[], width: number, previous: readonly HistogramBucket[], offset: number): Array<number | null> {
  const out: Array<number | null> = current.map(() => null);
  if (!current.length) return out;
  const first = current[0]!.timestamp;
  for (const p of previous) {
    const i = Math.floor((p.timestamp + offset - first) / width);
    if (i < 0 || i >= current.length) continue;
    out[i] = (out[i] ?? 0) + p.count;
  }
  return out;
}
