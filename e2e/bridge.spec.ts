/**
 * The page and the desktop shell's bridge, in a browser: a fake `window.logExplorer` is put
 * in before the page's scripts (as the preload does), and the test speaks as the shell. What
 * the real shell sends is e2e/electron.spec.ts's part (it needs Electron's binary); this runs
 * everywhere.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { BUSY, writeImportFile } from './support/fixture-data.ts';
import { expect, inEachLook, test, waitForEndpoint, type RunningServer } from './support/fixtures.ts';

type Format = 'csv' | 'ndjson' | 'json';

interface ImportReport {
  source: string;
  imported: number;
  duplicates: number;
  rejected: number;
  errors?: Array<{ line?: number; reason: string }>;
  errorsOmitted?: number;
}

type Outcome = { file: string; ok: true; report: ImportReport } | { file: string; ok: false; reason: string };

/** What the test reaches in the page: the shell's side of the fake bridge. */
interface FakeShell {
  importCalls: number;
  /** What each importFiles() call was given, in order. */
  importOptions: unknown[];
  importResult: { canceled: boolean; files: Outcome[] };
  /** While set, importFiles() waits for release(): the dialog is open or the server is reading. */
  hold: boolean;
  release(): void;
  listeners(): { dataChanged: number; exportRequested: number };
  fireDataChanged(): void;
  fireExportRequested(format: Format): void;
}

/** Runs in the page before its scripts; the e2e tsconfig has no DOM types, hence globalThis. */
function installFakeBridge(): void {
  const dataChanged = new Set<() => void>();
  const exportRequested = new Set<(format: Format) => void>();
  let released: () => void = () => {};
  const shell: FakeShell = {
    importCalls: 0,
    importOptions: [],
    importResult: { canceled: true, files: [] },
    hold: false,
    release: () => released(),
    listeners: () => ({ dataChanged: dataChanged.size, exportRequested: exportRequested.size }),
    fireDataChanged: () => [...dataChanged].forEach((l) => l()),
    fireExportRequested: (format) => [...exportRequested].forEach((l) => l(format)),
  };
  const g = globalThis as unknown as { __shell: FakeShell; __sameDocument?: boolean; logExplorer: unknown };
  g.__shell = shell;
  g.logExplorer = {
    desktop: true,
    importFiles: async (options?: unknown) => {
      shell.importCalls++;
      shell.importOptions.push(options);
      if (shell.hold) await new Promise<void>((resolve) => (released = resolve));
      return shell.importResult;
    },
    openDataFolder: async () => {},
    onDataChanged(callback: () => void) {
      const l = () => callback();
      dataChanged.add(l);
      return () => void dataChanged.delete(l);
    },
    onExportRequested(callback: (format: Format) => void) {
      const l = (format: Format) => callback(format);
      exportRequested.add(l);
      return () => void exportRequested.delete(l);
    },
  };
}

const listeners = (page: Page) => page.evaluate(() => (globalThis as unknown as { __shell: FakeShell }).__shell.listeners());
const importCalls = (page: Page) => page.evaluate(() => (globalThis as unknown as { __shell: FakeShell }).__shell.importCalls);
const importOptions = (page: Page) => page.evaluate(() => (globalThis as unknown as { __shell: FakeShell }).__shell.importOptions);
const fireDataChanged = (page: Page) => page.evaluate(() => (globalThis as unknown as { __shell: FakeShell }).__shell.fireDataChanged());
const fireExport = (page: Page, format: Format) => page.evaluate((f) => (globalThis as unknown as { __shell: FakeShell }).__shell.fireExportRequested(f), format);
/** A mark in the page's globals: still there later means the page was never reloaded. */
const markDocument = (page: Page) => page.evaluate(() => void ((globalThis as unknown as { __sameDocument: boolean }).__sameDocument = true));
const sameDocument = (page: Page) => page.evaluate(() => (globalThis as unknown as { __sameDocument?: boolean }).__sameDocument === true);

/** Imports a file through the API, as the shell's server does for a native import (with the page's source and project, if any). */
async function importThroughApi(server: RunningServer, file: string, name: string, options: { source?: string; project?: string } = {}): Promise<ImportReport> {
  return server.api<ImportReport>(`imports?${new URLSearchParams({ filename: name, ...options })}`, {
    method: 'POST',
    body: fs.readFileSync(file),
    headers: { 'Content-Type': 'application/octet-stream' },
  });
}

interface SourceRow {
  source: string;
  count: number;
}

