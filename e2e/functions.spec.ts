import fs from 'node:fs';
import type { Page } from '@playwright/test';
import type { InvocationStatsRow, SourceListing } from '../contract/api-types.ts';
import { BUSY } from './support/fixture-data.ts';
import { expect, num, test, waitForEndpoint, type RunningServer } from './support/fixtures.ts';

/** The busy project's function ids, busiest first, as /api/sources lists them. */
async function functionIds(server: RunningServer): Promise<string[]> {
  const sources = await server.api<SourceListing[]>('sources');
  const relay = sources.find((s) => s.source === 'deno-relay-logs')!;
  return relay.functionIds.filter((f) => f.project === BUSY).sort((a, b) => b.count - a.count).map((f) => f.functionId);
}

const DIR = 'artifacts/screenshots';

/** Hovers a chart's plot near its right edge (the newest buckets) and returns its tooltip. */
async function hoverChart(page: Page, testId: string, fromRight = 40) {
  const card = page.getByTestId(testId);
  // Centred, so the whole chart and its tooltip are in view (and in screenshots).
  await card.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  const tip = card.getByTestId('chart-tooltip');
  // Again until the tooltip shows: after a viewport change the chart is re-laid out a moment
  // later, and a move measured against the old layout can miss it (seen once on a busy machine).
  await expect(async () => {
    const box = (await card.locator('.recharts-surface').boundingBox())!;
    // From outside the chart, so the move always enters it (a pointer already there sends no event).
    await page.mouse.move(0, 0);
    await page.mouse.move(box.x + box.width - fromRight, box.y + box.height / 2);
    await expect(tip).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 10_000 });
  return tip;
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
    const chart = page.getByTestId('chart-invocations').locator('.recharts-cartesian-grid');
    const box = (await chart.boundingBox())!;
    // The last of 25 buckets: the current hour (UTC 15:00–16:00 = Berlin 16:00–17:00).
    await page.mouse.move(box.x + box.width - 8, box.y + box.height / 2);
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

  // Defect 8: hour and day buckets come from sketches; only second buckets are exact.
  test('the execution tooltip says p95/p99 are approximate for 1 day (hour sketches) and exact for 5 min (second buckets)', async ({ page, open }) => {
    await open(`/functions?project=${BUSY}&interval=1day`);
    let tip = await hoverChart(page, 'chart-execution');
    await expect(tip.getByTestId('tooltip-note')).toHaveAttribute('data-kind', 'approximate');
    await expect(tip.getByTestId('tooltip-note')).toHaveText('p95/p99 approximate (±1%) · from hour sketches');
    await expect(tip).not.toContainText('exact');
    await expect(page.getByTestId('execution-accuracy')).toHaveText('p95/p99 approximate (±1%) · from hour sketches');

    await page.getByTestId('interval').getByRole('radio', { name: '7 days' }).click();
    await expect(page.getByTestId('execution-accuracy')).toHaveText('p95/p99 approximate (±1%) · from day sketches');

    await page.getByTestId('interval').getByRole('radio', { name: '5 min', exact: true }).click();
    await expect(page.getByTestId('window')).toContainText('301 buckets');
    tip = await hoverChart(page, 'chart-execution');
    await expect(tip.getByTestId('tooltip-note')).toHaveAttribute('data-kind', 'exact');
    await expect(tip.getByTestId('tooltip-note')).toHaveText('p95/p99 exact (nearest rank)');
    // 5 min buckets are seconds: the range is written to the second.
    await expect(tip.locator('.chart-tooltip__range')).toHaveText(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} – \d{2}:\d{2}:\d{2}$/);

    await page.getByTestId('interval').getByRole('radio', { name: '15 min' }).click();
    await expect(page.getByTestId('execution-accuracy')).toHaveText('p95/p99 approximate (±1%) · from minute sketches');
  });

  // Defect 9: the pickers' counts are every stored record, not the window's.
  test('the project and function pickers label their counts as all-time', async ({ page, open, server }) => {
    const sources = await server.api<SourceListing[]>('sources');
    const relay = sources.find((s) => s.source === 'deno-relay-logs')!;
    const project = relay.projects.find((p) => p.ref === BUSY)!;
    const fn = relay.functionIds.filter((f) => f.project === BUSY).sort((a, b) => b.count - a.count)[0]!;
    await open(`/functions?project=${BUSY}&interval=1day`);
    await expect(page.getByTestId('project-picker').locator(`option[value="${BUSY}"]`)).toHaveText(`${BUSY} · ${project.count.toLocaleString('en-US')} all time`);
    await expect(page.getByTestId('project-picker')).toHaveAttribute('title', /invocations of all time/);
    await expect(page.getByTestId('function-picker').locator(`option[value="${fn.functionId}"]`)).toHaveText(new RegExp(`${fn.functionId} · ${fn.count.toLocaleString('en-US')} all time$`));
    // The one-day window holds fewer invocations than the store: the labels must not pass for it.
    const rows = await server.endpoint<InvocationStatsRow>('functions.invocation-stats', { project: BUSY, interval: '1day' });
    expect(sum(rows, 'count')).toBeLessThan(project.count);
  });

  // Defect 11: every legend entry is a toggle, by mouse and by keyboard.
  test('legends toggle their series with the keyboard and the mouse, on both charts', async ({ page, open }) => {
    await open(`/functions?project=${BUSY}&interval=1day`);
    const exec = page.getByTestId('chart-execution');
    const legend = page.getByTestId('legend-execution');
    const lines = exec.locator('.recharts-line-curve');
    await expect(lines).toHaveCount(4);
    const avg = legend.getByRole('button', { name: 'avg', exact: true });
    const p95 = legend.getByRole('button', { name: 'p95', exact: true });
    await expect(p95).toHaveAttribute('aria-pressed', 'true');
    // Reached with Tab from the entry before it, toggled with Enter, then Space.
    await avg.focus();
    await page.keyboard.press('Tab');
    await expect(p95).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(p95).toHaveAttribute('aria-pressed', 'false');
    await expect(lines).toHaveCount(3);
    await page.keyboard.press('Space');
    await expect(p95).toHaveAttribute('aria-pressed', 'true');
    await expect(lines).toHaveCount(4);
    await p95.click();
    await expect(p95).toHaveAttribute('aria-pressed', 'false');
    await expect(lines).toHaveCount(3);
    await p95.click();
    await expect(lines).toHaveCount(4);

    // The invocations chart's legend behaves the same.
    const bars = page.getByTestId('chart-invocations').locator('.recharts-bar');
    const invLegend = page.getByTestId('legend-invocations');
    const ok = invLegend.getByRole('button', { name: 'OK', exact: true });
    const errors = invLegend.getByRole('button', { name: /^Errors/ });
    await expect(errors).toHaveText('Errors (≥ 400)');
    await expect(bars).toHaveCount(2);
    await errors.click();
    await expect(errors).toHaveAttribute('aria-pressed', 'false');
    await expect(bars).toHaveCount(1);
    // The last series shown stays on, whichever way it is pressed.
    await ok.focus();
    await page.keyboard.press('Space');
    await expect(ok).toHaveAttribute('aria-pressed', 'true');
    await expect(ok).toHaveAttribute('aria-disabled', 'true');
    await expect(bars).toHaveCount(1);
    await errors.focus();
    await page.keyboard.press('Enter');
    await expect(errors).toHaveAttribute('aria-pressed', 'true');
    await expect(bars).toHaveCount(2);
  });

  for (const scheme of ['light', 'dark'] as const) {
    test(`screenshots with the execution tooltip at 1440×900 and 1024×700 — ${scheme}`, async ({ page, open }) => {
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(String(e)));
      await open(`/functions?project=${BUSY}&interval=1day`);
      await expect(page.getByTestId('stat-p99-value')).not.toHaveText('…');
      for (const [width, height] of [[1440, 900], [1024, 700]] as const) {
        await page.setViewportSize({ width, height });
        const tip = await hoverChart(page, 'chart-execution', 60);
        await expect(tip.getByTestId('tooltip-note')).toBeVisible();
        await page.screenshot({ path: `${DIR}/functions-tooltip-${width}x${height}-${scheme}.png` });
        await page.getByTestId('legend-execution').getByRole('button', { name: 'max', exact: true }).click();
        await hoverChart(page, 'chart-invocations', 60);
        await page.screenshot({ path: `${DIR}/functions-legend-${width}x${height}-${scheme}.png` });
        await page.getByTestId('legend-execution').getByRole('button', { name: 'max', exact: true }).click();
      }
      expect(problems).toEqual([]);
    });
  }
});
