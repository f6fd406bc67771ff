/**
 * Readability defects of charts, pickers, facets and times, each seen in a screenshot, each with the test that would have
 * caught it (the pure ones are Vitest tests beside their code: colours in series.test.ts, RE2
 * in re2-check.test.ts, the usage pattern in view-request.test.ts, the message text in
 * message-text.test.ts, the 24-hour inputs in time.test.ts). Expected figures come from the demo
 * export files, not from the renderer.
 */
import type { Locator, Page } from '@playwright/test';
import { MICROS } from '../contract/instants.ts';
import { BUSY, nowMicros, readDemoRecords, type DemoExportRecord } from './support/fixture-data.ts';
import { expect, test } from './support/fixtures.ts';

// Browser globals used inside page.evaluate: this file is type-checked without the DOM library.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any, getComputedStyle: any, navigator: any;
type Element = any;
type HTMLSelectElement = any;

const NOW = nowMicros();
const { minute: MIN, hour: HOUR, day: DAY } = MICROS;
type Raw = DemoExportRecord;
let auth: Raw[] = [];
let fnEdge: Raw[] = [];

test.beforeAll(async () => {
  const demo = await readDemoRecords<Raw>(['auth_logs', 'function_edge_logs']);
  auth = demo.auth_logs!;
  fnEdge = demo.function_edge_logs!;
});

const fmt = (n: number) => n.toLocaleString('en-US');

async function settled(page: Page) {
  await expect(page.locator('.ex-results.is-refetching, .ex-hist.is-refetching')).toHaveCount(0);
  await expect(page.getByTestId('match-total')).toBeVisible();
}

/** Every tick label of a chart inside its svg (a cut label sticks out of it). */
async function ticksInside(chart: Locator): Promise<void> {
  const out = await chart.evaluate((el) => {
    const svg = el.querySelector('svg.recharts-surface')!.getBoundingClientRect();
    return Array.from(el.querySelectorAll('.recharts-cartesian-axis-tick-value')).map((t: any) => {
      const r = t.getBoundingClientRect();
      return { text: t.textContent, left: r.left - svg.left, right: svg.right - r.right };
    });
  });
  expect(out.length).toBeGreaterThan(1);
  for (const t of out) expect.soft(Math.min(t.left, t.right), `tick “${t.text}”`).toBeGreaterThanOrEqual(0);
}

/** The focused element's outline after a press on the chart: none, whatever recharts focused. */
async function noFocusBox(page: Page) {
  const outline = await page.evaluate(() => {
    const a = document.activeElement as Element | null;
    if (!a || a === document.body) return 'none';
    const s = getComputedStyle(a);
    return s.outlineStyle === 'none' || s.outlineWidth === '0px' ? 'none' : `${a.tagName}.${a.getAttribute('class')} ${s.outlineStyle} ${s.outlineWidth}`;
  });
  expect(outline).toBe('none');
}

