/**
 * main.ts wired to a stand-in for Electron's main-process modules, with a REAL server
 * process behind the fake utilityProcess (electron/server-process.ts forked with tsx). What
 * Electron itself does (drawing windows, running Chromium) is the Playwright test's part;
 * this checks what main.ts asks of it, in order, without the binary.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fnRecord, tempDir } from '../server/testing/fixtures.ts';
import { appApi, storeIsEmpty } from './app-api.ts';
import { CHANNELS } from './bridge.ts';
import { ACTION_URLS, APP_CSP, webPreferencesFor } from './guards.ts';
import { MENU_IDS, menuItems } from './menu.ts';
import { SERVER_SERVICE_NAME } from './protocol.ts';
import { STATE_FILE } from './shell-state.ts';

const SERVER_TS = path.join(import.meta.dirname, 'server-process.ts');

interface NavEvent {
  url: string;
  isMainFrame: boolean;
  defaultPrevented: boolean;
  preventDefault(): void;
}
const navEvent = (url: string, isMainFrame = true): NavEvent => ({
  url,
  isMainFrame,
  defaultPrevented: false,
  preventDefault() {
    this.defaultPrevented = true;
  },
});

class FakeWebContents extends EventEmitter {
  sent: unknown[][] = [];
  openHandler?: (details: { url: string }) => { action: string };
  send(channel: string, ...args: unknown[]) {
    this.sent.push([channel, ...args]);
  }
  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }) {
    this.openHandler = handler;
  }
}

class FakeWindow extends EventEmitter {
  static all: FakeWindow[] = [];
  webContents = new FakeWebContents();
  urls: string[] = [];
  progress: number[] = [];
  constructor(readonly options: { webPreferences: unknown; width: number; height: number; parent?: unknown }) {
    super();
    FakeWindow.all.push(this);
    fake.app.emit('web-contents-created', {}, this.webContents);
  }
  static getAllWindows() {
    return FakeWindow.all;
  }
  loadURL(url: string) {
    this.urls.push(url);
    setImmediate(() => this.emit('ready-to-show'));
    return Promise.resolve();
  }
  show() {}
  maximize() {}
  isMaximized() {
    return false;
  }
  isMinimized() {
    return false;
  }
  restore() {}
  focus() {}
  getNormalBounds() {
    return { x: 10, y: 20, width: 1111, height: 777 };
  }
  setProgressBar(p: number) {
    this.progress.push(p);
  }
}

class FakeApp extends EventEmitter {
  paths = new Map<string, string>();
  name = '';
  sandboxed = false;
  lockRequested = false;
  quitted = false;
  isPackaged = false;
  constructor(private appData: string) {
    super();
  }
  setName(n: string) {
    this.name = n;
  }
  getPath(n: string) {
    if (n === 'appData') return this.appData;
    const p = this.paths.get(n);
    if (!p) throw new Error(`no path ${n}`);
    return p;
  }
  setPath(n: string, p: string) {
    this.paths.set(n, p);
  }
  enableSandbox() {
    this.sandboxed = true;
  }
  requestSingleInstanceLock() {
    this.lockRequested = true;
    return true;
  }
  whenReady() {
    return Promise.resolve();
  }
  /** As Electron: before-quit may be prevented; otherwise windows close and the app ends. */
  quit() {
    const ev = { defaultPrevented: false, preventDefault: () => (ev.defaultPrevented = true) };
    this.emit('before-quit', ev);
    if (ev.defaultPrevented) return;
    for (const w of [...FakeWindow.all]) {
      w.emit('close', {});
      w.emit('closed');
    }
    FakeWindow.all = [];
    this.quitted = true;
  }
  exit() {}
}

const work = tempDir('le-main-');
const fake = {
  app: new FakeApp(path.join(work, 'appData')),
  forks: [] as Array<{ entry: string; options: Record<string, unknown>; child: ChildProcess }>,
  handlers: new Map<string, (event: unknown) => Promise<unknown>>(),
  session: {} as Record<string, (...args: never[]) => unknown>,
  menu: undefined as undefined | { template: Electron.MenuItemConstructorOptions[] },
  openDialog: vi.fn(async (..._args: unknown[]) => ({ canceled: true, filePaths: [] as string[] })),
  // Answers "Clear Demo Data" to the first-start dialog, the first button to any other.
  messageBox: vi.fn(async (...args: unknown[]) => ({ response: (args.at(-1) as { message?: string }).message === 'Demo data loaded' ? 1 : 0, checkboxChecked: false })),
  errorBox: vi.fn(),
  openPath: vi.fn(async (_p: string) => ''),
  openExternal: vi.fn(async (_u: string) => {}),
  theme: { themeSource: 'system', get shouldUseDarkColors() { return this.themeSource === 'dark'; } },
};

