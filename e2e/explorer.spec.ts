/**
 * The Logs explorer against the real server and the demo data. Expected figures are
 * computed here from the demo export files themselves (regenerated with the fixture's seed and
 * clock), not by the renderer's code and not by the explorer API under test.
 */
import fs from 'node:fs';
import { MICROS } from '../contract/instants.ts';
import { BUSY, nowMicros, readDemoRecords, type DemoExportRecord } from './support/fixture-data.ts';
import { expect, num, test } from './support/fixtures.ts';
import type { Page } from '@playwright/test';

const NOW = nowMicros();
const { minute: MIN, hour: HOUR, day: DAY } = MICROS;
type Raw = DemoExportRecord;

interface Edge extends Raw {
  status: number;
  method: string;
  path: string;
  url: string;
}

/** The µs ISO form of a timestamp, computed without the renderer's code. */
function iso(us: number): string {
  const s = String(us);
  return `${new Date(Number(s.slice(0, -3))).toISOString().slice(0, -1)}${s.slice(-3)}Z`;
}

let edge: Edge[] = [];
let postgres: Raw[] = [];

test.beforeAll(async () => {
  const demo = await readDemoRecords<Raw>(['edge_logs', 'postgres_logs']);
  edge = demo.edge_logs!.map((r) => {
    const req = r.metadata.request as { method: string; url: string };
    const res = r.metadata.response as { status_code: number };
    return { ...r, status: res.status_code, method: req.method, url: req.url, path: new URL(req.url).pathname };
  });
  postgres = demo.postgres_logs!;
});

/** BUSY's edge records in (start, end], newest first. */
function edgeIn(start: number, end: number, keep: (r: Edge) => boolean = () => true): Edge[] {
  return edge.filter((r) => r.project === BUSY && r.timestamp > start && r.timestamp <= end && keep(r)).sort((a, b) => b.timestamp - a.timestamp);
}

const has = (text: string) => (r: Edge) => r.event_message.toLowerCase().includes(text) || r.url.toLowerCase().includes(text);

async function total(page: Page): Promise<number> {
  await expect(page.locator('.ex-results.is-refetching')).toHaveCount(0);
  await expect(page.getByTestId('match-total')).toBeVisible();
  return num(await page.getByTestId('match-total').textContent());
}

async function expectTotal(page: Page, expected: number) {
  await expect(page.getByTestId('match-total')).toHaveText(`${expected.toLocaleString('en-US')} matching ${expected === 1 ? 'record' : 'records'}`);
}

/** Centre of bucket k of the histogram's plot area (n buckets across it). */
async function bucketX(page: Page, k: number, n: number): Promise<{ x: number; y: number }> {
  const box = (await page.getByTestId('histogram-chart').locator('.recharts-cartesian-grid').boundingBox())!;
  return { x: box.x + ((k + 0.5) * box.width) / n, y: box.y + box.height / 2 };
}

