/**
 * One react-query hook per endpoint and per app API resource. Endpoint results are keyed
 * `['endpoint', name, params]`; anything that changes the data (import, delete, demo, clock)
 * invalidates them all.
 */
import { QueryClient, useInfiniteQuery, useMutation, useQuery, useQueryClient, keepPreviousData } from '@tanstack/react-query';
import type {
  ApiCountsRow,
  ClockView,
  EndpointListing,
  ImportReport,
  ImportRun,
  InvocationStatsRow,
  LogRow,
  SourceListing,
} from '../../../server/api-types.ts';
import { isoMicros } from '../lib/time.ts';
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

/** logs.all returns at most this many rows per request (queries/logs.all.sql). */
export const LOGS_PAGE_SIZE = 100;

export interface LogsPage {
  rows: LogRow[];
  /** The iso_timestamp_end this page was asked with (null = none). */
  end: string | null;
}

/**
 * logs.all, newest first, paged backwards: each older page asks with iso_timestamp_end =
 * the oldest row's timestamp (inclusive, µs precision); the caller drops repeated ids.
 */
export function useLogsAll(params: Record<string, string> | null) {
  const name = 'logs.all';
  const p = params ?? {};
  return useInfiniteQuery({
    queryKey: ['endpoint', name, p],
    initialPageParam: p.iso_timestamp_end ?? null,
    queryFn: async ({ pageParam, signal }): Promise<LogsPage> => {
      const q = { ...p };
      if (pageParam !== null) q.iso_timestamp_end = pageParam;
      const rows = await runEndpoint<LogRow[]>(name, q, signal);
      return { rows, end: pageParam };
    },
    getNextPageParam: (last): string | null | undefined => {
      if (last.rows.length < LOGS_PAGE_SIZE) return undefined;
      const oldest = last.rows[last.rows.length - 1];
      if (!oldest) return undefined;
      const next = isoMicros(oldest.timestamp);
      // More than a page of rows share one instant: paging by time cannot get past them.
      return next === last.end ? undefined : next;
    },
    enabled: params !== null,
    staleTime: Infinity,
    // The previous rows stay (dimmed) while a new range loads, instead of a blank table.
    placeholderData: keepPreviousData,
  });
}
