/**
 * A text search's count, histogram and facets while the server's walk is still running: the
 * server answers 200 with `scanned: {through, complete: false}` and what it has counted
 * so far. The demo store is small enough that every search finishes at once, so the partial
 * answers are made here from the server's real ones (the buckets older than `through` emptied),
 * as a large store gives them; the final answers are the server's own, checked against the export.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { BUSY, nowMicros, writeDemoExports } from './support/fixture-data.ts';
import { expect, test } from './support/fixtures.ts';
import { rewriteAnswers } from './support/rewrite.ts';

const NOW = nowMicros();
const HOUR = 3_600_000_000;
const DAY = 24 * HOUR;

interface Edge {
  timestamp: number;
  project?: string;
  event_message: string;
  metadata: { request: { url: string } };
}
let edge: Edge[] = [];

test.beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'progress-expect-'));
  const files = await writeDemoExports(dir);
  edge = fs
    .readFileSync(files.find((f) => path.basename(f) === 'edge_logs.ndjson')!, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Edge);
  fs.rmSync(dir, { recursive: true, force: true });
});

const matching = (text: string, start: number, end: number) =>
  edge.filter((r) => r.project === BUSY && r.timestamp > start && r.timestamp <= end && (r.event_message.toLowerCase().includes(text) || r.metadata.request.url.toLowerCase().includes(text)));

interface Bucket {
  timestamp: number;
  count: number;
  by: Record<string, number>;
}

/**
 * Answers the first `partial` histogram and facets requests of a search as a running walk would:
 * counted from `through` (a share of the range back from its end) on; later ones, and all once
 * `finish` is called, pass through.
 */
async function runningSearch(page: Page, partial: number, share: number) {
  const calls: Array<{ at: number; path: string; partial: boolean }> = [];
  const sums: number[] = [];
  let answered = 0;
  let finished = false;
  await rewriteAnswers(page, /\/api\/logs\/(histogram|facets)\?/, (u, body) => {
    if (!u.searchParams.get('q') || finished || answered >= partial * 2) {
      calls.push({ at: Date.now(), path: u.pathname, partial: false });
      return undefined;
    }
    answered++;
    const end = Date.parse(u.searchParams.get('end')!) * 1000;
    const start = Date.parse(u.searchParams.get('start')!) * 1000;
    const through = Math.round(end - (end - start) * share);
    if (u.pathname.endsWith('/histogram')) {
      body.result = (body.result as Bucket[]).map((b) => (b.timestamp < through ? { ...b, count: 0, by: {} } : b));
      sums.push((body.result as Bucket[]).reduce((n, b) => n + b.count, 0));
    }
    calls.push({ at: Date.now(), path: u.pathname, partial: true });
    return { ...body, scanned: { through, throughIso: new Date(through / 1000).toISOString(), complete: false } };
  });
  return { calls, sums, finish: () => void (finished = true) };
}