test.describe('Logs explorer', () => {
  test('opens on edge requests of the last hour: the total, the status classes and the first rows agree with the export', async ({ page, open, server }) => {
    const rows = edgeIn(NOW - HOUR, NOW);
    expect(rows.length).toBeGreaterThan(50);
    await open(`/logs?project=${BUSY}`);
    await expect(page).toHaveURL(/\/logs\?project=\w+&source=edge_logs&range=1h$/);
    await expect(page.getByTestId('mode-explore')).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByTestId('logs-view-description')).toContainText('Explorer');
    await expectTotal(page, rows.length);
    for (const cls of [2, 4, 5]) {
      const n = rows.filter((r) => Math.floor(r.status / 100) === cls).length;
      if (n > 0) await expect(page.getByTestId(`legend-${cls}xx`).locator('.ex-legend__count')).toHaveText(n.toLocaleString('en-US'));
    }
    await expect(page.getByTestId('log-row').first()).toHaveAttribute('data-id', rows[0]!.id);
    await expect(page.getByTestId('log-row').nth(1)).toHaveAttribute('data-id', rows[1]!.id);
    await expect(page.getByTestId('logs-count')).toContainText(`${rows.length} of ${rows.length} matching records loaded`);
    // The columns are the source's, as the server lists them.
    const fields = await server.api<Array<{ alias: string; columns: string[] }>>('logs/fields');
    expect(fields[0]!.alias).toBe('edge_logs');
    expect(fields).toHaveLength(9);
    await expect(page.getByTestId('logs-table').getByRole('columnheader')).toHaveCount(fields[0]!.columns.length);
    await expect(page.getByTestId('source-picker').locator('option')).toHaveCount(9);
  });

  test('search runs on the server; matches are highlighted; the regex toggle and a bad pattern', async ({ page, open, server }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h`);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
    // "/" focuses the search box from anywhere but a text field.
    await page.getByTestId('match-total').click();
    await page.keyboard.press('/');
    await expect(page.getByTestId('search-input')).toBeFocused();
    await page.keyboard.type('TOKEN');
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/[?&]q=TOKEN(&|$)/);
    const plain = edgeIn(NOW - DAY, NOW, has('token'));
    expect(plain.length).toBeGreaterThan(5);
    await expectTotal(page, plain.length);
    const first = page.getByTestId('log-row').first();
    await expect(first).toHaveAttribute('data-id', plain[0]!.id);
    await expect(first.locator('[data-col="path"] mark.ex-mark, [data-col="message"] mark.ex-mark').first()).toHaveText(/^token$/i);

    // A regular expression (RE2 on the server, case-insensitive).
    await page.getByTestId('search-input').fill('token|/user$');
    await page.getByTestId('regex-toggle').click();
    await expect(page.getByTestId('regex-toggle')).toHaveAttribute('aria-pressed', 'true');
    await expect(page).toHaveURL(/regex=1/);
    const re = /token|\/user$/i;
    const viaRegex = edgeIn(NOW - DAY, NOW, (r) => re.test(r.event_message) || re.test(r.url));
    await expectTotal(page, viaRegex.length);
    expect(viaRegex.length).toBeGreaterThan(plain.length);
    await expect(page.getByTestId('log-row').first()).toHaveAttribute('data-id', viaRegex[0]!.id);

    // A pattern RE2 refuses is caught before anything is sent (it went out three times, three 400s).
    const sent: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/api/logs')) sent.push(r.url());
    });
    await page.getByTestId('search-input').fill('(unclosed');
    await page.getByTestId('search-input').press('Enter');
    await expect(page.getByTestId('search-problem')).toContainText('Not a valid RE2 pattern');
    await expect(page.getByTestId('search-problem')).toContainText('missing closing )');
    // Nothing changed: the page still shows the last valid search.
    expect(new URL(page.url()).searchParams.get('q')).toBe('token|/user$');
    // A link that carries one shows the same check, named by its parameter, and sends nothing either.
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h&regex=1&q=${encodeURIComponent('(unclosed')}`);
    await expect(page.getByTestId('error-panel')).toContainText('nothing was sent');
    await expect(page.getByTestId('error-location').first()).toHaveText('q');
    await page.waitForTimeout(500);
    expect(sent.filter((u) => new URL(u).searchParams.get('q') === '(unclosed')).toEqual([]);

    // The search was recorded in the recent searches, with the page's URL state.
    const searches = await server.api<Array<{ page: string; state: string; label: string }>>('searches');
    const mine = searches.find((s) => s.page === 'logs' && new URLSearchParams(s.state).get('q') === 'token|/user$');
    expect(mine?.label).toContain('/token|/user$/');
    expect(new URLSearchParams(mine!.state).get('regex')).toBe('1');
    // A pattern RE2 refuses is not a recent search.
    expect(searches.filter((x) => new URLSearchParams(x.state).get('q') === '(unclosed')).toEqual([]);
  });

  test('chips: add a status class, exclude one code from the facets, flip and remove', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h`);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
    await page.getByTestId('add-filter').click();
    await page.getByTestId('add-filter-field').selectOption('status');
    await page.getByTestId('add-filter-value').fill('5XX');
    await page.getByTestId('add-filter-apply').click();
    const chip = page.getByTestId('chip');
    await expect(chip).toHaveCount(1);
    await expect(chip).toHaveAttribute('data-value', '5xx');
    await expect(page).toHaveURL(/status=5xx(&|$)/);
    const fivexx = edgeIn(NOW - DAY, NOW, (r) => r.status >= 500 && r.status < 600);
    await expectTotal(page, fivexx.length);

    // The status facet now lists 5xx codes; "−" on the commonest excludes it as a "not" chip.
    const counts = new Map<number, number>();
    for (const r of fivexx) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
    const [top] = [...counts].sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])));
    const facetRow = page.getByTestId('facet-status').locator(`[data-testid="facet-value"][data-value="${top![0]}"]`);
    await expect(facetRow.locator('.ex-facet__count')).toHaveText(top![1].toLocaleString('en-US'));
    await facetRow.getByTestId('facet-exclude').click();
    await expect(page).toHaveURL(new RegExp(`status=5xx,!${top![0]}(&|$)`));
    await expect(page.locator(`[data-testid="chip"][data-value="${top![0]}"]`)).toHaveAttribute('data-exclude', 'true');
    await expect(page.locator(`[data-testid="chip"][data-value="${top![0]}"]`)).toContainText('not');
    await expectTotal(page, fivexx.length - top![1]);

    // A click on a chip flips it; × removes it.
    await page.locator(`[data-testid="chip"][data-value="${top![0]}"] .ex-chip__body`).click();
    await expect(page.locator(`[data-testid="chip"][data-value="${top![0]}"]`)).toHaveAttribute('data-exclude', 'false');
    await expectTotal(page, fivexx.length); // included values are alternatives: 5xx or that code
    await page.locator('[data-testid="chip"][data-value="5xx"]').getByTestId('chip-remove').click();
    await page.locator(`[data-testid="chip"][data-value="${top![0]}"]`).getByTestId('chip-remove').click();
    await expect(page.getByTestId('chip')).toHaveCount(0);
    await expectTotal(page, edgeIn(NOW - DAY, NOW).length);
  });

  test('facets: top values with counts; a click includes a value, and “N other values”', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h`);
    const rows = edgeIn(NOW - DAY, NOW);
    const byMethod = new Map<string, number>();
    for (const r of rows) byMethod.set(r.method, (byMethod.get(r.method) ?? 0) + 1);
    const facet = page.getByTestId('facet-method');
    for (const [m, n] of byMethod) await expect(facet.locator(`[data-value="${m}"] .ex-facet__count`)).toHaveText(n.toLocaleString('en-US'));
    const paths = new Set(rows.map((r) => r.path));
    if (paths.size > 10) await expect(page.getByTestId('facet-path-others')).toHaveText(`${(paths.size - 10).toLocaleString('en-US')} other values`);

    await facet.locator('[data-value="POST"] .ex-facet__value').click();
    await expect(page).toHaveURL(/method=POST/);
    await expect(page.locator('[data-testid="chip"][data-field="method"]')).toHaveAttribute('data-value', 'POST');
    await expectTotal(page, byMethod.get('POST')!);
    await expect(page.getByTestId('log-row').first()).toHaveAttribute('data-id', rows.find((r) => r.method === 'POST')!.id);
    // Clicking the included value again removes the filter.
    await facet.locator('[data-value="POST"] .ex-facet__value').click();
    await expect(page.getByTestId('chip')).toHaveCount(0);
    await expectTotal(page, rows.length);
  });

  test('histogram: hover shows a bucket’s exact counts; drag zooms to the buckets; a click narrows to one', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
    // 1 h in about 60 buckets: minute buckets aligned to the epoch, the first holding the instant after start.
    const start = NOW - HOUR;
    const first = Math.floor((start + 1) / MIN) * MIN;
    const n = Math.floor((NOW - first) / MIN) + 1;
    await expect(page.getByTestId('histogram-chart').locator('.recharts-bar-rectangle').first()).toBeVisible();

    const b40 = first + 40 * MIN;
    const in40 = edgeIn(b40 - 1, b40 + MIN - 1);
    const p40 = await bucketX(page, 40, n);
    await page.mouse.move(p40.x, p40.y);
    const tip = page.getByTestId('chart-tooltip');
    await expect(tip).toContainText('Total');
    await expect(tip.locator('tr.is-strong td')).toHaveText(String(in40.length));

    // Drag from bucket 10 to bucket 20 (right to left, to show direction does not matter).
    const a = await bucketX(page, 20, n);
    const b = await bucketX(page, 10, n);
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move((a.x + b.x) / 2, a.y, { steps: 4 });
    await page.mouse.move(b.x, b.y, { steps: 4 });
    await page.mouse.up();
    const zoomStart = first + 10 * MIN - 1;
    const zoomEnd = first + 21 * MIN - 1;
    await expect(page).toHaveURL(new RegExp(`range=custom&start=${encodeURIComponent(iso(zoomStart))}&end=${encodeURIComponent(iso(zoomEnd))}`));
    await expectTotal(page, edgeIn(zoomStart, zoomEnd).length);
    await expect(page.getByTestId('range').getByRole('radio', { name: 'Custom' })).toHaveAttribute('aria-checked', 'true');

    // Back to the hour, then a click on one bar narrows to that minute.
    await page.getByTestId('range').getByRole('radio', { name: '1 h' }).click();
    await expectTotal(page, edgeIn(start, NOW).length);
    await expect(page.locator('.ex-hist.is-refetching')).toHaveCount(0);
    const p = await bucketX(page, 40, n);
    // As a user does: the tooltip names the bucket, then the click.
    await page.mouse.move(p.x, p.y, { steps: 3 });
    await expect(tip.locator('tr.is-strong td')).toHaveText(String(in40.length));
    await page.mouse.click(p.x, p.y);
    await expect(page).toHaveURL(new RegExp(`start=${encodeURIComponent(iso(b40 - 1))}&end=${encodeURIComponent(iso(b40 + MIN - 1))}`));
    await expectTotal(page, in40.length);
  });

  test('switching source shows its fields and columns, keeps the search and drops chips it cannot apply', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=7d&status=5xx&q=e`);
    await expect(page.getByTestId('chip')).toHaveCount(1);
    await page.getByTestId('source-picker').selectOption('postgres_logs');
    await expect(page).toHaveURL(/source=postgres_logs/);
    await expect(page).not.toHaveURL(/status=/);
    await expect(page).toHaveURL(/q=e/);
    await expect(page.getByTestId('chip')).toHaveCount(0);
    await expect(page.getByTestId('logs-table').getByRole('columnheader')).toHaveText(['Time', 'Level', 'Event message']);
    await expect(page.getByTestId('facet-status')).toHaveCount(0);

    // The level split, counted from the export (severity as postgres writes it).
    const rows = postgres.filter((r) => r.project === BUSY && r.timestamp > NOW - 7 * DAY && r.timestamp <= NOW && r.event_message.toLowerCase().includes('e'));
    await expectTotal(page, rows.length);
    const errors = rows.filter((r) => (r.metadata.parsed as { error_severity: string }).error_severity === 'ERROR').length;
    expect(errors).toBeGreaterThan(0);
    await expect(page.getByTestId('legend-ERROR').locator('.ex-legend__count')).toHaveText(errors.toLocaleString('en-US'));
    // A legend entry filters by its level.
    await page.getByTestId('legend-ERROR').click();
    await expect(page).toHaveURL(/level=ERROR/);
    await expectTotal(page, errors);
    await expect(page.getByTestId('log-row').first().locator('.ex-level')).toHaveText('ERROR');
  });

  test('keyboard: arrows move the selection, Enter opens the details, Escape closes them', async ({ page, open }) => {
    const rows = edgeIn(NOW - HOUR, NOW);
    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await expect(page.getByTestId('log-row').first()).toHaveAttribute('data-id', rows[0]!.id);
    await page.getByTestId('logs-grid').focus();
    await page.keyboard.press('ArrowDown');
    await expect(page.getByTestId('log-row').first()).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByTestId('log-detail')).toHaveCount(0);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    const detail = page.getByTestId('log-detail');
    await expect(detail.getByTestId('detail-id')).toHaveText(rows[1]!.id);
    await expect(detail.getByTestId('detail-status')).toHaveText(String(rows[1]!.status));
    await expect(detail.getByTestId('detail-path')).toHaveText(rows[1]!.path);
    await page.keyboard.press('ArrowDown');
    await expect(detail.getByTestId('detail-id')).toHaveText(rows[2]!.id);
    await page.keyboard.press('Escape');
    await expect(detail).toHaveCount(0);
    await expect(page.locator(`[data-testid="log-row"][data-id="${rows[2]!.id}"]`)).toHaveAttribute('aria-selected', 'true');
  });

  test('“Load older” asks for the next page with the server’s cursor', async ({ page, open, server }) => {
    const rows = edgeIn(NOW - DAY, NOW);
    expect(rows.length).toBeGreaterThan(400);
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h`);
    await expect(page.getByTestId('logs-count')).toContainText(`200 of ${rows.length.toLocaleString('en-US')} matching records loaded`);
    const firstPage = await server.api<unknown[]>(`logs?${new URLSearchParams({ source: 'cloudflare.logs.prod', project: BUSY, start: iso(NOW - DAY), end: iso(NOW), limit: '200' })}`);
    expect(firstPage).toHaveLength(200);
    const req = page.waitForRequest((r) => new URL(r.url()).pathname === '/api/logs' && new URL(r.url()).searchParams.has('cursor'));
    await page.getByTestId('load-older').click();
    await req;
    await expect(page.getByTestId('logs-count')).toContainText(`400 of ${rows.length.toLocaleString('en-US')} matching records loaded`);
    await page.getByTestId('logs-grid').evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect(page.locator(`[data-testid="log-row"][data-id="${rows[399]!.id}"]`)).toBeVisible();
    const ids = await page.getByTestId('log-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('exports: the table’s CSV is what it shows; “Export all matching” counts first, then downloads the filtered records', async ({ page, open }) => {
    const expected = edgeIn(NOW - DAY, NOW, (r) => r.status >= 500 && r.status !== 503);
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h&status=5xx,!503`);
    await expectTotal(page, expected.length);

    const csvDownload = page.waitForEvent('download');
    await page.getByRole('button', { name: 'CSV', exact: true }).click();
    const csv = fs.readFileSync((await (await csvDownload).path())!, 'utf8').trim().split('\r\n');
    expect(csv[0]).toBe('id,timestamp,timestamp_iso,status,method,path,event_message,metadata');
    expect(csv.slice(1).map((l) => l.split(',')[0])).toEqual(expected.slice(0, 200).map((r) => r.id));

    await page.getByTestId('export-all').click();
    const dialog = page.getByTestId('export-dialog');
    await expect(dialog.getByTestId('export-count')).toContainText(`${expected.length.toLocaleString('en-US')} records`);
    await expect(dialog.getByTestId('export-count')).toContainText(/about \d/);
    await dialog.getByTestId('export-format-ndjson').check();
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download NDJSON' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/\.ndjson$/);
    const lines = fs.readFileSync((await file.path())!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; fields: { status: number } });
    expect(lines.map((l) => l.id).sort()).toEqual(expected.map((r) => r.id).sort());
    expect(lines.every((l) => l.fields.status >= 500 && l.fields.status !== 503)).toBe(true);
    await expect(page.getByTestId('export-done')).toBeVisible();
  });

  test('everything is in the URL: a reload restores source, search, regex, chips and range; the exact view is one tab away', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=auth_logs&range=7d&q=token&regex=1&status=!2xx&method=POST`);
    await expect(page.getByTestId('source-picker')).toHaveValue('auth_logs');
    await expect(page.getByTestId('search-input')).toHaveValue('token');
    await expect(page.getByTestId('regex-toggle')).toHaveAttribute('aria-pressed', 'true');
    await expect(page.getByTestId('chip')).toHaveCount(2);
    await expect(page.getByTestId('range').getByRole('radio', { name: '7 days' })).toHaveAttribute('aria-checked', 'true');
    const before = await total(page);
    await page.reload();
    await expect(page.getByTestId('chip')).toHaveCount(2);
    expect(await total(page)).toBe(before);

    await page.getByTestId('mode-exact').click();
    await expect(page).toHaveURL(/mode=exact&tier=FREE&range=7d/);
    await expect(page.getByTestId('logs-page')).toHaveAttribute('data-mode', 'exact');
    await expect(page.getByTestId('logs-view-description')).toContainText('Exact logs.all view');
    await expect(page.getByTestId('tier-picker')).toBeVisible();
    await page.getByTestId('mode-explore').click();
    await expect(page).toHaveURL(/source=auth_logs&range=7d&q=token&regex=1&status=!2xx&method=POST/);
  });
});

