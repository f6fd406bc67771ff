/**
 * Back and Forward: every change of range, filter, zoom, source or search is a history
 * entry, and Back/Forward restore each view exactly; typing is not a change until it is submitted;
 * a drag-zoom then a bar click step back to the previous zoom, not out of the app.
 */
import type { Page } from '@playwright/test';
import { BUSY, nowMicros } from './support/fixture-data.ts';
import { expect, test } from './support/fixtures.ts';

const NOW = nowMicros();
const MIN = 60_000_000;
const HOUR = 60 * MIN;

const historyLength = (page: Page) => page.evaluate<number>('history.length');
const param = (page: Page, name: string) => new URL(page.url()).searchParams.get(name);

/** The µs ISO form of a timestamp, computed without the renderer's code. */
function iso(us: number): string {
  const s = String(us);
  return `${new Date(Number(s.slice(0, -3))).toISOString().slice(0, -1)}${s.slice(-3)}Z`;
}

/** Centre of bucket k of the histogram's plot area (n buckets across it). */
async function bucketX(page: Page, k: number, n: number): Promise<{ x: number; y: number }> {
  const box = (await page.getByTestId('histogram-chart').locator('.recharts-cartesian-grid').boundingBox())!;
  return { x: box.x + ((k + 0.5) * box.width) / n, y: box.y + box.height / 2 };
}

async function settled(page: Page) {
  await expect(page.locator('.ex-results.is-refetching, .ex-hist.is-refetching')).toHaveCount(0);
  await expect(page.getByTestId('match-total')).toBeVisible();
}

