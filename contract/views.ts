/**
 * Saved views and recent searches as the API keeps them (`/api/views`, `/api/searches`): a
 * page and its URL query string. The pages are the page's own; the server checks a view names
 * one of them.
 */

export const VIEW_PAGES = ['functions', 'logs', 'usage', 'data', 'settings'] as const;
export type ViewPage = (typeof VIEW_PAGES)[number];

/** Longest view name and search label the server keeps, in characters. */
export const MAX_VIEW_NAME_CHARS = 100;
export const MAX_SEARCH_LABEL_CHARS = 256;

export interface SavedView {
  id: string;
  name: string;
  page: ViewPage;
  /** The page's URL query string, without the `?`. */
  state: string;
  /** ISO 8601, UTC. */
  createdAt: string;
}

export interface RecentSearch {
  id: string;
  page: ViewPage;
  state: string;
  /** What the user typed; may be empty. */
  label: string;
  /** When it was last run, ISO 8601 UTC. */
  at: string;
}
