/**
 * Comparing with another period and the Functions → Logs counts agreeing. Expected
 * figures are counted here from the demo export files, not by the renderer or the API under test.
 */
import type { FunctionStatsRow, FunctionTotal } from '../contract/api-types.ts';
import { BUSY, nowMicros, readDemoRecords } from './support/fixture-data.ts';
import { expect, test } from './support/fixtures.ts';

const NOW = nowMicros();
const HOUR = 3_600_000_000;
const DAY = 24 * HOUR;

interface Raw {
  timestamp: number;
  project?: string;
  metadata: Record<string, unknown>;
}
let edge: Array<Raw & { method: string }> = [];
let fnEdge: Raw[] = [];

test.beforeAll(async () => {
  const read = await readDemoRecords<Raw>(['edge_logs', 'function_edge_logs']);
  edge = (read.edge_logs ?? []).map((r) => ({ ...r, method: (r.metadata.request as { method: string }).method }));
  fnEdge = read.function_edge_logs ?? [];
});

const fmt = (n: number) => n.toLocaleString('en-US');
/** `+12%` as the facets write a change. */
const pct = (now: number, before: number) => {
  const p = Math.round(((now - before) / before) * 100);
  return p === 0 ? (now > before ? '+<1%' : now < before ? '−<1%' : '±0') : `${p > 0 ? '+' : '−'}${Math.abs(p)}%`;
};

test.describe('compare with another period', () => {
  test('explorer: the histogram draws the day before as a line, the facets show each value’s change, and the URL keeps it', async ({ page, open }) => {
    const inRange = (start: number, end: number) => edge.filter((r) => r.project === BUSY && r.timestamp > start && r.timestamp <= end);
    const today = inRange(NOW - DAY, NOW);
    const before = inRange(NOW - 2 * DAY, NOW - DAY);
    expect(before.length).toBeGreaterThan(0);
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h`);
    await expect(page.getByTestId('match-total')).toHaveText(`${fmt(today.length)} matching records`);
    await page.getByTestId('compare-picker').selectOption('1d');
    await expect(page).toHaveURL(/compare=1d/);
    const legend = page.getByTestId('legend-compared');
    await expect(legend).toContainText('1 day earlier');
    await expect(legend.locator('.ex-legend__count')).toHaveText(fmt(before.length));
    await expect(page.getByTestId('histogram-chart').locator('.recharts-line-curve')).toHaveCount(1);
    // Each method's change, from the two days' counts.
    const count = (rows: typeof today, m: string) => rows.filter((r) => r.method === m).length;
    for (const m of ['GET', 'POST']) {
      const row = page.getByTestId('facet-method').locator(`[data-testid="facet-value"][data-value="${m}"]`);
      await expect(row.getByTestId('facet-change')).toHaveText(pct(count(today, m), count(before, m)));
      await expect(row.getByTestId('facet-change')).toHaveAttribute('title', new RegExp(`^${fmt(count(before, m))} in the compared period`));
    }
    // The tooltip names the compared count of the bucket.
    const grid = (await page.getByTestId('histogram-chart').locator('.recharts-cartesian-grid').boundingBox())!;
    await page.mouse.move(grid.x + grid.width / 2, grid.y + grid.height / 2);
    await expect(page.getByTestId('chart-tooltip')).toContainText('1 day earlier');
    await page.reload();
    await expect(page.getByTestId('compare-picker')).toHaveValue('1d');
    await expect(page.getByTestId('legend-compared').locator('.ex-legend__count')).toHaveText(fmt(before.length));
    await page.getByTestId('compare-picker').selectOption('');
    await expect(page).not.toHaveURL(/compare=/);
    await expect(page.getByTestId('legend-compared')).toHaveCount(0);
  });

  test('Functions: the previous period’s invocations are drawn over the bars and totalled beside the legend', async ({ page, open, server }) => {
    const { window } = await server.api<FunctionTotal>(`functions/total?project=${BUSY}&interval=1day`);
    const span = window.end - window.start;
    expect(span).toBe(25 * HOUR);
    // The previous window of the same length: [start − 25 h, end − 25 h).
    const prev = fnEdge.filter((r) => r.metadata.project_ref === BUSY && r.timestamp >= window.start - span && r.timestamp < window.end - span);
    expect(prev.length).toBeGreaterThan(0);
    await open(`/functions?project=${BUSY}&interval=1day&compare=prev`);
    await expect(page.getByTestId('compare-picker')).toHaveValue('prev');
    await expect(page.getByTestId('legend-compared')).toContainText(`Previous period · ${fmt(prev.length)}`);
    await expect(page.getByTestId('chart-invocations').locator('.recharts-line-curve')).toHaveCount(1);
    const grid = (await page.getByTestId('chart-invocations').locator('.recharts-cartesian-grid').boundingBox())!;
    await page.mouse.move(grid.x + grid.width * (2.5 / 25), grid.y + grid.height * 0.95);
    await expect(page.getByTestId('chart-tooltip')).toContainText('Previous period');
  });

  // Regression: at 7 days the table counted 3,849 over the calendar window, its Logs link opened a rolling 7 days with 3,829.
  for (const interval of ['7day', '1day'] as const) {
    test(`Functions → Logs at ${interval}: the link opens exactly the window the table counts, and the counts agree`, async ({ page, open, server }) => {
      const rows = await server.api<FunctionStatsRow[]>(`functions?project=${BUSY}&interval=${interval}`);
      const { window } = await server.api<FunctionTotal>(`functions/total?project=${BUSY}&interval=${interval}`);
      const fn = rows[0]!;
      const counted = fnEdge.filter((r) => r.metadata.project_ref === BUSY && r.metadata.function_id === fn.functionId && r.timestamp >= window.start && r.timestamp < window.end).length;
      expect(fn.invocations).toBe(counted);
      await open(`/functions?project=${BUSY}&interval=${interval}`);
      await expect(page.locator(`[data-function-id="${fn.functionId}"]`).getByTestId('function-invocations')).toHaveText(fmt(counted));
      await page.locator(`[data-function-id="${fn.functionId}"]`).getByTestId('function-logs').click();
      await expect(page.getByTestId('logs-page')).toBeVisible();
      await expect(page.getByTestId('match-total')).toHaveText(`${fmt(counted)} matching records`);
    });
  }
});
