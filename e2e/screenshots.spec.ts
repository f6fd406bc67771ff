/**
 * Every page in light and dark, written to artifacts/screenshots/ for review by eye.
 */
import { BUSY } from './support/fixture-data.ts';
import { expect, test } from './support/fixtures.ts';

const DIR = 'artifacts/screenshots';

for (const scheme of ['light', 'dark'] as const) {
  test.describe(`screenshots (${scheme})`, () => {
    test.beforeEach(async ({ page }) => {
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    });

    test(`functions, logs, usage, data, settings — ${scheme}`, async ({ page, open }) => {
      // The strict CSP (no inline scripts, no CDNs) and React both report problems on the console.
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(String(e)));
      await open(`/functions?project=${BUSY}&interval=1day`);
      await expect(page.getByTestId('stat-invocations-value')).toBeVisible();
      const chart = page.getByTestId('chart-invocations').locator('.recharts-surface');
      const box = (await chart.boundingBox())!;
      await page.mouse.move(box.x + box.width - 60, box.y + box.height / 2);
      await expect(page.getByTestId('chart-tooltip')).toBeVisible();
      await page.screenshot({ path: `${DIR}/functions-${scheme}.png` });

      await page.getByTestId('nav-logs').click();
      await page.getByTestId('log-row').nth(2).click();
      await expect(page.getByTestId('log-detail')).toBeVisible();
      await page.screenshot({ path: `${DIR}/logs-${scheme}.png` });
      // The retention notice belongs to the exact logs.all view.
      await page.getByTestId('mode-exact').click();
      await page.getByTestId('range').getByRole('radio', { name: '7 days' }).click();
      await expect(page.getByTestId('retention-notice')).toBeVisible();
      await expect(page.locator('.logs-layout.is-refetching')).toHaveCount(0);
      await expect(page.getByTestId('log-row').first()).toBeVisible();
      await page.screenshot({ path: `${DIR}/logs-retention-${scheme}.png` });

      await page.getByTestId('nav-usage').click();
      await expect(page.getByTestId('total-rest-value')).toBeVisible();
      await page.screenshot({ path: `${DIR}/usage-${scheme}.png` });
      await page.getByTestId('usage-regex').fill('alpha(');
      await page.getByTestId('usage-regex').press('Enter');
      await expect(page.getByTestId('error-panel')).toBeVisible();
      await page.screenshot({ path: `${DIR}/usage-error-${scheme}.png` });

      // Data and Settings scroll inside the shell; a taller window shows them whole.
      await page.setViewportSize({ width: 1440, height: 1400 });
      await page.getByTestId('nav-data').click();
      await expect(page.getByTestId('sources-table')).toBeVisible();
      await page.screenshot({ path: `${DIR}/data-${scheme}.png` });

      await page.getByTestId('nav-settings').click();
      await expect(page.getByTestId('endpoints-table')).toBeVisible();
      await page.screenshot({ path: `${DIR}/settings-${scheme}.png` });
      // The usage page's bad regex is an expected 400; nothing else may complain.
      expect(problems.filter((p) => !/400 \(Bad Request\)/.test(p))).toEqual([]);
    });

    test(`loading skeletons — ${scheme}`, async ({ page, open }) => {
      // Hold the endpoint answers back so the skeletons stay on screen.
      let release: () => void = () => {};
      const gate = new Promise<void>((r) => (release = r));
      for (const pattern of ['**/api/endpoints/*', '**/api/logs**']) {
        await page.route(pattern, async (route) => {
          await gate;
          await route.continue();
        });
      }
      await open(`/functions?project=${BUSY}&interval=1day`);
      await expect(page.getByTestId('loading').first()).toBeVisible();
      await page.screenshot({ path: `${DIR}/functions-loading-${scheme}.png` });
      await page.getByTestId('nav-logs').click();
      await expect(page.getByTestId('loading').first()).toBeVisible();
      await page.screenshot({ path: `${DIR}/logs-loading-${scheme}.png` });
      release();
      await expect(page.getByTestId('log-row').first()).toBeVisible();
    });

    test(`empty store — ${scheme}`, async ({ page, open, freshServer }) => {
      await open('/functions', freshServer);
      await expect(page.getByTestId('empty-state')).toBeVisible();
      await page.screenshot({ path: `${DIR}/empty-${scheme}.png` });
    });
  });
}
