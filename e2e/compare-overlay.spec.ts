/**
 * The compared period on the Functions page (each bucket's invocations and p95 an earlier window
 * gives) and on the explorer's field facets (each value's change). Expected figures are worked
 * out here from the demo export files, with the endpoint's own definitions (a record belongs to
 * the bucket trunc(ts, unit); p95 is the nearest rank over the bucket's execution times), not by
 * the renderer or the API under test. Screenshots of the overlay go to artifacts/screenshots/.
 */
import type { Locator, Page } from '@playwright/test';
import { BUSY, nowMicros, readDemoRecords } from './support/fixture-data.ts';
import { expect, num, test } from './support/fixtures.ts';

const NOW = nowMicros();
const MINUTE = 60_000_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const SHOTS = 'artifacts/screenshots';

interface Raw {
  timestamp: number;
  project?: string;
  metadata: Record<string, unknown>;
}
let edge: Raw[] = [];
let fnEdge: Raw[] = [];

test.beforeAll(async () => {
  ({ edge_logs: edge = [], function_edge_logs: fnEdge = [] } = await readDemoRecords<Raw>(['edge_logs', 'function_edge_logs']));
});

const fmt = (n: number) => n.toLocaleString('en-US');
const trunc = (us: number, unit: number) => us - (us % unit);

/** Nearest rank: the value at rank ceil(p/100 · n) of the sorted values; null without values. */
function nearestRank(values: number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]!;
}

interface Expected {
  count: number;
  p95: number | null;
  /** Timed invocations the p95 is over. */
  timed: number;
}

/** One bucket of BUSY's invocations, [start, start + unit), as functions.invocation-stats counts it. */
function bucket(start: number, unit: number, functionId?: string): Expected {
  const rows = fnEdge.filter(
    (r) => r.metadata.project_ref === BUSY && r.timestamp >= start && r.timestamp < start + unit && (functionId === undefined || r.metadata.function_id === functionId),
  );
  const execs = rows.flatMap((r) => (typeof r.metadata.execution_time_ms === 'number' ? [r.metadata.execution_time_ms] : []));
  return { count: rows.length, p95: nearestRank(execs, 95), timed: execs.length };
}

/** The chart's buckets for an interval of `span` by `unit` at the fixture's now: trunc(now − span) … trunc(now). */
function chartStarts(span: number, unit: number): number[] {
  const out: number[] = [];
  for (let ts = trunc(NOW - span, unit); ts <= trunc(NOW, unit); ts += unit) out.push(ts);
  return out;
}

/** Moves the pointer over bucket `i` of `n` in a chart and returns its tooltip. */
async function hoverBucket(page: Page, chart: Locator, i: number, n: number): Promise<Locator> {
  await chart.scrollIntoViewIfNeeded();
  const grid = (await chart.locator('.recharts-cartesian-grid').boundingBox())!;
  await page.mouse.move(grid.x + (grid.width * (i + 0.5)) / n, grid.y + grid.height * 0.5);
  const tip = chart.getByTestId('chart-tooltip');
  await expect(tip).toBeVisible();
  return tip;
}

/** A tooltip row's value cell, by its label. */
const tipValue = (tip: Locator, label: string) => tip.locator('tr').filter({ has: tip.page().locator('th', { hasText: new RegExp(`^${label}$`) }) }).locator('td');

/** p95 as shown: rounded for display, and within the 1% the endpoint rules allow for rollup buckets. */
function expectP95(shown: string | null, expected: number | null) {
  if (expected === null) {
    expect(shown).toBe('—');
    return;
  }
  expect(Math.abs(num(shown) - expected), `shown ${shown}, expected ${expected}`).toBeLessThanOrEqual(Math.max(0.5, expected * 0.01));
}

