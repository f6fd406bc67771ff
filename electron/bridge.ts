/**
 * The one contract between the window and the main process: the object the preload exposes
 * as `window.logExplorer`, the IPC channel names behind it, and the check of what the page may
 * pass. Types, constants and one pure check, so the preload, the main process and the renderer
 * (with `import type`) share it.
 */
import type { ImportReport } from '../server/ingest/import.ts';
import { findSource } from '../server/sources.ts';

/** One file of a native import: its report, or why nothing could be imported from it. */
export type ImportFileOutcome = { file: string; ok: true; report: ImportReport } | { file: string; ok: false; reason: string };

/** The formats File → Export Current View offers; the page writes the file. */
export const VIEW_EXPORT_FORMATS = ['csv', 'ndjson', 'json'] as const;
export type ViewExportFormat = (typeof VIEW_EXPORT_FORMATS)[number];

/** What the Data page's Source and Project fields say; absent means "recognize automatically" and "none". */
export interface ImportFilesOptions {
  /** Source name or alias the server knows. */
  source?: string;
  /** Project ref for records that carry none. */
  project?: string;
}

/** The longest option accepted: the server's limit for a project ref (source names are far shorter). */
export const IMPORT_OPTION_MAX_LENGTH = 256;

/**
 * Checks what the page passed to importFiles (in the preload, and again in main: the page is
 * not trusted) and returns a fresh object with only the known keys; an empty string counts as
 * absent, as on the upload route. Throws a TypeError naming the problem otherwise.
 */
export function checkImportOptions(value: unknown): ImportFilesOptions {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError('importFiles options must be an object');
  const extra = Object.keys(value).filter((k) => k !== 'source' && k !== 'project');
  if (extra.length > 0) throw new TypeError(`importFiles options take only source and project, not ${extra.join(', ')}`);
  const out: ImportFilesOptions = {};
  for (const key of ['source', 'project'] as const) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || v === '') continue;
    if (typeof v !== 'string') throw new TypeError(`importFiles ${key} must be a string`);
    if (v.length > IMPORT_OPTION_MAX_LENGTH) throw new TypeError(`importFiles ${key} is longer than ${IMPORT_OPTION_MAX_LENGTH} characters`);
    // Control characters have no place in a source name or a project ref.
    if (/[\u0000-\u001f\u007f-\u009f]/.test(v)) throw new TypeError(`importFiles ${key} contains control characters`);
    out[key] = v;
  }
  if (out.source !== undefined && !findSource(out.source)) throw new TypeError(`importFiles source "${out.source}" is not a source the server knows`);
  return out;
}

export interface ImportFilesResult {
  /** The user closed the file dialog without choosing. */
  canceled: boolean;
  files: ImportFileOutcome[];
}

/** What the desktop shell offers the page. Absent (undefined) when the page runs in a browser. */
export interface LogExplorerBridge {
  /** Always true: lets the page tell the desktop shell from a browser. */
  readonly desktop: true;
  /**
   * Opens the native file dialog; the server imports the chosen files from disk (no upload),
   * with the given source and project as an upload would be. Bad options are refused before
   * the dialog opens.
   */
  importFiles(options?: ImportFilesOptions): Promise<ImportFilesResult>;
  /** Opens the data folder in the OS file manager. */
  openDataFolder(): Promise<void>;
  /** Called after data changed outside the page (native import, demo data loaded or cleared). Returns an unsubscribe function. */
  onDataChanged(callback: () => void): () => void;
  /** Called with the chosen format when the user picked File → Export Current View → CSV, NDJSON or JSON. Returns an unsubscribe function. */
  onExportRequested(callback: (format: ViewExportFormat) => void): () => void;
}

/** IPC channels. `invoke` channels answer; `event` channels flow main → page only. */
export const CHANNELS = {
  importFiles: 'log-explorer:import-files',
  openDataFolder: 'log-explorer:open-data-folder',
  dataChanged: 'log-explorer:data-changed',
  exportRequested: 'log-explorer:export-requested',
} as const;

/** The global the preload defines; for the renderer: `declare global { interface Window { logExplorer?: LogExplorerBridge } }`. */
export const BRIDGE_GLOBAL = 'logExplorer';
