/**
 * Export Current View: the file of each format, the registry of the current page's view,
 * and what the user is told. Also end to end from a (fake) shell's export request.
 */
import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it, vi } from 'vitest';
import { listenToShell, shellHandlers } from '../api/bridge.ts';
import { fakeBridge } from '../testing/fake-bridge.ts';
import { createViewExportRegistry, exportFile, runViewExport, type ExportDeps, type ExportFile, type ViewTable } from './view-export.ts';

const SOURCES: ViewTable = {
  what: 'stored sources',
  fileBase: 'sources',
  rows: [
    { source: 'edge_logs', count: 2 },
    { source: 'a,b', count: 1 },
  ],
};

function deps(registry = createViewExportRegistry()) {
  const saved: ExportFile[] = [];
  const told: Array<[string, string]> = [];
  const d: ExportDeps = { registry, save: (f) => saved.push(f), notify: (text, tone) => told.push([text, tone]) };
  return { d, registry, saved, told };
}

describe('exportFile', () => {
  it('writes CSV rows with a header, CRLF lines and quoted cells where needed', () => {
    expect(exportFile(SOURCES, 'csv')).toEqual({ fileName: 'sources.csv', type: 'text/csv;charset=utf-8', text: 'source,count\r\nedge_logs,2\r\n"a,b",1\r\n' });
  });

  it('writes the page’s CSV rows when it has them', () => {
    const f = exportFile({ ...SOURCES, csvRows: () => [{ name: 'x' }, { name: 'y' }] }, 'csv');
    expect(f.text).toBe('name\r\nx\r\ny\r\n');
  });

  it('writes NDJSON as one raw row per line', () => {
    expect(exportFile(SOURCES, 'ndjson')).toEqual({
      fileName: 'sources.ndjson',
      type: 'application/x-ndjson',
      text: '{"source":"edge_logs","count":2}\n{"source":"a,b","count":1}\n',
    });
  });

  it('writes JSON as the API answers: {result: rows}', () => {
    const f = exportFile(SOURCES, 'json');
    expect(f.fileName).toBe('sources.json');
    expect(f.type).toBe('application/json');
    expect(JSON.parse(f.text)).toEqual({ result: [{ source: 'edge_logs', count: 2 }, { source: 'a,b', count: 1 }] });
    expect(f.text.endsWith('}\n')).toBe(true);
  });
});

describe('the current view registry', () => {
  it('has no current view until a page registers', () => {
    expect(createViewExportRegistry().current()).toBeUndefined();
  });

  it('makes the newest page current; removing it brings the older one back', () => {
    const r = createViewExportRegistry();
    const a: ViewTable = { ...SOURCES, what: 'a' };
    const b: ViewTable = { ...SOURCES, what: 'b' };
    const offA = r.register(() => a);
    const offB = r.register(() => b);
    expect(r.current()?.what).toBe('b');
    offB();
    expect(r.current()?.what).toBe('a');
    offB(); // twice is harmless
    expect(r.current()?.what).toBe('a');
    offA();
    expect(r.current()).toBeUndefined();
  });

  it('keeps the newer page when the older unregisters late (a page switch in either order)', () => {
    const r = createViewExportRegistry();
    const offOld = r.register(() => ({ ...SOURCES, what: 'old' }));
    r.register(() => ({ ...SOURCES, what: 'new' }));
    offOld();
    expect(r.current()?.what).toBe('new');
  });

  it('reads the page’s rows when asked, not when it registered', () => {
    const r = createViewExportRegistry();
    let rows: unknown[] = [];
    r.register(() => ({ ...SOURCES, rows }));
    rows = [{ n: 1 }];
    expect(r.current()?.rows).toEqual([{ n: 1 }]);
  });
});

describe('runViewExport', () => {
  it('saves the current view in the requested format and says so', () => {
    const { d, registry, saved, told } = deps();
    registry.register(() => SOURCES);
    expect(runViewExport('ndjson', d)).toEqual({ kind: 'saved', fileName: 'sources.ndjson', rows: 2, what: 'stored sources' });
    expect(saved.map((f) => f.fileName)).toEqual(['sources.ndjson']);
    expect(told).toEqual([['Exported stored sources as sources.ndjson (2 rows).', 'ok']]);
  });

  it('says "1 row" for one', () => {
    const { d, registry, told } = deps();
    registry.register(() => ({ ...SOURCES, rows: [{ a: 1 }] }));
    runViewExport('csv', d);
    expect(told).toEqual([['Exported stored sources as sources.csv (1 row).', 'ok']]);
  });

  it('tells the user when no page registered a view, and saves nothing', () => {
    const { d, saved, told } = deps();
    expect(runViewExport('csv', d)).toEqual({ kind: 'none' });
    expect(saved).toEqual([]);
    expect(told).toEqual([['Nothing to export: this page has no table or chart to export.', 'warn']]);
  });

  it('tells the user when the view shows nothing (empty, or still loading)', () => {
    for (const rows of [[], undefined]) {
      const { d, registry, saved, told } = deps();
      registry.register(() => ({ ...SOURCES, rows }));
      expect(runViewExport('json', d)).toEqual({ kind: 'empty', what: 'stored sources' });
      expect(saved).toEqual([]);
      expect(told).toEqual([['Nothing to export: this page shows no stored sources.', 'warn']]);
    }
  });

  it('runs from the shell’s export request, with the format the menu chose', () => {
    const { d, registry, saved } = deps();
    registry.register(() => SOURCES);
    const bridge = fakeBridge();
    listenToShell(bridge, shellHandlers(new QueryClient(), (format) => runViewExport(format, d)));

    bridge.fireExportRequested('json');
    bridge.fireExportRequested('csv');

    expect(saved.map((f) => f.fileName)).toEqual(['sources.json', 'sources.csv']);
    expect(JSON.parse(saved[0]!.text)).toEqual({ result: SOURCES.rows });
  });

  it('a request with no page registered still answers with a notice', () => {
    const notify = vi.fn();
    const bridge = fakeBridge();
    listenToShell(bridge, shellHandlers(new QueryClient(), (format) => runViewExport(format, { registry: createViewExportRegistry(), save: () => {}, notify })));
    bridge.fireExportRequested('ndjson');
    expect(notify).toHaveBeenCalledWith('Nothing to export: this page has no table or chart to export.', 'warn');
  });
});