vi.mock('electron', () => ({
  app: fake.app,
  BrowserWindow: FakeWindow,
  utilityProcess: {
    fork(entry: string, _args: string[], options: Record<string, unknown>) {
      // The real entry is the bundle; the test runs its source with tsx.
      const child = fork(SERVER_TS, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'pipe', 'ipc'], cwd: options.cwd as string });
      fake.forks.push({ entry, options, child });
      const up = Object.assign(new EventEmitter(), {
        pid: child.pid,
        stdout: child.stdout,
        stderr: child.stderr,
        postMessage: (m: unknown) => child.connected && child.send(m as object),
        kill: () => child.kill(),
      });
      child.on('message', (m) => up.emit('message', m));
      // Electron reports an exit code only.
      child.on('exit', (code, signal) => up.emit('exit', code ?? (signal ? 9 : 0)));
      return up;
    },
  },
  ipcMain: { handle: (channel: string, fn: (event: unknown) => Promise<unknown>) => fake.handlers.set(channel, fn) },
  session: {
    defaultSession: {
      setPermissionRequestHandler: (fn: never) => (fake.session.request = fn),
      setPermissionCheckHandler: (fn: never) => (fake.session.check = fn),
      setDevicePermissionHandler: (fn: never) => (fake.session.device = fn),
      webRequest: { onHeadersReceived: (fn: never) => (fake.session.headers = fn) },
    },
  },
  dialog: {
    showOpenDialog: (...a: unknown[]) => fake.openDialog(...a),
    showMessageBox: (...a: unknown[]) => fake.messageBox(...a),
    showErrorBox: (...a: unknown[]) => fake.errorBox(...a),
  },
  Menu: {
    buildFromTemplate: (template: Electron.MenuItemConstructorOptions[]) => ({ template }),
    setApplicationMenu: (m: { template: Electron.MenuItemConstructorOptions[] }) => (fake.menu = m),
  },
  nativeTheme: fake.theme,
  screen: { getAllDisplays: () => [{ workArea: { x: 0, y: 0, width: 1920, height: 1080 } }] },
  shell: { openPath: (p: string) => fake.openPath(p), openExternal: (u: string) => fake.openExternal(u) },
}));

const userData = path.join(work, 'user-data');
const win = () => FakeWindow.all[0]!;
const appUrls = () => win().urls.filter((u) => u.startsWith('http://'));
const lastUrl = () => win().urls.at(-1) ?? '';
const server = () => {
  const u = new URL(appUrls().at(-1)!);
  return { url: u.origin, apiKey: u.hash.replace('#key=', '') };
};
const menuItem = (id: string) => menuItems(fake.menu!.template).find((i) => i.id === id)!;
const invoke = (channel: string, frameUrl: string | null) => fake.handlers.get(channel)!({ senderFrame: frameUrl === null ? null : { url: frameUrl } });

beforeAll(async () => {
  process.env.LOG_EXPLORER_USER_DATA_DIR = userData;
  delete process.env.LOG_EXPLORER_DEMO;
  (globalThis as Record<string, unknown>).LOG_EXPLORER_VERSION = '0.0.0-test';
  vi.spyOn(console, 'log').mockImplementation(() => {});
  await import('./main.ts');
  await vi.waitFor(() => expect(appUrls()).toHaveLength(1), { timeout: 30_000, interval: 50 });
});

