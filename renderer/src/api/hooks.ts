/**
 * The query client and the react-query hooks of the app API that several pages (and the shared
 * UI) use: the sources, the clock and setting it, and what changing the data invalidates. A
 * page's own hooks live in its feature folder. Endpoint results are keyed
 * `['endpoint', name, params]`; anything that changes the data (import, delete, demo, clock)
 * invalidates them all.
 */
import { QueryClient, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ClockView, SourceListing } from '../../../contract/api-types.ts';
import { api, ApiError } from './client.ts';

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
