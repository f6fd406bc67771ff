/**
 * Recent searches, kept by the server in its data folder (`/api/searches`), so they outlive the
 * tab, a restart and a new port. The Logs page records each search it runs here; the saved-views
 * menu lists and clears them (features/views/saved-views-storage.ts).
 */
import { MAX_SEARCH_LABEL_CHARS, type RecentSearch } from '../../../contract/views.ts';
import type { PageId } from '../lib/url-state.ts';
import { api } from './client.ts';

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