test.describe('compare with another period: the Functions overlay and the field facets', () => {
  test('Functions at 1 day vs the previous period: each bucket’s invocations and p95 are the earlier window’s', async ({ page, open }) => {
    const starts = chartStarts(DAY, HOUR);
    expect(starts).toHaveLength(25);
    // The previous period is the window's own length (25 hours) back.
    const shift = starts.length * HOUR;
    const prev = starts.map((s) => bucket(s - shift, HOUR));
    const total = prev.reduce((n, b) => n + b.count, 0);
    expect(total).toBeGreaterThan(0);

    await open(`/functions?project=${BUSY}&interval=1day&compare=prev`);
    await expect(page.getByTestId('compare-picker')).toHaveValue('prev');
    await expect(page.getByTestId('legend-compared')).toContainText(`Previous period · ${fmt(total)}`);
    // The count overlay over the bars, the p95 overlay among the execution lines (avg, p95, p99, max and it).
    const bars = page.getByTestId('chart-invocations');
    const lines = page.getByTestId('chart-execution');
    await expect(bars.locator('.recharts-line-curve')).toHaveCount(1);
    await expect(lines.locator('.recharts-line-curve')).toHaveCount(5);
    await expect(page.getByTestId('legend-compared-p95')).toHaveText('p95 · Previous period');

    // Buckets across the window, each with timed invocations to take a p95 of.
    const picks = [1, 8, 16, 23].filter((i) => prev[i]!.timed > 0);
    expect(picks.length).toBeGreaterThan(2);
    for (const i of picks) {
      const tip = await hoverBucket(page, bars, i, starts.length);
      await expect(tipValue(tip, 'Previous period')).toHaveText(new RegExp(`^${fmt(prev[i]!.count)}( |$)`));
      const tip2 = await hoverBucket(page, lines, i, starts.length);
      const cell = tipValue(tip2, 'p95 · Previous period');
      await expect(cell).not.toHaveText('…');
      expectP95(await cell.textContent(), prev[i]!.p95);
    }

    // Off: the overlays go, and the URL forgets it.
    await page.getByTestId('compare-picker').selectOption('');
    await expect(page).not.toHaveURL(/compare=/);
    await expect(lines.locator('.recharts-line-curve')).toHaveCount(4);
    await expect(page.getByTestId('legend-compared-p95')).toHaveCount(0);
  });

  test('Functions at 1 hour for one function vs 1 day earlier: minute buckets of that function only', async ({ page, open, server }) => {
    const starts = chartStarts(HOUR, MINUTE);
    expect(starts).toHaveLength(61);
    const busiest = (await server.api<Array<{ functionId: string }>>(`functions?project=${BUSY}&interval=7day`))[0]!.functionId;
    const prev = starts.map((s) => bucket(s - DAY, MINUTE, busiest));
    const total = prev.reduce((n, b) => n + b.count, 0);
    expect(total).toBeGreaterThan(0);
    // All functions over the same minutes count more: the request is the function's own.
    expect(starts.reduce((n, s) => n + bucket(s - DAY, MINUTE).count, 0)).toBeGreaterThan(total);

    await open(`/functions?project=${BUSY}&interval=1hr&function=${busiest}&compare=1d`);
    await expect(page.getByTestId('legend-compared')).toContainText(`1 day earlier · ${fmt(total)}`);
    const i = prev.findIndex((b) => b.timed > 0);
    const tip = await hoverBucket(page, page.getByTestId('chart-execution'), i, starts.length);
    const cell = tipValue(tip, 'p95 · 1 day earlier');
    await expect(cell).not.toHaveText('…');
    // One function's minute buckets are read from the records: exact.
    expect(num(await cell.textContent())).toBeCloseTo(prev[i]!.p95!, 1);
  });

  test('field facets show each value’s change against the compared period, as the built-in ones do', async ({ page, open }) => {
    const PATH = 'request.cf.country';
    const countryOf = (r: Raw) => {
      const cf = (r.metadata.request as { cf?: { country?: unknown } } | undefined)?.cf;
      return typeof cf?.country === 'string' ? cf.country : null;
    };
    // range=24h is (now − 24 h, now]; 1 day earlier is (now − 48 h, now − 24 h].
    const counts = (start: number, end: number) => {
      const m = new Map<string, number>();
      for (const r of edge) {
        const c = r.project === BUSY && r.timestamp > start && r.timestamp <= end ? countryOf(r) : null;
        if (c !== null) m.set(c, (m.get(c) ?? 0) + 1);
      }
      return [...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    };
    const today = counts(NOW - DAY, NOW);
    const before = counts(NOW - 2 * DAY, NOW - DAY);
    const beforeTop = new Map(before.slice(0, 10));
    const pct = (now: number, was: number) => {
      const p = Math.round(((now - was) / was) * 100);
      return p === 0 ? (now > was ? '+<1%' : now < was ? '−<1%' : '±0') : `${p > 0 ? '+' : '−'}${Math.abs(p)}%`;
    };
    // The top values of today that the earlier day lists too.
    const checked = today.slice(0, 10).filter(([v]) => beforeTop.has(v)).slice(0, 4);
    expect(checked.length).toBeGreaterThan(2);

    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h&facets=${PATH}`);
    const facet = page.locator(`[data-testid="field-facet"][data-path="${PATH}"]`);
    await expect(facet.getByTestId('field-facet-value').first()).toBeVisible();
    // Not comparing: no changes.
    await expect(facet.getByTestId('facet-change')).toHaveCount(0);
    await page.getByTestId('compare-picker').selectOption('1d');
    await expect(page).toHaveURL(/compare=1d/);
    for (const [value, n] of checked) {
      const row = facet.locator(`[data-testid="field-facet-value"][data-value="${value}"]`);
      await expect(row.locator('.ex-facet__count')).toHaveText(fmt(n));
      const change = row.getByTestId('facet-change');
      await expect(change).toHaveText(pct(n, beforeTop.get(value)!));
      await expect(change).toHaveAttribute('title', `${fmt(beforeTop.get(value)!)} in the compared period (1 day earlier), ${n >= beforeTop.get(value)! ? '+' : '−'}${fmt(Math.abs(n - beforeTop.get(value)!))}`);
    }
    // The built-in facets show theirs beside them.
    await expect(page.getByTestId('facet-method').getByTestId('facet-change').first()).toBeVisible();
  });

  for (const scheme of ['light', 'dark'] as const) {
    test(`screenshots of the Functions overlay at 1440×900, 1280×800 and 1024×700 — ${scheme}`, async ({ page, open }) => {
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(String(e)));
      for (const [w, h] of [
        [1440, 900],
        [1280, 800],
        [1024, 700],
      ] as const) {
        await page.setViewportSize({ width: w, height: h });
        await open(`/functions?project=${BUSY}&interval=1day&compare=prev`);
        await expect(page.getByTestId('legend-compared')).not.toContainText('…');
        await expect(page.getByTestId('chart-execution').locator('.recharts-line-curve')).toHaveCount(5);
        await page.locator('.main').evaluate((el) => el.scrollTo(0, 0));
        await page.screenshot({ path: `${SHOTS}/functions-overlay-top-${w}x${h}-${scheme}.png` });
        // Both charts in view, the execution chart's tooltip over a bucket.
        await page.getByTestId('chart-invocations').evaluate((el) => el.scrollIntoView({ block: 'start' }));
        const lines = page.getByTestId('chart-execution');
        await hoverBucket(page, lines, 18, 25);
        await page.screenshot({ path: `${SHOTS}/functions-overlay-charts-${w}x${h}-${scheme}.png` });
        await page.mouse.move(0, 0);
        await page.getByTestId('chart-invocations').screenshot({ path: `${SHOTS}/functions-overlay-invocations-${w}x${h}-${scheme}.png` });
        await lines.screenshot({ path: `${SHOTS}/functions-overlay-execution-${w}x${h}-${scheme}.png` });
      }
      expect(problems).toEqual([]);
    });
  }
});