test.describe('readability of charts, pickers, facets and times', () => {
  test('no black focus box stays on a chart after a click or a drag', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await settled(page);
    const grid = (await page.getByTestId('histogram-chart').locator('.recharts-cartesian-grid').boundingBox())!;
    await page.mouse.move(grid.x + grid.width * 0.3, grid.y + grid.height / 2);
    await page.mouse.down();
    await page.mouse.move(grid.x + grid.width * 0.5, grid.y + grid.height / 2, { steps: 5 });
    await page.mouse.up();
    await expect(page).toHaveURL(/range=custom/);
    await page.mouse.move(5, 5);
    await noFocusBox(page);

    await open(`/functions?project=${BUSY}&interval=1day`);
    const bars = page.getByTestId('chart-invocations').locator('.recharts-cartesian-grid');
    const b = (await bars.boundingBox())!;
    await page.mouse.click(b.x + b.width / 2, b.y + b.height / 2);
    await noFocusBox(page);
  });

  test('the histogram’s tooltip never covers the match count', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h`);
    await settled(page);
    const grid = (await page.getByTestId('histogram-chart').locator('.recharts-cartesian-grid').boundingBox())!;
    const count = (await page.getByTestId('match-total').boundingBox())!;
    for (const fx of [0.1, 0.5, 0.9, 0.98]) {
      await page.mouse.move(grid.x + grid.width * fx, grid.y + grid.height * 0.8);
      const tip = page.getByTestId('chart-tooltip');
      await expect(tip).toBeVisible();
      const t = (await tip.boundingBox())!;
      const overlaps = t.x < count.x + count.width && count.x < t.x + t.width && t.y < count.y + count.height && count.y < t.y + t.height;
      expect(overlaps, `tooltip at ${fx}`).toBe(false);
    }
  });

  for (const [w, h] of [
    [1280, 800],
    [1440, 900],
  ] as const) {
    test(`pickers show their whole choice, counts included, at ${w}×${h}`, async ({ page, open }) => {
      await page.setViewportSize({ width: w, height: h });
      /** Each toolbar select: the width its chosen text needs beside the room it has. */
      const cut = (p: Page) =>
        p.locator('.toolbar select').evaluateAll((els) =>
          (els as HTMLSelectElement[])
            .map((s) => {
              const cs = getComputedStyle(s);
              const ctx = document.createElement('canvas').getContext('2d')!;
              ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
              const text = s.selectedOptions[0]?.text ?? '';
              // The arrow takes about 20 px of the right padding.
              const room = s.clientWidth - parseFloat(cs.paddingLeft) - 20;
              return { text, need: Math.ceil(ctx.measureText(text).width), room };
            })
            .filter((x) => x.need > x.room),
        );
      await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
      await settled(page);
      expect(await cut(page)).toEqual([]);
      await open(`/logs?project=${BUSY}&source=function_edge_logs&range=1h`);
      await settled(page);
      expect(await cut(page)).toEqual([]);
      await open(`/functions?project=${BUSY}&interval=1day`);
      await expect(page.getByTestId('stat-invocations-value')).toBeVisible();
      await page.getByTestId('function-picker').selectOption({ index: 1 });
      expect(await cut(page)).toEqual([]);
      await open(`/usage?project=${BUSY}&interval=daily`);
      await expect(page.getByTestId('total-rest-value')).toBeVisible();
      expect(await cut(page)).toEqual([]);
    });
  }

  test('functions read as slugs in the facet and in a column that is not cut', async ({ page, open }) => {
    const day = fnEdge.filter((r) => r.metadata.project_ref === BUSY && r.timestamp > NOW - DAY && r.timestamp <= NOW);
    const byId = new Map<string, { n: number; slug: string }>();
    for (const r of day) {
      const id = r.metadata.function_id as string;
      const slug = /\/functions\/v1\/([^/?]+)/.exec(r.event_message)![1]!;
      byId.set(id, { n: (byId.get(id)?.n ?? 0) + 1, slug });
    }
    const [topId, top] = [...byId].sort((a, b) => b[1].n - a[1].n)[0]!;
    await open(`/logs?project=${BUSY}&source=function_edge_logs&range=24h`);
    await settled(page);
    const row = page.getByTestId('facet-function_id').locator(`[data-testid="facet-value"][data-value="${topId}"]`);
    await expect(row.locator('.ex-facet__text')).toContainText(top.slug);
    await expect(row.locator('.ex-facet__count')).toHaveText(fmt(top.n));
    // The function column shows the slug whole, at 1440 and at 1280.
    for (const [w, h] of [
      [1440, 900],
      [1280, 800],
    ] as const) {
      await page.setViewportSize({ width: w, height: h });
      const cells = page.getByTestId('log-row').locator('[data-col="function"]');
      await expect(cells.first()).toBeVisible();
      const cutCells = await cells.evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent));
      expect(cutCells, `at ${w}`).toEqual([]);
    }
  });

  test('auth records without a status can be selected from the facet; messages read as their msg', async ({ page, open }) => {
    const day = auth.filter((r) => r.project === BUSY && r.timestamp > NOW - DAY && r.timestamp <= NOW).sort((a, b) => b.timestamp - a.timestamp);
    const none = day.filter((r) => r.metadata.status === undefined);
    expect(none.length).toBeGreaterThan(0);
    await open(`/logs?project=${BUSY}&source=auth_logs&range=24h`);
    await settled(page);
    const facet = page.getByTestId('facet-status').locator('[data-testid="facet-value"][data-value="no status"]');
    await expect(facet.locator('.ex-facet__count')).toHaveText(fmt(none.length));
    // The message column: the record's msg, not its JSON.
    const first = day[0]!;
    await expect(page.getByTestId('log-row').first().locator('[data-col="message"]')).toHaveText(String(first.metadata.msg) + (first.metadata.error && first.metadata.error !== first.metadata.msg ? ` — ${first.metadata.error}` : ''));
    await facet.locator('.ex-facet__value').click();
    await expect(page).toHaveURL(/status=none(&|$)/);
    await expect(page.getByTestId('match-total')).toHaveText(`${fmt(none.length)} matching records`);
    await expect(page.getByTestId('log-row').first()).toHaveAttribute('data-id', none[0]!.id);
    // Excluding them leaves the others.
    await page.getByTestId('chip').locator('.ex-chip__body').click();
    await expect(page).toHaveURL(/status=!none(&|$)/);
    await expect(page.getByTestId('match-total')).toHaveText(`${fmt(day.length - none.length)} matching records`);
  });

  test('a zoom’s custom range reads in 24-hour time on whole seconds, and applies as typed', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await settled(page);
    const first = Math.floor((NOW - HOUR + 1) / MIN) * MIN;
    const n = Math.floor((NOW - first) / MIN) + 1;
    const grid = (await page.getByTestId('histogram-chart').locator('.recharts-cartesian-grid').boundingBox())!;
    const x = grid.x + ((40 + 0.5) * grid.width) / n;
    await page.mouse.move(x, grid.y + grid.height / 2, { steps: 3 });
    await expect(page.getByTestId('chart-tooltip')).toBeVisible();
    await page.mouse.click(x, grid.y + grid.height / 2);
    await expect(page).toHaveURL(/range=custom/);
    // Bucket 40 is [first + 40 min, first + 41 min): 14:49 to 14:50 UTC, 15:49 to 15:50 in Berlin.
    const t = new Date((first + 40 * MIN) / 1000);
    expect(t.toISOString().slice(11, 16)).toBe('14:49');
    await expect(page.getByTestId('range-start')).toHaveValue('2026-03-14 15:49:00');
    await expect(page.getByTestId('range-end')).toHaveValue('2026-03-14 15:50:00');
    await expect(page.getByTestId('range-start')).toHaveAttribute('type', 'text');
    await expect(page.getByTestId('range-text')).toHaveText('2026-03-14 15:49:00 – 15:50:00');
    // Typed 24-hour bounds: from is the first instant in, to the first after.
    await page.getByTestId('range-start').fill('2026-03-14 13:00:00');
    await page.getByTestId('range-end').fill('2026-03-14 14:30:00');
    await page.getByTestId('range-apply').click();
    await expect.poll(() => new URL(page.url()).searchParams.get('start')).toBe('2026-03-14T11:59:59.999999Z');
    expect(new URL(page.url()).searchParams.get('end')).toBe('2026-03-14T13:29:59.999999Z');
    await page.getByTestId('range-end').fill('2:30 PM');
    await expect(page.getByTestId('range-apply')).toBeDisabled();
  });

  test('in a zone that is not UTC, day buckets are written in UTC under a title that says UTC days', async ({ page, open }) => {
    await open(`/usage?project=${BUSY}&interval=daily`);
    await expect(page.getByTestId('total-rest-value')).toBeVisible();
    const card = page.getByTestId('chart-usage');
    await expect(card.locator('h2')).toContainText('Requests per day (UTC days)');
    // The window: 7 days back from 15:09 UTC, to the end of today's UTC day.
    await expect(page.getByTestId('window')).toContainText('2026-03-07 15:09 – 2026-03-15 00:00 UTC');
    await open(`/functions?project=${BUSY}&interval=7day`);
    await expect(page.getByTestId('function-table-window')).toContainText('2026-03-07 00:00 – 2026-03-15 00:00 UTC');
    await expect(page.getByTestId('window')).toContainText('2026-03-07 00:00 – 2026-03-15 00:00 UTC');
  });

  test('no chart cuts its last time label', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=7d`);
    await settled(page);
    await ticksInside(page.getByTestId('histogram-chart'));
    await open(`/functions?project=${BUSY}&interval=1day`);
    await expect(page.getByTestId('stat-invocations-value')).toBeVisible();
    await ticksInside(page.getByTestId('chart-invocations'));
    await ticksInside(page.getByTestId('chart-execution'));
    await open(`/usage?project=${BUSY}&interval=hourly`);
    await expect(page.getByTestId('total-rest-value')).toBeVisible();
    await ticksInside(page.getByTestId('chart-usage'));
  });

  test('the Functions bar and line charts put each bucket at the same x', async ({ page, open }) => {
    await open(`/functions?project=${BUSY}&interval=1day`);
    await expect(page.getByTestId('stat-invocations-value')).toBeVisible();
    const ticks = (id: string) =>
      page
        .getByTestId(id)
        .locator('.recharts-cartesian-axis-tick-value')
        // The time labels (HH:MM) are the x axis's.
        .evaluateAll((els) => els.filter((e) => /^\d\d:\d\d$/.test(e.textContent ?? '')).map((e) => ({ text: e.textContent, x: Math.round(e.getBoundingClientRect().left + e.getBoundingClientRect().width / 2) })));
    await expect(page.getByTestId('chart-execution').locator('.recharts-line').first()).toBeVisible();
    const bars = await ticks('chart-invocations');
    const lines = await ticks('chart-execution');
    // A label can repeat (16:00 opens and closes a day of hours): pair them in order.
    const pairs = bars.flatMap((b, i) => {
      const k = bars.slice(0, i).filter((x) => x.text === b.text).length;
      const l = lines.filter((x) => x.text === b.text)[k];
      return l ? [{ text: b.text, dx: Math.abs(l.x - b.x) }] : [];
    });
    expect(pairs.length).toBeGreaterThan(3);
    for (const p of pairs) expect(p.dx, `label ${p.text}`).toBeLessThanOrEqual(1);
  });

  test('the bucket still filling is drawn lighter and says so', async ({ page, open }) => {
    await open(`/functions?project=${BUSY}&interval=1day`);
    await expect(page.getByTestId('stat-invocations-value')).toBeVisible();
    const ok = page.getByTestId('chart-invocations').locator('.recharts-bar-rectangle path');
    const opacities = await ok.evaluateAll((els) => els.map((e) => e.getAttribute('fill-opacity')));
    // 25 hourly buckets per series; the last (15:00 UTC, holding now) is the light one.
    expect(opacities.slice(0, 25).filter((o) => o === '0.45')).toHaveLength(1);
    expect(opacities[24]).toBe('0.45');
    const grid = (await page.getByTestId('chart-invocations').locator('.recharts-cartesian-grid').boundingBox())!;
    await page.mouse.move(grid.x + grid.width * (24.5 / 25), grid.y + grid.height * 0.9);
    await expect(page.getByTestId('tooltip-note')).toContainText('In progress');

    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await settled(page);
    const hist = page.getByTestId('histogram-chart');
    const g = (await hist.locator('.recharts-cartesian-grid').boundingBox())!;
    await page.mouse.move(g.x + g.width - 3, g.y + g.height * 0.9);
    await expect(page.getByTestId('tooltip-note')).toContainText('Partial bucket: counts only up to 2026-03-14 16:09:26');
  });

  test('clearing the usage pattern follows the project again: no 400, and copy-as-curl asks for the project', async ({ page, open, context }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await open(`/usage?project=${BUSY}&interval=hourly&regex=${BUSY}%5C.supabase`);
    await expect(page.getByTestId('total-rest-value')).toBeVisible();
    const req = page.waitForRequest((r) => r.url().includes('/api/endpoints/usage.api-counts') && new URL(r.url()).searchParams.get('project') === BUSY);
    await page.getByTestId('usage-regex').fill('');
    await req;
    await expect(page).not.toHaveURL(/regex=/);
    await expect(page.getByTestId('error-panel')).toHaveCount(0);
    await expect(page.getByTestId('total-rest-value')).toBeVisible();
    await page.getByTestId('copy-curl').click();
    const curl = await page.evaluate(() => navigator.clipboard.readText());
    expect(curl).toContain(`project=${BUSY}`);
  });

  // Regression: recent searches filled with invalid patterns and every intermediate click.
  test('recent searches keep the searches submitted, not each facet click, zoom or range', async ({ page, open, server }) => {
    const mine = async () => (await server.api<Array<{ page: string; state: string }>>('searches')).filter((s) => new URLSearchParams(s.state).get('q') === 'rest/v1');
    const before = (await mine()).length;
    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await settled(page);
    await page.getByTestId('search-input').fill('rest/v1');
    await page.getByTestId('search-input').press('Enter');
    await expect.poll(async () => (await mine()).length).toBe(before + 1);
    await settled(page);
    await page.getByTestId('facet-method').locator('[data-testid="facet-value"]').first().locator('.ex-facet__value').click();
    await expect(page.getByTestId('chip')).toHaveCount(1);
    await settled(page);
    await page.getByTestId('range').getByRole('radio', { name: '3 h' }).click();
    await settled(page);
    await page.getByTestId('zoom-out').click();
    await settled(page);
    await page.waitForTimeout(500);
    expect((await mine()).length).toBe(before + 1);
  });

  test('the facet’s exclude control reads as a control at rest', async ({ page, open }) => {
    await open(`/logs?project=${BUSY}&source=edge_logs&range=1h`);
    await settled(page);
    const minus = page.getByTestId('facet-method').getByTestId('facet-exclude').first();
    await page.mouse.move(5, 5);
    const look = await minus.evaluate((el) => {
      const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
      const lum = ([r, g, b]: number[]) => {
        const f = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
        return 0.2126 * f(r!) + 0.7152 * f(g!) + 0.0722 * f(b!);
      };
      let bg = 'rgba(0, 0, 0, 0)';
      for (let e: Element | null = el; e && /rgba\(.*, 0\)|transparent/.test(bg); e = e.parentElement) bg = getComputedStyle(e).backgroundColor;
      const a = lum(rgb(getComputedStyle(el).color));
      const b = lum(rgb(bg));
      return { opacity: Number(getComputedStyle(el).opacity), contrast: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
    });
    expect(look.opacity).toBe(1);
    // WCAG's 3:1 for a control's glyph.
    expect(look.contrast).toBeGreaterThanOrEqual(3);
  });
});
