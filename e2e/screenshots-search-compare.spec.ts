/**
 * The search, compare and usage views for review by eye, written to artifacts/screenshots/: the explorer while a
 * search is still counting and once it is complete, the compare overlay, Functions with a
 * compared period, and API usage; at 1440×900, 1280×800 and 1024×700, light and dark.
 */
import type { Page } from '@playwright/test';
import { BUSY } from './support/fixture-data.ts';
import { expect, test } from './support/fixtures.ts';
import { rewriteAnswers, type RewriteCounts } from './support/rewrite.ts';

const DIR = 'artifacts/screenshots';
const SIZES = [
  [1440, 900],
  [1280, 800],
  [1024, 700],
] as const;

/** While `hold.on`, a search's histogram and facets answer as a walk that has counted 35% of the range. */
function holdSearch(page: Page, hold: { on: boolean }): Promise<RewriteCounts> {
  return rewriteAnswers(page, /\/api\/logs\/(histogram|facets)\?/, (u, body) => {
    if (!hold.on || !u.searchParams.get('q')) return undefined;
    const end = Date.parse(u.searchParams.get('end')!) * 1000;
    const start = Date.parse(u.searchParams.get('start')!) * 1000;
    const through = Math.round(end - (end - start) * 0.35);
    if (u.pathname.endsWith('/histogram')) body.result = (body.result as Array<{ timestamp: number }>).map((b) => (b.timestamp < through ? { ...b, count: 0, by: {} } : b));
    return { ...body, scanned: { through, throughIso: '', complete: false } };
  });
}

for (const scheme of ['light', 'dark'] as const) {
  test(`search, compare and usage screenshots — ${scheme}`, async ({ page, open }) => {
    test.setTimeout(180_000);
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    const hold = { on: true };
    const counts = await holdSearch(page, hold);
    for (const [w, h] of SIZES) {
      await page.setViewportSize({ width: w, height: h });
      const at = `${w}x${h}-${scheme}`;

      hold.on = true;
      await open(`/logs?project=${BUSY}&source=edge_logs&range=24h&q=rest`);
      // The first answer waits for the server's walk, which a busy machine slows (the CI once
      // passed 8 s here): a long wait, and the rewrites so far in the message if it fails.
      await expect(page.getByTestId('search-progress'))
        .toBeVisible({ timeout: 30_000 })
        .catch((e: Error) => {
          throw new Error(`no search in progress at ${at}; histogram and facets answers: ${JSON.stringify(counts)}\n${e.message}`);
        });
      await expect(page.getByTestId('log-row').first()).toBeVisible();
      await page.screenshot({ path: `${DIR}/review-search-running-${at}.png` });
      hold.on = false;
      await expect(page.getByTestId('search-progress')).toHaveCount(0, { timeout: 10_000 });
      await expect(page.getByTestId('match-total')).toHaveAttribute('data-complete', 'true');
      await page.screenshot({ path: `${DIR}/review-search-complete-${at}.png` });

      await open(`/logs?project=${BUSY}&source=edge_logs&range=24h&compare=1d`);
      await expect(page.getByTestId('legend-compared').locator('.ex-legend__count')).not.toHaveText('…');
      await expect(page.getByTestId('facet-change').first()).toBeVisible();
      const grid = (await page.getByTestId('histogram-chart').locator('.recharts-cartesian-grid').boundingBox())!;
      await page.mouse.move(grid.x + grid.width * 0.6, grid.y + grid.height / 2);
      await expect(page.getByTestId('chart-tooltip')).toBeVisible();
      await page.screenshot({ path: `${DIR}/review-compare-${at}.png` });

      await open(`/functions?project=${BUSY}&interval=1day&compare=1d`);
      await expect(page.getByTestId('legend-compared')).not.toContainText('…');
      await page.getByTestId('chart-invocations').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${DIR}/review-functions-compare-${at}.png` });

      await open(`/usage?project=${BUSY}&interval=daily`);
      await expect(page.getByTestId('total-rest-value')).toBeVisible();
      await page.screenshot({ path: `${DIR}/review-usage-${at}.png` });
    }
    expect(problems).toEqual([]);
  });
}
