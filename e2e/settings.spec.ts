import type { EndpointListing, LogRow } from '../contract/api-types.ts';
import { BUSY } from './support/fixture-data.ts';
import { API_KEY } from './support/server.ts';
import { expect, test } from './support/fixtures.ts';

test.describe('Settings & API page', () => {
  test('lists the endpoints with their UUIDs, parameters and cache settings', async ({ page, open, server }) => {
    const endpoints = await server.api<EndpointListing[]>('endpoints');
    await open('/settings');
    const table = page.getByTestId('endpoints-table');
    for (const e of endpoints) {
      const row = table.locator('tr', { hasText: e.name });
      await expect(row).toContainText(e.id);
      for (const p of e.parameters) await expect(row).toContainText(p.name);
      if (e.cacheSeconds > 0) {
        await expect(row).toContainText(`${e.cacheSeconds} s`);
        await expect(row).toContainText(`re-warmed every ${e.warmSeconds} s`);
      } else {
        await expect(row).toContainText('never cached');
      }
    }
    await expect(page.getByTestId('server-url')).toHaveText(server.url);
  });

  test('the key stays hidden until revealed', async ({ page, open }) => {
    await open('/settings');
    await expect(page.getByTestId('api-key')).not.toContainText(API_KEY);
    await page.getByTestId('reveal-key').click();
    await expect(page.getByTestId('api-key')).toHaveText(API_KEY);
  });

  test('“Copy as curl” on the Logs page copies a command that returns the same rows', async ({ page, open, server, context }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await open(`/logs?project=${BUSY}&tier=PRO&range=15m`);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
    await page.getByTestId('copy-curl').click();
    await expect(page.getByTestId('copy-curl')).toHaveText('Copied ✓');
    const cmd = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(cmd).toContain(`-H 'X-API-KEY: ${API_KEY}'`);
    const url = /'(http:\/\/[^']+)'/.exec(cmd)![1]!;
    expect(url).toContain('/api/endpoints/logs.all?project=');
    const viaCurl = (await (await fetch(url, { headers: { 'X-API-KEY': API_KEY } })).json()) as { result: LogRow[] };
    await expect(page.getByTestId('log-row').first()).toHaveAttribute('data-id', viaCurl.result[0]!.id);
  });

  test('the “as of” clock can be pinned to the newest record or a fixed instant', async ({ page, open, freshServer }) => {
    await open('/settings', freshServer);
    await expect(page.getByTestId('clock-now')).toHaveText('2026-03-14 16:09:26'); // --now, shown in Berlin time
    await page.getByTestId('clock-fixed-input').fill('2026-01-02T03:04:05');
    const put = page.waitForRequest((r) => r.method() === 'PUT' && r.url().endsWith('/api/clock'));
    await page.getByTestId('clock-apply').click();
    expect((await put).postDataJSON()).toEqual({ mode: 'fixed', now: '2026-01-02T02:04:05.000000Z' });
    await expect(page.getByTestId('clock-now')).toHaveText('2026-01-02 03:04:05');
    await expect(page.getByTestId('clock-chip')).toContainText('2026-01-02 03:04');
    await page.getByTestId('clock-latest').check();
    const put2 = page.waitForRequest((r) => r.method() === 'PUT' && r.url().endsWith('/api/clock'));
    await page.getByTestId('clock-apply').click();
    expect((await put2).postDataJSON()).toEqual({ mode: 'latest' });
    await expect(page.getByTestId('clock-chip')).toContainText('Newest record');
  });

  // Defect 9: logs.all answers at most its own 100 rows; the 1,000 cap never applies to it.
  test('shows the rows an answer holds at most: 100 for logs.all, as the endpoint answers', async ({ page, open, server }) => {
    const endpoints = await server.api<EndpointListing[]>('endpoints');
    const logs = endpoints.find((e) => e.name === 'logs.all')!;
    expect(logs.rows).toBe(100);
    // The busy project has more than 100 edge requests in 7 days: an answer stops at the cut.
    const answer = await server.endpoint<LogRow>('logs.all', { project: BUSY, project_tier: 'PRO' });
    expect(answer).toHaveLength(100);
    await open('/settings');
    const row = page.getByTestId('endpoints-table').locator('tr[data-endpoint="logs.all"]');
    await expect(row.getByTestId('endpoint-rows').locator('.mono')).toHaveText('100');
    await expect(row.getByTestId('endpoint-rows')).toContainText(`max rows ${logs.maxRows.toLocaleString('en-US')}`);
    await expect(row.getByTestId('endpoint-rules')).toContainText('at most 100 rows per answer');
    await expect(row.getByTestId('endpoint-rules')).toContainText('FREE 1 day · PRO 7 days · PAYG 90 days · ENTERPRISE 90 days');
    // An endpoint without its own cut shows the cap, and its windows as the registry lists them.
    const stats = page.getByTestId('endpoints-table').locator('tr[data-endpoint="functions.invocation-stats"]');
    await expect(stats.getByTestId('endpoint-rows')).toHaveText('1,000');
    await expect(stats.getByTestId('endpoint-rules').locator('li')).toHaveText([
      '5min5 min by second',
      '15min15 min by minute',
      '1hr1 hour by minute',
      '1day1 day by hour',
      '7day7 days by day',
      'errors: status ≥ 400',
    ]);
    await expect(stats.getByTestId('endpoint-rules')).toContainText('errors: status ≥ 400');
  });
});
