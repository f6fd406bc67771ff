/**
 * The desktop shell's bridge (`window.logExplorer`, defined by electron/preload.ts), read in
 * this one place. In a browser it is absent and every caller works as it always did.
 *
 * Only types come from electron/bridge.ts: the renderer never loads shell code at runtime.
 */
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { ImportFileOutcome, ImportFilesResult, LogExplorerBridge, ViewExportFormat } from '../../../electron/bridge.ts';

export type { ImportFileOutcome, ImportFilesResult, LogExplorerBridge, ViewExportFormat };

declare global {
  interface Window {
    logExplorer?: LogExplorerBridge;
  }
}

/** The bridge when the page runs in the desktop app, else undefined. */
export function getBridge(): LogExplorerBridge | undefined {
  if (typeof window === 'undefined') return undefined;
  const bridge = window.logExplorer;
  return bridge?.desktop === true ? bridge : undefined;
}

export interface ShellHandlers {
  dataChanged(): void;
  exportRequested(format: ViewExportFormat): void;
}

/** Listens to both shell events; the returned function stops listening to both. */
export function listenToShell(bridge: LogExplorerBridge, handlers: ShellHandlers): () => void {
  const offData = bridge.onDataChanged(() => handlers.dataChanged());
  const offExport = bridge.onExportRequested((format) => handlers.exportRequested(format));
  return () => {
    offData();
    offExport();
  };
}

/**
 * After data changed outside the page's own requests: every query is stale, whichever page
 * asked for it, and the shown ones refetch. Fetches still in flight are cancelled first:
 * invalidating alone lets a query's first fetch (no data yet, as at a first start while the
 * demo data loads) stand in for the refetch and answer with the data from before the change.
 */
export async function refreshAll(qc: QueryClient): Promise<void> {
  await qc.cancelQueries();
  await qc.invalidateQueries();
}

/** What the page does when the shell speaks: data changed (native import, demo data loaded or cleared), or File → Export Current View. */
export function shellHandlers(qc: QueryClient, exportView: (format: ViewExportFormat) => void): ShellHandlers {
  return {
    dataChanged: () => void refreshAll(qc),
    exportRequested: exportView,
  };
}

/**
 * Connects the shell's events to the page while the calling component is mounted. Mounted
 * at the root, it subscribes in the same commit in which the first queries start, so a
 * data-changed sent before it listened was sent before those queries asked (they see the
 * new data), and one sent after reaches it (they refetch).
 */
export function useShellEvents(exportView: (format: ViewExportFormat) => void, bridge: LogExplorerBridge | undefined = getBridge()): void {
  const qc = useQueryClient();
  useEffect(() => (bridge ? listenToShell(bridge, shellHandlers(qc, exportView)) : undefined), [bridge, qc, exportView]);
}
