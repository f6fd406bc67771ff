/**
 * The preload of the app window: sandboxed (bundled to CommonJS, `electron` is its only
 * import), it exposes one small named object and nothing generic. Callbacks get no
 * arguments, so no IpcRendererEvent (and its `sender`) ever reaches the page.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { BRIDGE_GLOBAL, CHANNELS, type ImportFilesResult, type LogExplorerBridge } from './bridge.ts';

function subscribe(channel: string, callback: () => void): () => void {
  if (typeof callback !== 'function') throw new TypeError('callback must be a function');
  const listener = () => callback();
  ipcRenderer.on(channel, listener);
  return () => {
    ipcRenderer.removeListener(channel, listener);
  };
}

const api = {
  desktop: true,
  importFiles: () => ipcRenderer.invoke(CHANNELS.importFiles) as Promise<ImportFilesResult>,
  openDataFolder: async () => {
    await ipcRenderer.invoke(CHANNELS.openDataFolder);
  },
  onDataChanged: (callback: () => void) => subscribe(CHANNELS.dataChanged, callback),
  onExportRequested: (callback: () => void) => subscribe(CHANNELS.exportRequested, callback),
} as const;

contextBridge.exposeInMainWorld(BRIDGE_GLOBAL, api satisfies LogExplorerBridge);
