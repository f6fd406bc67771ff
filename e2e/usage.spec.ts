import type { ApiCountsRow } from '../server/api-types.ts';
import { BUSY } from './support/fixture-data.ts';
import { expect, test, waitForEndpoint } from './support/fixtures.ts';

function totals(rows: ApiCountsRow[]) {
  const t = { rest: 0, storage: 0, auth: 0, realtime: 0 };
  for (const r of rows) {
    t.rest += r.total_rest_requests;
    t.storage += r.total_storage_requests;
    t.auth += r.total_auth_requests;
    t.realtime += r.total_realtime_requests;
  }
  return t;
}

test.describe('API usage page', () => {
  test('per-family totals equal the sums of the API rows, for every interval', async ({ page, open, server }) => {
    await open(`/usage?project=${BUSY}&interval=daily`);
    // The pattern defaults to the project's ref, escaped for RE2 (this ref has nothing to escape).
    await expect(page.getByTestId('usage-regex')).toHaveValue(BUSY);
    for (const interval of ['daily', 'hourly', 'minutely'] as const) {
      if (interval !== 'daily') {
        const req = waitForEndpoint(page, 'usage.api-counts', { interval, project: BUSY });
        await page.getByTestId('interval').getByRole('radio', { name: new RegExp(`^${interval}`, 'i') }).click();
        await req;
      }
      const t = totals(await server.endpoint<ApiCountsRow>('usage.api-counts', { project: BUSY, interval }));
      expect(t.rest).toBeGreaterThan(0);
      for (const k of ['rest', 'storage', 'auth', 'realtime'] as const) {
        await expect(page.getByTestId(`total-${k}-value`), `${interval} ${k}`).toHaveText(t[k].toLocaleString('en-US'));
      }
    }
  });

  test('the chart zero-fills the whole window: 8 daily, 2 hourly, 61 minutely buckets', async ({ page, open }) => {
    await open(`/usage?project=${BUSY}&interval=daily`);
    await expect(page.getByTestId('chart-usage')).toBeVisible();
    await expect(page.getByTestId('window')).toContainText('8 buckets');
    await page.getByTestId('interval').getByRole('radio', { name: /^minutely/i }).click();
    await expect(page.getByTestId('window')).toContainText('61 buckets');
    await page.getByTestId('interval').getByRole('radio', { name: /^hourly/i }).click();
    await expect(page.getByTestId('window')).toContainText('2 buckets');
  });

  test('a bad regex shows the error panel naming `project`', async ({ page, open }) => {
    await open(`/usage?project=${BUSY}&interval=daily`);
    await expect(page.getByTestId('total-rest-value')).toBeVisible();
    const req = waitForEndpoint(page, 'usage.api-counts', { project: 'alpha(' });
    await page.getByTestId('usage-regex').fill('alpha(');
    await page.getByTestId('usage-regex').press('Enter');
    await req;
    const panel = page.getByTestId('error-panel');
    await expect(panel).toBeVisible();
    await expect(panel.getByTestId('error-location')).toHaveText('project');
    await expect(panel).toContainText('400');
    // And it is in the link: a reload shows the same error.
    await expect(page).toHaveURL(/regex=alpha%28/);
  });

  test('clicking a bucket opens Logs at that bucket’s time range', async ({ page, open }) => {
    await open(`/usage?project=${BUSY}&interval=hourly`);
    const chart = page.getByTestId('chart-usage').locator('.recharts-surface');
    await expect(chart).toBeVisible();
    const box = (await chart.boundingBox())!;
    // Two hourly buckets (14:00 and 15:00 UTC); the right half is the current hour.
    const req = waitForEndpoint(page, 'logs.all', { iso_timestamp_start: '2026-03-14T14:59:59.999999Z', iso_timestamp_end: '2026-03-14T15:59:59.999999Z' });
    // As a user does: hover (the tooltip names the bucket), then click.
    await page.mouse.move(box.x + box.width * 0.75, box.y + box.height * 0.5);
    await expect(page.getByTestId('chart-tooltip')).toContainText('Click to open these requests in Logs');
    await page.mouse.click(box.x + box.width * 0.75, box.y + box.height * 0.5);
    await req;
    await expect(page).toHaveURL(/\/logs\?.*range=custom/);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
  });
});
