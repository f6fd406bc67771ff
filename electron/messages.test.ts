import { describe, expect, it } from 'vitest';
import type { ImportReport } from '../contract/api-types.ts';
import { about, alreadyOpen, confirmExternalLink, DEMO_BUTTONS, demoLoaded, EXTERNAL_BUTTONS, importSummary, loadFailure, UNUSED_STORE_BUTTONS, unusedStoresNotice, withOriginsOnly } from './messages.ts';

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

describe('confirmExternalLink', () => {
  it('names the link and the risk, Cancel being the default', () => {
    const box = confirmExternalLink('http://example.com/x', 'http');
    expect(box).toMatchObject({ type: 'question', message: 'Open this link in your browser?', buttons: ['Cancel', 'Open in Browser'], defaultId: EXTERNAL_BUTTONS.cancel, cancelId: EXTERNAL_BUTTONS.cancel });
    expect(box.buttons![EXTERNAL_BUTTONS.open]).toBe('Open in Browser');
    expect(box.detail!.startsWith('http://example.com/x\n')).toBe(true);
    expect(box.detail).toContain('not encrypted');
    expect(confirmExternalLink('https://192.168.1.1/', 'local-network').detail).toContain('local network');
  });
});

describe('loadFailure', () => {
  const key = 'Zk9vYmFyYmF6cXV4cXV1eHh5enp5';
  it("keeps the origin and drops the key, from the URL and from Electron's message", () => {
    const url = `http://127.0.0.1:51234/logs?x=1#key=${key}`;
    const err = { message: `ERR_CONNECTION_REFUSED (-102) loading '${url}'`, code: 'ERR_CONNECTION_REFUSED' };
    expect(loadFailure(url, err)).toBe('cannot load http://127.0.0.1:51234: ERR_CONNECTION_REFUSED');
    const noCode = loadFailure(url, { message: `ERR_ABORTED (-3) loading '${url}'` });
    expect(noCode).toBe("cannot load http://127.0.0.1:51234: ERR_ABORTED (-3) loading 'http://127.0.0.1:51234'");
    expect(noCode).not.toContain(key);
  });

  it("names the shell's own pages without printing them", () => {
    expect(loadFailure('data:text/html;charset=utf-8,%3C!doctype%20html%3E', { message: "ERR_FAILED loading 'data:text/html;charset=utf-8,%3C!doctype'" })).toBe(
      "cannot load the shell's own page: ERR_FAILED loading 'data:…'",
    );
  });

  it('withOriginsOnly reduces every URL in a text', () => {
    expect(withOriginsOnly(`a http://127.0.0.1:1/#key=${key} b https://x.example/p?q c`)).toBe('a http://127.0.0.1:1 b https://x.example c');
  });
});

describe('unusedStoresNotice', () => {
  it('says where the data is, where the other store is, that nothing was merged, and how to open it', () => {
    const box = unusedStoresNotice('/data/log-explorer', ['/cfg/Log Explorer']);
    expect(box.message).toBe('Another store of your logs was found');
    expect(box.detail).toContain('  /data/log-explorer\n');
    expect(box.detail).toContain('  /cfg/Log Explorer\n');
    expect(box.detail).toContain('not merged');
    expect(box.detail).toContain('LOG_EXPLORER_DATA_DIR');
    expect(box.buttons![UNUSED_STORE_BUTTONS.show]).toBe('Show It');
    expect(box.cancelId).toBe(UNUSED_STORE_BUTTONS.ok);
  });
});

describe('alreadyOpen', () => {
  it('names both folders', () => {
    const box = alreadyOpen('Log Explorer', '/a', '/b');
    expect(box.message).toBe('Log Explorer is already open');
    expect(box.detail).toContain('  /a\n');
    expect(box.detail).toContain('  /b\n');
  });
});
