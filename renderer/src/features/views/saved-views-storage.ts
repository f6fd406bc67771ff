/**
 * Saved views and recent searches as the menu reads and changes them: kept by the server in its
 * data folder (`/api/views`, `/api/searches`), so they outlive the tab, a restart and a new port.
 * Searches are recorded by the Logs page (api/views.ts `recordSearch`).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RecentSearch, SavedView } from '../../../../contract/views.ts';
import { api } from '../../api/client.ts';
import type { PageId } from '../../lib/url-state.ts';

const VIEWS_KEY = ['saved-views'] as const;
const SEARCHES_KEY = ['recent-searches'] as const;

/** The saved views, newest first; fetched only while `enabled` (the menu is open), fresh each time. */
export function useSavedViews(enabled: boolean) {
  return useQuery({ queryKey: VIEWS_KEY, queryFn: ({ signal }) => api<SavedView[]>('views', { signal }), enabled, staleTime: 0 });
}

/** The last 20 searches, newest first; fetched like useSavedViews. */
export function useRecentSearches(enabled: boolean) {
  return useQuery({ queryKey: SEARCHES_KEY, queryFn: ({ signal }) => api<RecentSearch[]>('searches', { signal }), enabled, staleTime: 0 });
}

export function useSaveView() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { name: string; page: PageId; state: string }) => api<SavedView>('views', { method: 'POST', body: v }),
    onSuccess: () => qc.invalidateQueries({ queryKey: VIEWS_KEY }),
  });
}

export function useRenameView() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, name }: { id: string; name: string }) => api<SavedView>(`views/${encodeURIComponent(id)}`, { method: 'PATCH', body: { name } }),
    onSuccess: () => qc.invalidateQueries({ queryKey: VIEWS_KEY }),
  });
}

export function useDeleteView() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<{ id: string; deleted: boolean }>(`views/${encodeURIComponent(id)}`, { method: 'DELETE' }),
    onSuccess: () => qc.invalidateQueries({ queryKey: VIEWS_KEY }),
  });
}

export function useClearSearches() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => api<{ cleared: number }>('searches', { method: 'DELETE' }),
    onSuccess: () => qc.invalidateQueries({ queryKey: SEARCHES_KEY }),
  });
}
