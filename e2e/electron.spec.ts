/**
 * The real desktop app under Playwright's Electron driver: bundled shell (electron/build.ts),
 * built renderer (npm run build), a user-data folder of its own per test. Skipped, with the
 * reason, where Electron's binary is not installed (ELECTRON_SKIP_BINARY_DOWNLOAD) or there
 * is no display to open a window on.
 *
 * Native dialogs cannot be clicked, so the tests replace `dialog.*` in the main process
 * (main.ts calls them through the module object at call time for exactly this). A dialog
 * main shows on its own at start (the first-start demo notice) is replaced before main runs,
 * by a module preloaded with `-r`.
 *
 * What the page does with the bridge's events runs everywhere in e2e/bridge.spec.ts (a fake
 * shell in a browser) and in renderer/src/api/bridge.test.ts; here the real shell sends them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { _electron as electron, expect, test, type ElectronApplication, type Page } from '@playwright/test';
import { fnRecord } from '../server/testing/fixtures.ts';
import { buildElectron } from '../electron/build.ts';
import { findElectronBinary } from '../electron/launch.ts';
import { EXPORT_MENU_IDS, MENU_IDS } from '../electron/menu.ts';
import { SERVER_SERVICE_NAME } from '../electron/protocol.ts';
import { BUNDLES, ELECTRON_OUT_DIR, RENDERER_OUT_DIR } from '../electron/runtime-paths.ts';
import { initialBounds, readShellState, STATE_FILE } from '../electron/shell-state.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const MAIN = path.join(ROOT, ELECTRON_OUT_DIR, BUNDLES.main);
const binary = findElectronBinary();
const noDisplay = process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY;

/** Function invocations of one project over the last half hour, in a file named for its source. */
const PROJECT = 'e2eprojectaaaaaaaaaa';
const INVOCATIONS = 30;

function writeInvocations(dir: string): string {
  const now = Date.now() * 1000;
  const file = path.join(dir, 'function_edge_logs.ndjson');
  const lines = Array.from({ length: INVOCATIONS }, (_, i) => JSON.stringify(fnRecord(now - (i + 1) * 60_000_000, { project: PROJECT, functionId: 'fn-e2e', exec: 10 + i, status: i % 10 === 0 ? 500 : 200 })));
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

interface Launched {
  app: ElectronApplication;
  page: Page;
  userData: string;
}

interface LaunchOptions {
  /** Load the demo data on a first start (off unless asked). */
  demo?: boolean;
  /** Modules for the main process to run before main.cjs (Electron's `-r`). */
  preload?: string[];
}

async function launch(userData: string, opts: LaunchOptions = {}): Promise<Launched> {
  const app = await electron.launch({
    executablePath: binary.ok ? binary.path : '',
    // Chromium refuses to run as root with its sandbox (containers, CI); the renderer stays sandboxed by Electron's own settings.
    args: [...(opts.preload ?? []).flatMap((m) => ['-r', m]), MAIN, ...(process.platform === 'linux' && process.getuid?.() === 0 ? ['--no-sandbox'] : [])],
    cwd: ROOT,
    env: { ...process.env, LOG_EXPLORER_USER_DATA_DIR: userData, LOG_EXPLORER_DEMO: opts.demo ? '1' : '0', ELECTRON_ENABLE_LOGGING: '1' } as Record<string, string>,
    timeout: 60_000,
  });
  const page = await app.firstWindow();
  return { app, page, userData };
}

/** Replaces the main process's open dialog (returns `files`) and message boxes (recorded, first button). */
async function stubDialogs(app: ElectronApplication, files: string[]): Promise<void> {
  await app.evaluate(({ dialog }, chosen) => {
    const g = globalThis as unknown as { __messageBoxes: unknown[] };
    g.__messageBoxes = [];
    dialog.showOpenDialog = (async () => ({ canceled: false, filePaths: chosen })) as typeof dialog.showOpenDialog;
    dialog.showMessageBox = (async (...args: unknown[]) => {
      g.__messageBoxes.push(args.at(-1));
      return { response: 0, checkboxChecked: false };
    }) as typeof dialog.showMessageBox;
  }, files);
}

async function stubOpenExternal(app: ElectronApplication): Promise<void> {
  await app.evaluate(({ shell }) => {
    const g = globalThis as unknown as { __opened: string[] };
    g.__opened = [];
    shell.openExternal = (async (url: string) => {
      g.__opened.push(url);
    }) as typeof shell.openExternal;
  });
}

/**
 * A main-process module (run with `-r` before main.cjs) that replaces the message boxes from
 * the start: each is recorded; the first-start demo notice waits until the test answers it
 * with `__answerDemo(label)`, the others answer with their first button.
 */
function writeDialogStub(dir: string): string {
  const file = path.join(dir, 'dialog-stub.cjs');
  fs.writeFileSync(
    file,
    `const { dialog } = require('electron');
globalThis.__messageBoxes = [];
dialog.showMessageBox = (...args) => {
  const options = args[args.length - 1];
  globalThis.__messageBoxes.push(options);
  const buttons = Array.isArray(options.buttons) ? options.buttons : [];
  if (!buttons.includes('Clear Demo Data')) return Promise.resolve({ response: 0, checkboxChecked: false });
  return new Promise((resolve) => {
    globalThis.__answerDemo = (label) => resolve({ response: buttons.indexOf(label), checkboxChecked: false });
  });
};
`,
  );
  return file;
}

/** Saves the page's next download to `file` instead of asking where (Electron's save dialog cannot be clicked). */
const saveNextDownloadTo = (app: ElectronApplication, file: string) =>
  app.evaluate(({ session }, target) => {
    session.defaultSession.once('will-download', (_event, item) => item.setSavePath(target));
  }, file);

const readJson = <T>(file: string): T | undefined => {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined; // not there, or not written to the end yet
  }
};

