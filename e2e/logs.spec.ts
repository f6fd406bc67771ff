import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import type { EndpointListing, LogRow } from '../contract/api-types.ts';
import { BUSY, NOW_ISO, nowMicros, writeDemoExports } from './support/fixture-data.ts';
import { expect, num, test, waitForEndpoint, inEachLook } from './support/fixtures.ts';

/** The edge records the worker's server imported, read from the demo export itself (same seed and clock). */
let edge: Array<{ id: string; timestamp: number; project: string }> = [];
test.beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logs-expect-'));
  const files = await writeDemoExports(dir);
  edge = fs
    .readFileSync(files.find((f) => path.basename(f) === 'edge_logs.ndjson')!, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; timestamp: number; project: string });
  fs.rmSync(dir, { recursive: true, force: true });
});

// The fixed clock is 2026-03-14T15:09:26.535897Z; "last 1 h" starts one hour earlier.
const HOUR_AGO = '2026-03-14T14:09:26.535897Z';
const THREE_HOURS_AGO = '2026-03-14T12:09:26.535897Z';
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

  test('“Load older (100 more)” adds exactly the next 100 rows, where it added 99', async ({ page, open, server }) => {
    // Three hours: more than 200 rows of this project.
    const params3h = { ...params1h, iso_timestamp_start: THREE_HOURS_AGO };
    const page1 = await server.endpoint<LogRow>('logs.all', params3h);
    expect(page1).toHaveLength(100);
    // logs.all's order over the export, by its rules: (start, end], newest first, ties by id.
    const start = nowMicros() - 3 * 3_600_000_000;
    const expected = edge
      .filter((r) => r.project === BUSY && r.timestamp > start && r.timestamp <= nowMicros())
      .sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((r) => r.id);
    expect(expected.length).toBeGreaterThan(200);
    expect(page1.map((r) => r.id)).toEqual(expected.slice(0, 100));

    await open(`/logs?project=${BUSY}&mode=exact&tier=FREE&range=3h`);
    await expect(page.getByTestId('logs-count')).toContainText('100 rows loaded');
    await expect(page.getByTestId('load-older')).toHaveText('Load older (100 more)');
    // The first request still asks from the oldest row's µs instant (inclusive), which answers that row again.
    const req = waitForEndpoint(page, 'logs.all', { iso_timestamp_end: iso(page1[99]!.timestamp), iso_timestamp_start: THREE_HOURS_AGO });
    await page.getByTestId('load-older').click();
    await req;
    await expect(page.getByTestId('logs-count')).toContainText('200 rows loaded');
    // In the API's order, without gaps or repeats: the first and the 200th row are the export's.
    await expect(page.getByTestId('log-row').first()).toHaveAttribute('data-id', expected[0]!);
    await page.getByTestId('logs-grid').evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect(page.locator(`[data-testid="log-row"][data-id="${expected[199]}"]`)).toBeVisible();
    const ids = await page.getByTestId('log-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.at(-1)).toBe(expected[199]);
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

  test('a custom range older than the retention says so and offers the tier that covers it, not the clock', async ({ page, open }) => {
    await open(EXACT);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
    await page.getByTestId('range').getByRole('radio', { name: 'Custom' }).click();
    // 10 to 12 days before the clock (local Berlin times): older than FREE's 1 day and PRO's 7, within PAYG's 90.
    // From 2 March 00:00 to 4 March 00:00 (exclusive), 24-hour: the API's start is the instant before.
    await page.getByTestId('range-start').fill('2026-03-02 00:00:00');
    await page.getByTestId('range-end').fill('2026-03-04 00:00:00');
    const empty = waitForEndpoint(page, 'logs.all', { project_tier: 'FREE', iso_timestamp_start: '2026-03-01T22:59:59.999999Z' });
    await page.getByTestId('range-apply').click();
    await empty;
    const notice = page.getByTestId('retention-notice');
    await expect(notice).toHaveAttribute('data-cut', 'all');
    await expect(notice).toContainText('This range is older than the FREE tier’s retention');
    await expect(notice).toContainText('nothing before 2026-03-13 16:09:26 is returned, and the range ends at 2026-03-04 00:00:00');
    await expect(notice.getByTestId('retention-upgrade')).toHaveText('Query as PAYG (keeps 90 days)');
    // The clock is not why the table is empty: no advice to pin it.
    await expect(page.getByTestId('clock-hint')).toHaveCount(0);
    await expect(page.getByText('Pin clock to newest record')).toHaveCount(0);
    await page.screenshot({ path: 'artifacts/screenshots/fx-logs-older-than-retention-light.png' });
    const req = waitForEndpoint(page, 'logs.all', { project_tier: 'PAYG' });
    await notice.getByTestId('retention-upgrade').click();
    await req;
    await expect(notice).toHaveCount(0);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
  });

  test('a range older than every tier says no tier keeps it', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&mode=exact&tier=FREE&range=custom&start=2025-10-01T00:00:00Z&end=2025-10-02T00:00:00Z`);
    const notice = page.getByTestId('retention-notice');
    await expect(notice).toContainText('No tier keeps logs that old: the longest retention is PAYG’s 90 days');
    await expect(notice.getByTestId('retention-upgrade')).toHaveCount(0);
  });

  test('tiers and their retention come from the server’s endpoint listing', async ({ page, open }) => {
    // A listing whose FREE tier keeps 2 days: the page must say 2 days, not restate its own 1.
    await page.route('**/api/endpoints', async (route) => {
      const res = await route.fetch();
      const body = (await res.json()) as { result: EndpointListing[] };
      const logsAll = body.result.find((e) => e.name === 'logs.all')!;
      logsAll.tiers = { ...logsAll.tiers, FREE: { retentionUs: 2 * 86_400_000_000 } };
      await route.fulfill({ response: res, json: body });
    });
    await open(EXACT);
    await expect(page.getByTestId('tier-picker').locator('option[value="FREE"]')).toHaveText('FREE · 2 days');
    await expect(page.getByTestId('tier-picker').locator('option[value="PRO"]')).toHaveText('PRO · 7 days');
    await page.getByTestId('range').getByRole('radio', { name: '7 days' }).click();
    await expect(page.getByTestId('retention-notice')).toContainText('The FREE tier keeps 2 days of logs: records before 2026-03-12 16:09:26 are not returned');
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

  test('at 1024×700 with the detail open, both views keep a readable path and message beside the panel', async ({ page, open }) => {
    await page.setViewportSize({ width: 1024, height: 700 });
    for (const [view, url] of [
      ['exact', EXACT],
      ['explorer', `/logs?project=${BUSY}&range=1h`],
    ] as const) {
      await open(url);
      await page.getByTestId('log-row').nth(1).click();
      const detail = page.getByTestId('log-detail');
      await expect(detail).toBeVisible();
      await expectReadableBesideDetail(page, view);
    }
  });

  test('screenshots: the detail open in both views, 1440×900 and 1024×700, light and dark', async ({ page, open }) => {
    // Eight screenshots: the time is the machine's.
    test.setTimeout(180_000);
    await inEachLook(page, async ({ scheme, w, h }) => {
      for (const [view, url] of [
        ['exact', EXACT],
        ['explorer', `/logs?project=${BUSY}&range=1h`],
      ] as const) {
        await open(url);
        await page.getByTestId('log-row').nth(1).click();
        await expect(page.getByTestId('log-detail')).toBeVisible();
        await expectReadableBesideDetail(page, view);
        await page.screenshot({ path: `artifacts/screenshots/fx-logs-${view}-detail-${w}-${scheme}.png` });
      }
      await open(`/logs?project=${BUSY}&mode=exact&tier=FREE&range=custom&start=2026-03-02T00:00:00Z&end=2026-03-04T00:00:00Z`);
      await expect(page.getByTestId('retention-notice')).toBeVisible();
      await page.screenshot({ path: `artifacts/screenshots/fx-logs-retention-${w}-${scheme}.png` });
    });
  });
});

/**
 * The table beside the open detail panel: not covered by it, and its path and message cells
 * wide enough to read (at 7 px a character, 14 characters and more).
 */
async function expectReadableBesideDetail(page: Page, view: string) {
  const table = (await page.getByTestId('logs-table').boundingBox())!;
  const detail = (await page.getByTestId('log-detail').boundingBox())!;
  expect(table.x + table.width, `${view}: the table ends before the panel`).toBeLessThanOrEqual(detail.x + 1);
  const row = page.getByTestId('log-row').first();
  const pathCell = (await row.locator('[data-col="path"]').boundingBox())!;
  const message = (await row.locator('[data-col="message"]').boundingBox())!;
  expect(pathCell.width, `${view}: path column`).toBeGreaterThanOrEqual(100);
  expect(message.width, `${view}: message column`).toBeGreaterThanOrEqual(100);
  expect(message.x + message.width, `${view}: the message is inside the table`).toBeLessThanOrEqual(table.x + table.width);
}
