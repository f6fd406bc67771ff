/**
 * The view state that a URL carries: page (the path) and its parameters (the query string),
 * so a reload or a copied link restores the view. The API key is never part of it.
 */
import { FUNCTION_INTERVALS, USAGE_INTERVALS, type FunctionInterval, type UsageInterval } from './buckets.ts';
import { RANGE_PRESETS, TIERS, type RangeChoice, type Tier } from './logs.ts';
import { isoMicros, parseIsoMicros } from './time.ts';

export const PAGES = ['functions', 'logs', 'usage', 'data', 'settings'] as const;
export type PageId = (typeof PAGES)[number];

export interface FunctionsView {
  /** One function id, or '' for all. */
  fn: string;
  interval: FunctionInterval;
}

export interface LogsView {
  tier: Tier;
  range: RangeChoice;
  /** Custom range bounds, µs (only with range 'custom'). */
  start?: number;
  end?: number;
}

export interface UsageView {
  interval: UsageInterval;
  /** The project regex, or null to follow the selected project (its escaped ref). */
  regex: string | null;
}

export interface AppView {
  page: PageId;
  /** Shared by every page; null until chosen (the app then picks the busiest project). */
  project: string | null;
  functions: FunctionsView;
  logs: LogsView;
  usage: UsageView;
}

export const DEFAULT_VIEW: AppView = {
  page: 'functions',
  project: null,
  functions: { fn: '', interval: '1day' },
  logs: { tier: 'FREE', range: '1h' },
  usage: { interval: 'daily', regex: null },
};

function oneOf<T extends string>(allowed: readonly T[], value: string | null, fallback: T): T {
  return value !== null && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

/** `/logs?project=abc&tier=PRO&range=1h`: the path names the page; only its own fields are written. */
export function encodeView(view: AppView): string {
  const q = new URLSearchParams();
  if (view.project && view.page !== 'data' && view.page !== 'settings') q.set('project', view.project);
  switch (view.page) {
    case 'functions':
      if (view.functions.fn) q.set('function', view.functions.fn);
      q.set('interval', view.functions.interval);
      break;
    case 'logs':
      q.set('tier', view.logs.tier);
      q.set('range', view.logs.range);
      if (view.logs.range === 'custom') {
        if (view.logs.start !== undefined) q.set('start', isoMicros(view.logs.start));
        if (view.logs.end !== undefined) q.set('end', isoMicros(view.logs.end));
      }
      break;
    case 'usage':
      q.set('interval', view.usage.interval);
      if (view.usage.regex !== null) q.set('regex', view.usage.regex);
      break;
    default:
      break;
  }
  const qs = q.toString();
  return `/${view.page}${qs ? `?${qs}` : ''}`;
}

/**
 * Reads a view from a path and query string. Unknown or malformed values fall back to the
 * defaults (or to `base`, the in-memory state of the other pages), never to an error.
 */
export function decodeView(pathname: string, search: string, base: AppView = DEFAULT_VIEW): AppView {
  const segment = pathname.replace(/^\/+/, '').split('/')[0] ?? '';
  const page = oneOf(PAGES, segment || null, base.page);
  const q = new URLSearchParams(search);
  const view: AppView = {
    page,
    project: q.get('project') || base.project,
    functions: { ...base.functions },
    logs: { ...base.logs },
    usage: { ...base.usage },
  };
  if (page === 'functions') {
    view.functions = {
      fn: q.get('function') ?? '',
      interval: oneOf(FUNCTION_INTERVALS, q.get('interval'), base.functions.interval),
    };
  } else if (page === 'logs') {
    const range = oneOf<RangeChoice>([...RANGE_PRESETS, 'custom'], q.get('range'), base.logs.range);
    const start = q.get('start');
    const end = q.get('end');
    view.logs = { tier: oneOf(TIERS, q.get('tier'), base.logs.tier), range };
    if (range === 'custom') {
      const s = start ? parseIsoMicros(start) : undefined;
      const e = end ? parseIsoMicros(end) : undefined;
      if (s !== undefined) view.logs.start = s;
      if (e !== undefined) view.logs.end = e;
    }
  } else if (page === 'usage') {
    view.usage = {
      interval: oneOf(USAGE_INTERVALS, q.get('interval'), base.usage.interval),
      regex: q.has('regex') ? (q.get('regex') ?? '') : null,
    };
  }
  return view;
}

/**
 * Takes the API key out of a URL fragment (`#key=...`). Returns the key, if any, and the
 * fragment with it removed (other fragment parts are kept). Parsed by hand: a `+` in a key
 * is a plus, not a space as URLSearchParams would read it.
 */
export function extractKeyFromHash(hash: string): { key: string | null; rest: string } {
  const raw = hash.startsWith('#') ? hash.slice(1) : hash;
  if (!raw) return { key: null, rest: '' };
  let key: string | null = null;
  const kept: string[] = [];
  for (const part of raw.split('&')) {
    if (part.startsWith('key=')) {
      try {
        key = decodeURIComponent(part.slice(4));
      } catch {
        key = part.slice(4);
      }
    } else if (part) {
      kept.push(part);
    }
  }
  return { key: key || null, rest: kept.length ? `#${kept.join('&')}` : '' };
}
