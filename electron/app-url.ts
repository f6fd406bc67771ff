/**
 * The app page's URLs. The page keeps all its state in its path and query (the key moves from
 * the fragment to the tab's sessionStorage), so the shell keeps the view across a reload or a
 * server restart by keeping the path and query, never by going back to `/`.
 */
import type { DataLockInfo } from '../server/store/data-lock.ts';
import { isAppOrigin } from './guards.ts';

/** Opens the app of `server` at `view` (a path and query of the page shown before) or at `/`, the key in the fragment. */
export function appEntryUrl(server: { url: string; apiKey: string }, view?: string): string {
  const base = new URL(server.url);
  const at = view && view.startsWith('/') && !view.startsWith('//') ? new URL(view, base) : new URL('/', base);
  return `${base.origin}${at.pathname}${at.search}#key=${server.apiKey}`;
}

/** The path and query of a URL of the app (what the view is made of), or undefined for any other URL. */
export function viewOf(url: string, appOrigin: string | undefined): string | undefined {
  if (!isAppOrigin(url, appOrigin)) return undefined;
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

/**
 * View → Reload: the page showing the app reloads itself (same URL, same view; the key is in
 * the tab); a shell page (error, folder in use) is replaced by the app at the last view, if a
 * server is up.
 */
export function reloadPlan(currentUrl: string, appOrigin: string | undefined): 'reload' | 'load-app' | 'none' {
  if (isAppOrigin(currentUrl, appOrigin)) return 'reload';
  return appOrigin ? 'load-app' : 'none';
}

/**
 * The server a data folder's holder runs, as the window may show it: only a loopback http URL
 * with a port (what startServer writes) and a key, from a lock of this host. Anything else in
 * a lock file is not followed.
 */
export function runningServerOf(holder: Pick<DataLockInfo, 'hostname' | 'url' | 'apiKey'>, hostname: string): { url: string; apiKey: string; origin: string } | undefined {
  if (holder.hostname !== hostname || !holder.apiKey || !holder.url) return undefined;
  if (!/^http:\/\/127\.0\.0\.1:\d{1,5}$/.test(holder.url)) return undefined;
  return { url: holder.url, apiKey: holder.apiKey, origin: new URL(holder.url).origin };
}
