/**
 * The Data page's "choose files": in the desktop app the native file dialog, after which the
 * server reads the chosen files from disk (no upload of a copy); in a browser, the file
 * picker and an upload. Kept apart from the page so the choice is tested without a DOM.
 */
import type { ImportFilesResult, LogExplorerBridge } from '../api/bridge.ts';
import type { ImportReport } from '../../../server/api-types.ts';

/** One file the native dialog imported, as a row of the page's import list. */
export interface NativeImportJob {
  id: string;
  /** The file's name (its path is shown on hover). */
  name: string;
  path: string;
  state: 'done' | 'failed';
  report?: ImportReport;
  /** Why nothing could be imported from the file. */
  reason?: string;
}

/** The last part of a path, with either separator (the shell may run on Windows). */
export function fileNameOf(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts.findLast((p) => p !== '') ?? path;
}

/**
 * The native dialog imports with the server's recognition only (the bridge carries neither
 * source nor project), so a chosen source or project sends the files as an upload, where
 * both apply.
 */
export function usesNativeDialog(bridge: LogExplorerBridge | undefined, options: { source: string; project: string }): bridge is LogExplorerBridge {
  return bridge !== undefined && options.source === '' && options.project.trim() === '';
}

/** The page's rows for a native import's outcomes, in the order the files were chosen. */
export function nativeJobs(result: ImportFilesResult, newId: () => string): NativeImportJob[] {
  return result.files.map((f) =>
    f.ok
      ? { id: newId(), name: fileNameOf(f.file), path: f.file, state: 'done', report: f.report }
      : { id: newId(), name: fileNameOf(f.file), path: f.file, state: 'failed', reason: f.reason },
  );
}

export interface ChooseFilesDeps {
  bridge: LogExplorerBridge | undefined;
  source: string;
  project: string;
  newId: () => string;
  /** Opens the browser's file picker (its change handler uploads). */
  pickInBrowser: () => void;
  onBusy: (busy: boolean) => void;
  onJobs: (jobs: NativeImportJob[]) => void;
  onError: (error: unknown) => void;
  /** Refreshes every query (what the other pages show changed too). */
  refresh: () => unknown;
}

/** "choose files": the native dialog in the desktop app (see usesNativeDialog), else the browser's picker. */
export async function chooseFiles(deps: ChooseFilesDeps): Promise<'native' | 'browser'> {
  const { bridge } = deps;
  if (!usesNativeDialog(bridge, deps)) {
    deps.pickInBrowser();
    return 'browser';
  }
  deps.onBusy(true);
  try {
    const result = await bridge.importFiles();
    if (!result.canceled) {
      deps.onJobs(nativeJobs(result, deps.newId));
      deps.refresh();
    }
  } catch (error) {
    deps.onError(error);
  } finally {
    deps.onBusy(false);
  }
  return 'native';
}
