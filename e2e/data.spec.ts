import fs from 'node:fs';
import path from 'node:path';
import { writeImportFile } from './support/fixture-data.ts';
import { expect, test } from './support/fixtures.ts';

test.describe('Data page', () => {
  test('an empty store: every data page says what to import and links to Data', async ({ page, open, freshServer }) => {
    await open('/functions', freshServer);
    await expect(page.getByTestId('empty-state')).toContainText('deno-relay-logs');
    await page.getByTestId('nav-logs').click();
    await expect(page.getByTestId('empty-state')).toContainText('cloudflare.logs.prod');
    await page.getByTestId('empty-state').getByRole('link', { name: /Data/ }).click();
    await expect(page).toHaveURL(/\/data$/);
    await expect(page.getByTestId('no-sources')).toBeVisible();
  });

  test('importing a real file shows progress, then the report with the rejected line', async ({ page, open, freshServer }, info) => {
    const file = path.join(info.outputDir, 'edge_logs-export.ndjson');
    fs.mkdirSync(info.outputDir, { recursive: true });
    writeImportFile(file, 6000, 3);
    await open('/data', freshServer);
    // Slow the upload down so the progress is observable (about 3 s for ~3 MB).
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 1024 * 1024 });
    await page.getByTestId('import-project').fill('gammaprojectref00003');
    await page.getByTestId('file-input').setInputFiles(file);
    const job = page.getByTestId('import-job');
    await expect(job.getByTestId('import-progress')).toBeVisible();
    await expect(job.getByTestId('import-progress')).toContainText(/Sent [\d.]+ [KM]B of [\d.]+ MB/);
    await expect(job.getByTestId('import-records')).not.toHaveText('0 records', { timeout: 15_000 });
    await page.screenshot({ path: 'artifacts/screenshots/data-import-progress-light.png' });
    const report = job.getByTestId('import-report');
    await expect(report).toBeVisible({ timeout: 20_000 });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await expect(report.getByTestId('report-source')).toHaveText('cloudflare.logs.prod');
    await expect(report.getByTestId('report-imported')).toHaveText('6,000');
    await expect(report.getByTestId('report-duplicates')).toHaveText('0');
    await expect(report.getByTestId('report-rejected')).toHaveText('1');
    await expect(report.getByTestId('report-errors')).toContainText('line 3');
    const row = page.locator('[data-testid="source-row"][data-source="cloudflare.logs.prod"]');
    await expect(row.getByTestId('source-count')).toHaveText('6,000');
    await expect(row).toContainText('gammaprojectref00003');
    await page.screenshot({ path: 'artifacts/screenshots/data-import-light.png' });

    // The same file again: everything is a duplicate.
    await page.getByTestId('file-input').setInputFiles(file);
    await expect(page.getByTestId('import-job').first().getByTestId('report-duplicates')).toHaveText('6,000', { timeout: 20_000 });
  });

  test('dropping several files imports each, one after the other, with its own report', async ({ page, open, freshServer }, info) => {
    fs.mkdirSync(info.outputDir, { recursive: true });
    const a = path.join(info.outputDir, 'a.ndjson');
    const b = path.join(info.outputDir, 'b.ndjson');
    writeImportFile(a, 120, 0, 'drop-a');
    writeImportFile(b, 80, 0, 'drop-b');
    await open('/data', freshServer);
    await page.getByTestId('import-project').fill('gammaprojectref00003');
    const dataTransfer = await page.evaluateHandle(
      ([ta, tb]) => {
        // Runs in the page; the e2e tsconfig has no DOM types.
        const w = globalThis as unknown as {
          DataTransfer: new () => { items: { add(file: unknown): void } };
          File: new (parts: string[], name: string) => unknown;
        };
        const dt = new w.DataTransfer();
        dt.items.add(new w.File([ta!], 'edge_logs-a.ndjson'));
        dt.items.add(new w.File([tb!], 'export-b.ndjson')); // no hint in the name: recognized by shape
        return dt;
      },
      [fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')],
    );
    await page.getByTestId('dropzone').dispatchEvent('dragover', { dataTransfer });
    await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer });
    const jobs = page.getByTestId('import-job');
    await expect(jobs).toHaveCount(2);
    await expect(jobs.nth(0).getByTestId('report-imported')).toHaveText('120');
    await expect(jobs.nth(1).getByTestId('report-imported')).toHaveText('80');
    await expect(jobs.nth(1).getByTestId('import-report')).toContainText('recognized');
    await expect(page.getByTestId('source-count')).toHaveText('200');
  });

  test('deleting a source asks for confirmation, then removes its data', async ({ page, open, freshServer }, info) => {
    const file = path.join(info.outputDir, 'edge_logs.ndjson');
    fs.mkdirSync(info.outputDir, { recursive: true });
    writeImportFile(file, 50, 2);
    await open('/data', freshServer);
    await page.getByTestId('import-project').fill('gammaprojectref00003');
    await page.getByTestId('file-input').setInputFiles(file);
    await expect(page.getByTestId('report-imported')).toHaveText('50');
    await page.getByTestId('delete-source').click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('50 records of cloudflare.logs.prod');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(page.getByTestId('source-row')).toHaveCount(1);
    await page.getByTestId('delete-source').click();
    const del = page.waitForRequest((r) => r.method() === 'DELETE' && r.url().endsWith('/api/sources/cloudflare.logs.prod'));
    await dialog.getByRole('button', { name: 'Delete 50 records' }).click();
    await del;
    await expect(page.getByTestId('no-sources')).toBeVisible();
    expect((await freshServer.api<Array<{ source: string; count: number }>>('sources')).every((s) => s.count === 0)).toBe(true);
  });

  test('“Load demo data” loads it, or says plainly that this server has none', async ({ page, open, freshServer }) => {
    await open('/data', freshServer);
    const res = page.waitForResponse((r) => r.url().endsWith('/api/demo'));
    await page.getByTestId('load-demo').click();
    const status = (await res).status();
    if (status === 404) {
      await expect(page.getByTestId('error-panel')).toContainText('This server has no demo data built in');
    } else {
      expect(status).toBe(200);
      await expect(page.getByTestId('demo-result')).toBeVisible();
      await expect(page.getByTestId('source-row').first()).toBeVisible();
    }
  });
});
