import fs from 'node:fs';
import type { LogRow } from '../server/api-types.ts';
import { BUSY, NOW_ISO } from './support/fixture-data.ts';
import { expect, num, test, waitForEndpoint } from './support/fixtures.ts';

// The fixed clock is 2026-03-14T15:09:26.535897Z; "last 1 h" starts one hour earlier.
const HOUR_AGO = '2026-03-14T14:09:26.535897Z';
const params1h = { project: BUSY, project_tier: 'FREE', iso_timestamp_start: HOUR_AGO, iso_timestamp_end: NOW_ISO };

/** The µs ISO form of a timestamp, computed without the renderer's code. */
function iso(us: number): string {
  const s = String(us);
  const ms = Number(s.slice(0, -3));
  return `${new Date(ms).toISOString().slice(0, -1)}${s.slice(-3)}Z`;
}

// The exact logs.all view; the explorer (the page's default view) is e2e/explorer.spec.ts.
const EXACT = `/logs?project=${BUSY}&mode=exact&tier=FREE&range=1h`;

test.describe('Logs page: the exact logs.all view', () => {
  test('the first row is logs.all’s first row, and the request carries µs-precision bounds', async ({ page, open, server }) => {
    const rows = await server.endpoint<LogRow>('logs.all', params1h);
    const req = waitForEndpoint(page, 'logs.all', params1h);
    await open(EXACT);
    await req;
    const first = page.getByTestId('log-row').first();
    await expect(first).toHaveAttribute('data-id', rows[0]!.id);
    await expect(first).toContainText(rows[0]!.event_message.slice(0, 40));
    await expect(page.getByTestId('logs-count')).toContainText(`${rows.length} rows loaded`);
  });

  test('selecting a row opens its details; arrow keys move the selection', async ({ page, open, server }) => {
    const rows = await server.endpoint<LogRow>('logs.all', params1h);
    await open(EXACT);
    await page.getByTestId('log-row').first().click();
    const detail = page.getByTestId('log-detail');
    await expect(detail.getByTestId('detail-id')).toHaveText(rows[0]!.id);
    await expect(detail.getByTestId('detail-us')).toHaveText(`${rows[0]!.timestamp} µs`);
    await expect(detail.getByTestId('detail-message')).toHaveText(rows[0]!.event_message);
    await expect(detail.locator('.json-key', { hasText: '"status_code"' }).first()).toBeVisible();
    await page.keyboard.press('ArrowDown');
    await expect(detail.getByTestId('detail-id')).toHaveText(rows[1]!.id);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowUp');
    await expect(detail.getByTestId('detail-id')).toHaveText(rows[1]!.id);
    await page.keyboard.press('Escape');
    await expect(detail).toHaveCount(0);
  });

  test('“Load older” asks with the oldest row’s µs timestamp and adds the next page without duplicates', async ({ page, open, server }) => {
    const page1 = await server.endpoint<LogRow>('logs.all', params1h);
    expect(page1).toHaveLength(100);
    const end = iso(page1[99]!.timestamp);
    const page2 = await server.endpoint<LogRow>('logs.all', { ...params1h, iso_timestamp_end: end });
    const union = new Map([...page1, ...page2].map((r) => [r.id, r]));
    expect(union.size).toBeLessThan(page1.length + page2.length); // the inclusive end repeats the boundary row

    await open(EXACT);
    await expect(page.getByTestId('logs-count')).toContainText('100 rows loaded');
    const req = waitForEndpoint(page, 'logs.all', { iso_timestamp_end: end, iso_timestamp_start: HOUR_AGO });
    await page.getByTestId('load-older').click();
    await req;
    await expect(page.getByTestId('logs-count')).toContainText(`${union.size} rows loaded`);
    // The last row shown is the API's oldest, and every rendered row id is distinct.
    await page.getByTestId('logs-grid').evaluate((el) => (el.scrollTop = el.scrollHeight));
    const lastId = [...union.keys()].at(-1)!;
    await expect(page.locator(`[data-testid="log-row"][data-id="${lastId}"]`)).toBeVisible();
    const ids = await page.getByTestId('log-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('a range preset re-queries from the server’s now', async ({ page, open }) => {
    await open(EXACT);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
    const req = waitForEndpoint(page, 'logs.all', { iso_timestamp_start: '2026-03-14T14:54:26.535897Z', iso_timestamp_end: NOW_ISO });
    await page.getByTestId('range').getByRole('radio', { name: '15 min' }).click();
    await req;
    await expect(page).toHaveURL(/range=15m/);
  });

  test('the page says plainly when the tier’s retention cuts the range', async ({ page, open }) => {
    await open(EXACT);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
    await expect(page.getByTestId('retention-notice')).toHaveCount(0);
    await page.getByTestId('range').getByRole('radio', { name: '7 days' }).click();
    const notice = page.getByTestId('retention-notice');
    await expect(notice).toContainText('The FREE tier keeps 1 day of logs');
    await expect(notice).toContainText('records before 2026-03-13 16:09:26 are not returned');
    // The notice offers the smallest tier that covers the range.
    const req = waitForEndpoint(page, 'logs.all', { project_tier: 'PRO' });
    await notice.getByTestId('retention-upgrade').click();
    await req;
    await expect(page.getByTestId('tier-picker')).toHaveValue('PRO');
    await expect(notice).toHaveCount(0);
  });

  test('links from before the explorer (a tier, no mode) open this view, and the page says so', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&tier=PRO&range=15m`);
    await expect(page.getByTestId('logs-page')).toHaveAttribute('data-mode', 'exact');
    await expect(page.getByTestId('mode-exact')).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByTestId('logs-view-description')).toContainText('Exact logs.all view');
    await expect(page).toHaveURL(/mode=exact&tier=PRO&range=15m/);
  });

  test('the filter box narrows the loaded rows', async ({ page, open, server }) => {
    const rows = await server.endpoint<LogRow>('logs.all', params1h);
    const pathOf = (r: LogRow) => ((r.metadata[0] as { request?: Array<{ path?: string }> }).request?.[0]?.path ?? '').toLowerCase();
    // Filter by the path of the 4th row: some rows match, not all.
    const term = pathOf(rows[3]!);
    const expected = rows.filter((r) => r.event_message.toLowerCase().includes(term) || pathOf(r).includes(term)).length;
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(rows.length);
    await open(EXACT);
    await page.getByTestId('logs-filter').fill(term);
    await expect(page.getByTestId('logs-count')).toContainText(`${expected} of 100 loaded rows match`);
    await expect(page.getByTestId('log-row').first()).toHaveAttribute('data-id', rows.find((r) => r.event_message.toLowerCase().includes(term) || pathOf(r).includes(term))!.id);
  });

  test('tier and range survive a reload', async ({ page, open }) => {
    await open(EXACT);
    await page.getByTestId('tier-picker').selectOption('PRO');
    await page.getByTestId('range').getByRole('radio', { name: '3 h' }).click();
    await expect(page).toHaveURL(/tier=PRO&range=3h/);
    const req = waitForEndpoint(page, 'logs.all', { project_tier: 'PRO', iso_timestamp_start: '2026-03-14T12:09:26.535897Z' });
    await page.reload();
    await req;
    await expect(page.getByTestId('tier-picker')).toHaveValue('PRO');
    await expect(page.getByTestId('range').getByRole('radio', { name: '3 h' })).toHaveAttribute('aria-checked', 'true');
    expect(num(await page.getByTestId('logs-count').textContent())).toBeGreaterThan(0);
  });

  test('CSV and JSON export what the table shows: the rows the filter box keeps', async ({ page, open, server }) => {
    const rows = await server.endpoint<LogRow>('logs.all', params1h);
    const pathOf = (r: LogRow) => ((r.metadata[0] as { request?: Array<{ path?: string }> }).request?.[0]?.path ?? '').toLowerCase();
    const term = pathOf(rows[3]!);
    const kept = rows.filter((r) => r.event_message.toLowerCase().includes(term) || pathOf(r).includes(term));
    expect(kept.length).toBeLessThan(rows.length);
    await open(EXACT);
    await page.getByTestId('logs-filter').fill(term);
    await expect(page.getByTestId('logs-count')).toContainText(`${kept.length} of 100 loaded rows match`);
    // The filter text is marked in the visible rows.
    await expect(page.getByTestId('log-row').first().locator('mark.ex-mark').first()).toHaveText(new RegExp(`^${term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'i'));
    const csvDownload = page.waitForEvent('download');
    await page.getByRole('button', { name: 'CSV', exact: true }).click();
    const csv = fs.readFileSync((await (await csvDownload).path())!, 'utf8').trim().split('\r\n');
    expect(csv.slice(1).map((l) => l.split(',')[0])).toEqual(kept.map((r) => r.id));
    const jsonDownload = page.waitForEvent('download');
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    const json = JSON.parse(fs.readFileSync((await (await jsonDownload).path())!, 'utf8')) as { result: LogRow[] };
    expect(json.result.map((r) => r.id)).toEqual(kept.map((r) => r.id));
  });
});