afterAll(() => {
  for (const f of fake.forks) if (f.child.exitCode === null && f.child.signalCode === null) f.child.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

describe('main process', () => {
  it('claims the single-instance lock in its own user-data folder, with every renderer sandboxed', () => {
    expect(fake.app.name).toBe('Log Explorer');
    expect(fake.app.getPath('userData')).toBe(userData);
    expect(fake.app.lockRequested).toBe(true);
    expect(fake.app.sandboxed).toBe(true);
  });

  it('runs the server in a utility process and opens the window on the app URL with a fresh key', async () => {
    expect(fake.forks).toHaveLength(1);
    expect(path.basename(fake.forks[0]!.entry)).toBe('server-process.cjs');
    expect(fake.forks[0]!.options).toMatchObject({ serviceName: SERVER_SERVICE_NAME, stdio: 'pipe' });
    expect(appUrls()[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#key=[A-Za-z0-9_-]{32}$/);
    expect(win().options.webPreferences).toEqual(webPreferencesFor(path.join(import.meta.dirname, 'preload.cjs')));
    const res = await fetch(`${server().url}/api/clock`, { headers: { 'X-API-KEY': server().apiKey } });
    expect(res.status).toBe(200);
  });

  it('loads the demo data on first start, says so, and clears it with one click', async () => {
    await vi.waitFor(() => expect(fake.messageBox).toHaveBeenCalled(), { timeout: 60_000, interval: 100 });
    const options = fake.messageBox.mock.calls[0]!.at(-1) as { message: string; detail: string; buttons: string[] };
    expect(options.message).toBe('Demo data loaded');
    expect(options.detail).toMatch(/loaded [\d,]+ generated demo records \(9 sources\)/);
    expect(options.buttons).toEqual(['Keep Demo Data', 'Clear Demo Data']);
    // The dialog answered "Clear Demo Data": every demo source is emptied and the page told twice (loaded, cleared).
    await vi.waitFor(async () => expect(storeIsEmpty(await appApi(server()).sources())).toBe(true), { timeout: 30_000, interval: 100 });
    await vi.waitFor(() => expect(win().webContents.sent.filter(([c]) => c === CHANNELS.dataChanged)).toHaveLength(2));
    // Offered once: never again, even though the store is empty now.
    expect(JSON.parse(fs.readFileSync(path.join(userData, STATE_FILE), 'utf8'))).toMatchObject({ demoOffered: true });
  });

  it('answers IPC only from the app page', async () => {
    const { url } = server();
    await expect(invoke(CHANNELS.openDataFolder, `${url}/functions`)).resolves.toBeUndefined();
    expect(fake.openPath).toHaveBeenCalledWith(userData);
    for (const frame of [null, 'data:text/html,x', `${url}.evil.com/`, `http://127.0.0.1:1/`, 'https://evil.com/']) {
      await expect(invoke(CHANNELS.openDataFolder, frame)).rejects.toThrow(`${CHANNELS.openDataFolder} is not available to this page`);
    }
    expect(fake.openPath).toHaveBeenCalledTimes(1);
  });

  it('imports the files chosen in the native dialog in the server process, then tells the page', async () => {
    const file = path.join(work, 'function_edge_logs.ndjson');
    const now = Date.now() * 1000;
    fs.writeFileSync(file, [1, 2, 3].map((i) => JSON.stringify(fnRecord(now - i * 1_000_000, { project: 'mainprojaaaaaaaaaaaa' }))).join('\n'));
    fake.openDialog.mockResolvedValueOnce({ canceled: false, filePaths: [file] });
    const sentBefore = win().webContents.sent.length;

    const result = (await invoke(CHANNELS.importFiles, `${server().url}/`)) as { canceled: boolean; files: Array<{ ok: boolean; report: { imported: number } }> };

    expect(fake.openDialog.mock.calls.at(-1)!.at(-1)).toMatchObject({ properties: ['openFile', 'multiSelections'] });
    expect(result.canceled).toBe(false);
    expect(result.files[0]).toMatchObject({ ok: true, report: { imported: 3 } });
    expect(win().webContents.sent.slice(sentBefore)).toEqual([[CHANNELS.dataChanged]]);
    expect(win().progress.at(-1)).toBe(-1);

    fake.openDialog.mockResolvedValueOnce({ canceled: true, filePaths: [] });
    await expect(invoke(CHANNELS.importFiles, `${server().url}/`)).resolves.toEqual({ canceled: true, files: [] });
  });

  it('File → Import Logs… shows a summary of each file', async () => {
    const file = path.join(work, 'function_edge_logs.ndjson');
    fake.openDialog.mockResolvedValueOnce({ canceled: false, filePaths: [file, path.join(work, 'missing.csv')] });
    const boxes = fake.messageBox.mock.calls.length;
    (menuItem(MENU_IDS.importLogs).click as () => void)();
    await vi.waitFor(() => expect(fake.messageBox.mock.calls.length).toBe(boxes + 1), { timeout: 20_000 });
    const options = fake.messageBox.mock.calls.at(-1)!.at(-1) as { type: string; message: string; detail: string };
    expect(options).toMatchObject({ type: 'warning', message: '1 of 2 files could not be imported' });
    expect(options.detail).toContain('function_edge_logs.ndjson: 0 imported, 3 duplicates, 0 rejected (deno-relay-logs)');
    expect(options.detail).toMatch(/missing\.csv: not imported: cannot read/);
  });

  it('File → Export Current View asks the page to export', () => {
    (menuItem(MENU_IDS.exportView).click as () => void)();
    expect(win().webContents.sent.at(-1)).toEqual([CHANNELS.exportRequested]);
  });

  it('View → Dark Mode switches the native theme and remembers it', () => {
    (menuItem(MENU_IDS.darkMode).click as () => void)();
    expect(fake.theme.themeSource).toBe('dark');
    expect(menuItem(MENU_IDS.darkMode).checked).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(userData, STATE_FILE), 'utf8'))).toMatchObject({ theme: 'dark' });
  });

  it('denies every permission and adds the CSP to the app’s responses only', () => {
    const granted: boolean[] = [];
    (fake.session.request as unknown as (wc: unknown, p: string, cb: (ok: boolean) => void) => void)({}, 'media', (ok) => granted.push(ok));
    expect(granted).toEqual([false]);
    expect((fake.session.check as unknown as () => boolean)()).toBe(false);
    expect((fake.session.device as unknown as () => boolean)()).toBe(false);
    const headers = (url: string) => {
      let out: unknown;
      (fake.session.headers as unknown as (d: unknown, cb: (r: unknown) => void) => void)({ url, responseHeaders: { 'content-type': ['text/html'] } }, (r) => (out = r));
      return out;
    };
    expect(headers(`${server().url}/`)).toEqual({ responseHeaders: { 'content-type': ['text/html'], 'Content-Security-Policy': [APP_CSP] } });
    expect(headers('https://example.com/')).toEqual({});
  });

  it('keeps the window on the app: other origins are refused, safe links go to the browser', () => {
    const wc = win().webContents;
    const navigate = (url: string) => {
      const ev = navEvent(url);
      wc.emit('will-navigate', ev);
      return ev.defaultPrevented;
    };
    expect(navigate(`${server().url}/logs`)).toBe(false);
    for (const url of [`${server().url}.evil.com/`, `${server().url}@evil.com/`, 'file:///etc/passwd', 'javascript:alert(1)', 'https://supabase.com/docs']) {
      expect(navigate(url), url).toBe(true);
    }
    expect(fake.openExternal.mock.calls).toEqual([['https://supabase.com/docs']]);
    // The restart action means nothing while the server runs.
    expect(navigate(ACTION_URLS.restart)).toBe(true);
    expect(fake.forks).toHaveLength(1);

    expect(wc.openHandler!({ url: 'https://example.com/x' })).toEqual({ action: 'deny' });
    expect(wc.openHandler!({ url: `${server().url}/` })).toEqual({ action: 'deny' });
    expect(wc.openHandler!({ url: 'file:///etc/passwd' })).toEqual({ action: 'deny' });
    expect(fake.openExternal.mock.calls.slice(1)).toEqual([['https://example.com/x']]);

    const frame = navEvent('https://evil.com/', false);
    wc.emit('will-frame-navigate', frame);
    expect(frame.defaultPrevented).toBe(true);
    const redirect = navEvent('https://evil.com/');
    wc.emit('will-redirect', redirect);
    expect(redirect.defaultPrevented).toBe(true);
    const webview = navEvent('about:blank');
    wc.emit('will-attach-webview', webview);
    expect(webview.defaultPrevented).toBe(true);
  });

  it('shows the error page with the last log lines when the server dies, and its Restart link brings a new server', async () => {
    const before = server();
    const child = fake.forks[0]!.child;
    child.kill('SIGKILL');

    await vi.waitFor(() => expect(lastUrl()).toMatch(/^data:text\/html/), { timeout: 10_000 });
    const page = decodeURIComponent(lastUrl().slice(lastUrl().indexOf(',') + 1));
    expect(page).toContain('The server stopped');
    expect(page).toContain(`listening on ${before.url}`);
    expect(page).toContain(`href="${ACTION_URLS.restart}"`);
    expect(page).not.toContain(before.apiKey);
    expect(menuItem(MENU_IDS.importLogs).enabled).toBe(false);
    // The error page may not use the bridge.
    await expect(invoke(CHANNELS.openDataFolder, lastUrl())).rejects.toThrow('not available');

    const click = navEvent(ACTION_URLS.restart);
    win().webContents.emit('will-navigate', click);
    expect(click.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(appUrls()).toHaveLength(2), { timeout: 30_000, interval: 50 });
    expect(fake.forks).toHaveLength(2);
    const after = server();
    expect(after.url).not.toBe(before.url);
    expect(after.apiKey).not.toBe(before.apiKey);
    expect((await fetch(`${after.url}/api/clock`, { headers: { 'X-API-KEY': after.apiKey } })).status).toBe(200);
    expect(menuItem(MENU_IDS.importLogs).enabled).toBe(true);
  });

  it('on quit, asks the server to save and exit before the app exits, and saves the window bounds owner-only', async () => {
    const child = fake.forks.at(-1)!.child;
    fake.app.quit();
    expect(fake.app.quitted).toBe(false); // held until the server has saved
    await vi.waitFor(() => expect(fake.app.quitted).toBe(true), { timeout: 30_000, interval: 50 });
    expect(child.exitCode).toBe(0);
    expect(fs.existsSync(path.join(userData, 'catalog.sqlite'))).toBe(true);
    expect(fs.existsSync(path.join(userData, 'LOCK'))).toBe(false);
    const stateFile = path.join(userData, STATE_FILE);
    expect(JSON.parse(fs.readFileSync(stateFile, 'utf8'))).toEqual({ demoOffered: true, theme: 'dark', window: { x: 10, y: 20, width: 1111, height: 777, maximized: false } });
    if (process.platform !== 'win32') expect(fs.statSync(stateFile).mode & 0o777).toBe(0o600);
  });
});
