/**
 * The view state that a URL carries: page (the path) and its parameters (the query string),
 * so a reload or a copied link restores the view. The API key is never part of it.
 */
import { FILTER_FIELDS } from '../../../contract/filters.ts';
import { VIEW_PAGES, type ViewPage } from '../../../contract/views.ts';
import { FUNCTION_INTERVALS, INVOCATION_STATS_INTERVALS, LOGS_ALL_TIERS, TIERS, USAGE_INTERVALS, type FunctionInterval, type UsageInterval } from '../../../contract/registry.ts';
import { filtersFromParams, filtersToParams } from './explorer-filters.ts';
import { RANGE_PRESETS, type RangeChoice } from './logs-range.ts';
import { LOGS_MODES, type LogsMode, type LogsView } from './logs-view.ts';
import { formatIsoMicros, parseIsoMicros } from '../../../contract/instants.ts';
import { COMPARE_CHOICES, type CompareChoice } from './compare.ts';
import { copyFieldState, readFieldState, writeFieldState } from './field-state.ts';

// The Logs view's state lives in logs-view.ts, which builds views too; kept importable from here.
export { LOGS_MODES, type LogsMode, type LogsView };

/** The pages, as saved views name them. */
export type PageId = ViewPage;

export interface FunctionsView {
  /** One function id, or '' for all. */
  fn: string;
  interval: FunctionInterval;
  /** The period the charts are compared with; absent = none. */
  compare?: CompareChoice;
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
  // The interval and tier an endpoint answers when given another: the page opens on them.
  functions: { fn: '', interval: INVOCATION_STATS_INTERVALS.fallback },
  logs: { tier: LOGS_ALL_TIERS.fallback, range: '1h', mode: 'explore', source: '', q: '', regex: false, filters: [] },
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
      if (view.functions.compare) q.set('compare', view.functions.compare);
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
        if (l.start !== undefined) q.set('start', formatIsoMicros(l.start));
        if (l.end !== undefined) q.set('end', formatIsoMicros(l.end));
      }
      if (!exact) {
        if (l.q) q.set('q', l.q);
        if (l.regex) q.set('regex', '1');
        const byField = filtersToParams(l.filters ?? []);
        for (const field of FILTER_FIELDS) {
          const v = byField[field];
          if (v !== undefined) q.set(field, v);
        }
        if (l.compare) q.set('compare', l.compare);
        writeFieldState(q, l);
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

function compareOf(q: URLSearchParams): CompareChoice | undefined {
  const v = q.get('compare');
  return v !== null && (COMPARE_CHOICES as readonly string[]).includes(v) ? (v as CompareChoice) : undefined;
}

/**
 * Reads a view from a path and query string. Unknown or malformed values fall back to the
 * defaults (or to `base`, the in-memory state of the other pages), never to an error.
 */
export function decodeView(pathname: string, search: string, base: AppView = DEFAULT_VIEW): AppView {
  const segment = pathname.replace(/^\/+/, '').split('/')[0] ?? '';
  const page = oneOf(VIEW_PAGES, segment || null, base.page);
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
    const compare = compareOf(q);
    if (compare) view.functions.compare = compare;
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
    const compare = mode === 'explore' ? compareOf(q) : base.logs.compare;
    if (compare) view.logs.compare = compare;
    // Fields inside the records, the table's columns, wrap and dense.
    Object.assign(view.logs, mode === 'explore' ? readFieldState(q) : copyFieldState(base.logs));
    if (range === 'custom') {
      const s = start ? parseIsoMicros(start) : undefined;
      const e = end ? parseIsoMicros(end) : undefined;
      if (s !== undefined) view.logs.start = s;
      if (e !== undefined) view.logs.end = e;
    }
  } else if (page === 'usage') {
    view.usage = {
      interval: oneOf(USAGE_INTERVALS, q.get('interval'), base.usage.interval),
      // An empty pattern (the field cleared) follows the project again, as no pattern does.
      regex: q.get('regex') || null,
    };
  }
  return view;
}

export { extractKeyFromHash } from './key-hash.ts';
