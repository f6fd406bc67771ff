/**
 * The one contract between the window and the main process: the object the preload exposes
 * as `window.logExplorer`, and the IPC channel names behind it. Types and constants only, so
 * the preload, the main process and the renderer (with `import type`) share it.
 */
import type { ImportReport } from '../server/ingest/import.ts';

/** One file of a native import: its report, or why nothing could be imported from it. */
export type ImportFileOutcome = { file: string; ok: true; report: ImportReport } | { file: string; ok: false; reason: string };

/** The formats File → Export Current View offers; the page writes the file. */
export const VIEW_EXPORT_FORMATS = ['csv', 'ndjson', 'json'] as const;
export type ViewExportFormat = (typeof VIEW_EXPORT_FORMATS)[number];

export interface ImportFilesResult {
  /** The user closed the file dialog without choosing. */
  canceled: boolean;
  files: ImportFileOutcome[];
}

/** What the desktop shell offers the page. Absent (undefined) when the page runs in a browser. */
export interface LogExplorerBridge {
  /** Always true: lets the page tell the desktop shell from a browser. */
  readonly desktop: true;
  /** Opens the native file dialog; the server imports the chosen files from disk (no upload). */
  importFiles(): Promise<ImportFilesResult>;
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
