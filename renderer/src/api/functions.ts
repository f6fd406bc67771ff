/**
 * The function table's API calls: `GET /api/functions` (every function of a project over an
 * interval's whole window) and `GET /api/functions/total` (all of them together). Keyed under
 * `['endpoint', …]`, so imports, deletes, clock changes and Refresh re-read them with the charts.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { FunctionStatsRow, FunctionTotal } from '../../../server/functions/types.ts';
import { api } from './client.ts';

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
