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
  /** Requests whose answer could not be fetched here (cancelled by the page, say): handed back to the browser. */
  handedBack: number;
}

export async function rewriteAnswers(page: Page, pattern: RegExp, rewrite: Rewrite): Promise<RewriteCounts> {
  const counts: RewriteCounts = { rewritten: 0, passedThrough: 0, handedBack: 0 };
  await page.route(pattern, async (route: Route) => {
    let res: APIResponse;
    try {
      res = await route.fetch({ timeout: 0 });
    } catch {
      // The page cancelled the request (it left the view) or the page is closing. Aborting here
      // would log a failed load the page never caused; handing it back to the browser does not.
      counts.handedBack++;
      return route.continue().catch(() => {});
    }
    const body = (await res.json()) as Record<string, unknown>;
    const json = rewrite(new URL(route.request().url()), body);
    counts[json ? 'rewritten' : 'passedThrough']++;
    await route.fulfill({ response: res, ...(json ? { json } : {}) }).catch(() => {});
  });
  return counts;
}
