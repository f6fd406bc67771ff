/**
 * The Functions page's own API calls: the `functions.invocation-stats` endpoint (the charts),
 * `GET /api/functions` (every function of a project over an interval's whole window),
 * `GET /api/functions/total` (all of them together) and `GET /api/functions/buckets` (the
 * chart's buckets over another window: the compared period). Keyed under `['endpoint', …]`, so
 * imports, deletes, clock changes and Refresh re-read them with the charts.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { FunctionBucketsAnswer, FunctionStatsRow, FunctionTotal, InvocationStatsRow } from '../../../../contract/api-types.ts';
import { formatIsoMicros } from '../../../../contract/instants.ts';
import { api, runEndpoint } from '../../api/client.ts';

export interface InvocationStatsParams {
  project: string;
  function_id: string;
  interval: string;
}

export interface InvocationStatsResult {
  rows: InvocationStatsRow[];
  /** The interval these rows are for (a placeholder may show the previous one). */
  interval: string;
}

export function useInvocationStats(params: InvocationStatsParams | null) {
  const name = 'functions.invocation-stats';
  const p: Record<string, string> = params ? { project: params.project, interval: params.interval } : {};
  if (params?.function_id) p.function_id = params.function_id;
  return useQuery({
    queryKey: ['endpoint', name, p],
    queryFn: async ({ signal }): Promise<InvocationStatsResult> => ({ rows: await runEndpoint<InvocationStatsRow[]>(name, p, signal), interval: p.interval ?? '' }),
    enabled: params !== null,
    placeholderData: keepPreviousData,
  });
}

export interface FunctionTableParams {
  project: string;
  interval: string;
}

export interface FunctionTableResult {
  rows: FunctionStatsRow[];
  /** What these rows are for (a placeholder may show the previous choice). */
  project: string;
  interval: string;
}

export function fetchFunctionTable(params: FunctionTableParams, signal?: AbortSignal): Promise<FunctionStatsRow[]> {
  return api<FunctionStatsRow[]>('functions', { params: { project: params.project, interval: params.interval }, signal });
}

export function fetchFunctionTotal(params: FunctionTableParams, signal?: AbortSignal): Promise<FunctionTotal> {
  return api<FunctionTotal>('functions/total', { params: { project: params.project, interval: params.interval }, signal });
}

export function useFunctionTable(params: FunctionTableParams | null) {
  const p = params ? { project: params.project, interval: params.interval } : null;
  return useQuery({
    queryKey: ['endpoint', 'api/functions', p],
    queryFn: async ({ signal }): Promise<FunctionTableResult> => ({ rows: await fetchFunctionTable(p!, signal), project: p!.project, interval: p!.interval }),
    enabled: p !== null,
    placeholderData: keepPreviousData,
  });
}

export function useFunctionTotal(params: FunctionTableParams | null) {
  const p = params ? { project: params.project, interval: params.interval } : null;
  return useQuery({
    queryKey: ['endpoint', 'api/functions/total', p],
    queryFn: ({ signal }) => fetchFunctionTotal(p!, signal),
    enabled: p !== null,
  });
}

export interface FunctionBucketsParams {
  project: string;
  /** One function id; '' = all. */
  functionId: string;
  /** [start, end), µs, on boundaries of `width`. */
  start: number;
  end: number;
  /** `second`, `minute`, `hour` or `day`. */
  width: string;
}

/** The invocation-stats buckets of an explicit window. */
export function useFunctionBuckets(params: FunctionBucketsParams | null) {
  const p: Record<string, string> | null = params
    ? { project: params.project, start: formatIsoMicros(params.start), end: formatIsoMicros(params.end), width: params.width, ...(params.functionId ? { function_id: params.functionId } : {}) }
    : null;
  return useQuery({
    queryKey: ['endpoint', 'api/functions/buckets', p],
    queryFn: ({ signal }) => api<FunctionBucketsAnswer['result']>('functions/buckets', { params: p!, signal }),
    enabled: p !== null,
  });
}
