/**
 * Rewrites the server's real answers to matching requests, for views a small demo store cannot
 * produce on its own (a search still counting, say).
 */
import type { APIResponse, Page, Route } from '@playwright/test';

/** Returns the JSON to answer with, or undefined to pass the server's answer through untouched. */
export type Rewrite = (url: URL, body: Record<string, unknown>) => Record<string, unknown> | undefined;

/** What happened to the matching requests so far, for a failing test's message. */
export interface RewriteCounts {
  rewritten: number;
  passedThrough: number;
  /** Requests whose answer could not be fetched here even after retries: handed back to the browser. */
  handedBack: number;
  /** Fetches that failed and were tried again, with their errors (the last few). */
  retried: string[];
}

/** Tries of one request's fetch before it is handed back. */
const TRIES = 3;

/**
 * A fetch here can fail without the page doing anything: the server closes a keep-alive
 * connection it has held idle for its timeout just as the next request is sent on it (the
 * CI saw this between two views). Handing that request back to the browser would answer it
 * with the server's real answer, unrewritten, so it is fetched again first.
 */
async function fetchWithRetry(route: Route, counts: RewriteCounts): Promise<APIResponse | null> {
  for (let i = 1; ; i++) {
    try {
      return await route.fetch({ timeout: 0 });
    } catch (e) {
      if (i >= TRIES) return null;
      counts.retried = [...counts.retried.slice(-4), String(e).split('\n')[0]!.slice(0, 200)];
    }
  }
}

export async function rewriteAnswers(page: Page, pattern: RegExp, rewrite: Rewrite): Promise<RewriteCounts> {
  const counts: RewriteCounts = { rewritten: 0, passedThrough: 0, handedBack: 0, retried: [] };
  await page.route(pattern, async (route: Route) => {
    const res = await fetchWithRetry(route, counts);
    if (!res) {
      // The page cancelled the request (it left the view) or the page is closing. Aborting here
      // would log a failed load the page never caused; handing it back to the browser does not.
      counts.handedBack++;
      return route.continue().catch(() => {});
    }
    // Only a good JSON answer is rewritten; an error goes to the page as the server sent it.
    const body = res.ok() ? ((await res.json()) as Record<string, unknown>) : null;
    const json = body ? rewrite(new URL(route.request().url()), body) : undefined;
    counts[json ? 'rewritten' : 'passedThrough']++;
    await route.fulfill({ response: res, ...(json ? { json } : {}) }).catch(() => {});
  });
  return counts;
}
