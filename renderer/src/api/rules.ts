/**
 * The endpoint rules the pages show and compute with (windows and bucket units, tiers and
 * their retention, the row cut, the error rule), read from the registry's listing
 * (`GET /api/endpoints`) instead of restated. The listing is fetched once per session and
 * shared with the Settings page, which lists it (`endpointListingQuery`).
 */
import { useCallback } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { EndpointListing } from '../../../contract/api-types.ts';
import { API_COUNTS, INVOCATION_STATS, LOGS_ALL } from '../../../contract/registry.ts';
import type { SeriesRules } from '../lib/buckets.ts';
import { api } from './client.ts';

/** A bucketed endpoint's rules: its windows, and the error rule when it counts errors. */
export interface BucketedRules extends SeriesRules {
  /** A status at least this is an error; absent on endpoints that count none. */
  errorStatusAtLeast?: number;
}

/** logs.all's rules. */
export interface LogsAllRules {
  /** The parameter that names the tier. */
  param: string;
  /** Retention per tier, µs: records strictly newer than now − retention are visible. */
  retentionUs: Readonly<Record<string, number>>;
  /** The tier any other value behaves as. */
  fallback: string;
  /** The endpoint's own cut: at most this many rows per answer. */
  rows: number;
  /** The registry's general cap (applies after `rows`). */
  maxRows: number;
}

/** The listing lacks a rule a page needs: said in the error panel rather than guessed. */
export class MissingRule extends Error {
  constructor(endpoint: string, what: string) {
    super(`the server's endpoint listing gives no ${what} for ${endpoint}`);
    this.name = 'MissingRule';
  }
}

function entry(listing: readonly EndpointListing[], name: string): EndpointListing {
  const e = listing.find((x) => x.name === name);
  if (!e) throw new MissingRule(name, 'entry');
  return e;
}

/** The windows of a bucketed endpoint, from its listing entry. */
export function bucketedRules(listing: readonly EndpointListing[], name: string): BucketedRules {
  const e = entry(listing, name);
  if (!e.intervals || !e.intervalParam) throw new MissingRule(name, 'intervals');
  const windows: Record<string, { span: number; unit: number }> = {};
  for (const [k, w] of Object.entries(e.intervals)) windows[k] = { span: w.spanUs, unit: w.unitUs };
  return {
    param: e.intervalParam,
    windows,
    ...(e.fallbackInterval !== undefined ? { fallback: e.fallbackInterval } : {}),
    ...(e.errorRule ? { errorStatusAtLeast: e.errorRule.statusAtLeast } : {}),
  };
}

/** logs.all's tiers and row cut, from its listing entry. */
export function tierRules(listing: readonly EndpointListing[], name: string = LOGS_ALL): LogsAllRules {
  const e = entry(listing, name);
  if (!e.tiers || !e.tierParam || e.fallbackTier === undefined) throw new MissingRule(name, 'tiers');
  const retentionUs: Record<string, number> = {};
  for (const [k, t] of Object.entries(e.tiers)) retentionUs[k] = t.retentionUs;
  return { param: e.tierParam, retentionUs, fallback: e.fallbackTier, rows: e.rows ?? e.maxRows, maxRows: e.maxRows };
}

/** The registry's listing, one query for the rules and the Settings page's list. */
export const endpointListingQuery = {
  queryKey: ['endpoints'] as const,
  queryFn: ({ signal }: { signal: AbortSignal }) => api<EndpointListing[]>('endpoints', { signal }),
  // The rules are the server's code: they cannot change while it runs.
  staleTime: Infinity,
};

/** functions.invocation-stats or usage.api-counts: windows by interval name (and the error rule). */
export function useIntervalRules(name: typeof INVOCATION_STATS | typeof API_COUNTS) {
  const select = useCallback((listing: EndpointListing[]) => bucketedRules(listing, name), [name]);
  return useQuery({ ...endpointListingQuery, select });
}

/** logs.all: tiers, retention and the row cut. */
export function useTierRules() {
  const select = useCallback((listing: EndpointListing[]) => tierRules(listing), []);
  return useQuery({ ...endpointListingQuery, select });
}
