/**
 * Fields inside the records against the real server and the demo data: the field
 * picker, field chips, field facets, "filter for this value / exclude it" in the detail panel,
 * the column chooser, wrap / dense rows, UTC / local / relative times, and Back through field
 * filters. Expected figures are computed here from the demo export files themselves (read with
 * this file's own reading of a dotted path), not by the renderer's code or the API under test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page, Request } from '@playwright/test';
import { BUSY, nowMicros, writeDemoExports } from './support/fixture-data.ts';
import { expect, test } from './support/fixtures.ts';

const NOW = nowMicros();
const HOUR = 3_600_000_000;
const DAY = 24 * HOUR;
const SHOTS = 'artifacts/screenshots';

interface Raw {
  id: string;
  timestamp: number;
  project?: string;
  event_message: string;
  metadata: unknown;
}

let edge: Raw[] = [];

test.beforeAll(async () => {
  // The same demo set the worker's server imported (same seed, records and clock).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'explorer-fields-expect-'));
  const files = await writeDemoExports(dir);
  const file = files.find((f) => path.basename(f) === 'edge_logs.ndjson')!;
  edge = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Raw);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A dotted path's value as text (one-element arrays looked through; absent or null = null). */
function at(r: Raw, dotted: string): string | null {
  let v: unknown = r.metadata;
  for (const key of dotted.split('.')) {
    while (Array.isArray(v)) v = v.length === 1 ? v[0] : undefined;
    if (v === null || typeof v !== 'object' || !(key in v)) return null;
    v = (v as Record<string, unknown>)[key];
  }
  while (Array.isArray(v) && v.length === 1) v = v[0];
  if (v === null || v === undefined) return null;
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** BUSY's edge records in (start, end], newest first. */
function edgeIn(start: number, end: number, keep: (r: Raw) => boolean = () => true): Raw[] {
  return edge.filter((r) => r.project === BUSY && r.timestamp > start && r.timestamp <= end && keep(r)).sort((a, b) => b.timestamp - a.timestamp);
}

/** Top values as the facets rank them: count descending, ties by the value's code units. */
function topValues(rows: Raw[], dotted: string): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const r of rows) {
    const v = at(r, dotted);
    if (v !== null) counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

async function expectTotal(page: Page, expected: number) {
  await expect(page.locator('.ex-results.is-refetching')).toHaveCount(0);
  await expect(page.getByTestId('match-total')).toHaveText(`${expected.toLocaleString('en-US')} matching ${expected === 1 ? 'record' : 'records'}`);
}

/** The next request to an /api/logs route (`''` = the page of records) carrying exactly these `field` conditions. */
function fieldRequest(page: Page, route: '' | '/histogram' | '/facets', fields: string[]): Promise<Request> {
  return page.waitForRequest((req) => {
    const u = new URL(req.url());
    return u.pathname === `/api/logs${route}` && JSON.stringify(u.searchParams.getAll('field')) === JSON.stringify(fields);
  });
}

const COUNTRY = 'request.headers.cf_ipcountry';

/** Opens the picker from the chips row, finds a field and opens its form. */
async function pickField(page: Page, search: string, dotted: string, opener = 'field-picker') {
  await page.getByTestId(`${opener}-open`).click();
  const picker = page.getByTestId(opener);
  await expect(picker).toBeVisible();
  await picker.getByTestId('field-search').fill(search);
  await picker.locator(`[data-testid="field-item"][data-path="${dotted}"] .fp__row`).click();
  await expect(picker.getByTestId('field-form')).toBeVisible();
  return picker;
}

test.describe('Explorer: fields inside the records', () => {
  test('the picker lists the fields the records carry; a field becomes a filter, flipped to exclude; a number bound', async ({ page, open }) => {
    const day = edgeIn(NOW - DAY, NOW);
    const de = day.filter((r) => at(r, COUNTRY) === 'DE');
    expect(de.length).toBeGreaterThan(5);
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h`);
    await expectTotal(page, day.length);

    await page.getByTestId('field-picker-open').click();
    const picker = page.getByTestId('field-picker');
    // Every path the newest records carry, with its type and examples.
    const item = picker.locator(`[data-testid="field-item"][data-path="${COUNTRY}"]`);
    await expect(item.locator('.fp__type')).toHaveText('text');
    await expect(item.locator('.fp__examples')).toContainText('DE');
    await expect(picker.locator('[data-testid="field-item"][data-path="response.origin_time"] .fp__type')).toHaveText('number');
    // Every path with few values per partition is indexed: the country, and here the origin time too.
    await expect(item.getByTestId('field-indexed')).toBeVisible();
    await expect(picker.locator('[data-testid="field-item"][data-path="response.origin_time"]').getByTestId('field-indexed')).toBeVisible();
    // The search narrows the list to the paths holding every word.
    await picker.getByTestId('field-search').fill('ipcountry');
    await expect(picker.getByTestId('field-item')).toHaveCount(1);
    await item.locator('.fp__row').click();
    await expect(picker.getByTestId('field-op')).toHaveValue('is');
    await picker.getByTestId('field-value').fill('DE');
    const sent = fieldRequest(page, '/histogram', [`${COUNTRY}:DE`]);
    await picker.getByTestId('field-add-filter').click();
    await sent;
    await expect(picker).toHaveCount(0);
    await expect(page).toHaveURL(new RegExp(`[?&]field=${COUNTRY.replace(/\./g, '\\.')}%3ADE(&|$)`));
    const chip = page.getByTestId('field-chip');
    await expect(chip).toHaveCount(1);
    await expect(chip).toHaveAttribute('data-op', 'is');
    await expect(chip.locator('.ex-chip__body')).toHaveAccessibleName(`${COUNTRY} is DE: click for is not`);
    await expectTotal(page, de.length);
    await expect(page.getByTestId('log-row').first()).toHaveAttribute('data-id', de[0]!.id);

    // A click flips it to "is not": records without the field pass.
    await chip.locator('.ex-chip__body').click();
    await expect(chip).toHaveAttribute('data-op', 'not');
    await expect(page).toHaveURL(/field=request\.headers\.cf_ipcountry%3A!DE/);
    await expectTotal(page, day.length - de.length);

    // ≥ on a number: both conditions hold.
    const picker2 = await pickField(page, 'origin_time', 'response.origin_time');
    await picker2.getByTestId('field-op').selectOption('gte');
    await picker2.getByTestId('field-value').fill('abc');
    await picker2.getByTestId('field-add-filter').click();
    await expect(picker2.locator('.field-error')).toHaveText('Enter a number');
    await picker2.getByTestId('field-value').fill('150');
    await picker2.getByTestId('field-add-filter').click();
    await expect(page.getByTestId('field-chip')).toHaveCount(2);
    await expect(page.getByTestId('field-chip').nth(1).locator('.ex-chip__body')).toHaveAccessibleName('response.origin_time ≥ 150');
    const slowNotDe = day.filter((r) => at(r, COUNTRY) !== 'DE' && Number(at(r, 'response.origin_time')) >= 150);
    expect(slowNotDe.length).toBeGreaterThan(0);
    await expectTotal(page, slowNotDe.length);

    // "Clear filters" takes the field chips too.
    await page.getByTestId('chips-clear').click();
    await expect(page.getByTestId('field-chip')).toHaveCount(0);
    await expectTotal(page, day.length);
  });

  test('a facet on a field: its top values with exact counts; a click includes, − excludes, × removes the facet', async ({ page, open }) => {
    const day = edgeIn(NOW - DAY, NOW);
    const top = topValues(day, 'request.cf.country');
    expect(top.length).toBeGreaterThan(3);
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h`);
    await expectTotal(page, day.length);

    // Added from the sidebar's own picker.
    const picker = await pickField(page, 'cf country', 'request.cf.country', 'facet-picker');
    await picker.getByTestId('field-add-facet').click();
    await expect(picker.getByTestId('field-add-facet')).toHaveText('✓ Facet');
    await page.keyboard.press('Escape');
    await expect(picker).toHaveCount(0);
    await expect(page).toHaveURL(/[?&]facets=request\.cf\.country(&|$)/);
    const facet = page.locator('[data-testid="field-facet"][data-path="request.cf.country"]');
    await expect(facet).toBeInViewport();
    const rows = facet.getByTestId('field-facet-value');
    await expect(rows).toHaveCount(Math.min(10, top.length));
    for (let i = 0; i < Math.min(3, top.length); i++) {
      await expect(rows.nth(i)).toHaveAttribute('data-value', top[i]![0]);
      await expect(rows.nth(i).locator('.ex-facet__count')).toHaveText(top[i]![1].toLocaleString('en-US'));
    }

    // A click includes the value (a chip); the facet then counts only it.
    const [first, n1] = top[0]!;
    await facet.locator(`[data-testid="field-facet-value"][data-value="${first}"] .ex-facet__value`).click();
    await expect(page.locator(`[data-testid="field-chip"][data-path="request.cf.country"][data-value="${first}"]`)).toHaveAttribute('data-op', 'is');
    await expectTotal(page, n1);
    await expect(rows).toHaveCount(1);
    // Again removes it; − on the second value excludes it.
    await facet.locator(`[data-testid="field-facet-value"][data-value="${first}"] .ex-facet__value`).click();
    await expect(page.getByTestId('field-chip')).toHaveCount(0);
    await expectTotal(page, day.length);
    const [second, n2] = top[1]!;
    await facet.locator(`[data-testid="field-facet-value"][data-value="${second}"]`).getByTestId('field-facet-exclude').click();
    await expect(page.locator(`[data-testid="field-chip"][data-value="${second}"]`)).toHaveAttribute('data-op', 'not');
    await expectTotal(page, day.length - n2);

    // × takes the facet away; the chip stays.
    await facet.getByTestId('field-facet-remove').click();
    await expect(page.getByTestId('field-facet')).toHaveCount(0);
    await expect(page).not.toHaveURL(/facets=/);
    await expect(page.getByTestId('field-chip')).toHaveCount(1);
  });

  test('the detail panel’s JSON: + filters for a value, − excludes one, with the path the server reads', async ({ page, open }) => {
    const hour = edgeIn(NOW - HOUR, NOW);
    const record = hour[0]!;
    const country = at(record, COUNTRY)!;
    const method = at(record, 'request.method')!;
    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await expectTotal(page, hour.length);
    await page.getByTestId('log-row').first().click();
    const detail = page.getByTestId('log-detail');
    await expect(detail.getByTestId('detail-id')).toHaveText(record.id);
    await detail.getByRole('button', { name: 'Expand all' }).click();

    // The headers sit in one-element arrays (the query shape): the path looks through them.
    const line = detail.locator('.json-line', { hasText: '"cf_ipcountry":' });
    await line.hover();
    await expect(line.getByTestId('json-filter')).toHaveAttribute('data-path', COUNTRY);
    await line.getByTestId('json-filter-include').click();
    await expect(page.locator(`[data-testid="field-chip"][data-path="${COUNTRY}"]`)).toHaveAttribute('data-value', country);
    const sameCountry = hour.filter((r) => at(r, COUNTRY) === country);
    await expectTotal(page, sameCountry.length);

    // The first record still matches; − on its method excludes that method.
    await page.getByTestId('log-row').first().click();
    await expect(detail.getByTestId('detail-id')).toHaveText(record.id);
    const methodLine = detail.locator('.json-line', { hasText: '"method":' }).first();
    await methodLine.hover();
    await expect(methodLine.getByTestId('json-filter')).toHaveAttribute('data-path', 'request.method');
    await methodLine.getByTestId('json-filter-exclude').click();
    await expect(page.locator('[data-testid="field-chip"][data-path="request.method"]')).toHaveAttribute('data-op', 'not');
    await expect(page).toHaveURL(new RegExp(`field=request\\.method%3A!${method}`));
    await expectTotal(page, sameCountry.filter((r) => at(r, 'request.method') !== method).length);
  });

  test('the column chooser: a field as a column, hide, move, widths, kept in the URL; wrap and dense; UTC and relative times', async ({ page, open }) => {
    const hour = edgeIn(NOW - HOUR, NOW);
    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await expectTotal(page, hour.length);
    const headers = page.getByTestId('logs-table').getByRole('columnheader');
    await expect(headers).toHaveText(['Time', 'Status', 'Method', 'Path', 'Event message']);

    await page.getByTestId('column-chooser-open').click();
    const chooser = page.getByTestId('column-chooser');
    await chooser.getByTestId('column-field-search').fill('cf.city');
    await chooser.locator('[data-testid="column-field-add"][data-path="request.cf.city"]').click();
    // A new column goes before the message, which fills the row.
    await expect(headers).toHaveText(['Time', 'Status', 'Method', 'Path', 'cf.city', 'Event message']);
    const firstRow = page.getByTestId('log-row').first();
    await expect(firstRow.locator('[data-col="field"]')).toHaveText(at(hour[0]!, 'request.cf.city')!);
    // Hide the method; move the city before the path; give the path a width.
    await chooser.locator('[data-testid="column-row"][data-col-id="method"]').getByTestId('column-remove').click();
    await chooser.locator('[data-testid="column-row"][data-col-id="metadata.request.cf.city"]').getByTestId('column-up').click();
    await chooser.locator('[data-testid="column-row"][data-col-id="path"]').getByTestId('column-width').fill('220');
    await chooser.locator('[data-testid="column-row"][data-col-id="path"]').getByTestId('column-width').press('Enter');
    await expect(headers).toHaveText(['Time', 'Status', 'cf.city', 'Path', 'Event message']);
    await expect(page).toHaveURL(/cols=timestamp,status,metadata\.request\.cf\.city,path%3A220,event_message/);
    await expect(page.locator('[role="columnheader"][data-col-id="path"]')).toHaveJSProperty('offsetWidth', 220);

    // Wrap and dense.
    await chooser.getByTestId('rows-dense').click();
    await expect(page.getByTestId('logs-table')).toHaveClass(/ex-table--dense/);
    expect((await firstRow.boundingBox())!.height).toBe(24);
    await chooser.getByTestId('rows-wrap').click();
    await expect(page.getByTestId('logs-table')).toHaveClass(/ex-table--wrap/);
    await expect(page).toHaveURL(/wrap=1&dense=1/);
    // A long message now takes more than one line.
    const long = page.locator('[data-testid="log-row"]').filter({ has: page.locator('[data-col="message"]') }).first();
    expect((await long.boundingBox())!.height).toBeGreaterThan(24);

    // Times: UTC, then relative to the server's clock.
    const utc = new Date(Math.floor(hour[0]!.timestamp / 1000)).toISOString().replace('T', ' ').slice(0, 23);
    await chooser.getByTestId('time-mode').getByRole('radio', { name: 'UTC' }).click();
    await expect(headers.first()).toHaveText('Time (UTC)');
    await expect(firstRow.locator('.ex-cell-time')).toHaveText(utc);
    await expect(page.getByTestId('logs-view-description')).toContainText('times in UTC');
    await chooser.getByTestId('time-mode').getByRole('radio', { name: 'Relative' }).click();
    const ago = NOW - hour[0]!.timestamp;
    expect(ago).toBeLessThan(HOUR);
    const s = Math.floor(ago / 1_000_000);
    const agoText = ago < 10_000_000 ? `${(Math.floor(ago / 100_000) / 10).toFixed(1)} s ago` : ago < 60_000_000 ? `${s} s ago` : `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''} ago`;
    await expect(firstRow.locator('.ex-cell-time')).toHaveText(agoText);
    await chooser.getByTestId('time-mode').getByRole('radio', { name: 'Local' }).click();
    await page.keyboard.press('Escape');
    await expect(chooser).toHaveCount(0);

    // A reload keeps the layout: it is in the URL.
    await page.reload();
    await expect(headers).toHaveText(['Time', 'Status', 'cf.city', 'Path', 'Event message']);
    await expect(page.getByTestId('logs-table')).toHaveClass(/ex-table--wrap/);
    // The table's CSV carries the field column by its path.
    const csvDownload = page.waitForEvent('download');
    await page.getByRole('button', { name: 'CSV', exact: true }).click();
    const csv = fs.readFileSync((await (await csvDownload).path())!, 'utf8').trim().split('\r\n');
    expect(csv[0]).toBe('id,timestamp,timestamp_iso,status,method,path,request.cf.city,event_message,metadata');
    expect(csv[1]!.startsWith(`${hour[0]!.id},`)).toBe(true);
    expect(csv[1]).toContain(`,${at(hour[0]!, 'request.cf.city')},`);

    // Dragging a header's edge sets its width.
    await chooser.waitFor({ state: 'detached' });
    await page.getByTestId('column-chooser-open').click();
    await page.getByTestId('rows-wrap').click();
    await page.getByTestId('rows-dense').click();
    await page.keyboard.press('Escape');
    const city = page.locator('[role="columnheader"][data-col-id="metadata.request.cf.city"]');
    const before = (await city.boundingBox())!;
    const handle = (await city.getByTestId('column-resize').boundingBox())!;
    await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
    await page.mouse.down();
    await page.mouse.move(handle.x + handle.width / 2 + 30, handle.y + handle.height / 2, { steps: 4 });
    await page.mouse.move(handle.x + handle.width / 2 + 60, handle.y + handle.height / 2, { steps: 4 });
    await page.mouse.up();
    await expect(page).toHaveURL(new RegExp(`metadata\\.request\\.cf\\.city%3A${Math.round(before.width) + 60}`));

    // "Reset" gives the source's own columns back.
    await page.getByTestId('column-chooser-open').click();
    await page.getByTestId('columns-reset').click();
    await expect(headers).toHaveText(['Time', 'Status', 'Method', 'Path', 'Event message']);
    await expect(page).not.toHaveURL(/cols=/);
  });

  test('Back restores the previous field filters step by step, and Forward again', async ({ page, open }) => {
    const day = edgeIn(NOW - DAY, NOW);
    const de = day.filter((r) => at(r, COUNTRY) === 'DE');
    const deGet = de.filter((r) => at(r, 'request.method') === 'GET');
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h`);
    await expectTotal(page, day.length);

    const picker = await pickField(page, 'ipcountry', COUNTRY);
    await picker.getByTestId('field-value').fill('DE');
    await picker.getByTestId('field-add-filter').click();
    await expectTotal(page, de.length);
    const picker2 = await pickField(page, 'request.method', 'request.method');
    await picker2.getByTestId('field-value').fill('GET');
    await picker2.getByTestId('field-add-filter').click();
    await expectTotal(page, deGet.length);
    await page.locator(`[data-testid="field-chip"][data-path="${COUNTRY}"] .ex-chip__body`).click();
    await expect(page.locator(`[data-testid="field-chip"][data-path="${COUNTRY}"]`)).toHaveAttribute('data-op', 'not');

    await page.goBack();
    await expect(page.locator(`[data-testid="field-chip"][data-path="${COUNTRY}"]`)).toHaveAttribute('data-op', 'is');
    await expect(page.getByTestId('field-chip')).toHaveCount(2);
    await expectTotal(page, deGet.length);
    await page.goBack();
    await expect(page.getByTestId('field-chip')).toHaveCount(1);
    await expectTotal(page, de.length);
    await page.goBack();
    await expect(page.getByTestId('field-chip')).toHaveCount(0);
    await expectTotal(page, day.length);
    await page.goForward();
    await expect(page.getByTestId('field-chip')).toHaveCount(1);
    await expectTotal(page, de.length);
  });

  test('screenshots: the field picker, field chips with a field facet, the column chooser — 3 sizes, light and dark', async ({ page, open }) => {
    test.setTimeout(120_000);
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    const url = `/logs?project=${BUSY}&source=edge_logs&range=24h&field=${COUNTRY}%3A!US&field=response.origin_time%3A%3E%3D20&facets=request.cf.country&cols=timestamp,status,method,metadata.request.cf.city,path,event_message`;
    for (const scheme of ['light', 'dark'] as const) {
      for (const [w, h] of [
        [1440, 900],
        [1280, 800],
        [1024, 700],
      ] as const) {
        await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
        await page.setViewportSize({ width: w, height: h });
        await open(url);
        await expect(page.getByTestId('log-row').first()).toBeVisible();
        await expect(page.locator('.ex-results.is-refetching')).toHaveCount(0);
        await expect(page.getByTestId('field-facet-value').first()).toBeVisible();

        const picker = await pickField(page, 'country', 'request.cf.country');
        await picker.getByTestId('field-value').fill('D');
        await page.screenshot({ path: `${SHOTS}/fields-picker-${w}x${h}-${scheme}.png` });
        await page.keyboard.press('Escape');

        // Away from the chart, whose tooltip would cover the rows.
        await page.mouse.move(2, h - 2);
        await page.getByTestId('field-facet').first().scrollIntoViewIfNeeded();
        await page.screenshot({ path: `${SHOTS}/fields-chips-facet-${w}x${h}-${scheme}.png` });

        await page.getByTestId('column-chooser-open').click();
        await expect(page.getByTestId('column-chooser')).toBeVisible();
        await page.screenshot({ path: `${SHOTS}/fields-columns-${w}x${h}-${scheme}.png` });
        await page.keyboard.press('Escape');
      }
    }
    expect(problems).toEqual([]);
  });
});
