/**
 * The view state that a URL carries: page (the path) and its parameters (the query string),
 * so a reload or a copied link restores the view. The API key is never part of it.
 */
import { FUNCTION_INTERVALS, USAGE_INTERVALS, type FunctionInterval, type UsageInterval } from './buckets.ts';
import { filtersFromParams, filtersToParams, FILTER_FIELDS, RANGE_PRESETS, TIERS, type LogFilter, type RangeChoice, type Tier } from './logs.ts';
import { isoMicros, parseIsoMicros } from './time.ts';

export const PAGES = ['functions', 'logs', 'usage', 'data', 'settings'] as const;
export type PageId = (typeof PAGES)[number];

export interface FunctionsView {
  /** One function id, or '' for all. */
  fn: string;
  interval: FunctionInterval;
}

/** The Logs page's two views: the explorer over every source, or the exact logs.all endpoint. */
export const LOGS_MODES = ['explore', 'exact'] as const;
export type LogsMode = (typeof LOGS_MODES)[number];

export interface LogsView {
  /** logs.all's tier (the exact view only). */
  tier: Tier;
  range: RangeChoice;
  /** Custom range bounds, µs (only with range 'custom'). */
  start?: number;
  end?: number;
  /**
   * Absent means 'exact': every view of this page made before the explorer (a link with a
   * tier, another page's jump to a range) addressed logs.all, and still does. See logsMode.
   */
  mode?: LogsMode;
  /** The explorer's source (name or alias); '' or absent = the first source the server lists. */
  source?: string;
  /** Search text (plain, or an RE2 pattern with `regex`). */
  q?: string;
  regex?: boolean;
  filters?: LogFilter[];
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
  logs: { tier: 'FREE', range: '1h', mode: 'explore', source: '', q: '', regex: false, filters: [] },
  usage: { interval: 'daily', regex: null },
};

export function logsMode(logs: LogsView): LogsMode {
  return logs.mode ?? 'exact';
}

/** `,` `!` `/` and `:` are legal in a query string; left readable they make `status=5xx,!404` and `path=/rest` links legible. */
function readableQuery(q: URLSearchParams): string {
  return q.toString().replace(/%2C/gi, ',').replace(/%21/g, '!').replace(/%2F/gi, '/');
}

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
    case 'logs': {
      const l = view.logs;
      const exact = logsMode(l) === 'exact';
      if (exact) {
        q.set('mode', 'exact');
        q.set('tier', l.tier);
      } else if (l.source) {
        q.set('source', l.source);
      }
      q.set('range', l.range);
      if (l.range === 'custom') {
        if (l.start !== undefined) q.set('start', isoMicros(l.start));
        if (l.end !== undefined) q.set('end', isoMicros(l.end));
      }
      if (!exact) {
        if (l.q) q.set('q', l.q);
        if (l.regex) q.set('regex', '1');
        const byField = filtersToParams(l.filters ?? []);
        for (const field of FILTER_FIELDS) {
          const v = byField[field];
          if (v !== undefined) q.set(field, v);
        }
      }
      const qs = readableQuery(q);
      return `/logs${qs ? `?${qs}` : ''}`;
    }
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
    // A link with a tier and no mode is a logs.all link from before the explorer.
    const mode = oneOf<LogsMode>(LOGS_MODES, q.get('mode'), q.has('tier') ? 'exact' : 'explore');
    view.logs = {
      tier: oneOf(TIERS, q.get('tier'), base.logs.tier),
      range,
      mode,
      // The explorer's search stays in memory while the exact view is open, and the other way round.
      source: mode === 'explore' ? (q.get('source') ?? '') : (base.logs.source ?? ''),
      q: mode === 'explore' ? (q.get('q') ?? '') : (base.logs.q ?? ''),
      regex: mode === 'explore' ? q.get('regex') === '1' : (base.logs.regex ?? false),
      filters: mode === 'explore' ? filtersFromParams((f) => q.get(f)) : [...(base.logs.filters ?? [])],
    };
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