const clickMenu = (app: ElectronApplication, id: string) =>
  app.evaluate(({ Menu }, itemId) => {
    const item = Menu.getApplicationMenu()?.getMenuItemById(itemId);
    if (!item) throw new Error(`no menu item ${itemId}`);
    item.click();
  }, id);

const tempUserData = () => fs.mkdtempSync(path.join(os.tmpdir(), 'le-e2e-electron-'));

test.describe('desktop app (Electron)', () => {
  test.skip(!binary.ok, binary.ok ? '' : binary.reason);
  test.skip(noDisplay, 'no display to open a window on (run under xvfb-run)');
  test.describe.configure({ mode: 'serial', timeout: 120_000 });

  test.beforeAll(async () => {
    if (!fs.existsSync(path.join(ROOT, RENDERER_OUT_DIR, 'index.html'))) throw new Error(`${RENDERER_OUT_DIR}/index.html is missing: run npm run build first`);
    await buildElectron();
  });

  test('opens the app page, locked down; File → Import shows the data without a reload; Export Current View saves it', async () => {
    const dir = tempUserData();
    const { app, page } = await launch(dir);
    try {
      // The page is the server's, on loopback; the key left the address bar.
      await expect(page.locator('main')).toBeVisible();
      expect(page.url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
      await expect.poll(() => page.url()).not.toContain('key=');

      // No Node in the page; exactly the named bridge.
      expect(await page.evaluate<string>('typeof require')).toBe('undefined');
      expect(await page.evaluate<string>('typeof process')).toBe('undefined');
      expect(await page.evaluate<string[]>('Object.keys(window.logExplorer).sort()')).toEqual(['desktop', 'importFiles', 'onDataChanged', 'onExportRequested', 'openDataFolder']);

      // An empty store: the Functions page says what to import.
      await expect(page.getByTestId('empty-state')).toBeVisible({ timeout: 20_000 });
      await page.evaluate('window.__sameDocument = true');

      // File → Import Logs…: the server imports the chosen file by path; a summary is shown.
      const fnFile = writeInvocations(dir);
      await stubDialogs(app, [fnFile]);
      await clickMenu(app, MENU_IDS.importLogs);
      await expect.poll(() => app.evaluate(() => (globalThis as unknown as { __messageBoxes: Array<{ message: string }> }).__messageBoxes.map((m) => m.message))).toEqual(['Imported 1 file']);

      // The shell said data changed: the page shows the imported invocations, no reload.
      await expect(page.getByTestId('chart-invocations').locator('.recharts-surface').first()).toBeVisible({ timeout: 20_000 });
      await expect(page.getByTestId('stat-invocations-value')).toHaveText(String(INVOCATIONS));
      expect(await page.evaluate<boolean>('window.__sameDocument === true')).toBe(true);

      // File → Export Current View → JSON: the page saves the invocation stats it shows.
      const exported = path.join(dir, 'exported-view.json');
      await saveNextDownloadTo(app, exported);
      await clickMenu(app, EXPORT_MENU_IDS.json);
      await expect.poll(() => readJson<{ result: Array<{ count: number }> }>(exported)?.result.reduce((n, r) => n + r.count, 0), { timeout: 15_000 }).toBe(INVOCATIONS);
      await expect(page.getByTestId('notice-text')).toContainText('Exported invocation stats as invocation-stats_');

      // The bridge: same import (all duplicates now), and the page hears that data changed.
      const changed = page.evaluate<boolean>('new Promise((resolve) => window.logExplorer.onDataChanged(() => resolve(true)))');
      const result = await page.evaluate<{ canceled: boolean; files: Array<{ ok: boolean; report?: { imported: number; duplicates: number; source: string } }> }>('window.logExplorer.importFiles()');
      expect(result.canceled).toBe(false);
      expect(result.files[0]).toMatchObject({ ok: true, report: { imported: 0, duplicates: INVOCATIONS, source: 'deno-relay-logs' } });
      expect(await Promise.race([changed, new Promise<boolean>((r) => setTimeout(() => r(false), 5_000))])).toBe(true);

      // Navigation away is refused; http(s) links go to the system browser, nothing else does.
      await stubOpenExternal(app);
      const appUrl = page.url();
      await page.evaluate("location.href = 'https://example.com/docs'");
      await page.evaluate("window.open('https://example.com/new', '_blank')");
      await page.evaluate("window.open('file:///etc/passwd')");
      await page.evaluate("location.href = 'file:///etc/passwd'");
      await expect.poll(() => app.evaluate(() => [...(globalThis as unknown as { __opened: string[] }).__opened].sort())).toEqual(['https://example.com/docs', 'https://example.com/new']);
      expect(page.url()).toBe(appUrl);
      expect(app.windows()).toHaveLength(1);
    } finally {
      await app.close();
    }
    // Quitting saved the store (in its own folder, apart from Chromium's), and the shell state is owner-only.
    expect(fs.existsSync(path.join(dir, 'data', 'catalog.sqlite'))).toBe(true);
    if (process.platform !== 'win32') expect(fs.statSync(path.join(dir, STATE_FILE)).mode & 0o777).toBe(0o600);
  });

  test('first start: the page shows the demo data once loaded, and Clear Demo Data empties it, without a reload', async () => {
    const dir = tempUserData();
    const { app, page } = await launch(dir, { demo: true, preload: [writeDialogStub(dir)] });
    try {
      await expect(page.locator('main')).toBeVisible();
      await page.evaluate('window.__sameDocument = true');
      // The window opens while the demo data loads: data-changed (or, had the data come first,
      // the page's own first requests) brings it onto the page.
      await expect(page.getByTestId('stat-invocations-value')).toHaveText(/^[1-9][\d,]*$/, { timeout: 60_000 });
      await page.getByTestId('nav-data').click();
      await expect(page.getByTestId('source-row').first()).toBeVisible();

      // "Clear Demo Data" in the shell's notice: the shell deletes them, then says data changed.
      await expect.poll(() => app.evaluate(() => typeof (globalThis as unknown as { __answerDemo?: unknown }).__answerDemo), { timeout: 30_000 }).toBe('function');
      await app.evaluate(() => (globalThis as unknown as { __answerDemo: (label: string) => void }).__answerDemo('Clear Demo Data'));
      await expect(page.getByTestId('no-sources')).toBeVisible({ timeout: 30_000 });
      await page.getByTestId('nav-functions').click();
      await expect(page.getByTestId('empty-state')).toBeVisible();
      expect(await page.evaluate<boolean>('window.__sameDocument === true')).toBe(true);
    } finally {
      await app.close();
    }
  });

  test('a killed server shows the error page with its log; Restart brings the app back', async () => {
    const dir = tempUserData();
    const { app, page } = await launch(dir);
    try {
      await expect(page.locator('main')).toBeVisible();
      const firstUrl = new URL(page.url()).origin;
      const pid = await app.evaluate(({ app: electronApp }, name) => electronApp.getAppMetrics().find((m) => m.type === 'Utility' && (m.name === name || m.serviceName === name))?.pid, SERVER_SERVICE_NAME);
      expect(pid).toBeGreaterThan(0);

      process.kill(pid!, 'SIGKILL');

      await expect(page.getByTestId('server-error')).toHaveText('The server stopped');
      await expect(page.locator('pre')).toContainText(`listening on ${firstUrl}`);
      // The error page is not the app: IPC refuses it (or, if Electron gives a data: page no preload, there is no bridge at all).
      await expect(page.evaluate('window.logExplorer.openDataFolder()')).rejects.toThrow(/is not available to this page|Cannot read properties of undefined/);

      await page.locator('#restart').click();
      await expect(page.locator('main')).toBeVisible({ timeout: 30_000 });
      expect(new URL(page.url()).origin).toBe(firstUrl); // a new server on the same port (a new key)
    } finally {
      await app.close();
    }
  });

  test('remembers the window bounds across runs', async () => {
    const dir = tempUserData();
    const first = await launch(dir);
    await expect(first.page.locator('main')).toBeVisible();
    await first.app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0]!.setBounds({ x: 60, y: 70, width: 1000, height: 700 }));
    await first.app.close();
    const saved = readShellState(path.join(dir, STATE_FILE)).window;
    expect(saved).toMatchObject({ width: 1000, height: 700, maximized: false });

    const second = await launch(dir);
    try {
      await expect(second.page.locator('main')).toBeVisible();
      const { bounds, areas } = await second.app.evaluate(({ BrowserWindow, screen }) => ({
        bounds: BrowserWindow.getAllWindows()[0]!.getBounds(),
        areas: screen.getAllDisplays().map((d) => d.workArea),
      }));
      // As saved, but fitted to the display (a virtual display may be smaller than the window).
      const expected = initialBounds(saved, areas).bounds;
      expect({ width: bounds.width, height: bounds.height }).toEqual({ width: expected.width, height: expected.height });
    } finally {
      await second.app.close();
    }
  });
});
