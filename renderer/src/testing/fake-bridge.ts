/**
 * A stand-in for the desktop shell's `window.logExplorer`, for unit tests: it records what
 * the page asks and lets the test speak as the shell (fire data-changed, request an export).
 */
import type { ImportFilesResult, LogExplorerBridge, ViewExportFormat } from '../api/bridge.ts';

export interface FakeBridge extends LogExplorerBridge {
  /** Answers the next importFiles() calls (default: the user cancelled the dialog). */
  importResult: ImportFilesResult | Error;
  /** What each importFiles() call was given, in order. */
  importCalls: Array<Parameters<LogExplorerBridge['importFiles']>[0]>;
  openDataFolderCalls: number;
  fireDataChanged(): void;
  fireExportRequested(format: ViewExportFormat): void;
  /** Subscribers now listening, per event. */
  listeners(): { dataChanged: number; exportRequested: number };
}

export function fakeBridge(importResult: ImportFilesResult | Error = { canceled: true, files: [] }): FakeBridge {
  const dataChanged = new Set<() => void>();
  const exportRequested = new Set<(format: ViewExportFormat) => void>();
  const bridge: FakeBridge = {
    desktop: true,
    importResult,
    importCalls: [],
    openDataFolderCalls: 0,
    async importFiles(options) {
      bridge.importCalls.push(options);
      if (bridge.importResult instanceof Error) throw bridge.importResult;
      return bridge.importResult;
    },
    async openDataFolder() {
      bridge.openDataFolderCalls++;
    },
    onDataChanged(callback) {
      // A wrapper per subscription, as the preload makes: the same callback twice is two subscriptions.
      const l = () => callback();
      dataChanged.add(l);
      return () => void dataChanged.delete(l);
    },
    onExportRequested(callback) {
      const l = (format: ViewExportFormat) => callback(format);
      exportRequested.add(l);
      return () => void exportRequested.delete(l);
    },
    fireDataChanged: () => [...dataChanged].forEach((l) => l()),
    fireExportRequested: (format) => [...exportRequested].forEach((l) => l(format)),
    listeners: () => ({ dataChanged: dataChanged.size, exportRequested: exportRequested.size }),
  };
  return bridge;
}