for (const scheme of ['light', 'dark'] as const) {
  for (const [w, h] of [
    [1440, 900],
    [1024, 700],
  ] as const) {
    test(`screenshot: explorer ${w}×${h} ${scheme}`, async ({ page, open }) => {
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
      await page.setViewportSize({ width: w, height: h });
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(String(e)));
      await open(`/logs?project=${BUSY}&source=edge_logs&range=24h&q=auth&status=4xx,5xx,!401`);
      await expect(page.getByTestId('log-row').nth(2)).toBeVisible();
      await expect(page.getByTestId('facet-value').first()).toBeVisible();
      // The table keeps path and message beside the facets, even at 1024 px.
      const pathCell = page.getByTestId('log-row').first().locator('[data-col="path"]');
      const messageCell = page.getByTestId('log-row').first().locator('[data-col="message"]');
      expect((await pathCell.boundingBox())!.width).toBeGreaterThan(80);
      expect((await messageCell.boundingBox())!.width).toBeGreaterThan(80);
      await page.screenshot({ path: `artifacts/screenshots/explorer-${w}x${h}-${scheme}.png` });
      await page.getByTestId('log-row').nth(1).click();
      await expect(page.getByTestId('log-detail')).toBeVisible();
      await page.screenshot({ path: `artifacts/screenshots/explorer-detail-${w}x${h}-${scheme}.png` });
      await page.keyboard.press('Escape');
      await page.getByTestId('search-input').fill('');
      await page.getByTestId('source-picker').selectOption('postgres_logs');
      await page.getByTestId('range').getByRole('radio', { name: '7 days' }).click();
      await expect(page.getByTestId('log-row').first()).toBeVisible();
      await expect(page.locator('.ex-results.is-refetching')).toHaveCount(0);
      const hist = (await page.getByTestId('histogram-chart').boundingBox())!;
      await page.mouse.move(hist.x + hist.width * 0.7, hist.y + hist.height / 2);
      await expect(page.getByTestId('chart-tooltip')).toBeVisible();
      await page.screenshot({ path: `artifacts/screenshots/explorer-levels-${w}x${h}-${scheme}.png` });
      expect(problems).toEqual([]);
    });
  }
}
