/**
 * Connections to remote projects and their syncs (`/api/connections`): one query of
 * every connection, polled while a page shows it, and one mutation per change. Each answer is
 * stamped with when it arrived (`receivedAt`, the page's monotonic clock), so an age ("synced
 * 40 s ago") or a countdown ("resumes in 42 s") can tick between polls from the server's own
 * `asOf`, never from the browser's idea of the date.
 */
import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import type { ConnectionRemoval, ConnectionTestResult, ConnectionView, SourceSyncView } from '../../../contract/api-types.ts';
import { api } from './client.ts';
import { invalidateData } from './hooks.ts';

export type { ConnectionRemoval, ConnectionTestResult, ConnectionView, SourceSyncView };

export interface ConnectionsAnswer {
  result: ConnectionView[];
  /** `performance.now()` when the answer arrived: the µs since then are added to each `asOf`. */
  receivedAt: number;
}

/** The body of POST /api/connections and /api/connections/test. */
export interface ConnectionBody {
  kind: 'supabase' | 'logflare';
  ref: string;
  url?: string;
  token: string;
  dialect?: 'bigquery' | 'clickhouse' | 'detect';
  sources: string[];
  start?: string;
  follow: boolean;
}

export interface ConnectionPatch {
  paused?: boolean;
  follow?: boolean;
  token?: string;
}

const KEY = ['connections'] as const;

function syncedRecords(list: readonly ConnectionView[] | undefined): number {
  let n = 0;
  for (const c of list ?? []) for (const s of Object.values(c.sources)) n += s.records;
  return n;
}

/**
 * Every connection. `pollMs`: how often to ask again while the calling page is shown (false:
 * not at all). When a poll finds more synced records than the last one, the stored sources
 * (their counts, spans, projects) are read again: the Data page and the project pickers follow
 * the sync without a Refresh.
 */
export function useConnections(pollMs: number | false | ((answer: ConnectionsAnswer | undefined) => number | false)) {
  const qc = useQueryClient();
  return useQuery({
    queryKey: KEY,
    queryFn: async ({ signal }): Promise<ConnectionsAnswer> => {
      const result = await api<ConnectionView[]>('connections', { signal });
      const before = qc.getQueryData<ConnectionsAnswer>(KEY);
      if (before && syncedRecords(result) > syncedRecords(before.result)) void qc.invalidateQueries({ queryKey: ['sources'] });
      return { result, receivedAt: performance.now() };
    },
    refetchInterval: typeof pollMs === 'function' ? (query) => pollMs(query.state.data) : pollMs,
    staleTime: 0,
  });
}

/** The server's `asOf` moved on by the time since the answer arrived (µs, on the sync's clock). */
export function syncNow(answer: ConnectionsAnswer, view: ConnectionView, nowPerf: number): number {
  return view.asOf + Math.max(0, Math.round((nowPerf - answer.receivedAt) * 1000));
}

function refreshConnections(qc: QueryClient) {
  return qc.invalidateQueries({ queryKey: KEY });
}

export function useTestConnection() {
  return useMutation({
    mutationFn: (body: ConnectionBody) => api<ConnectionTestResult>('connections/test', { method: 'POST', body }),
  });
}

export function useCreateConnection() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: ConnectionBody) => api<ConnectionView>('connections', { method: 'POST', body }),
    onSettled: () => refreshConnections(qc),
  });
}

export function useUpdateConnection() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, patch }: { id: string; patch: ConnectionPatch }) => api<ConnectionView>(`connections/${encodeURIComponent(id)}`, { method: 'PATCH', body: patch }),
    onSettled: () => refreshConnections(qc),
  });
}

export function useRemoveConnection() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, data }: { id: string; data: 'keep' | 'delete' }) =>
      api<ConnectionRemoval>(`connections/${encodeURIComponent(id)}`, { method: 'DELETE', params: { data } }),
    onSettled: (removal) => Promise.all([refreshConnections(qc), removal?.deleted.length ? invalidateData(qc) : undefined]),
  });
}
