/**
 * The API usage page's own API call: the `usage.api-counts` endpoint, read together with the
 * server clock (the window the chart zero-fills is computed from it). Keyed under
 * `['endpoint', …]`, so imports, deletes, clock changes and Refresh re-read it.
 */
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiCountsRow, ClockView } from '../../../../contract/api-types.ts';
import { api, runEndpoint } from '../../api/client.ts';

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
