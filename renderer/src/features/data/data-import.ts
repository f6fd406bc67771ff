/**
 * The Data page's "choose files": in the desktop app the native file dialog, after which the
 * server reads the chosen files from disk (no upload of a copy), with the page's Source and
 * Project; in a browser, the file picker and an upload. Kept apart from the page so the choice
 * is tested without a DOM.
 */
import type { ImportFilesResult, LogExplorerBridge } from '../../api/bridge.ts';
import type { ImportReport } from '../../../../contract/api-types.ts';

/** What importFiles takes (source, project), from the bridge's own signature. */
export type ImportFilesOptions = NonNullable<Parameters<LogExplorerBridge['importFiles']>[0]>;

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
 * The bridge's options for the page's fields, as an upload sends them: "Recognize
 * automatically" (empty) and a blank project are left out, a project is trimmed.
 */
export function importOptions(fields: { source: string; project: string }): ImportFilesOptions {
  const project = fields.project.trim();
  return { ...(fields.source !== '' ? { source: fields.source } : {}), ...(project !== '' ? { project } : {}) };
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
  /** The Source field: a source name, or empty for "Recognize automatically". */
  source: string;
  /** The Project field, as typed. */
  project: string;
  newId: () => string;
  /** Opens the browser's file picker (its change handler uploads). */
  pickInBrowser: () => void;
  onBusy: (busy: boolean) => void;
  /** The rows of a native import, with the options it ran with. */
  onJobs: (jobs: NativeImportJob[], options: ImportFilesOptions) => void;
  onError: (error: unknown) => void;
  /** Refreshes every query (what the other pages show changed too). */
  refresh: () => unknown;
}

/**
 * "choose files": the native dialog in the desktop app, whatever the fields say (the app
 * imports by path and never uploads a copy), else the browser's picker.
 */
export async function chooseFiles(deps: ChooseFilesDeps): Promise<'native' | 'browser'> {
  const { bridge } = deps;
  if (!bridge) {
    deps.pickInBrowser();
    return 'browser';
  }
  const options = importOptions(deps);
  deps.onBusy(true);
  try {
    const result = await bridge.importFiles(options);
    if (!result.canceled) {
      deps.onJobs(nativeJobs(result, deps.newId), options);
      deps.refresh();
    }
  } catch (error) {
    deps.onError(error);
  } finally {
    deps.onBusy(false);
  }
  return 'native';
}
