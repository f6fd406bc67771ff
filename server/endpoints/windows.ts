/**
 * The windows, buckets, tier retention and row cut of the three endpoints, in the shape the
 * server's other code (the Functions table) and the bench use. Derived from the registry
 * entries (queries/registry.ts), which state them once; nothing here restates a number.
 */
import { ENDPOINTS, type EndpointDefinition, type IntervalRules } from '../../queries/registry.ts';

export interface Window {
  /** How far back the window reaches from now, µs. */
  span: number;
  /** Bucket width, µs. */
  unit: number;
}

function entry(name: string): EndpointDefinition {
  const def = ENDPOINTS.find((e) => e.name === name);
  if (!def) throw new Error(`the registry has no ${name}`);
  return def;
}

function windowsOf(rules: IntervalRules | undefined, name: string): Readonly<Record<string, Window>> {
  if (!rules) throw new Error(`the registry's ${name} declares no intervals`);
  return Object.fromEntries(Object.entries(rules.windows).map(([k, w]) => [k, { span: w.spanUs, unit: w.unitUs }]));
}

const stats = entry('functions.invocation-stats');
const logs = entry('logs.all');

/** functions.invocation-stats; any other interval behaves as STATS_FALLBACK_INTERVAL. */
export const STATS_INTERVALS: Readonly<Record<string, Window>> = windowsOf(stats.intervals, stats.name);
export const STATS_FALLBACK_INTERVAL: string = stats.intervals?.fallback ?? '';

/** usage.api-counts. */
export const API_INTERVALS: Readonly<Record<string, Window>> = windowsOf(entry('usage.api-counts').intervals, 'usage.api-counts');

/** logs.all retention per tier, µs; any other tier is LOGS_ALL_FALLBACK_TIER. */
export const TIER_RETENTION: Readonly<Record<string, number>> = Object.fromEntries(
  Object.entries(logs.tiers?.tiers ?? {}).map(([tier, t]) => [tier, t.retentionUs]),
);
export const LOGS_ALL_FALLBACK_TIER: string = logs.tiers?.fallback ?? '';

/** logs.all returns at most this many rows (its own cut, before maxRows). */
export const LOGS_ALL_ROWS: number = logs.rows ?? logs.maxRows;
