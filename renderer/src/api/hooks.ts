/**
 * One react-query hook per endpoint and per app API resource. Endpoint results are keyed
 * `['endpoint', name, params]`; anything that changes the data (import, delete, demo, clock)
 * invalidates them all.
 */
import { QueryClient, useMutation, useQuery, useQueryClient, keepPreviousData } from '@tanstack/react-query';
import type {
  ApiCountsRow,
  ClockView,
  EndpointListing,
  ImportReport,
  ImportRun,
  InvocationStatsRow,
  SourceListing,
} from '../../../contract/api-types.ts';
import { api, ApiError, runEndpoint } from './client.ts';

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // Windows are computed from the server clock; a refetch on focus would silently move them.
        refetchOnWindowFocus: false,
        staleTime: 30_000,
        retry: (count, err) => !(err instanceof ApiError && err.code >= 400 && err.code < 500) && count < 2,
      },
    },
  });
}

// ---- app API ----

export function useSources() {
  return useQuery({ queryKey: ['sources'], queryFn: ({ signal }) => api<SourceListing[]>('sources', { signal }) });
}

export function useClock() {
  return useQuery({ queryKey: ['clock'], queryFn: ({ signal }) => api<ClockView>('clock', { signal }), staleTime: Infinity });
}

export function useEndpointList() {
  return useQuery({ queryKey: ['endpoints'], queryFn: ({ signal }) => api<EndpointListing[]>('endpoints', { signal }), staleTime: Infinity });
}

/** Running and finished imports; polled while `poll` is true. */
export function useImports(poll: boolean) {
  return useQuery({
    queryKey: ['imports'],
    queryFn: ({ signal }) => api<ImportRun[]>('imports', { signal }),
    refetchInterval: poll ? 400 : false,
    staleTime: 0,
  });
}

/** After data or the clock changed: every endpoint result and summary is stale. */
export function invalidateData(qc: QueryClient) {
  return Promise.all([
    qc.invalidateQueries({ queryKey: ['endpoint'] }),
    qc.invalidateQueries({ queryKey: ['sources'] }),
    qc.invalidateQueries({ queryKey: ['clock'] }),
  ]);
}

export type ClockSetting = { mode: 'system' } | { mode: 'latest' } | { mode: 'fixed'; now: string };

export function useSetClock() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (setting: ClockSetting) => api<ClockView>('clock', { method: 'PUT', body: setting }),
    onSuccess: (view) => {
      qc.setQueryData(['clock'], view);
      void qc.invalidateQueries({ queryKey: ['endpoint'] });
    },
  });
}

export function useDeleteSource() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (source: string) => api<{ source: string; deleted: number }>(`sources/${encodeURIComponent(source)}`, { method: 'DELETE' }),
    onSettled: () => invalidateData(qc),
  });
}

export function useLoadDemo() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => api<ImportReport[]>('demo', { method: 'POST' }),
    onSettled: () => invalidateData(qc),
  });
}

// ---- the three endpoints ----

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

export interface ApiCountsParams {
  project: string;
  interval: string;
}

export interface ApiCountsResult {
  rows: ApiCountsRow[];
  /** The interval these rows are for (a placeholder may show the previous one). */
  interval: string;
  /** The server clock read with the rows: the API returns only non-empty buckets, and the
   *  window to zero-fill is computed from this instant. */
  now: number;
}

export function useApiCounts(params: ApiCountsParams | null) {
  const name = 'usage.api-counts';
  const qc = useQueryClient();
  const p: Record<string, string> = params ? { project: params.project, interval: params.interval } : {};
  return useQuery({
    queryKey: ['endpoint', name, p],
    queryFn: async ({ signal }): Promise<ApiCountsResult> => {
      const [rows, clock] = await Promise.all([runEndpoint<ApiCountsRow[]>(name, p, signal), api<ClockView>('clock', { signal })]);
      qc.setQueryData(['clock'], clock);
      return { rows, interval: p.interval ?? '', now: clock.now };
    },
    enabled: params !== null,
    placeholderData: keepPreviousData,
  });
}

