/**
 * The Data page's "choose files" with and without the desktop bridge: the native dialog
 * (the server reads the files from disk) when the bridge is there, the browser's picker
 * otherwise, and each file's outcome as a row.
 */
import { describe, expect, it } from 'vitest';
import type { ImportReport } from '../../../server/api-types.ts';
import type { ImportFilesResult } from '../api/bridge.ts';
import { fakeBridge } from '../testing/fake-bridge.ts';
import { chooseFiles, fileNameOf, nativeJobs, usesNativeDialog, type ChooseFilesDeps, type NativeImportJob } from './data-import.ts';

const REPORT: ImportReport = { source: 'deno-relay-logs', format: 'ndjson', imported: 30, duplicates: 0, rejected: 0, errors: [], errorsOmitted: 0 };

const RESULT: ImportFilesResult = {
  canceled: false,
  files: [
    { file: '/exports/function_edge_logs.ndjson', ok: true, report: REPORT },
    { file: 'C:\\Users\\u\\bad.csv', ok: false, reason: 'cannot read C:\\Users\\u\\bad.csv' },
  ],
};

function harness(over: Partial<ChooseFilesDeps> = {}) {
  let n = 0;
  const calls = { picker: 0, refresh: 0, busy: [] as boolean[], jobs: [] as NativeImportJob[][], errors: [] as unknown[] };
  const deps: ChooseFilesDeps = {
    bridge: undefined,
    source: '',
    project: '',
    newId: () => `job-${++n}`,
    pickInBrowser: () => void calls.picker++,
    onBusy: (b) => void calls.busy.push(b),
    onJobs: (j) => void calls.jobs.push(j),
    onError: (e) => void calls.errors.push(e),
    refresh: () => void calls.refresh++,
    ...over,
  };
  return { deps, calls };
}

describe('fileNameOf', () => {
  it('takes the last part of a POSIX or Windows path', () => {
    expect(fileNameOf('/a/b/edge_logs.ndjson')).toBe('edge_logs.ndjson');
    expect(fileNameOf('C:\\x\\y\\logs.csv')).toBe('logs.csv');
    expect(fileNameOf('plain.json')).toBe('plain.json');
  });
});

describe('usesNativeDialog', () => {
  it('only in the desktop app, and only when neither source nor project is set (the bridge carries neither)', () => {
    const bridge = fakeBridge();
    expect(usesNativeDialog(undefined, { source: '', project: '' })).toBe(false);
    expect(usesNativeDialog(bridge, { source: '', project: '' })).toBe(true);
    expect(usesNativeDialog(bridge, { source: '', project: '  ' })).toBe(true);
    expect(usesNativeDialog(bridge, { source: 'edge_logs', project: '' })).toBe(false);
    expect(usesNativeDialog(bridge, { source: '', project: 'abcdefghijklmnopqrst' })).toBe(false);
  });
});

describe('nativeJobs', () => {
  it('makes a done row with the report, or a failed row with the reason, per file', () => {
    let n = 0;
    expect(nativeJobs(RESULT, () => `id${++n}`)).toEqual([
      { id: 'id1', name: 'function_edge_logs.ndjson', path: '/exports/function_edge_logs.ndjson', state: 'done', report: REPORT },
      { id: 'id2', name: 'bad.csv', path: 'C:\\Users\\u\\bad.csv', state: 'failed', reason: 'cannot read C:\\Users\\u\\bad.csv' },
    ]);
  });
});

describe('chooseFiles', () => {
  it('in the desktop app: opens the native dialog (no browser picker), shows each outcome and refreshes', async () => {
    const bridge = fakeBridge(RESULT);
    const { deps, calls } = harness({ bridge });
    await expect(chooseFiles(deps)).resolves.toBe('native');
    expect(bridge.importCalls).toBe(1);
    expect(calls.picker).toBe(0);
    expect(calls.jobs).toHaveLength(1);
    expect(calls.jobs[0]!.map((j) => [j.name, j.state])).toEqual([
      ['function_edge_logs.ndjson', 'done'],
      ['bad.csv', 'failed'],
    ]);
    expect(calls.refresh).toBe(1);
    expect(calls.busy).toEqual([true, false]);
    expect(calls.errors).toEqual([]);
  });

  it('a cancelled dialog adds no rows and refreshes nothing', async () => {
    const bridge = fakeBridge({ canceled: true, files: [] });
    const { deps, calls } = harness({ bridge });
    await chooseFiles(deps);
    expect(bridge.importCalls).toBe(1);
    expect(calls.jobs).toEqual([]);
    expect(calls.refresh).toBe(0);
    expect(calls.busy).toEqual([true, false]);
  });

  it('an import that could not run is reported, and the page is not left busy', async () => {
    const failure = new Error('importFiles is not available to this page');
    const { deps, calls } = harness({ bridge: fakeBridge(failure) });
    await chooseFiles(deps);
    expect(calls.errors).toEqual([failure]);
    expect(calls.jobs).toEqual([]);
    expect(calls.busy).toEqual([true, false]);
  });

  it('in a browser: opens the file picker (the upload path), as before', async () => {
    const { deps, calls } = harness();
    await expect(chooseFiles(deps)).resolves.toBe('browser');
    expect(calls.picker).toBe(1);
    expect(calls.busy).toEqual([]);
  });

  it('in the desktop app with a project set: uploads through the picker, so the project applies', async () => {
    const bridge = fakeBridge(RESULT);
    const { deps, calls } = harness({ bridge, project: 'abcdefghijklmnopqrst' });
    await expect(chooseFiles(deps)).resolves.toBe('browser');
    expect(bridge.importCalls).toBe(0);
    expect(calls.picker).toBe(1);
  });
});
