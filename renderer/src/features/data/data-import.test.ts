/**
 * The Data page's "choose files" with and without the desktop bridge: the native dialog
 * (the server reads the files from disk) with the Source and Project fields' values when the
 * bridge is there, whatever they say; the browser's picker otherwise; and each file's outcome
 * as a row.
 */
import { describe, expect, it } from 'vitest';
import type { ImportReport } from '../../../../contract/api-types.ts';
import type { ImportFilesResult } from '../../api/bridge.ts';
import { fakeBridge } from '../../testing/fake-bridge.ts';
import { chooseFiles, fileNameOf, importOptions, nativeJobs, type ChooseFilesDeps, type ImportFilesOptions, type NativeImportJob } from './data-import.ts';

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
  const calls = { picker: 0, refresh: 0, busy: [] as boolean[], jobs: [] as NativeImportJob[][], jobOptions: [] as ImportFilesOptions[], errors: [] as unknown[] };
  const deps: ChooseFilesDeps = {
    bridge: undefined,
    source: '',
    project: '',
    newId: () => `job-${++n}`,
    pickInBrowser: () => void calls.picker++,
    onBusy: (b) => void calls.busy.push(b),
    onJobs: (j, o) => {
      calls.jobs.push(j);
      calls.jobOptions.push(o);
    },
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

describe('importOptions', () => {
  it('leaves out "Recognize automatically" and a blank project, and trims the project, as an upload does', () => {
    expect(importOptions({ source: '', project: '' })).toEqual({});
    expect(importOptions({ source: '', project: '   ' })).toEqual({});
    expect(importOptions({ source: 'gotrue.logs.prod', project: '' })).toEqual({ source: 'gotrue.logs.prod' });
    expect(importOptions({ source: '', project: ' abcdefghijklmnopqrst ' })).toEqual({ project: 'abcdefghijklmnopqrst' });
    expect(importOptions({ source: 'postgres.logs', project: 'abcdefghijklmnopqrst' })).toEqual({ source: 'postgres.logs', project: 'abcdefghijklmnopqrst' });
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
    // Source "Recognize automatically", no project: the bridge is asked with neither.
    expect(bridge.importCalls).toEqual([{}]);
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
    expect(bridge.importCalls).toHaveLength(1);
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

  it('in the desktop app with a source and a project set: the native dialog with both, never the upload', async () => {
    const bridge = fakeBridge(RESULT);
    const { deps, calls } = harness({ bridge, source: 'gotrue.logs.prod', project: '  abcdefghijklmnopqrst ' });
    await expect(chooseFiles(deps)).resolves.toBe('native');
    expect(bridge.importCalls).toEqual([{ source: 'gotrue.logs.prod', project: 'abcdefghijklmnopqrst' }]);
    expect(calls.picker).toBe(0);
    // The rows learn what the import ran with (the report says "as chosen").
    expect(calls.jobOptions).toEqual([{ source: 'gotrue.logs.prod', project: 'abcdefghijklmnopqrst' }]);
    expect(calls.refresh).toBe(1);
  });

  it('in the desktop app with only a source, or only a project: the native dialog with that one', async () => {
    const bySource = fakeBridge(RESULT);
    await expect(chooseFiles(harness({ bridge: bySource, source: 'postgres.logs' }).deps)).resolves.toBe('native');
    expect(bySource.importCalls).toEqual([{ source: 'postgres.logs' }]);
    const byProject = fakeBridge(RESULT);
    const { deps, calls } = harness({ bridge: byProject, project: 'qrstuvwxyzabcdefghij' });
    await expect(chooseFiles(deps)).resolves.toBe('native');
    expect(byProject.importCalls).toEqual([{ project: 'qrstuvwxyzabcdefghij' }]);
    expect(calls.picker).toBe(0);
  });
});
