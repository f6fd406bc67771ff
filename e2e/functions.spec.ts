import fs from 'node:fs';
import type { InvocationStatsRow, SourceListing } from '../server/api-types.ts';
import { BUSY } from './support/fixture-data.ts';
import { expect, num, test, waitForEndpoint, type RunningServer } from './support/fixtures.ts';

/** The busy project's function ids, busiest first, as /api/sources lists them. */
async function functionIds(server: RunningServer): Promise<string[]> {
  const sources = await server.api<SourceListing[]>('sources');
  const relay = sources.find((s) => s.source === 'deno-relay-logs')!;
  return relay.functionIds.filter((f) => f.project === BUSY).sort((a, b) => b.count - a.count).map((f) => f.functionId);
}

const sum = (rows: InvocationStatsRow[], k: 'count' | 'error_count') => rows.reduce((n, r) => n + r[k], 0);

test.describe('Functions page', () => {
  test('headline invocations and errors equal the sums of the API rows', async ({ page, open, server }) => {
    const rows = await server.endpoint<InvocationStatsRow>('functions.invocation-stats', { project: BUSY, interval: '1day' });
    expect(rows).toHaveLength(25);
    await open(`/functions?project=${BUSY}&interval=1day`);
    await expect(page.getByTestId('stat-invocations-value')).toHaveText(sum(rows, 'count').toLocaleString('en-US'));
    await expect(page.getByTestId('stat-errors-value')).toHaveText(sum(rows, 'error_count').toLocaleString('en-US'));
    // Every bucket gets an x position, empty ones included.
    await expect(page.getByTestId('window')).toContainText('2026-03-13 16:00 – 2026-03-14 17:00 · 25 buckets');
  });

  test('changing the interval re-queries and the figures follow', async ({ page, open, server }) => {
    await open(`/functions?project=${BUSY}&interval=1day`);
    await expect(page.getByTestId('stat-invocations-value')).not.toBeEmpty();
    const req = waitForEndpoint(page, 'functions.invocation-stats', { interval: '7day', project: BUSY });
    await page.getByTestId('interval').getByRole('radio', { name: '7 days' }).click();
    await req;
    const rows = await server.endpoint<InvocationStatsRow>('functions.invocation-stats', { project: BUSY, interval: '7day' });
    await expect(page.getByTestId('stat-invocations-value')).toHaveText(sum(rows, 'count').toLocaleString('en-US'));
    await expect(page.getByTestId('window')).toContainText('8 buckets');
    expect(page.url()).toContain('interval=7day');
  });

  test('one function: the picker sends function_id and the figures are that function’s', async ({ page, open, server }) => {
    const FUNCTIONS = await functionIds(server);
    await open(`/functions?project=${BUSY}&interval=7day`);
    const req = waitForEndpoint(page, 'functions.invocation-stats', { function_id: FUNCTIONS[1]! });
    await page.getByTestId('function-picker').selectOption(FUNCTIONS[1]!);
    await req;
    const rows = await server.endpoint<InvocationStatsRow>('functions.invocation-stats', { project: BUSY, interval: '7day', function_id: FUNCTIONS[1]! });
    const all = await server.endpoint<InvocationStatsRow>('functions.invocation-stats', { project: BUSY, interval: '7day' });
    expect(sum(rows, 'count')).toBeLessThan(sum(all, 'count'));
    await expect(page.getByTestId('stat-invocations-value')).toHaveText(sum(rows, 'count').toLocaleString('en-US'));
  });

  test('project, function and interval survive a reload; the key never appears in the URL', async ({ page, open, server }) => {
    const FUNCTIONS = await functionIds(server);
    await open(`/functions?project=${BUSY}`);
    await page.getByTestId('interval').getByRole('radio', { name: '1 hour' }).click();
    await page.getByTestId('function-picker').selectOption(FUNCTIONS[0]!);
    await expect(page).toHaveURL(/function=/);
    expect(page.url()).not.toContain('key');
    await page.reload();
    await expect(page.getByTestId('interval').getByRole('radio', { name: '1 hour' })).toHaveAttribute('aria-checked', 'true');
    await expect(page.getByTestId('function-picker')).toHaveValue(FUNCTIONS[0]!);
    await expect(page.getByTestId('project-picker')).toHaveValue(BUSY);
    await expect(page.getByTestId('stat-invocations-value')).toBeVisible();
  });

  test('a bar’s tooltip gives exact counts and the bucket range in local time and UTC', async ({ page, open, server }) => {
    const rows = await server.endpoint<InvocationStatsRow>('functions.invocation-stats', { project: BUSY, interval: '1day' });
    await open(`/functions?project=${BUSY}&interval=1day`);
    const chart = page.getByTestId('chart-invocations').locator('.recharts-surface');
    const box = (await chart.boundingBox())!;
    // The last of 25 buckets: the current hour (UTC 15:00–16:00 = Berlin 16:00–17:00).
    await page.mouse.move(box.x + box.width - 20, box.y + box.height / 2);
    const tip = page.getByTestId('chart-tooltip');
    await expect(tip).toBeVisible();
    await expect(tip).toContainText('2026-03-14 16:00 – 17:00');
    await expect(tip).toContainText('2026-03-14 15:00 – 16:00 UTC');
    const last = rows[rows.length - 1]!;
    expect(num(await tip.locator('tr', { hasText: 'Invocations' }).locator('td').textContent())).toBe(last.count);
  });

  test('the current result exports as CSV and as JSON equal to the API’s', async ({ page, open, server }) => {
    const rows = await server.endpoint<InvocationStatsRow>('functions.invocation-stats', { project: BUSY, interval: '1day' });
    await open(`/functions?project=${BUSY}&interval=1day`);
    await expect(page.getByTestId('stat-invocations-value')).toBeVisible();
    const csvDl = page.waitForEvent('download');
    await page.getByRole('button', { name: 'CSV', exact: true }).click();
    const csv = fs.readFileSync((await (await csvDl).path())!, 'utf8');
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe(Object.keys(rows[0]!).join(','));
    expect(lines).toHaveLength(rows.length + 1);
    expect(lines[1]!.split(',')[0]).toBe(String(rows[0]!.timestamp));
    const jsonDl = page.waitForEvent('download');
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    const download = await jsonDl;
    expect(download.suggestedFilename()).toMatch(/^invocation-stats_.*\.json$/);
    expect(JSON.parse(fs.readFileSync((await download.path())!, 'utf8'))).toEqual({ result: rows });
  });
});
