/**
 * Saved views and recent searches: saved on one server, reopened from the list on
 * another server process over the same data folder (a restart on a new port); the menu by
 * keyboard; screenshots of the open menu at two sizes in light and dark.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { BUSY, NOW_ISO, writeDemoExports } from './support/fixture-data.ts';
import { expect, test, inEachLook } from './support/fixtures.ts';
import { API_KEY } from './support/server.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SHOTS = 'artifacts/screenshots';

interface Served {
  url: string;
  post<T>(p: string, body: unknown): Promise<T>;
  stop(): Promise<void>;
}

/**
 * The real server on a data folder of ours (the fixtures' servers each make and delete their
 * own): stopping it and starting another on the same folder is a restart, on a new port.
 */
async function serve(dataDir: string, imports: string[] = []): Promise<Served> {
  const args = ['--import', 'tsx', 'server/main.ts', '--data-dir', dataDir, '--port', '0', '--api-key', API_KEY, '--now', NOW_ISO];
  for (const f of imports) args.push('--import', f);
  const child: ChildProcess = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within 60 s:\n${output}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const m = /Listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    async post<T>(p: string, body: unknown): Promise<T> {
      const res = await fetch(`${url}/api/${p}`, { method: 'POST', headers: { 'X-API-KEY': API_KEY, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      const json = (await res.json()) as { result: T; error?: { message: string } };
      if (!res.ok) throw new Error(`${res.status} ${json.error?.message ?? ''}`);
      return json.result;
    },
    async stop() {
      if (child.exitCode !== null) return;
      // SIGTERM saves and releases the folder's lock, as a user quitting would.
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

const menu = (page: Page) => page.getByTestId('saved-views-menu');
const trigger = (page: Page) => page.getByTestId('saved-views-trigger');

test.describe.serial('saved views and recent searches', () => {
  let dataDir = '';
  let files: string[] = [];
  let server: Served | undefined;

  let exportsDir = '';

  test.beforeAll(async ({}, info) => {
    info.setTimeout(120_000);
    // Outside test-results: another Playwright run may clear that folder meanwhile.
    exportsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-explorer-views-exports-'));
    files = await writeDemoExports(exportsDir);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-explorer-views-e2e-'));
  });

  test.afterAll(async () => {
    await server?.stop();
    for (const d of [dataDir, exportsDir]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  test('a view saved on API usage reopens from the list after a restart on a new port', async ({ page }) => {
    test.setTimeout(120_000);
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(String(e)));
    server = await serve(dataDir, files);
    const first = server;
    await page.goto(`${first.url}/usage?project=${BUSY}&interval=hourly#key=${API_KEY}`);
    await expect(page.getByTestId('total-rest-value')).toBeVisible();

    await trigger(page).click();
    await expect(menu(page)).toBeVisible();
    await expect(trigger(page)).toHaveAttribute('aria-expanded', 'true');
    await expect(menu(page)).toContainText('No saved views yet');
    await menu(page).getByTestId('sv-save-current').click();
    // The name is suggested from the page and project; what will be saved is shown.
    await expect(page.getByTestId('sv-name-input')).toHaveValue(`API usage · ${BUSY}`);
    await expect(page.getByTestId('sv-save-form')).toContainText('interval hourly');
    await page.getByTestId('sv-name-input').fill('Busy project, hourly');
    await page.getByTestId('sv-name-submit').click();
    await expect(menu(page).getByTestId('sv-view-open')).toHaveCount(1);
    await expect(menu(page).getByTestId('sv-view-open')).toContainText('Busy project, hourly');
    await expect(page.getByTestId('sv-status')).toHaveText('Saved “Busy project, hourly”.');

    // The same name again (in another case) is refused with the server's message, at the field.
    await menu(page).getByTestId('sv-save-current').click();
    await page.getByTestId('sv-name-input').fill('busy PROJECT, hourly');
    await page.getByTestId('sv-name-input').press('Enter');
    await expect(page.getByTestId('sv-error')).toContainText('exists already');
    await expect(page.getByTestId('sv-name-input')).toHaveAttribute('aria-invalid', 'true');
    await page.getByTestId('sv-name-input').press('Escape');
    await expect(page.getByTestId('sv-save-form')).toHaveCount(0);
    await expect(menu(page)).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(menu(page)).toHaveCount(0);
    await expect(trigger(page)).toBeFocused();

    // Restart: stop this server, start another process on the same folder (a new port).
    await first.stop();
    server = await serve(dataDir);
    const second = server;
    await page.goto(`${second.url}/functions?project=${BUSY}&interval=1day#key=${API_KEY}`);
    await expect(page.getByTestId('stat-invocations-value')).toBeVisible();
    await trigger(page).click();
    const saved = menu(page).getByTestId('sv-view-open');
    await expect(saved).toHaveCount(1);
    await expect(saved).toContainText('Busy project, hourly');
    await expect(saved).toContainText('API usage');
    await saved.click();
    await expect(menu(page)).toHaveCount(0);
    await expect(page).toHaveURL(new RegExp(`/usage\\?project=${BUSY}&interval=hourly$`));
    await expect(page.getByTestId('interval').getByRole('radio', { name: /^hourly/i })).toHaveAttribute('aria-checked', 'true');
    await expect(page.getByTestId('window')).toContainText('2 buckets');
    // Back returns to where the view was opened from.
    await page.goBack();
    await expect(page).toHaveURL(/\/functions\?/);
    expect(problems).toEqual([]);
  });

  test('keyboard: open, move, rename with F2, delete with Delete, Escape closes', async ({ page }) => {
    const s = server!;
    await s.post('views', { name: 'Logs, last day', page: 'logs', state: `project=${BUSY}&tier=PRO&range=24h` });
    await page.goto(`${s.url}/functions?project=${BUSY}&interval=1day#key=${API_KEY}`);
    await expect(page.getByTestId('stat-invocations-value')).toBeVisible();

    await trigger(page).focus();
    await page.keyboard.press('ArrowDown');
    await expect(menu(page)).toBeVisible();
    await expect(menu(page).getByTestId('sv-save-current')).toBeFocused();
    // The saved views arrive after the menu opens: an arrow pressed before them has nowhere to go
    // (a clean-clone run once pressed it first).
    const rows = menu(page).getByTestId('sv-view');
    await expect(rows.nth(0)).toBeVisible();
    await page.keyboard.press('ArrowDown');
    await expect(rows.nth(0).getByTestId('sv-view-open')).toBeFocused();
    await expect(rows.nth(0)).toContainText('Logs, last day');
    await page.keyboard.press('ArrowDown');
    await expect(rows.nth(1).getByTestId('sv-view-open')).toBeFocused();
    await page.keyboard.press('ArrowUp');
    await expect(rows.nth(0).getByTestId('sv-view-open')).toBeFocused();
    // Right reaches the row's rename and delete buttons; Left comes back.
    await page.keyboard.press('ArrowRight');
    await expect(rows.nth(0).getByTestId('sv-rename')).toBeFocused();
    await page.keyboard.press('ArrowRight');
    await expect(rows.nth(0).getByTestId('sv-delete')).toBeFocused();
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await expect(rows.nth(0).getByTestId('sv-view-open')).toBeFocused();

    await page.keyboard.press('F2');
    const input = page.getByTestId('sv-name-input');
    await expect(input).toBeFocused();
    await expect(input).toHaveValue('Logs, last day');
    await input.fill('PRO logs, 24 h');
    await input.press('Enter');
    await expect(rows.nth(0).getByTestId('sv-view-open')).toContainText('PRO logs, 24 h');
    await expect(rows.nth(0).getByTestId('sv-view-open')).toBeFocused();

    await page.keyboard.press('Delete');
    await expect(page.getByTestId('sv-delete-confirm')).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(rows).toHaveCount(2);
    await expect(rows.nth(0).getByTestId('sv-view-open')).toBeFocused();
    await page.keyboard.press('Delete');
    await page.keyboard.press('Enter');
    await expect(rows).toHaveCount(1);
    await expect(page.getByTestId('sv-status')).toHaveText('Deleted “PRO logs, 24 h”.');
    await expect(rows.nth(0).getByTestId('sv-view-open')).toBeFocused();

    // Enter opens the focused view; Escape (on a fresh open) closes with focus on the button.
    await page.keyboard.press('Escape');
    await expect(menu(page)).toHaveCount(0);
    await expect(trigger(page)).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(menu(page)).toBeVisible();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/usage\?/);
  });

  test('recent searches: the last 20, newest first, reopened and cleared from the menu', async ({ page }) => {
    const s = server!;
    // As the Logs page records them (recordSearch in renderer/src/api/views.ts).
    for (let i = 0; i < 22; i++) await s.post('searches', { page: 'logs', state: `project=${BUSY}&tier=FREE&range=1h&q=${i}`, label: `status:${500 + i}` });
    await s.post('searches', { page: 'logs', state: `project=${BUSY}&tier=PRO&range=24h`, label: 'POST /rest' });
    await page.goto(`${s.url}/usage?project=${BUSY}&interval=daily#key=${API_KEY}`);
    await expect(page.getByTestId('total-rest-value')).toBeVisible();
    await trigger(page).click();
    const items = menu(page).getByTestId('sv-search');
    await expect(items).toHaveCount(20);
    await expect(items.first()).toContainText('POST /rest');
    await expect(items.nth(1)).toContainText('status:521');
    await expect(items.last()).toContainText('status:503');
    await items.first().click();
    // The Logs page may add parameters of its own; these must be the search's.
    await expect(page).toHaveURL((u) => u.pathname === '/logs' && u.searchParams.get('project') === BUSY && u.searchParams.get('tier') === 'PRO' && u.searchParams.get('range') === '24h');

    await trigger(page).click();
    await menu(page).getByTestId('sv-clear-searches').click();
    await expect(items).toHaveCount(0);
    await expect(menu(page)).toContainText('No searches yet');
  });

  test('screenshots of the open menu: 1440×900 and 1024×700, light and dark', async ({ page }) => {
    const s = server!;
    await s.post('views', { name: 'Errors on the busy project', page: 'logs', state: `project=${BUSY}&tier=PRO&range=24h` });
    await s.post('views', { name: 'Invocations this week, all functions', page: 'functions', state: `project=${BUSY}&interval=7day` });
    for (const [label, range] of [
      ['status:500', '1h'],
      ['/rest/v1/todos', '3h'],
      ['POST auth token', '24h'],
    ] as const) {
      await s.post('searches', { page: 'logs', state: `project=${BUSY}&tier=PRO&range=${range}`, label });
    }
    await inEachLook(page, async ({ scheme, w, h }) => {
      await page.goto(`${s.url}/usage?project=${BUSY}&interval=daily#key=${API_KEY}`);
      await expect(page.getByTestId('total-rest-value')).toBeVisible();
      await trigger(page).click();
      await expect(menu(page).getByTestId('sv-search')).toHaveCount(3);
      await page.keyboard.press('ArrowDown');
      await page.screenshot({ path: `${SHOTS}/saved-views-${scheme}-${w}x${h}.png` });
      const box = (await menu(page).boundingBox())!;
      // The menu stays within the window.
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(w);
      expect(box.y + box.height).toBeLessThanOrEqual(h);
      await menu(page).getByTestId('sv-save-current').click();
      await page.screenshot({ path: `${SHOTS}/saved-views-save-${scheme}-${w}x${h}.png` });
      // Escape ends the edit, then closes the menu (the next goto differs only in its fragment, so the page stays).
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('sv-save-form')).toHaveCount(0);
      await page.keyboard.press('Escape');
      await expect(menu(page)).toHaveCount(0);
    });
  });
});
