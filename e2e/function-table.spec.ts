import type { FunctionStatsRow, FunctionTotal } from '../contract/api-types.ts';
import { DEMO_PROJECTS } from '../server/demo/generate.ts';
import { BUSY } from './support/fixture-data.ts';
import { expect, num, test, type RunningServer } from './support/fixtures.ts';

const DIR = 'artifacts/screenshots';
/** The demo generator's slugs of the busy project, by function id (each record's URL names one). */
const SLUGS = new Map(DEMO_PROJECTS[0]!.functions.map((f) => [f.id, f.name]));

const table = (server: RunningServer, interval: string) => server.api<FunctionStatsRow[]>(`functions?project=${BUSY}&interval=${interval}`);

/** Shown figures round to at most two decimals: equal within that. */
const closeTo = (shown: string | null, value: number | null) => {
  expect(value).not.toBeNull();
  expect(Math.abs(num(shown) - value!)).toBeLessThanOrEqual(0.5);
};

test.describe('Functions page: the function table', () => {
  test('lists every function of the project with its slug and id, figures equal to the API’s', async ({ page, open, server }) => {
    const rows = await table(server, '7day');
    expect(rows.length).toBe(SLUGS.size);
    await open(`/functions?project=${BUSY}&interval=7day`);
    const shown = page.getByTestId('function-row');
    await expect(shown).toHaveCount(rows.length);
    // Default order: busiest first, as the API answers.
    for (const [i, r] of rows.entries()) {
      const tr = shown.nth(i);
      await expect(tr).toHaveAttribute('data-function-id', r.functionId);
      await expect(tr.getByTestId('function-slug')).toHaveText(SLUGS.get(r.functionId)!);
      await expect(tr.getByTestId('function-id')).toHaveText(r.functionId);
      await expect(tr.getByTestId('function-invocations')).toHaveText(r.invocations.toLocaleString('en-US'));
      await expect(tr.getByTestId('function-errors')).toHaveText(r.errors.toLocaleString('en-US'));
    }
    await expect(page.getByTestId('function-percentiles')).toHaveAttribute('data-kind', 'approximate');
    // The picker names each function by slug beside its id.
    const first = rows[0]!;
    await expect(page.getByTestId('function-picker').locator(`option[value="${first.functionId}"]`)).toContainText(`${SLUGS.get(first.functionId)} · ${first.functionId}`);
  });

  test('sorting by error rate puts the worst function first; a second click reverses', async ({ page, open, server }) => {
    const rows = await table(server, '7day');
    const rates = rows.filter((r) => r.errorRate !== null).map((r) => r.errorRate!);
    const worst = rows.find((r) => r.errorRate === Math.max(...rates))!;
    const best = rows.find((r) => r.errorRate === Math.min(...rates))!;
    await open(`/functions?project=${BUSY}&interval=7day`);
    await page.getByTestId('sort-errorRate').click();
    await expect(page.getByRole('columnheader', { name: 'Error rate' })).toHaveAttribute('aria-sort', 'descending');
    await expect(page.getByTestId('function-row').first()).toHaveAttribute('data-function-id', worst.functionId);
    const shownRates = await page.getByTestId('function-error-rate').allTextContents();
    const parsed = shownRates.map(num);
    expect(parsed).toEqual([...parsed].sort((a, b) => b - a));
    await page.getByTestId('sort-errorRate').click();
    await expect(page.getByRole('columnheader', { name: 'Error rate' })).toHaveAttribute('aria-sort', 'ascending');
    await expect(page.getByTestId('function-row').first()).toHaveAttribute('data-function-id', best.functionId);
  });

  test('the headline p99 is the period’s: the total’s for all functions, the row’s for one', async ({ page, open, server }) => {
    const total = await server.api<FunctionTotal>(`functions/total?project=${BUSY}&interval=1day`);
    const rows = await table(server, '1day');
    await open(`/functions?project=${BUSY}&interval=1day`);
    await expect(page.getByTestId('stat-p99-value')).not.toHaveText('…');
    closeTo(await page.getByTestId('stat-p99-value').textContent(), total.p99Ms);
    closeTo(await page.getByTestId('stat-p95-value').textContent(), total.p95Ms);
    // The chart link selects the function on this page.
    const pick = rows[1]!;
    await page.locator(`[data-function-id="${pick.functionId}"]`).getByTestId('function-chart').click();
    await expect(page.getByTestId('function-picker')).toHaveValue(pick.functionId);
    await expect(page).toHaveURL(new RegExp(`function=${pick.functionId}`));
    await expect(page.getByTestId('chart-function')).toContainText(SLUGS.get(pick.functionId)!);
    await expect(page.locator(`[data-function-id="${pick.functionId}"]`)).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByTestId('stat-p99-value')).not.toHaveText('…');
    closeTo(await page.getByTestId('stat-p99-value').textContent(), pick.p99Ms);
  });

  test('a function’s logs link opens the Logs page filtered to that function’s invocation records', async ({ page, open, server }) => {
    const rows = await table(server, '1hr');
    const fn = rows[0]!;
    const { window } = await server.api<FunctionTotal>(`functions/total?project=${BUSY}&interval=1hr`);
    await open(`/functions?project=${BUSY}&interval=1hr`);
    const link = page.locator(`[data-function-id="${fn.functionId}"]`).getByTestId('function-logs');
    // Exactly the window the table counts, as the explorer's (start, end].
    const bound = (us: number) => encodeURIComponent(`${new Date(Math.floor(us / 1000)).toISOString().slice(0, -1)}${String(us).slice(-3)}Z`);
    await expect(link).toHaveAttribute('href', `/logs?project=${BUSY}&source=function_edge_logs&function_id=${fn.functionId}&range=custom&start=${bound(window.start - 1)}&end=${bound(window.end - 1)}`);
    await link.click();
    await expect(page.getByTestId('nav-logs')).toHaveAttribute('aria-current', 'page');
    await expect(page).toHaveURL(new RegExp(`/logs\\?.*project=${BUSY}`));
    // The Logs page keeps the function filter from the link in its own URL state.
    await expect(page).toHaveURL(/source=function_edge_logs/);
    await expect(page).toHaveURL(new RegExp(`function_id=${fn.functionId}`));
    // Back returns to the table.
    await page.goBack();
    await expect(page.getByTestId('function-row').first()).toBeVisible();
  });

  for (const scheme of ['light', 'dark'] as const) {
    test(`screenshots at 1440×900 and 1024×700 — ${scheme}`, async ({ page, open }) => {
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(String(e)));
      await open(`/functions?project=${BUSY}&interval=7day`);
      await page.getByTestId('sort-errorRate').click();
      await expect(page.getByTestId('stat-p99-value')).not.toHaveText('…');
      for (const [width, height] of [[1440, 900], [1024, 700]] as const) {
        await page.setViewportSize({ width, height });
        await page.locator('.main').evaluate((el) => el.scrollTo(0, 0));
        await page.screenshot({ path: `${DIR}/function-table-${width}x${height}-${scheme}.png` });
        await page.getByTestId('function-table').scrollIntoViewIfNeeded();
        await page.getByTestId('function-table').screenshot({ path: `${DIR}/function-table-card-${width}x${height}-${scheme}.png` });
      }
      // A selected function: its row is marked and the charts and headline are its own.
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.getByTestId('function-row').nth(1).getByTestId('function-chart').click();
      await expect(page.getByTestId('chart-function')).toBeVisible();
      await page.locator('.main').evaluate((el) => el.scrollTo(0, 0));
      await page.screenshot({ path: `${DIR}/function-table-selected-${scheme}.png` });
      expect(problems).toEqual([]);
    });
  }
});