test.describe('history', () => {
  test('range, facet, search, source and compare each add an entry; Back and Forward restore each view exactly', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await settled(page);
    // The key's removal and the defaults the app fills in replaced the entry: about:blank, then this.
    const base = await historyLength(page);
    expect(base).toBe(2);
    const views: Array<{ url: string; total: string }> = [{ url: page.url(), total: (await page.getByTestId('match-total').textContent())! }];
    const step = async (act: () => Promise<void>, expectParam: [string, string]) => {
      await act();
      await expect.poll(() => param(page, expectParam[0])).toBe(expectParam[1]);
      await settled(page);
      views.push({ url: page.url(), total: (await page.getByTestId('match-total').textContent())! });
      expect(await historyLength(page)).toBe(base + views.length - 1);
    };

    await step(() => page.getByTestId('range').getByRole('radio', { name: '24 h' }).click(), ['range', '24h']);
    await step(() => page.getByTestId('facet-method').locator('[data-value="POST"] .ex-facet__value').click(), ['method', 'POST']);
    await step(async () => {
      await page.getByTestId('search-input').fill('token');
      await page.getByTestId('search-input').press('Enter');
    }, ['q', 'token']);
    await step(async () => void (await page.getByTestId('source-picker').selectOption('auth_logs')), ['source', 'auth_logs']);
    await step(async () => void (await page.getByTestId('compare-picker').selectOption('1d')), ['compare', '1d']);

    // Back through every step, each view whole: its URL, its controls and its count.
    for (let i = views.length - 2; i >= 0; i--) {
      await page.goBack();
      await expect(page).toHaveURL(views[i]!.url);
      await settled(page);
      await expect(page.getByTestId('match-total')).toHaveText(views[i]!.total);
      const u = new URL(views[i]!.url);
      await expect(page.getByTestId('source-picker')).toHaveValue(u.searchParams.get('source')!);
      await expect(page.getByTestId('search-input')).toHaveValue(u.searchParams.get('q') ?? '');
      await expect(page.getByTestId('range').getByRole('radio', { name: u.searchParams.get('range') === '1h' ? '1 h' : '24 h' })).toHaveAttribute('aria-checked', 'true');
      await expect(page.getByTestId('chip')).toHaveCount(u.searchParams.has('method') ? 1 : 0);
      await expect(page.getByTestId('compare-picker')).toHaveValue(u.searchParams.get('compare') ?? '');
    }
    // Still the app: one more Back would leave it, and Forward walks the steps again.
    expect(await historyLength(page)).toBe(base + views.length - 1);
    for (let i = 1; i < views.length; i++) {
      await page.goForward();
      await expect(page).toHaveURL(views[i]!.url);
      await settled(page);
      await expect(page.getByTestId('match-total')).toHaveText(views[i]!.total);
    }
  });

  // Regression: after a drag-zoom and a bar click, Back left the app.
  test('after a drag-zoom and a bar click, Back goes to the previous zoom, then to the hour', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await settled(page);
    const hourUrl = page.url();
    const first = Math.floor((NOW - HOUR + 1) / MIN) * MIN;
    const n = Math.floor((NOW - first) / MIN) + 1;
    const a = await bucketX(page, 10, n);
    const b = await bucketX(page, 20, n);
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move((a.x + b.x) / 2, a.y, { steps: 4 });
    await page.mouse.move(b.x, b.y, { steps: 4 });
    await page.mouse.up();
    const zoom = { start: first + 10 * MIN - 1, end: first + 21 * MIN - 1 };
    await expect.poll(() => param(page, 'start')).toBe(iso(zoom.start));
    await settled(page);
    const zoomUrl = page.url();
    // 11 minutes in (at most) 60 buckets: 30 s buckets from the zoom's first instant.
    const m = 22;
    const c = await bucketX(page, 4, m);
    await page.mouse.move(c.x, c.y, { steps: 3 });
    await expect(page.getByTestId('chart-tooltip')).toBeVisible();
    await page.mouse.click(c.x, c.y);
    const w = 30_000_000;
    await expect.poll(() => param(page, 'start')).toBe(iso(first + 10 * MIN + 4 * w - 1));
    expect(param(page, 'end')).toBe(iso(first + 10 * MIN + 5 * w - 1));
    await settled(page);

    await page.goBack();
    await expect(page).toHaveURL(zoomUrl);
    await settled(page);
    await expect(page.getByTestId('range-text')).toHaveText(/– /);
    await page.goBack();
    await expect(page).toHaveURL(hourUrl);
    await expect(page.getByTestId('range').getByRole('radio', { name: '1 h' })).toHaveAttribute('aria-checked', 'true');
    await expect(page.getByTestId('logs-page')).toBeVisible();
  });

  test('typing in the search box adds no entry; Enter adds one', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await settled(page);
    const before = await historyLength(page);
    const url = page.url();
    await page.getByTestId('search-input').pressSequentially('token', { delay: 30 });
    await page.waitForTimeout(300);
    expect(await historyLength(page)).toBe(before);
    expect(page.url()).toBe(url);
    await page.getByTestId('search-input').press('Enter');
    await expect.poll(() => param(page, 'q')).toBe('token');
    expect(await historyLength(page)).toBe(before + 1);
    await page.goBack();
    await expect(page).toHaveURL(url);
    await expect(page.getByTestId('search-input')).toHaveValue('');
  });

  test('usage: typing a pattern is one entry, however long the pauses; Back restores the project’s pattern', async ({ page, open }) => {
    await open(`/usage?project=${BUSY}&interval=hourly`);
    await expect(page.getByTestId('total-rest-value')).toBeVisible();
    const before = await historyLength(page);
    const url = page.url();
    const input = page.getByTestId('usage-regex');
    await input.fill(`${BUSY}\\.supabase`);
    await expect.poll(() => param(page, 'regex')).toBe(`${BUSY}\\.supabase`);
    await input.press('End');
    await input.pressSequentially('\\.co', { delay: 30 });
    await expect.poll(() => param(page, 'regex')).toBe(`${BUSY}\\.supabase\\.co`);
    expect(await historyLength(page)).toBe(before + 1);
    await page.goBack();
    await expect(page).toHaveURL(url);
    await expect(input).toHaveValue(BUSY);
  });
});
