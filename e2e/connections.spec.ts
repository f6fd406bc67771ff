/**
 * Syncing a live project in Chromium, against the loopback fake of the
 * Management API (server/testing/fake-management-api.ts) started by each test: connecting
 * (with "Test" first), the backfill's progress, pause and resume, following on and off, the
 * failed card of a refused token and its fix, the rate-limit countdown, the freshness line
 * beside each page's range, and the explorer's Live mode with records arriving by import.
 *
 * Each test has a server of its own (an empty data folder) switched to the real-time clock:
 * the sync's "now" is then the system's, as in use (a fixed clock never reaches a poll).
 */
import type { Page } from '@playwright/test';
import { floorMinute } from '../server/sync/pages.ts';
import { recordOf, REF, TOKEN } from '../server/sync/testing.ts';
import { FakeManagementApi, type FakeRecord } from '../server/testing/fake-management-api.ts';
import { MICROS } from '../server/time.ts';
import { expect, inEachLook, test, type RunningServer } from './support/fixtures.ts';
import { API_KEY } from './support/server.ts';

const DIR = 'artifacts/screenshots';
const OTHER_REF = 'zyxwvutsrqponmlkjihg';
const WRONG_TOKEN = 'sbp_wrong00000000000000000000000000000000000';
const { second: SEC, minute: MIN, day: DAY } = MICROS;

const fakes: FakeManagementApi[] = [];
test.afterEach(async () => {
  for (const f of fakes.splice(0)) await f.close();
});

/** Evenly spread records of a table over [from, to), ids `<prefix>-00000`…, newest last. */
function spread(table: string, prefix: string, from: number, to: number, count: number): FakeRecord[] {
  const step = Math.floor((to - from) / count);
  return Array.from({ length: count }, (_, i) => recordOf(table, `${prefix}-${String(i).padStart(5, '0')}`, from + i * step, i));
}

/**
 * A fake Management API on 127.0.0.1 (the system clock): the user of TOKEN reads project REF,
 * on the ClickHouse engine, with 2,500 edge and 400 auth records over the last two days.
 */
async function startFake(): Promise<FakeManagementApi> {
  const fake = new FakeManagementApi();
  fakes.push(fake);
  const now = Date.now() * 1000;
  const to = floorMinute(now) - 2 * MIN;
  fake.addUser('u1', TOKEN, [REF]).addProject(REF, 'clickhouse').addProject(OTHER_REF, 'clickhouse');
  fake.add(REF, 'edge_logs', spread('edge_logs', 'edge', to - 2 * DAY, to, 2500));
  fake.add(REF, 'auth_logs', spread('auth_logs', 'auth', to - 2 * DAY, to, 400));
  await fake.listen();
  return fake;
}

/** The server's clock to real time: the sync (and Live) then run on the system's "now". */
async function realTime(server: RunningServer): Promise<void> {
  await server.api('clock', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'system' }) });
}

async function go(page: Page, server: RunningServer, path: string): Promise<void> {
  await page.goto(`${server.url}${path}#key=${API_KEY}`);
}

/** Adds a connection through the API (the UI's own form is tested once, in the first test). */
async function connect(server: RunningServer, fake: FakeManagementApi, body: Record<string, unknown> = {}): Promise<{ id: string }> {
  return server.api('connections', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'supabase', ref: REF, url: fake.url, token: TOKEN, dialect: 'clickhouse', sources: ['edge_logs'], ...body }),
  });
}

/** Imports edge records of REF through the API, as a script or another window would. */
async function importEdge(server: RunningServer, records: FakeRecord[]): Promise<void> {
  const ndjson = records.map((r) => JSON.stringify(r)).join('\n');
  await server.api(`imports?source=edge_logs&project=${REF}&filename=live.ndjson`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: ndjson });
}

const card = (page: Page, ref = REF) => page.locator(`[data-testid="connection-card"][data-ref="${ref}"]`);
const row = (page: Page, source: string, ref = REF) => card(page, ref).locator(`[data-testid="sync-row"][data-source="${source}"]`);