test.describe('a search still counting', () => {
  test('shows the partial count as a lower bound with its progress, asks again about every second, and stops once complete', async ({ page, open }) => {
    // Partial until the page has been looked at (a fixed number of partial answers ran out
    // before the checks below once the server answered faster).
    const { calls, sums, finish } = await runningSearch(page, Infinity, 0.4);
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h&q=rest`);
    const total = page.getByTestId('match-total');
    await expect(total).toHaveText(/^At least [\d,]+ matching records so far$/);
    // The lower bound is what the partial histogram holds.
    expect(sums.length).toBeGreaterThan(0);
    await expect(total).toHaveText(`At least ${sums[0]!.toLocaleString('en-US')} matching records so far`);
    // 40% of the 24 hours back from 15:09:26 UTC is 05:33:26 UTC, 06:33:26 in Berlin.
    // The range's last day: the time alone, the date in its title.
    await expect(page.getByTestId('search-progress')).toHaveText('Searching… counted back to 06:33:26');
    await expect(page.getByTestId('search-progress')).toHaveAttribute('title', /2026-03-14 06:33:26/);
    await expect(page.getByTestId('histogram-progress')).toHaveAttribute('aria-valuenow', '40');
    await expect(page.getByTestId('facets-progress')).toContainText('Counted back to 2026-03-14 06:33:26');
    await expect(page.getByTestId('logs-count')).toContainText('of at least');
    // Asked again while partial, three times at least, then the walk is done.
    await expect.poll(() => calls.filter((c) => c.partial && c.path.endsWith('/histogram')).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    finish();

    // Then the whole count, from the export, and no more questions.
    const expected = matching('rest', NOW - DAY, NOW).length;
    await expect(total).toHaveText(`${expected.toLocaleString('en-US')} matching records`, { timeout: 15_000 });
    await expect(page.getByTestId('search-progress')).toHaveCount(0);
    await expect(page.getByTestId('histogram-progress')).toHaveCount(0);
    await expect(page.getByTestId('facets-progress')).toHaveCount(0);
    const hist = calls.filter((c) => c.path.endsWith('/histogram'));
    // Asked again about every second while partial (react-query's interval, 1 s).
    const gaps = hist.slice(1).map((c, i) => c.at - hist[i]!.at);
    expect(gaps.length).toBeGreaterThanOrEqual(3);
    for (const g of gaps.slice(0, 3)) expect(g).toBeGreaterThan(700);
    const asked = calls.length;
    await page.waitForTimeout(2_500);
    expect(calls.length).toBe(asked);
  });

  // Regression: "0 matching records" above a table that said "No matches yet… Continue".
  test('never “0 matching records” above a table that offers to continue', async ({ page, open }) => {
    await runningSearch(page, 2, 0.3);
    // The table's first page found nothing in its time either, as on a large store.
    let pages = 0;
    await page.route(/\/api\/logs\?/, async (route) => {
      const u = new URL(route.request().url());
      if (pages++ > 0 || u.searchParams.has('cursor')) return route.continue();
      const end = Date.parse(u.searchParams.get('end')!) * 1000;
      await route.fulfill({ json: { result: [], next: 'cursor', scanned: { through: end - 3 * HOUR, throughIso: '', complete: false } } });
    });
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h&q=zzzz-nothing-matches`);
    await expect(page.getByTestId('logs-table')).toContainText('No matches yet');
    await expect(page.getByTestId('match-total')).toHaveText('No matches so far');
    await expect(page.getByTestId('match-total')).not.toHaveText(/^0 /);
    // Once the walk has covered the range, nothing matches: the table says so and offers nothing more.
    await expect(page.getByTestId('match-total')).toHaveText('0 matching records', { timeout: 15_000 });
    await expect(page.getByTestId('logs-table')).toContainText('No records match this search in this range.');
    await expect(page.getByTestId('scan-continue')).toHaveCount(0);
  });

  // Regression: the API once said it had scanned back to before the range's start and still called the result incomplete.
  test('an answer that scanned past the range’s start is complete, whatever its flag says', async ({ page, open }) => {
    let asked = 0;
    await page.route(/\/api\/logs\/(histogram|facets)\?/, async (route) => {
      const u = new URL(route.request().url());
      if (!u.searchParams.get('q')) return route.continue();
      asked++;
      const res = await route.fetch();
      const body = (await res.json()) as Record<string, unknown>;
      const start = Date.parse(u.searchParams.get('start')!) * 1000;
      body.scanned = { through: start - 5_000_000, throughIso: '', complete: false };
      await route.fulfill({ response: res, json: body });
    });
    await open(`/logs?project=${BUSY}&source=edge_logs&range=24h&q=rest`);
    const expected = matching('rest', NOW - DAY, NOW).length;
    await expect(page.getByTestId('match-total')).toHaveText(`${expected.toLocaleString('en-US')} matching records`);
    await expect(page.getByTestId('search-progress')).toHaveCount(0);
    const n = asked;
    await page.waitForTimeout(2_000);
    expect(asked).toBe(n);
  });
});
