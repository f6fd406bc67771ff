import fs from 'node:fs';
import path from 'node:path';
import { writeImportFile } from './support/fixture-data.ts';
import { expect, test, inEachLook } from './support/fixtures.ts';

const REF_A = 'ouwmmbchcsjxvtfobujc';
const REF_B = 'blcewytrjvljrooddvav';

/**
 * A CSV as Supabase Studio's log explorer downloads it: id, timestamp, event_message and
 * metadata (query shape, as JSON text), no project column. One row per host, a second apart.
 */
function writeStudioCsv(file: string, hosts: readonly string[], idPrefix: string): void {
  const cell = (v: string) => `"${v.replace(/"/g, '""')}"`;
  const t0 = Date.UTC(2026, 2, 14, 14, 30);
  const lines = ['id,timestamp,event_message,metadata'];
  hosts.forEach((host, i) => {
    const url = `https://${host}/storage/v1/object/public/a${i}.png`;
    const metadata = [{ request: [{ host, method: 'GET', path: `/storage/v1/object/public/a${i}.png`, url, headers: [{ host }] }], response: [{ status_code: 200 }] }];
    lines.push([`${idPrefix}-${i}`, new Date(t0 + i * 1000).toISOString(), cell(`GET | 200 | ${url}`), cell(JSON.stringify(metadata))].join(','));
  });
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}

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
    // The demo set is a real import of every source: its time is the machine's, not the page's.
    test.setTimeout(180_000);
    await open('/data', freshServer);
    const res = page.waitForResponse((r) => r.url().endsWith('/api/demo'), { timeout: 0 });
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

  test('a Studio CSV without a project column takes each record’s project from its host', async ({ page, open, freshServer }, info) => {
    fs.mkdirSync(info.outputDir, { recursive: true });
    const file = path.join(info.outputDir, 'edge_logs-studio.csv');
    // 36 requests to project A, 14 to project B: the export of the issue.
    writeStudioCsv(file, [...Array<string>(36).fill(`${REF_A}.supabase.co`), ...Array<string>(14).fill(`${REF_B}.supabase.co`)], 'studio');
    await open('/data', freshServer);
    await page.getByTestId('file-input').setInputFiles(file);
    const report = page.getByTestId('import-report');
    await expect(report.getByTestId('report-imported')).toHaveText('50');
    await expect(report.getByTestId('report-rejected')).toHaveText('0');
    await expect(page.getByTestId('project-prompt')).toHaveCount(0);
    const row = page.locator('[data-testid="source-row"][data-source="cloudflare.logs.prod"]');
    await expect(row).toContainText(`${REF_A} 36`);
    await expect(row).toContainText(`${REF_B} 14`);
  });

  test('the project typed is never given to records whose host names another; their rejections read as one line', async ({ page, open, freshServer }, info) => {
    fs.mkdirSync(info.outputDir, { recursive: true });
    const file = path.join(info.outputDir, 'edge_logs-studio.csv');
    writeStudioCsv(file, [...Array<string>(36).fill(`${REF_A}.supabase.co`), ...Array<string>(14).fill(`${REF_B}.supabase.co`)], 'typed');
    await open('/data', freshServer);
    await page.getByTestId('import-project').fill(REF_A);
    await page.getByTestId('file-input').setInputFiles(file);
    const report = page.getByTestId('import-report');
    await expect(report.getByTestId('report-imported')).toHaveText('36');
    await expect(report.getByTestId('report-rejected')).toHaveText('14');
    const groups = report.getByTestId('report-error-group');
    await expect(groups).toHaveCount(1);
    await expect(groups.first()).toHaveAttribute('data-count', '14');
    await expect(groups.first()).toContainText(`14 rows project mismatch: the record's host ${REF_B}.supabase.co names project ${REF_B}, not the project option ${REF_A}`);
    // Rows 37–50 are file lines 38–51 (the header is line 1).
    await expect(groups.first()).toContainText('(line 38, line 39, line 40, line 41, …)');
    const row = page.locator('[data-testid="source-row"][data-source="cloudflare.logs.prod"]');
    await expect(row).toContainText(`${REF_A} 36`);
    await expect(row).not.toContainText(REF_B);
  });

  test('records that name no project are asked for one, and importing again with it adds them', async ({ page, open, freshServer }, info) => {
    fs.mkdirSync(info.outputDir, { recursive: true });
    const file = path.join(info.outputDir, 'edge_logs-custom-domain.csv');
    // A custom domain names no project: 50 such rows, and 2 rows that do name one.
    writeStudioCsv(file, [...Array<string>(50).fill('api.example.com'), ...Array<string>(2).fill(`${REF_B}.supabase.co`)], 'custom');
    await open('/data', freshServer);
    await page.getByTestId('file-input').setInputFiles(file);
    const first = page.getByTestId('import-job').first();
    await expect(first.getByTestId('report-imported')).toHaveText('2');
    await expect(first.getByTestId('report-rejected')).toHaveText('50');
    // 50 identical reasons are one line, not 50.
    const groups = first.getByTestId('report-error-group');
    await expect(groups).toHaveCount(1);
    await expect(groups.first()).toContainText('50 rows no project: the record has no project and no project option was given');
    const prompt = first.getByTestId('project-prompt');
    await expect(prompt).toContainText('50 records name no project.');
    await page.screenshot({ path: 'artifacts/screenshots/fx-data-project-prompt-light.png' });
    await prompt.getByTestId('project-prompt-input').fill('gammaprojectref00003');
    await prompt.getByTestId('project-prompt-submit').click();
    // The new job comes first; the earlier report says what happened to its question.
    await expect(page.getByTestId('import-job')).toHaveCount(2);
    await expect(page.getByTestId('import-job').nth(1).getByTestId('project-prompt-sent')).toContainText('Importing again as project gammaprojectref00003');
    // The same file again, with the project: the 50 are imported; the 2 that name project B are
    // never given the typed one (they were stored with B the first time).
    const again = page.getByTestId('import-job').first();
    await expect(again.getByTestId('report-imported')).toHaveText('50');
    await expect(again.getByTestId('report-duplicates')).toHaveText('0');
    await expect(again.getByTestId('report-rejected')).toHaveText('2');
    await expect(again.getByTestId('report-error-group')).toContainText(`2 rows project mismatch: the record's host ${REF_B}.supabase.co names project ${REF_B}`);
    await expect(again.getByTestId('project-prompt')).toHaveCount(0);
    await expect(page.getByTestId('import-job')).toHaveCount(2);
    const row = page.locator('[data-testid="source-row"][data-source="cloudflare.logs.prod"]');
    await expect(row).toContainText('gammaprojectref00003 50');
    await expect(row).toContainText(`${REF_B} 2`);
  });

  test('at 1024×700 the Delete column is on screen', async ({ page, open }) => {
    await page.setViewportSize({ width: 1024, height: 700 });
    await open('/data');
    await expect(page.getByTestId('sources-table')).toBeVisible();
    const del = page.getByTestId('delete-source').first();
    await del.scrollIntoViewIfNeeded();
    const box = (await del.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(1024);
    // Not behind the table's horizontal scroll either: it is inside the card's visible width.
    const wrap = (await page.getByTestId('sources-card').locator('.table-wrap').boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(wrap.x + wrap.width);
    await del.click();
    await expect(page.getByRole('dialog')).toBeVisible();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  });

  test('screenshots: the Data page, 1440×900 and 1024×700, light and dark', async ({ page, open }) => {
    await inEachLook(page, async ({ scheme, w, h }) => {
      await open('/data');
      await expect(page.getByTestId('sources-table')).toBeVisible();
      await page.getByTestId('sources-card').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `artifacts/screenshots/fx-data-${w}-${scheme}.png` });
    });
  });

  test('screenshots: the project prompt, 1440×900 and 1024×700, light and dark', async ({ page, open, freshServer }, info) => {
    fs.mkdirSync(info.outputDir, { recursive: true });
    const file = path.join(info.outputDir, 'edge_logs-mixed.csv');
    writeStudioCsv(file, [...Array<string>(20).fill('api.example.com'), ...Array<string>(5).fill(`${REF_B}.supabase.co`)], 'shot');
    await open('/data', freshServer);
    await page.getByTestId('import-project').fill(REF_A);
    await page.getByTestId('file-input').setInputFiles(file);
    await expect(page.getByTestId('report-rejected')).toHaveText('5');
    await page.getByTestId('import-project').fill('');
    await page.getByTestId('file-input').setInputFiles(file);
    await expect(page.getByTestId('project-prompt')).toBeVisible();
    await inEachLook(page, async ({ scheme, w, h }) => {
      await page.getByTestId('import-jobs').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `artifacts/screenshots/fx-data-prompt-${w}-${scheme}.png` });
    });
  });
});
