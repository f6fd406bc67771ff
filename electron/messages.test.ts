import { describe, expect, it } from 'vitest';
import type { ImportReport } from '../server/api-types.ts';
import { about, DEMO_BUTTONS, demoLoaded, importSummary } from './messages.ts';

const report = (source: string, imported: number, duplicates = 0, rejected = 0) => ({ source, imported, duplicates, rejected, errors: [], errorsOmitted: 0, format: 'ndjson' }) as unknown as ImportReport;

describe('importSummary', () => {
  it('reports each file by name', () => {
    expect(importSummary({ canceled: false, files: [{ file: '/x/edge_logs.ndjson', ok: true, report: report('cloudflare.logs.prod', 10, 2, 1) }] })).toEqual({
      type: 'info',
      message: 'Imported 1 file',
      detail: 'edge_logs.ndjson: 10 imported, 2 duplicates, 1 rejected (cloudflare.logs.prod)',
    });
  });

  it('warns when a file could not be imported', () => {
    const box = importSummary({
      canceled: false,
      files: [
        { file: '/x/a.ndjson', ok: true, report: report('postgres.logs', 1) },
        { file: '/x/b.csv', ok: false, reason: 'cannot tell the source' },
      ],
    });
    expect(box).toMatchObject({ type: 'warning', message: '1 of 2 files could not be imported' });
    expect(box.detail).toBe('a.ndjson: 1 imported, 0 duplicates, 0 rejected (postgres.logs)\nb.csv: not imported: cannot tell the source');
  });
});

describe('demoLoaded', () => {
  it('says how much demo data was loaded and offers to clear it, Keep being the default', () => {
    const box = demoLoaded('Log Explorer', [report('a', 20_000), report('b', 2_000)]);
    expect(box.detail).toContain('loaded 22,000 generated demo records (2 sources)');
    expect(box.detail).toContain('They are not real logs.');
    expect(box.buttons![DEMO_BUTTONS.clear]).toBe('Clear Demo Data');
    expect(box.defaultId).toBe(DEMO_BUTTONS.keep);
    expect(box.cancelId).toBe(DEMO_BUTTONS.keep);
  });
});

describe('about', () => {
  it('names the version, data folder, server and runtimes', () => {
    const box = about({ appName: 'Log Explorer', version: '0.1.0', dataDir: '/d', server: 'http://127.0.0.1:1', versions: { electron: '41.7.1', chrome: '146', node: '24' } });
    expect(box.message).toBe('Log Explorer 0.1.0');
    expect(box.detail).toContain('Data folder: /d');
    expect(box.detail).toContain('Electron 41.7.1, Chromium 146, Node 24');
  });
});