test.describe('the desktop bridge (fake shell, browser)', () => {
  test.beforeEach(async ({ page }) => {
    await page.addInitScript(installFakeBridge);
  });

  test('the page listens once to each shell event', async ({ page, open }) => {
    await open('/data');
    await expect(page.getByTestId('sources-table')).toBeVisible();
    await expect.poll(() => listeners(page)).toEqual({ dataChanged: 1, exportRequested: 1 });
  });

  test('data-changed refreshes what every page shows, without a reload (import, then cleared)', async ({ page, open, freshServer }, info) => {
    fs.mkdirSync(info.outputDir, { recursive: true });
    const file = path.join(info.outputDir, 'edge_logs-bridge.ndjson');
    const RECORDS = 40;
    writeImportFile(file, RECORDS, 0, 'bridge');

    await open('/logs', freshServer);
    await expect(page.getByTestId('empty-state')).toBeVisible();
    await page.getByTestId('nav-data').click();
    await expect(page.getByTestId('no-sources')).toBeVisible();
    await markDocument(page);

    // The shell's server imports; the page has not been told yet, so it still shows nothing.
    const report = await importThroughApi(freshServer, file, 'edge_logs-bridge.ndjson');
    expect(report.imported).toBe(RECORDS);
    await expect(page.getByTestId('no-sources')).toBeVisible();

    await fireDataChanged(page);
    const row = page.locator(`[data-testid="source-row"][data-source="${report.source}"]`);
    await expect(row.getByTestId('source-count')).toHaveText(String(RECORDS));
    // Another page's view was stale too: the Logs page shows the records, not its empty state.
    await page.getByTestId('nav-logs').click();
    await expect(page.getByTestId('log-row').first()).toBeVisible();
    await expect(page.getByTestId('empty-state')).toHaveCount(0);

    // "Clear Demo Data": the shell deletes the sources, then says data changed.
    await page.getByTestId('nav-data').click();
    await expect(row).toBeVisible();
    await freshServer.api(`sources/${encodeURIComponent(report.source)}`, { method: 'DELETE' });
    await fireDataChanged(page);
    await expect(page.getByTestId('no-sources')).toBeVisible();
    await page.getByTestId('nav-logs').click();
    await expect(page.getByTestId('empty-state')).toBeVisible();
    expect(await sameDocument(page)).toBe(true);
  });

  test('Export Current View saves what the page shows, in the chosen format', async ({ page, open, server }) => {
    const expectedSources = (await server.api<SourceRow[]>('sources')).filter((s) => s.count > 0);
    await open('/data');
    await expect(page.getByTestId('source-row')).toHaveCount(expectedSources.length);

    let download = page.waitForEvent('download');
    await fireExport(page, 'ndjson');
    let file = await download;
    expect(file.suggestedFilename()).toBe('sources.ndjson');
    const lines = fs.readFileSync((await file.path())!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as SourceRow);
    expect(lines.map((l) => [l.source, l.count])).toEqual(expectedSources.map((s) => [s.source, s.count]));
    await expect(page.getByTestId('notice-text')).toHaveText(`Exported stored sources as sources.ndjson (${expectedSources.length} rows).`);

    download = page.waitForEvent('download');
    await fireExport(page, 'csv');
    file = await download;
    expect(file.suggestedFilename()).toBe('sources.csv');
    const csv = fs.readFileSync((await file.path())!, 'utf8').trim().split('\r\n');
    expect(csv[0]).toBe('source,alias,count,oldest,newest,projects');
    expect(csv.slice(1).map((l) => l.split(',').slice(0, 3))).toEqual(expectedSources.map((s) => [s.source, expect.any(String), String(s.count)]));

    // Another page, another view: the Functions page's invocation stats, as the endpoint answers.
    const request = waitForEndpoint(page, 'functions.invocation-stats', { project: BUSY, interval: '1day' });
    await page.getByTestId('nav-functions').click();
    await request;
    await expect(page.getByTestId('stat-invocations-value')).not.toBeEmpty();
    const expectedStats = await server.endpoint<Record<string, unknown>>('functions.invocation-stats', { project: BUSY, interval: '1day' });
    expect(expectedStats.length).toBeGreaterThan(0);
    download = page.waitForEvent('download');
    await fireExport(page, 'json');
    file = await download;
    expect(file.suggestedFilename()).toMatch(new RegExp(`^invocation-stats_${BUSY}_1day_.*\\.json$`));
    expect(JSON.parse(fs.readFileSync((await file.path())!, 'utf8'))).toEqual({ result: expectedStats });
  });

  test('Export Current View with nothing to export says so, and saves nothing', async ({ page, open, freshServer }) => {
    let downloads = 0;
    page.on('download', () => downloads++);
    await open('/functions', freshServer);
    await expect(page.getByTestId('empty-state')).toBeVisible();
    await fireExport(page, 'csv');
    await expect(page.getByTestId('notice-text')).toHaveText('Nothing to export: this page shows no invocation stats.');
    await expect(page.getByTestId('notice')).toHaveAttribute('data-tone', 'warn');

    // No page at all (the key prompt, once the tab forgot the key): still an answer.
    await page.evaluate(() => (globalThis as unknown as { sessionStorage: { clear(): void } }).sessionStorage.clear());
    await page.goto(`${freshServer.url}/data`);
    await expect(page.getByTestId('key-prompt')).toBeVisible();
    await fireExport(page, 'json');
    await expect(page.getByTestId('notice-text')).toHaveText('Nothing to export: this page has no table or chart to export.');
    expect(downloads).toBe(0);
  });

  test('the Data page’s “choose files” imports through the native dialog and shows each file’s outcome', async ({ page, open, freshServer }, info) => {
    // A server of its own and an import through the API: 34 s under load 13, past the default 30 s.
    test.setTimeout(90_000);
    fs.mkdirSync(info.outputDir, { recursive: true });
    const file = path.join(info.outputDir, 'edge_logs-native.ndjson');
    const RECORDS = 25;
    writeImportFile(file, RECORDS, 0, 'native');
    let pickers = 0;
    page.on('filechooser', () => pickers++);

    await open('/data', freshServer);
    await expect(page.getByTestId('no-sources')).toBeVisible();
    await expect(page.getByTestId('choose-files')).toHaveAttribute('data-native', 'true');
    await expect(page.getByTestId('dropzone-hint')).toHaveText(/the server reads them straight from disk/);

    // What the shell's server did with the chosen paths: one file imported, one unreadable.
    const report = await importThroughApi(freshServer, file, 'edge_logs-native.ndjson');
    await page.evaluate(
      (files) => {
        (globalThis as unknown as { __shell: FakeShell }).__shell.importResult = { canceled: false, files };
      },
      [
        { file: '/exports/edge_logs-native.ndjson', ok: true, report },
        { file: '/exports/missing.csv', ok: false, reason: 'cannot read /exports/missing.csv: no such file' },
      ] satisfies Outcome[],
    );
    await page.getByTestId('choose-files').click();
    // "Recognize automatically" and no project: the bridge is asked with neither.
    await expect.poll(() => importOptions(page)).toEqual([{}]);

    const jobs = page.getByTestId('import-job');
    await expect(jobs).toHaveCount(2);
    await expect(jobs.nth(0).getByTestId('import-job-name')).toHaveText('edge_logs-native.ndjson');
    await expect(jobs.nth(0).getByTestId('report-imported')).toHaveText(String(RECORDS));
    await expect(jobs.nth(0).getByTestId('report-source')).toHaveText(report.source);
    await expect(jobs.nth(1)).toHaveAttribute('data-state', 'failed');
    await expect(jobs.nth(1).getByTestId('error-panel')).toContainText('cannot read /exports/missing.csv: no such file');
    // Then every query refreshed: the stored sources show the import, with no data-changed from the shell.
    await expect(page.locator(`[data-testid="source-row"][data-source="${report.source}"]`).getByTestId('source-count')).toHaveText(String(RECORDS));
    expect(await importCalls(page)).toBe(1);
    expect(pickers).toBe(0);

    await inEachLook(page, async ({ scheme, w, h }) => {
      await page.getByTestId('data-page').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `artifacts/screenshots/bridge-data-native-${w}x${h}-${scheme}.png` });
    });

    // While the shell imports, the page says so.
    await page.evaluate(() => {
      const s = (globalThis as unknown as { __shell: FakeShell }).__shell;
      s.importResult = { canceled: true, files: [] };
      s.hold = true;
    });
    await inEachLook(page, async ({ scheme, w, h }) => {
      await page.getByTestId('choose-files').click();
      await expect(page.getByTestId('native-import-busy')).toBeVisible();
      await expect(page.getByTestId('choose-files')).toBeDisabled();
      await page.screenshot({ path: `artifacts/screenshots/bridge-data-native-busy-${w}x${h}-${scheme}.png` });
      await page.evaluate(() => (globalThis as unknown as { __shell: FakeShell }).__shell.release());
      await expect(page.getByTestId('dropzone-hint')).toBeVisible();
    });
    await expect(page.getByTestId('import-job')).toHaveCount(2); // a cancelled dialog adds no rows

    // Records that named no project: the page cannot send a natively imported file again, so
    // the project asked for goes into the Project field, and the file is chosen again.
    await page.evaluate(
      (files) => {
        const s = (globalThis as unknown as { __shell: FakeShell }).__shell;
        s.hold = false;
        s.importResult = { canceled: false, files };
      },
      [
        {
          file: '/exports/studio-export.csv',
          ok: true,
          report: { ...report, imported: 0, duplicates: 0, rejected: 2, errors: [{ line: 2, reason: 'no project: the record names none' }, { line: 3, reason: 'no project: the record names none' }], errorsOmitted: 0 },
        },
      ] satisfies Outcome[],
    );
    await page.getByTestId('choose-files').click();
    const prompt = page.getByTestId('import-job').first().getByTestId('project-prompt');
    await expect(prompt).toContainText('2 records name no project.');
    await prompt.getByTestId('project-prompt-input').fill('gammaprojectref00003');
    await prompt.getByRole('button', { name: 'Use this project' }).click();
    await expect(page.getByTestId('import-job').first().getByTestId('project-prompt-sent')).toContainText('choose studio-export.csv again');
    await expect(page.getByTestId('import-project')).toHaveValue('gammaprojectref00003');
    const calls = await importCalls(page);

    // With a source chosen and the project set, "choose files" still opens the native dialog
    // (the desktop app never uploads), and the bridge carries both.
    await page.getByTestId('import-source').selectOption('gotrue.logs.prod');
    await expect(page.getByTestId('choose-files')).toHaveAttribute('data-native', 'true');
    await expect(page.getByTestId('dropzone-hint')).toHaveText(/the server reads them straight from disk/);
    // What the shell's server makes of it: records that name no project, stored as Auth under that project.
    const studio = path.join(info.outputDir, 'studio-export.ndjson');
    const nowUs = Date.now() * 1000;
    fs.writeFileSync(studio, [1, 2].map((i) => JSON.stringify({ timestamp: nowUs - i * 60_000_000, event_message: `token refreshed ${i}`, metadata: { host: 'auth-default' } })).join('\n'));
    const chosen = await importThroughApi(freshServer, studio, 'studio-export.ndjson', { source: 'auth_logs', project: 'gammaprojectref00003' });
    expect(chosen).toMatchObject({ source: 'gotrue.logs.prod', imported: 2, rejected: 0 });
    await page.evaluate(
      (files) => {
        (globalThis as unknown as { __shell: FakeShell }).__shell.importResult = { canceled: false, files };
      },
      [{ file: '/exports/studio-export.ndjson', ok: true, report: chosen }] satisfies Outcome[],
    );
    await page.getByTestId('choose-files').click();
    const again = page.getByTestId('import-job').first();
    await expect(again.getByTestId('report-imported')).toHaveText('2');
    await expect(again.getByTestId('import-report')).toContainText('gotrue.logs.prod (Auth, as chosen)');
    expect(await importCalls(page)).toBe(calls + 1);
    expect((await importOptions(page)).at(-1)).toEqual({ source: 'gotrue.logs.prod', project: 'gammaprojectref00003' });
    const authRow = page.locator('[data-testid="source-row"][data-source="gotrue.logs.prod"]');
    await expect(authRow.getByTestId('source-count')).toHaveText('2');
    await expect(authRow).toContainText('gammaprojectref00003');
    expect(pickers).toBe(0);

    await inEachLook(page, async ({ scheme, w, h }) => {
      await page.getByTestId('data-page').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `artifacts/screenshots/bridge-data-native-source-${w}x${h}-${scheme}.png` });
    });
  });

  test('screenshots: the export notices, 1440×900 and 1024×700, light and dark', async ({ page, open, freshServer }) => {
    await open('/data');
    await expect(page.getByTestId('source-row').first()).toBeVisible();
    await inEachLook(page, async ({ scheme, w, h }) => {
      const download = page.waitForEvent('download');
      await fireExport(page, 'csv');
      await download;
      await expect(page.getByTestId('notice-text').last()).toContainText('Exported stored sources as sources.csv');
      await page.screenshot({ path: `artifacts/screenshots/bridge-notice-ok-${w}x${h}-${scheme}.png` });
      await page.getByTestId('notice').last().getByRole('button', { name: 'Dismiss' }).click();
    });

    await open('/functions', freshServer);
    await expect(page.getByTestId('empty-state')).toBeVisible();
    await inEachLook(page, async ({ scheme, w, h }) => {
      await fireExport(page, 'csv');
      await expect(page.getByTestId('notice-text').last()).toHaveText('Nothing to export: this page shows no invocation stats.');
      await page.screenshot({ path: `artifacts/screenshots/bridge-notice-warn-${w}x${h}-${scheme}.png` });
      await page.getByTestId('notice').last().getByRole('button', { name: 'Dismiss' }).click();
    });
  });
});
