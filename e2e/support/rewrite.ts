/**
 * Rewrites the server's real answers to matching requests, for views a small demo store cannot
 * produce on its own (a search still counting, say).
 */
import type { APIResponse, Page, Route } from '@playwright/test';

/** Returns the JSON to answer with, or undefined to pass the server's answer through untouched. */
export type Rewrite = (url: URL, body: Record<string, unknown>) => Record<string, unknown> | undefined;

export async function rewriteAnswers(page: Page, pattern: RegExp, rewrite: Rewrite): Promise<void> {
  await page.route(pattern, async (route: Route) => {
    let res: APIResponse;
    try {
      res = await route.fetch({ timeout: 0 });
    } catch {
      // The page cancelled the request (it left the view) or the page is closing. Aborting here
      // would log a failed load the page never caused; handing it back to the browser does not.
      return route.continue().catch(() => {});
    }
    const body = (await res.json()) as Record<string, unknown>;
    const json = rewrite(new URL(route.request().url()), body);
    await route.fulfill({ response: res, ...(json ? { json } : {}) }).catch(() => {});
  });
}