test.describe('connections', () => {
  test('connect to a project: Test says what the remote answered, the backfill shows its progress, then follows; pause, resume, following off and on', async ({ page, freshServer }) => {
    test.setTimeout(120_000);
    const fake = await startFake();
    await realTime(freshServer);
    // A slow remote, so the backfill's progress can be watched.
    fake.delayMs = 600;
    await go(page, freshServer, '/data');

    const form = page.getByTestId('connect-form');
    await expect(form).toHaveCount(0);
    await page.getByTestId('connect-open').click();
    await expect(form).toBeVisible();
    // A project's URL is read as its ref.
    await page.getByTestId('connect-ref').fill(`https://${REF}.supabase.co`);
    await expect(page.getByTestId('connect-ref-parsed')).toHaveText(`Project ref ${REF}`);
    await form.getByText('Management API address').click();
    await page.getByTestId('connect-api-url').fill(fake.url);
    await expect(page.getByTestId('connect-token')).toHaveAttribute('type', 'password');
    await page.getByTestId('connect-token').fill(TOKEN);
    await form.getByRole('button', { name: 'none' }).click();
    await page.getByTestId('connect-source-edge_logs').check();
    await page.getByTestId('connect-source-auth_logs').check();
    await page.getByTestId('connect-history').getByRole('radio', { name: '7 days' }).click();

    await page.getByTestId('connect-test').click();
    const answer = page.getByTestId('connect-test-result');
    await expect(answer).toHaveAttribute('data-ok', 'true');
    // Detect tries ClickHouse first; the fake's records end two minutes ago.
    await expect(answer).toHaveText('It works. Supabase answered 200 with 0 records of the last minute in the ClickHouse dialect.');
    await answer.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${DIR}/connections-form-light.png` });
    expect(fake.calls.at(-1)!.sql).toMatch(/^select id, timestamp, event_message, severity_text, log_attributes from logs where source = 'edge_logs'/);

    await page.getByTestId('connect-submit').click();
    await expect(page.getByTestId('connect-done')).toContainText(`Connected to ${REF}: syncing 2 sources`);
    await expect(form).toBeHidden();
    const edge = row(page, 'cloudflare.logs.prod');
    await expect(edge.getByTestId('sync-state')).toHaveText('Backfilling');
    // The bar moves: time covered of the time from the history start (7 days back) to now.
    const bar = edge.getByTestId('sync-progress');
    await expect(bar).toHaveAttribute('data-ratio', /^0\.(?!000)\d+$/, { timeout: 20_000 });
    const first = await bar.evaluate((el) => ({ ratio: Number(el.getAttribute('data-ratio')), text: el.textContent }));
    expect(first.text).toMatch(/^\d+% · [\d.]+ (days|h) of 7 days$/);
    await expect.poll(async () => Number((await bar.getAttribute('data-ratio')) ?? 1), { timeout: 20_000 }).toBeGreaterThan(first.ratio);
    await expect(card(page)).toContainText('ClickHouse (detected)');

    fake.delayMs = 0;
    await expect(edge.getByTestId('sync-state')).toHaveText('Following', { timeout: 60_000 });
    await expect(row(page, 'gotrue.logs.prod').getByTestId('sync-state')).toHaveText('Following', { timeout: 30_000 });
    await expect(edge.getByTestId('sync-records')).toHaveText('2,500');
    await expect(row(page, 'gotrue.logs.prod').getByTestId('sync-records')).toHaveText('400');
    await expect(edge).toContainText(/Up to date · synced \d+ s ago/);
    await expect(edge.getByTestId('sync-through')).not.toHaveText('—');
    await expect(edge.getByTestId('sync-progress')).toHaveCount(0);
    // The stored records carry their connection's label where the project is listed.
    const stored = page.locator('[data-testid="source-row"][data-source="cloudflare.logs.prod"]');
    await expect(stored.getByTestId('source-count')).toHaveText('2,500');
    await expect(stored.getByTestId('synced-label')).toHaveText(`synced · Supabase API at ${new URL(fake.url).host}`);

    // Pause: every source rests and no call goes out; Resume goes on.
    await card(page).getByTestId('conn-pause').click();
    await expect(edge.getByTestId('sync-state')).toHaveText('Paused');
    await expect(card(page).getByTestId('conn-pause')).toHaveText('Resume');
    await expect(edge).toContainText('Paused');
    const calls = fake.calls.length;
    await page.waitForTimeout(1_500);
    expect(fake.calls.length).toBe(calls);
    await card(page).getByTestId('conn-pause').click();
    await expect(edge.getByTestId('sync-state')).toHaveText('Following');
    await expect(card(page).getByTestId('conn-pause')).toHaveText('Pause');

    // Following off: a caught-up source rests; on again, it follows.
    await card(page).getByTestId('conn-follow').uncheck();
    await expect(edge.getByTestId('sync-state')).toHaveText('Paused');
    await expect(edge).toContainText('Caught up · following is off');
    await card(page).getByTestId('conn-follow').check();
    await expect(edge.getByTestId('sync-state')).toHaveText('Following');
  });

  test('a refused token: Test and the card say so in plain words with what to do; a new token pasted there resumes the sync', async ({ page, freshServer }) => {
    test.setTimeout(90_000);
    const fake = await startFake();
    await realTime(freshServer);
    await go(page, freshServer, '/data');
    await page.getByTestId('connect-open').click();
    await page.getByTestId('connect-ref').fill(REF);
    await page.getByTestId('connect-form').getByText('Management API address').click();
    await page.getByTestId('connect-api-url').fill(fake.url);
    await page.getByTestId('connect-token').fill(WRONG_TOKEN);
    await page.getByTestId('connect-form').getByRole('button', { name: 'none' }).click();
    await page.getByTestId('connect-source-edge_logs').check();
    await page.getByTestId('connect-test').click();
    const answer = page.getByTestId('connect-test-result');
    await expect(answer).toHaveAttribute('data-ok', 'false');
    await expect(answer).toContainText('The token was refused. Supabase said: “Unauthorized”');
    await expect(answer).toContainText('Supabase answered 401: the token is wrong, expired or revoked. Create a new personal access token');
    await page.emulateMedia({ colorScheme: 'dark', reducedMotion: 'reduce' });
    await answer.scrollIntoViewIfNeeded();
    await page.waitForTimeout(300);
    await page.screenshot({ path: `${DIR}/connections-form-refused-dark.png` });

    await page.getByTestId('connect-submit').click();
    const edge = row(page, 'cloudflare.logs.prod');
    await expect(edge.getByTestId('sync-state')).toHaveText('Failed');
    await expect(card(page)).toHaveAttribute('data-state', 'failed');
    const problem = card(page).getByTestId('sync-problem');
    await expect(problem).toHaveAttribute('data-kind', 'auth');
    await expect(problem.getByTestId('sync-problem-title')).toHaveText('The token was refused');
    await expect(problem).toContainText('Supabase said: “Unauthorized”');
    await expect(problem.getByTestId('sync-problem-advice')).toContainText('the token is wrong, expired or revoked. Create a new personal access token (Account → Access Tokens) and paste it here');
    // No answer shows more of a token than its last four characters.
    await expect(card(page)).toContainText('token …0000');
    await expect(page.locator('body')).not.toContainText(WRONG_TOKEN.slice(0, 12));

    await problem.getByTestId('problem-token').fill(TOKEN);
    await problem.getByTestId('problem-token-submit').click();
    await expect(edge.getByTestId('sync-state')).toHaveText('Following', { timeout: 30_000 });
    await expect(card(page).getByTestId('sync-problem')).toHaveCount(0);
    await expect(edge.getByTestId('sync-records')).toHaveText('2,500');
    await expect(card(page)).toContainText('token …4567');
  });

  test('a 429: the source waits with a countdown and says the sync goes on by itself; remove keeps or deletes the data, confirmed', async ({ page, freshServer }) => {
    test.setTimeout(60_000);
    const fake = await startFake();
    await realTime(freshServer);
    fake.failNext({ status: 429, body: { message: 'ThrottlerException: Too Many Requests' }, headers: { 'retry-after': '40' } });
    await connect(freshServer, fake);
    await go(page, freshServer, '/data');
    const edge = row(page, 'cloudflare.logs.prod');
    await expect(edge.getByTestId('sync-state')).toHaveText('Waiting');
    const wait = edge.getByTestId('sync-wait');
    await expect(wait).toHaveAttribute('data-reason', 'rate_limited');
    await expect(wait).toHaveText(/^Rate limited: resumes in (3\d|40) s$/);
    const problem = card(page).getByTestId('sync-problem');
    await expect(problem).toHaveAttribute('data-kind', 'rate_limited');
    await expect(problem.getByTestId('sync-problem-title')).toHaveText('Rate limited by the remote');
    await expect(problem).toContainText('Supabase said: “ThrottlerException: Too Many Requests”');
    await expect(problem).toContainText('Supabase allows 60 calls a minute per account');
    // The countdown ticks between polls.
    const seconds = async () => Number(/(\d+) s$/.exec((await wait.textContent()) ?? '')?.[1]);
    const before = await seconds();
    await expect.poll(seconds, { timeout: 5_000 }).toBeLessThanOrEqual(before - 2);
    await expect(problem.getByTestId('sync-problem-countdown')).toHaveText(/^Next try in \d+ s$/);

    // Remove, keeping the records: the dialog asks first.
    await card(page).getByTestId('conn-remove').click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText(`Remove the connection to ${REF}?`);
    await expect(dialog.getByTestId('remove-keep')).toBeChecked();
    await dialog.getByTestId('remove-delete').check();
    await expect(dialog.getByRole('button', { name: 'Remove and delete records' })).toBeVisible();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(card(page)).toHaveCount(1);
    await card(page).getByTestId('conn-remove').click();
    await expect(dialog.getByTestId('remove-keep')).toBeChecked();
    await dialog.getByRole('button', { name: 'Remove connection' }).click();
    await expect(card(page)).toHaveCount(0);
    expect(await freshServer.api<unknown[]>('connections')).toEqual([]);
  });

  test('the freshness line beside each page’s range: "Synced … ago" for synced sources, the newest record for imported ones', async ({ page, freshServer }) => {
    test.setTimeout(90_000);
    const fake = await startFake();
    await realTime(freshServer);
    // Function invocations imported by hand for the same project; edge logs synced.
    const now = Date.now() * 1000;
    const newest = floorMinute(now) - 5 * MIN;
    const fn = [0, 1, 2].map((i) => recordOf('function_edge_logs', `fn-imported-${i}`, newest - i * MIN, i));
    await freshServer.api(`imports?source=function_edge_logs&project=${REF}&filename=fn.ndjson`, { method: 'POST', body: fn.map((r) => JSON.stringify(r)).join('\n') });
    await connect(freshServer, fake);
    // Another project, whose token the remote refuses.
    await connect(freshServer, fake, { ref: OTHER_REF, token: WRONG_TOKEN });
    const state = async (ref: string) =>
      (await freshServer.api<Array<{ ref: string; sources: Record<string, { state: string }> }>>('connections')).find((c) => c.ref === ref)!.sources['cloudflare.logs.prod']!.state;
    await expect.poll(() => state(REF), { timeout: 30_000 }).toBe('following');
    await expect.poll(() => state(OTHER_REF), { timeout: 30_000 }).toBe('failed');

    await go(page, freshServer, `/logs?project=${REF}&source=edge_logs&range=1h`);
    const line = page.getByTestId('freshness');
    await expect(line).toHaveAttribute('data-kind', 'synced');
    await expect(line).toHaveText(/^Synced \d+ s ago$/);
    await expect(line).toHaveAttribute('title', new RegExp(`Supabase API at .* · project ${REF}\\n2,500 records synced`));
    // It sits in the toolbar with the time range.
    await expect(page.locator('.toolbar').filter({ has: page.getByTestId('range') }).getByTestId('freshness')).toBeVisible();

    await page.getByTestId('mode-exact').click();
    await expect(page.getByTestId('freshness')).toHaveText(/^Synced \d+ s ago$/);
    await page.getByTestId('nav-usage').click();
    await expect(page.getByTestId('freshness')).toHaveText(/^Synced \d+ s ago$/);

    await page.getByTestId('nav-functions').click();
    const fnLine = page.getByTestId('freshness');
    await expect(fnLine).toHaveAttribute('data-kind', 'imported');
    const local = await page.evaluate((ms) => {
      const d = new Date(ms);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
    }, newest / 1000);
    await expect(fnLine).toHaveText(`Newest record ${local}`);

    // A failing sync says so beside the range, with a way to its card.
    await go(page, freshServer, `/usage?project=${OTHER_REF}`);
    await expect(page.getByTestId('freshness')).toHaveAttribute('data-state', 'failed');
    await expect(page.getByTestId('freshness')).toHaveText(/^Sync failed/);
    await page.getByTestId('freshness-details').click();
    await expect(card(page, OTHER_REF).getByTestId('sync-problem-title')).toHaveText('The token was refused');
  });

  test('Live: new records of the search appear at the top as they arrive, behind an "N new" pill when scrolled down, and wait while a row is selected', async ({ page, freshServer }) => {
    test.setTimeout(90_000);
    await realTime(freshServer);
    const now = Date.now() * 1000;
    // 80 records over the last ten minutes: more than the table shows at once.
    await importEdge(freshServer, spread('edge_logs', 'old', now - 10 * MIN, now - 10 * SEC, 80));
    await go(page, freshServer, `/logs?project=${REF}&source=edge_logs&range=15m`);
    const rows = page.getByTestId('log-row');
    await expect(rows.first()).toHaveAttribute('data-id', 'old-00079');
    await expect(page.getByTestId('freshness')).toHaveText(/^Newest record /);

    await page.getByTestId('live-toggle').click();
    await expect(page.getByTestId('live-toggle')).toHaveAttribute('aria-pressed', 'true');
    // An import while Live is on: its records come in at the top, newest first.
    await importEdge(freshServer, [0, 1, 2].map((i) => recordOf('edge_logs', `new-a${i}`, Date.now() * 1000 - (3 - i) * SEC, i)));
    await expect(rows.first()).toHaveAttribute('data-id', 'new-a2', { timeout: 10_000 });
    await expect(rows.nth(1)).toHaveAttribute('data-id', 'new-a1');
    await expect(rows.nth(3)).toHaveAttribute('data-id', 'old-00079');
    await expect(page.getByTestId('match-total')).toContainText('83');

    // Scrolled down: the table stays put and a pill counts what arrived.
    await page.getByTestId('logs-grid').evaluate((el) => (el.scrollTop = 600));
    await importEdge(freshServer, [0, 1].map((i) => recordOf('edge_logs', `new-b${i}`, Date.now() * 1000 - (2 - i) * SEC, i)));
    const pill = page.getByTestId('live-new');
    await expect(pill).toHaveText('↑ 2 new', { timeout: 10_000 });
    expect(await page.getByTestId('logs-grid').evaluate((el) => el.scrollTop)).toBe(600);
    await expect(page.locator('[data-testid="log-row"][data-id="new-b1"]')).toHaveCount(0);
    await page.screenshot({ path: `${DIR}/connections-live-pill-light.png` });
    await pill.click();
    await expect(rows.first()).toHaveAttribute('data-id', 'new-b1');
    await expect(pill).toHaveCount(0);
    expect(await page.getByTestId('logs-grid').evaluate((el) => el.scrollTop)).toBe(0);

    // A selected row holds Live: nothing moves until it is let go.
    await rows.nth(2).click();
    await expect(page.getByTestId('log-detail')).toBeVisible();
    await expect(page.getByTestId('live-status')).toHaveAttribute('data-state', 'paused');
    await importEdge(freshServer, [recordOf('edge_logs', 'new-c0', Date.now() * 1000 - SEC, 0)]);
    await page.waitForTimeout(4_000);
    await expect(page.locator('[data-testid="log-row"][data-id="new-c0"]')).toHaveCount(0);
    await page.getByTestId('live-resume').click();
    await expect(page.getByTestId('log-detail')).toBeHidden();
    await expect(rows.first()).toHaveAttribute('data-id', 'new-c0', { timeout: 10_000 });

    // Off: nothing more comes in by itself.
    await page.getByTestId('live-toggle').click();
    await importEdge(freshServer, [recordOf('edge_logs', 'new-d0', Date.now() * 1000 - SEC, 0)]);
    await page.waitForTimeout(4_000);
    await expect(rows.first()).toHaveAttribute('data-id', 'new-c0');
  });
});

test.describe('connections screenshots', () => {
  test('the Data page with a backfilling and a failed connection, and the explorer in Live mode, in every look', async ({ page, freshServer }) => {
    test.setTimeout(150_000);
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    const fake = await startFake();
    await realTime(freshServer);
    fake.delayMs = 400;
    await connect(freshServer, fake, { ref: OTHER_REF, token: WRONG_TOKEN, sources: ['edge_logs', 'auth_logs'] });
    await connect(freshServer, fake, { sources: ['edge_logs', 'auth_logs', 'postgres_logs'], dialect: 'detect' });
    await go(page, freshServer, '/data');
    await expect(card(page, OTHER_REF)).toHaveAttribute('data-state', 'failed');
    const bar = row(page, 'cloudflare.logs.prod').getByTestId('sync-progress');
    await expect(bar).toHaveAttribute('data-ratio', /^0\.[1-9]\d*$/, { timeout: 20_000 });
    // Hold the remote's next answers so the backfill stays mid-way while the pictures are taken.
    fake.delayMs = 20_000;
    await card(page).scrollIntoViewIfNeeded();
    await inEachLook(page, async ({ scheme, w, h }) => {
      await page.getByTestId('connections-card').evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await expect(row(page, 'cloudflare.logs.prod').getByTestId('sync-state')).toHaveText(/Backfilling|Waiting/);
      await page.screenshot({ path: `${DIR}/connections-data-${w}x${h}-${scheme}.png` });
    });
    // The held answers come back, the backfill ends and the source follows: "Synced … ago" beside the range.
    fake.delayMs = 0;
    await expect(row(page, 'cloudflare.logs.prod').getByTestId('sync-state')).toHaveText('Following', { timeout: 60_000 });

    await page.setViewportSize({ width: 1440, height: 900 });
    await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });
    const now = Date.now() * 1000;
    await importEdge(freshServer, spread('edge_logs', 'shot', now - 10 * MIN, now - 10 * SEC, 80));
    await go(page, freshServer, `/logs?project=${REF}&source=edge_logs&range=15m`);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
    await page.getByTestId('live-toggle').click();
    await page.getByTestId('logs-grid').evaluate((el) => (el.scrollTop = 300));
    await importEdge(freshServer, [0, 1, 2, 3].map((i) => recordOf('edge_logs', `shot-new-${i}`, Date.now() * 1000 - (4 - i) * SEC, i)));
    await expect(page.getByTestId('live-new')).toBeVisible({ timeout: 10_000 });
    await expect(page.getByTestId('freshness')).toHaveText(/^Synced \d+ s ago$/);
    await inEachLook(page, async ({ scheme, w, h }) => {
      await expect(page.getByTestId('live-new')).toBeVisible();
      await page.screenshot({ path: `${DIR}/connections-live-${w}x${h}-${scheme}.png` });
    });
    expect(problems).toEqual([]);
  });
});
