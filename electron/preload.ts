/**
 * The preload of the app window: sandboxed (bundled to CommonJS, `electron` is its only
 * import), it exposes one small named object and nothing generic. No IpcRendererEvent (and
 * its `sender`) ever reaches the page: data-changed callbacks get no arguments, export
 * callbacks only a format from the known list. The page passes main nothing but a checked
 * source and project.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { BRIDGE_GLOBAL, checkImportOptions, CHANNELS, VIEW_EXPORT_FORMATS, type ImportFilesResult, type LogExplorerBridge, type ViewExportFormat } from './bridge.ts';

/** Subscribes `deliver` to a main → page channel; `deliver` sees the message's arguments, never the event. */
function subscribe(channel: string, callback: unknown, deliver: (args: unknown[]) => void): () => void {
  if (typeof callback !== 'function') throw new TypeError('callback must be a function');
  const listener = (_event: unknown, ...args: unknown[]) => deliver(args);
  ipcRenderer.on(channel, listener);
  return () => {
    ipcRenderer.removeListener(channel, listener);
  };
}

const isExportFormat = (v: unknown): v is ViewExportFormat => (VIEW_EXPORT_FORMATS as readonly unknown[]).includes(v);

const api = {
  desktop: true,
  // Only a checked copy of source and project crosses (main checks again); bad options reject here.
  importFiles: async (options?: unknown) => (await ipcRenderer.invoke(CHANNELS.importFiles, checkImportOptions(options))) as ImportFilesResult,
  openDataFolder: async () => {
    await ipcRenderer.invoke(CHANNELS.openDataFolder);
  },
  onDataChanged: (callback: () => void) => subscribe(CHANNELS.dataChanged, callback, () => callback()),
  // Only a known format string crosses; anything else main might send is dropped here.
  onExportRequested: (callback: (format: ViewExportFormat) => void) =>
    subscribe(CHANNELS.exportRequested, callback, ([format]) => {
      if (isExportFormat(format)) callback(format);
    }),
} as const;

contextBridge.exposeInMainWorld(BRIDGE_GLOBAL, api satisfies LogExplorerBridge);
