/**
 * Saved views and recent searches, kept by the server in its data folder
 * (`/api/views`, `/api/searches`), so they outlive the tab, a restart and a new port.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { MAX_SEARCH_LABEL_CHARS, type RecentSearch, type SavedView } from '../../../contract/views.ts';
import type { PageId } from '../lib/url-state.ts';
import { api } from './client.ts';

export type { RecentSearch, SavedView };

const VIEWS_KEY = ['saved-views'] as const;
const SEARCHES_KEY = ['recent-searches'] as const;
// client.ts lists GET/PUT/POST/DELETE only; fetch sends PATCH as given, so this is the one cast.
const PATCH = 'PATCH' as NonNullable<NonNullable<Parameters<typeof api>[1]>['method']>;

/** The saved views, newest first; fetched only while `enabled` (the menu is open), fresh each time. */
export function useSavedViews(enabled: boolean) {
  return useQuery({ queryKey: VIEWS_KEY, queryFn: ({ signal }) => api<SavedView[]>('views', { signal }), enabled, staleTime: 0 });
}

/** The last 20 searches, newest first; fetched like useSavedViews (recordSearch happens elsewhere). */
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
    mutationFn: ({ id, name }: { id: string; name: string }) => api<SavedView>(`views/${encodeURIComponent(id)}`, { method: PATCH, body: { name } }),
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

/**
 * Remembers a search the user ran (the Logs page calls this): `state` is the page's URL query
 * string (a leading `?` is fine), `label` what the user typed. Never throws: the history is a
 * convenience and must not disturb the search itself, so a failure resolves to null.
 */
export async function recordSearch(page: PageId, state: string, label: string): Promise<RecentSearch | null> {
  // Cut by characters, not UTF-16 units, to the server's limit rather than be refused.
  const text = Array.from(label.trim().replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')).slice(0, MAX_SEARCH_LABEL_CHARS).join('');
  try {
    return await api<RecentSearch>('searches', { method: 'POST', body: { page, state, label: text } });
  } catch {
    return null;
  }
}
