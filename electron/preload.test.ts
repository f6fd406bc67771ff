/**
 * The preload against a stand-in for Electron's renderer modules: it exposes exactly the
 * named bridge under `logExplorer`, invokes only its own channels, and never hands the page
 * an IPC event.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CHANNELS, type LogExplorerBridge } from './bridge.ts';

const exposed = new Map<string, unknown>();
const listeners = new Map<string, Set<(...args: unknown[]) => void>>();
const invoke = vi.fn(async (channel: string) => (channel === CHANNELS.importFiles ? { canceled: true, files: [] } : undefined));

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) },
  ipcRenderer: {
    invoke,
    on: (channel: string, l: (...args: unknown[]) => void) => {
      if (!listeners.has(channel)) listeners.set(channel, new Set());
      listeners.get(channel)!.add(l);
    },
    removeListener: (channel: string, l: (...args: unknown[]) => void) => listeners.get(channel)?.delete(l),
  },
}));

/** What main's webContents.send looks like from the renderer side: an event object, then args. */
function sendFromMain(channel: string, ...args: unknown[]) {
  const fakeEvent = { sender: { send: () => {}, invoke: () => {} }, senderFrame: null };
  for (const l of listeners.get(channel) ?? []) l(fakeEvent, ...args);
}

let bridge: LogExplorerBridge;

beforeAll(async () => {
  await import('./preload.ts');
  bridge = exposed.get('logExplorer') as LogExplorerBridge;
});

describe('preload', () => {
  it('exposes one object, logExplorer, with only the named methods', () => {
    expect([...exposed.keys()]).toEqual(['logExplorer']);
    expect(Object.keys(bridge).sort()).toEqual(['desktop', 'importFiles', 'onDataChanged', 'onExportRequested', 'openDataFolder']);
    expect(bridge.desktop).toBe(true);
    expect(Object.values(bridge).every((v) => typeof v === 'function' || v === true)).toBe(true);
  });

  it('invokes its own channels, with no arguments from the page', async () => {
    await expect(bridge.importFiles()).resolves.toEqual({ canceled: true, files: [] });
    await expect(bridge.openDataFolder()).resolves.toBeUndefined();
    expect(invoke.mock.calls).toEqual([[CHANNELS.importFiles], [CHANNELS.openDataFolder]]);
  });

  it('calls data-changed subscribers with no arguments (the IPC event stays in the preload) and unsubscribes', () => {
    const dataChanged = vi.fn();
    const offData = bridge.onDataChanged(dataChanged);

    sendFromMain(CHANNELS.dataChanged, 'ignored');
    expect(dataChanged.mock.calls).toEqual([[]]);

    offData();
    sendFromMain(CHANNELS.dataChanged);
    expect(dataChanged).toHaveBeenCalledTimes(1);
    expect(listeners.get(CHANNELS.dataChanged)?.size).toBe(0);
  });

  it('hands export subscribers the chosen format and nothing else, and unsubscribes', () => {
    const exportRequested = vi.fn();
    const off = bridge.onExportRequested(exportRequested);

    sendFromMain(CHANNELS.exportRequested, 'csv');
    sendFromMain(CHANNELS.exportRequested, 'ndjson', { extra: true });
    sendFromMain(CHANNELS.exportRequested, 'json');
    expect(exportRequested.mock.calls).toEqual([['csv'], ['ndjson'], ['json']]);

    off();
    sendFromMain(CHANNELS.exportRequested, 'csv');
    expect(exportRequested).toHaveBeenCalledTimes(3);
    expect(listeners.get(CHANNELS.exportRequested)?.size).toBe(0);
  });

  it('drops an export request without a known format', () => {
    const exportRequested = vi.fn();
    const off = bridge.onExportRequested(exportRequested);
    sendFromMain(CHANNELS.exportRequested);
    sendFromMain(CHANNELS.exportRequested, 'xlsx');
    sendFromMain(CHANNELS.exportRequested, 'CSV');
    sendFromMain(CHANNELS.exportRequested, { toString: () => 'csv' });
    expect(exportRequested).not.toHaveBeenCalled();
    off();
  });

  it('refuses a non-function callback', () => {
    expect(() => bridge.onDataChanged('alert(1)' as unknown as () => void)).toThrow(TypeError);
    expect(() => bridge.onExportRequested(null as unknown as () => void)).toThrow(TypeError);
  });
});
