import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import type { ApiCountsRow } from '../contract/api-types.ts';
import { BUSY, nowMicros, writeDemoExports } from './support/fixture-data.ts';
import { expect, num, test, waitForEndpoint, inEachLook } from './support/fixtures.ts';

const NOW = nowMicros();
const HOUR = 3_600_000_000;
const DAY = 24 * HOUR;

interface EdgeRecord {
  id: string;
  timestamp: number;
  project: string;
  url: string;
  path: string;
}

/** The edge records the worker's server imported, read from the demo export itself (same seed and clock). */
let edge: EdgeRecord[] = [];
test.beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'usage-expect-'));
  const files = await writeDemoExports(dir);
  edge = fs
    .readFileSync(files.find((f) => path.basename(f) === 'edge_logs.ndjson')!, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const r = JSON.parse(l) as { id: string; timestamp: number; project: string; metadata: { request: { url: string } } };
      return { id: r.id, timestamp: r.timestamp, project: r.project, url: r.metadata.request.url, path: new URL(r.metadata.request.url).pathname };
    });
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Moves the mouse over bucket `i` of `n` (the plot starts after the 48 px Y axis and ends 12 px before the edge). */
async function hoverBucket(page: Page, i: number, n: number) {
  const box = (await page.getByTestId('chart-usage').locator('.recharts-surface').boundingBox())!;
  const plotLeft = box.x + 48;
  const plotWidth = box.width - 48 - 12;
  const x = plotLeft + (plotWidth * (i + 0.5)) / n;
  const y = box.y + box.height * 0.5;
  await page.mouse.move(x, y);
  return { x, y };
}

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

  test('a bad regex shows the error panel naming the field the user sees', async ({ page, open }) => {
    await open(`/usage?project=${BUSY}&interval=daily`);
    await expect(page.getByTestId('total-rest-value')).toBeVisible();
    const req = waitForEndpoint(page, 'usage.api-counts', { project: 'alpha(' });
    await page.getByTestId('usage-regex').fill('alpha(');
    await page.getByTestId('usage-regex').press('Enter');
    await req;
    const panel = page.getByTestId('error-panel');
    await expect(panel).toBeVisible();
    await expect(panel.getByTestId('error-location')).toHaveText('URL pattern');
    await expect(panel).toContainText('URL pattern is not a valid RE2 pattern');
    await expect(panel).toContainText('400');
    // And it is in the link: a reload shows the same error.
    await expect(page).toHaveURL(/regex=alpha%28/);
  });

  // An empty URL pattern no longer reaches the endpoint: it follows the project again,
  // as readability.spec.ts checks with the copy-as-curl command.

  test('clicking a bucket opens Logs at that bucket’s time range', async ({ page, open }) => {
    await open(`/usage?project=${BUSY}&interval=hourly`);
    await expect(page.getByTestId('chart-usage').locator('.recharts-surface')).toBeVisible();
    // Two hourly buckets (14:00 and 15:00 UTC); the second is the current hour. The explorer's start is exclusive.
    const req = page.waitForRequest((r) => {
      const u = new URL(r.url());
      return u.pathname === '/api/logs' && u.searchParams.get('start') === '2026-03-14T14:59:59.999999Z' && u.searchParams.get('end') === '2026-03-14T15:59:59.999999Z';
    });
    // As a user does: hover (the tooltip names the bucket), then click.
    const at = await hoverBucket(page, 1, 2);
    await expect(page.getByTestId('chart-tooltip')).toContainText('Click, or press Enter, to open these requests in Logs');
    await page.mouse.click(at.x, at.y);
    await req;
    await expect(page).toHaveURL(/\/logs\?.*range=custom/);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
  });

  test('a bar opens Logs with the URL pattern kept, and shows only the requests it counted', async ({ page, open, server }) => {
    const pattern = `${BUSY}.*/storage/`;
    await open(`/usage?project=${BUSY}&interval=hourly&regex=${encodeURIComponent(pattern)}`);
    // The 15:00 UTC bucket, counted here from the export: URLs the pattern matches, from 15:00 to 16:00.
    const re = new RegExp(pattern);
    const start = Date.UTC(2026, 2, 14, 15) * 1000;
    const matching = edge.filter((r) => re.test(r.url) && r.timestamp >= start && r.timestamp < start + HOUR);
    const storage = matching.filter((r) => r.path.includes('/storage')).length;
    expect(storage).toBeGreaterThan(0);
    // The API agrees with the export on this bucket.
    const row = (await server.endpoint<ApiCountsRow>('usage.api-counts', { project: pattern, interval: 'hourly' })).find((r) => r.timestamp === '2026-03-14T15:00:00');
    expect(row?.total_storage_requests).toBe(storage);

    const at = await hoverBucket(page, 1, 2);
    await expect(page.getByTestId('chart-tooltip')).toContainText(`Storage${storage.toLocaleString('en-US')} requests`);
    const req = page.waitForRequest((r) => {
      const u = new URL(r.url());
      return u.pathname === '/api/logs' && u.searchParams.get('q') === pattern && u.searchParams.get('regex') === '1' && u.searchParams.get('source') === 'cloudflare.logs.prod';
    });
    await page.mouse.click(at.x, at.y);
    await req;
    await expect(page.getByTestId('logs-page')).toHaveAttribute('data-mode', 'explore');
    await expect(page.getByTestId('match-total')).toHaveText(`${matching.length.toLocaleString('en-US')} matching ${matching.length === 1 ? 'record' : 'records'}`);
    // No /rest or /graphql rows: every row's path is a storage path.
    const paths = await page.locator('[data-testid="log-row"] [data-col="path"]').allTextContents();
    expect(paths.length).toBeLessThanOrEqual(matching.length);
    expect(paths.length).toBeGreaterThan(0);
    for (const p of paths) expect(p).toContain('/storage/');
    await page.screenshot({ path: 'artifacts/screenshots/fx-usage-jump-light.png' });
  });

  test('bars are activatable from the keyboard (arrows move, Enter and Space open)', async ({ page, open }) => {
    const pattern = `${BUSY}.*/storage/`;
    await open(`/usage?project=${BUSY}&interval=hourly&regex=${encodeURIComponent(pattern)}`);
    const surface = page.getByTestId('chart-usage').locator('.recharts-surface');
    await expect(surface).toBeVisible();
    await surface.focus();
    await page.keyboard.press('ArrowRight');
    const tooltip = page.getByTestId('chart-tooltip');
    await expect(tooltip).toBeVisible();
    const range = (await tooltip.locator('.chart-tooltip__sub').textContent()) ?? '';
    // The tooltip names the bucket Enter opens: its UTC start hour.
    const hour = /(\d\d):00 – /.exec(range)?.[1];
    expect(hour === '14' || hour === '15').toBe(true);
    const end = hour === '14' ? '2026-03-14T14:59:59.999999Z' : '2026-03-14T15:59:59.999999Z';
    const req = page.waitForRequest((r) => {
      const u = new URL(r.url());
      return u.pathname === '/api/logs' && u.searchParams.get('end') === end && u.searchParams.get('q') === pattern;
    });
    await page.keyboard.press('Enter');
    await req;
    await expect(page).toHaveURL(/\/logs\?/);

    // Space does the same.
    await page.goBack();
    await expect(surface).toBeVisible();
    await surface.focus();
    await page.keyboard.press('ArrowRight');
    await expect(tooltip).toBeVisible();
    await page.keyboard.press('Space');
    await expect(page).toHaveURL(/\/logs\?.*regex=1/);
  });

  test('the partial first day is labelled from the window’s start and marked partial', async ({ page, open, server }) => {
    await open(`/usage?project=${BUSY}&interval=daily`);
    await expect(page.getByTestId('chart-usage').locator('.recharts-surface')).toBeVisible();
    // now − 7 days = 2026-03-07 15:09:26 UTC; the last day ends 2026-03-15 00:00 UTC. Day buckets
    // are UTC days, so their window is written in UTC ("(UTC days)" over local times).
    await expect(page.getByTestId('window')).toHaveText('· 2026-03-07 15:09 – 2026-03-15 00:00 UTC · 8 buckets (the first from 15:09 only)');
    await hoverBucket(page, 0, 8);
    const tooltip = page.getByTestId('chart-tooltip');
    await expect(tooltip.locator('.chart-tooltip__range')).toHaveText('2026-03-07 15:09 – 2026-03-08 00:00 UTC');
    await expect(tooltip.locator('.chart-tooltip__sub')).toContainText('2026-03-07 16:09 – 2026-03-08 01:00 Europe/Berlin');
    await expect(tooltip.getByTestId('tooltip-note')).toHaveAttribute('data-kind', 'partial');
    await expect(tooltip.getByTestId('tooltip-note')).toContainText('Partial day: counts only from 15:09 UTC');
    // Its count is the records from the window's start on, as the API says, written from the export.
    const windowStart = NOW - 7 * DAY;
    const dayEnd = Date.UTC(2026, 2, 8) * 1000;
    const rest = edge.filter((r) => r.url.includes(BUSY) && r.path.includes('/rest') && r.timestamp >= windowStart && r.timestamp < dayEnd).length;
    const row = (await server.endpoint<ApiCountsRow>('usage.api-counts', { project: BUSY, interval: 'daily' })).find((r) => r.timestamp === '2026-03-07T00:00:00');
    expect(row?.total_rest_requests).toBe(rest);
    await expect(tooltip).toContainText(`REST${rest.toLocaleString('en-US')} requests`);
    // A whole day has no note.
    await hoverBucket(page, 3, 8);
    await expect(tooltip.locator('.chart-tooltip__range')).toHaveText('2026-03-10 00:00 – 2026-03-11 00:00 UTC');
    await expect(tooltip.getByTestId('tooltip-note')).toHaveCount(0);
  });

  test('the legend toggles its series, by click and by keyboard', async ({ page, open }) => {
    await open(`/usage?project=${BUSY}&interval=daily`);
    const legend = page.getByTestId('legend-usage');
    const bars = page.getByTestId('chart-usage').locator('.recharts-bar');
    await expect(bars).toHaveCount(4);
    const storage = legend.getByRole('button', { name: 'Storage' });
    await expect(storage).toHaveAttribute('aria-pressed', 'true');
    await storage.click();
    await expect(storage).toHaveAttribute('aria-pressed', 'false');
    await expect(bars).toHaveCount(3);
    // The totals are the API's and stay.
    expect(num(await page.getByTestId('total-storage-value').textContent())).toBeGreaterThan(0);
    // The tooltip lists the families drawn, not the hidden one.
    const n = await bars.first().locator('.recharts-bar-rectangle').count();
    const tooltip = page.getByTestId('chart-tooltip');
    await expect(async () => {
      await hoverBucket(page, n - 1, n);
      await expect(tooltip).toBeVisible({ timeout: 500 });
    }).toPass();
    await expect(tooltip).toContainText('REST');
    await expect(tooltip).toContainText('Auth');
    await expect(tooltip).not.toContainText('Storage');
    const auth = legend.getByRole('button', { name: 'Auth' });
    await auth.focus();
    await page.keyboard.press('Enter');
    await expect(auth).toHaveAttribute('aria-pressed', 'false');
    await expect(bars).toHaveCount(2);
    await page.keyboard.press('Space');
    await expect(auth).toHaveAttribute('aria-pressed', 'true');
    await expect(bars).toHaveCount(3);
  });

  test('screenshots: the partial first day and the legend, 1440×900 and 1024×700, light and dark', async ({ page, open }) => {
    await inEachLook(page, async ({ scheme, w, h }) => {
      await open(`/usage?project=${BUSY}&interval=daily`);
      await expect(page.getByTestId('chart-usage').locator('.recharts-surface')).toBeVisible();
      await page.getByTestId('legend-usage').getByRole('button', { name: 'Realtime' }).click();
      await hoverBucket(page, 0, 8);
      await expect(page.getByTestId('tooltip-note')).toBeVisible();
      await page.screenshot({ path: `artifacts/screenshots/fx-usage-partial-${w}-${scheme}.png` });
      // A cleared pattern follows the project again: no error panel.
      await page.getByTestId('usage-regex').fill('');
      await page.getByTestId('usage-regex').press('Enter');
      await expect(page).not.toHaveURL(/regex=/);
      await expect(page.getByTestId('error-panel')).toHaveCount(0);
      await page.screenshot({ path: `artifacts/screenshots/fx-usage-empty-pattern-${w}-${scheme}.png` });
    });
  });
});
