/**
 * The preload against a stand-in for Electron's renderer modules: it exposes exactly the
 * named bridge under `logExplorer`, invokes only its own channels, passes importFiles only a
 * checked source and project, and never hands the page an IPC event.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CHANNELS, type LogExplorerBridge } from './bridge.ts';

const exposed = new Map<string, unknown>();
const listeners = new Map<string, Set<(...args: unknown[]) => void>>();
const invoke = vi.fn(async (channel: string, ..._args: unknown[]) => (channel === CHANNELS.importFiles ? { canceled: true, files: [] } : undefined));

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

  it('invokes its own channels; importFiles without options asks main for none (recognize automatically)', async () => {
    invoke.mockClear();
    await expect(bridge.importFiles()).resolves.toEqual({ canceled: true, files: [] });
    await expect(bridge.openDataFolder()).resolves.toBeUndefined();
    expect(invoke.mock.calls).toEqual([[CHANNELS.importFiles, {}], [CHANNELS.openDataFolder]]);
  });

  it('passes importFiles the source and project the page gives, as a fresh object', async () => {
    invoke.mockClear();
    const given = { source: 'auth_logs', project: 'abcdefghijklmnopqrst' };
    await bridge.importFiles(given);
    await bridge.importFiles({ source: 'gotrue.logs.prod' });
    await bridge.importFiles({ project: 'abcdefghijklmnopqrst' });
    // Empty fields mean "none", as on the upload route.
    await bridge.importFiles({ source: '', project: '' });
    await bridge.importFiles({ source: undefined, project: undefined });
    expect(invoke.mock.calls).toEqual([
      [CHANNELS.importFiles, { source: 'auth_logs', project: 'abcdefghijklmnopqrst' }],
      [CHANNELS.importFiles, { source: 'gotrue.logs.prod' }],
      [CHANNELS.importFiles, { project: 'abcdefghijklmnopqrst' }],
      [CHANNELS.importFiles, {}],
      [CHANNELS.importFiles, {}],
    ]);
    expect(invoke.mock.calls[0]![1]).not.toBe(given);
  });

  it.each([
    ['not an object', 'auth_logs', /must be an object/],
    ['null', null, /must be an object/],
    ['an array', ['auth_logs'], /must be an object/],
    ['an unknown key', { source: 'auth_logs', path: '/etc/passwd' }, /only source and project, not path/],
    ['a source that is no string', { source: 5 }, /source must be a string/],
    ['a project that is no string', { project: { toString: (): string => 'x' } }, /project must be a string/],
    ['a source the server does not know', { source: 'nginx_logs' }, /source "nginx_logs" is not a source the server knows/],
    ['a project of 257 characters', { project: 'p'.repeat(257) }, /project is longer than 256 characters/],
    ['a source of 257 characters', { source: 'a'.repeat(257) }, /source is longer than 256 characters/],
    ['a project with a newline', { project: 'abc\ndef' }, /project contains control characters/],
  ])('refuses importFiles options with %s, before asking main', async (_what, options, message) => {
    invoke.mockClear();
    await expect(bridge.importFiles(options as never)).rejects.toThrow(message);
    expect(invoke).not.toHaveBeenCalled();
  });

  it('accepts a project of exactly 256 characters', async () => {
    invoke.mockClear();
    await bridge.importFiles({ project: 'p'.repeat(256) });
    expect(invoke.mock.calls).toEqual([[CHANNELS.importFiles, { project: 'p'.repeat(256) }]]);
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
