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
import { spawnListening } from '../server/testing/processes.ts';
import { appApi, storeIsEmpty } from './app-api.ts';
import { CHANNELS } from './bridge.ts';
import { ACTION_URLS, APP_CSP, webPreferencesFor } from './guards.ts';
import { EXPORT_MENU_IDS, MENU_IDS, menuItems } from './menu.ts';
import { PREFERRED_PORT_ENV } from './port-choice.ts';
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
  url = '';
  reloads = 0;
  scripts: string[] = [];
  /** What the page's script answers (executeJavaScript). */
  scriptResult: unknown = false;
  openHandler?: (details: { url: string }) => { action: string };
  send(channel: string, ...args: unknown[]) {
    this.sent.push([channel, ...args]);
  }
  getURL() {
    return this.url;
  }
  reload() {
    this.reloads++;
  }
  executeJavaScript(code: string) {
    this.scripts.push(code);
    return Promise.resolve(this.scriptResult);
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
    this.webContents.url = url;
    setImmediate(() => this.emit('ready-to-show'));
    const fail = fake.loadError;
    fake.loadError = undefined;
    return fail ? Promise.reject(fail) : Promise.resolve();
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
  handlers: new Map<string, (event: unknown, ...args: unknown[]) => Promise<unknown>>(),
  session: {} as Record<string, (...args: never[]) => unknown>,
  menu: undefined as undefined | { template: Electron.MenuItemConstructorOptions[] },
  openDialog: vi.fn(async (..._args: unknown[]) => ({ canceled: true, filePaths: [] as string[] })),
  // Answers "Clear Demo Data" to the first-start dialog, the first button to any other.
  messageBox: vi.fn(async (...args: unknown[]) => ({ response: (args.at(-1) as { message?: string }).message === 'Demo data loaded' ? 1 : 0, checkboxChecked: false })),
  errorBox: vi.fn(),
  openPath: vi.fn(async (_p: string) => ''),
  openExternal: vi.fn(async (_u: string) => {}),
  theme: { themeSource: 'system', get shouldUseDarkColors() { return this.themeSource === 'dark'; } },
  /** Makes the next loadURL fail with this error. */
  loadError: undefined as undefined | Error,
};

vi.mock('electron', () => ({
  app: fake.app,
  BrowserWindow: FakeWindow,
  utilityProcess: {
    fork(entry: string, _args: string[], options: Record<string, unknown>) {
      // The real entry is the bundle; the test runs its source with tsx.
      const child = fork(SERVER_TS, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'pipe', 'ipc'], cwd: options.cwd as string, env: options.env as NodeJS.ProcessEnv });
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
  ipcMain: { handle: (channel: string, fn: (event: unknown, ...args: unknown[]) => Promise<unknown>) => fake.handlers.set(channel, fn) },
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
/** LOG_EXPLORER_USER_DATA_DIR holds the shell's folder; the store has a folder of its own inside it. */
const dataDir = path.join(userData, 'data');
const win = () => FakeWindow.all[0]!;
const appUrls = () => win().urls.filter((u) => u.startsWith('http://'));
const lastUrl = () => win().urls.at(-1) ?? '';
const server = () => {
  const u = new URL(appUrls().at(-1)!);
  return { url: u.origin, apiKey: u.hash.replace('#key=', '') };
};
const errors: string[] = [];
const ROOT = path.resolve(import.meta.dirname, '..');
const readState = () => JSON.parse(fs.readFileSync(path.join(userData, STATE_FILE), 'utf8')) as { port?: number };
const pageText = () => decodeURIComponent(lastUrl().slice(lastUrl().indexOf(',') + 1));
const others: ChildProcess[] = [];

/** `npm run serve` (server/main.ts under tsx) until it listens. */
function serve(args: string[]) {
  const s = spawnListening(['--import', 'tsx', 'server/main.ts', ...args], { cwd: ROOT });
  others.push(s.child);
  return s;
}
const lastBox = () => fake.messageBox.mock.calls.at(-1)!.at(-1) as { message: string; detail: string; buttons?: string[] };
const menuItem = (id: string) => menuItems(fake.menu!.template).find((i) => i.id === id)!;
/** As ipcRenderer.invoke from a frame at `frameUrl`, with the page's arguments after it. */
const invoke = (channel: string, frameUrl: string | null, ...args: unknown[]) => fake.handlers.get(channel)!({ senderFrame: frameUrl === null ? null : { url: frameUrl } }, ...args);
type ImportAnswer = { canceled: boolean; files: Array<{ file: string; ok: boolean; reason?: string; report?: { source: string; imported: number; duplicates: number; rejected: number } }> };

beforeAll(async () => {
  process.env.LOG_EXPLORER_USER_DATA_DIR = userData;
  delete process.env.LOG_EXPLORER_DEMO;
  (globalThis as Record<string, unknown>).LOG_EXPLORER_VERSION = '0.0.0-test';
  vi.spyOn(console, 'log').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void errors.push(args.map(String).join(' ')));
  await import('./main.ts');
  await vi.waitFor(() => expect(appUrls()).toHaveLength(1), { timeout: 30_000, interval: 50 });
});

afterAll(() => {
  for (const c of [...fake.forks.map((f) => f.child), ...others]) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

describe('main process', () => {
  it('claims the single-instance lock in its own user-data folder, with every renderer sandboxed', () => {
    expect(fake.app.name).toBe('Log Explorer');
    expect(fake.app.getPath('userData')).toBe(userData);
    expect(fake.app.lockRequested).toBe(true);
    expect(fake.app.sandboxed).toBe(true);
  });

  it("keeps Chromium's profile out of the data folder: the store has a folder of its own", () => {
    expect(fake.app.getPath('sessionData')).toBe(userData);
    expect(fs.readdirSync(dataDir)).toEqual(expect.arrayContaining(['catalog.sqlite', 'LOCK']));
    expect(fs.existsSync(path.join(userData, 'catalog.sqlite'))).toBe(false);
  });

  it('runs the server in a utility process and opens the window on the app URL with a fresh key', async () => {
    expect(fake.forks).toHaveLength(1);
    expect(path.basename(fake.forks[0]!.entry)).toBe('server-process.cjs');
    expect(fake.forks[0]!.options).toMatchObject({ serviceName: SERVER_SERVICE_NAME, stdio: 'pipe' });
    expect(appUrls()[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#key=[A-Za-z0-9_-]{32}$/);
    expect(win().options.webPreferences).toEqual(webPreferencesFor(path.join(import.meta.dirname, 'preload.cjs'), { packaged: false }));
    // An unpackaged run keeps the developer tools; the first start has no port to remember yet.
    expect(win().options.webPreferences).toMatchObject({ devTools: true });
    expect((fake.forks[0]!.options.env as Record<string, string>)[PREFERRED_PORT_ENV]).toBeUndefined();
    // glibc hands large freed blocks back to the system, and keeps two arenas (server/memory-env.ts).
    expect(fake.forks[0]!.options.env).toMatchObject({ MALLOC_MMAP_THRESHOLD_: '4194304', MALLOC_ARENA_MAX: '2' });
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
    expect(fake.openPath).toHaveBeenCalledWith(dataDir);
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

  it("imports with the Data page's Source and Project: records that name no project are stored under both", async () => {
    const REF = 'authprojbbbbbbbbbbbb';
    // Neither the file name nor the records tell the source, and the records name no project.
    const file = path.join(work, 'studio-export.ndjson');
    const now = Date.now() * 1000;
    fs.writeFileSync(file, [1, 2, 3].map((i) => JSON.stringify({ timestamp: now - i * 3_000_000, event_message: `token refreshed ${i}`, metadata: { host: 'auth-default' } })).join('\n'));
    const before = (await appApi(server()).sources()).find((x) => x.source === 'gotrue.logs.prod');
    expect(before?.count ?? 0).toBe(0);
    fake.openDialog.mockResolvedValueOnce({ canceled: false, filePaths: [file] });
    const sentBefore = win().webContents.sent.length;

    const result = (await invoke(CHANNELS.importFiles, `${server().url}/data`, { source: 'auth_logs', project: REF })) as ImportAnswer;

    expect(result).toEqual({ canceled: false, files: [{ file, ok: true, report: expect.objectContaining({ source: 'gotrue.logs.prod', imported: 3, duplicates: 0, rejected: 0 }) }] });
    const stored = (await appApi(server()).sources()).find((x) => x.source === 'gotrue.logs.prod');
    expect(stored).toMatchObject({ count: 3, projects: [{ ref: REF, count: 3 }] });
    expect(win().webContents.sent.slice(sentBefore)).toEqual([[CHANNELS.dataChanged]]);

    // File → Import Logs… has no fields: the same file is left to recognition, which cannot tell its source.
    fake.openDialog.mockResolvedValueOnce({ canceled: false, filePaths: [file] });
    const boxes = fake.messageBox.mock.calls.length;
    (menuItem(MENU_IDS.importLogs).click as () => void)();
    await vi.waitFor(() => expect(fake.messageBox.mock.calls.length).toBe(boxes + 1), { timeout: 20_000 });
    expect(lastBox().detail).toMatch(/studio-export\.ndjson: not imported: cannot tell the source/);
    expect((await appApi(server()).sources()).find((x) => x.source === 'gotrue.logs.prod')?.count).toBe(3);
  });

  it('refuses bad import options from the page before the dialog opens', async () => {
    const dialogs = fake.openDialog.mock.calls.length;
    const url = `${server().url}/data`;
    await expect(invoke(CHANNELS.importFiles, url, { source: 'nginx_logs' })).rejects.toThrow('importFiles source "nginx_logs" is not a source the server knows');
    await expect(invoke(CHANNELS.importFiles, url, { project: 'p'.repeat(300) })).rejects.toThrow('importFiles project is longer than 256 characters');
    await expect(invoke(CHANNELS.importFiles, url, { source: 'auth_logs', files: ['/etc/passwd'] })).rejects.toThrow('importFiles options take only source and project, not files');
    await expect(invoke(CHANNELS.importFiles, url, { project: 7 })).rejects.toThrow('importFiles project must be a string');
    await expect(invoke(CHANNELS.importFiles, url, 'auth_logs')).rejects.toThrow('importFiles options must be an object');
    await expect(invoke(CHANNELS.importFiles, url, {}, '/etc/passwd')).rejects.toThrow(`${CHANNELS.importFiles} takes one argument`);
    expect(fake.openDialog.mock.calls.length).toBe(dialogs);
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

  it('File → Export Current View asks the page to export, in the format chosen', () => {
    (menuItem(EXPORT_MENU_IDS.ndjson).click as () => void)();
    expect(win().webContents.sent.at(-1)).toEqual([CHANNELS.exportRequested, 'ndjson']);
  });

  it('View → Reload reloads the page in place, keeping its view, instead of going back to /', () => {
    const wc = win().webContents;
    wc.url = `${server().url}/logs?source=edge_logs&q=boom`;
    const loads = win().urls.length;
    const reloads = wc.reloads;
    (menuItem(MENU_IDS.reload).click as () => void)();
    expect(wc.reloads).toBe(reloads + 1);
    expect(win().urls).toHaveLength(loads);
  });

  it("View → Dark Mode switches the native theme, remembers it, and the page's own theme choice gives way", async () => {
    const wc = win().webContents;
    wc.scriptResult = true; // the page had a theme of its own
    const reloads = wc.reloads;
    (menuItem(MENU_IDS.darkMode).click as () => void)();
    expect(fake.theme.themeSource).toBe('dark');
    expect(menuItem(MENU_IDS.darkMode).checked).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(userData, STATE_FILE), 'utf8'))).toMatchObject({ theme: 'dark' });
    await vi.waitFor(() => expect(wc.reloads).toBe(reloads + 1));
    expect(wc.scripts.at(-1)).toContain(`localStorage.removeItem("log-explorer.theme")`);
    // A page without a choice of its own follows the native theme already: no reload.
    wc.scriptResult = false;
    (menuItem(MENU_IDS.darkMode).click as () => void)();
    (menuItem(MENU_IDS.darkMode).click as () => void)();
    await vi.waitFor(() => expect(wc.scripts).toHaveLength(3));
    expect(wc.reloads).toBe(reloads + 1);
    expect(fake.theme.themeSource).toBe('dark');
    wc.scriptResult = false;
  });

  it('asks before a page link opens plain http or a local-network host in the browser', async () => {
    const wc = win().webContents;
    const opened = fake.openExternal.mock.calls.length;
    const ev = navEvent('http://192.168.1.20/admin');
    wc.emit('will-navigate', ev);
    expect(ev.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(lastBox().message).toBe('Open this link in your browser?'));
    expect(lastBox().detail).toContain('http://192.168.1.20/admin');
    // The first button (Cancel) was answered: nothing opened.
    await new Promise((r) => setImmediate(r));
    expect(fake.openExternal.mock.calls.length).toBe(opened);
    fake.messageBox.mockImplementationOnce(async () => ({ response: 1, checkboxChecked: false }));
    expect(wc.openHandler!({ url: 'http://example.com/page' })).toEqual({ action: 'deny' });
    await vi.waitFor(() => expect(fake.openExternal.mock.calls.at(-1)).toEqual(['http://example.com/page']));
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
    fake.openExternal.mockClear();
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

    // The app's page fails to load this time: the log names the origin only, never the key.
    fake.loadError = Object.assign(new Error(`ERR_CONNECTION_REFUSED (-102) loading 'http://127.0.0.1:1/#key=do-not-print'`), { code: 'ERR_CONNECTION_REFUSED' });
    const click = navEvent(ACTION_URLS.restart);
    win().webContents.emit('will-navigate', click);
    expect(click.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(appUrls()).toHaveLength(2), { timeout: 30_000, interval: 50 });
    expect(fake.forks).toHaveLength(2);
    const after = server();
    await vi.waitFor(() => expect(errors).toContain(`cannot load ${after.url}: ERR_CONNECTION_REFUSED`));
    expect(errors.filter((e) => e.includes('key=') || e.includes(after.apiKey))).toEqual([]);
    // The new server is asked to take the port of the one before (the page's origin, and its storage, stay).
    expect((fake.forks[1]!.options.env as Record<string, string>)[PREFERRED_PORT_ENV]).toBe(new URL(before.url).port);
    expect(readState().port).toBe(Number(new URL(after.url).port));
    // The port was free again: the same origin, a new key.
    expect(after.url).toBe(before.url);
    expect(after.apiKey).not.toBe(before.apiKey);
    expect((await fetch(`${after.url}/api/clock`, { headers: { 'X-API-KEY': after.apiKey } })).status).toBe(200);
    expect(menuItem(MENU_IDS.importLogs).enabled).toBe(true);
  });

  it('when another process holds the data folder: names it, shows its page on request, imports through it, and starts its own server once it is gone', async () => {
    fake.forks.at(-1)!.child.kill('SIGKILL');
    await vi.waitFor(() => expect(lastUrl()).toMatch(/^data:text\/html/), { timeout: 10_000 });
    // `npm run serve` on the same folder takes over the dead server's lock.
    const other = serve(['--data-dir', dataDir, '--port', '0', '--api-key', 'other-key']);
    const otherUrl = await other.url;
    const forks = fake.forks.length;

    win().webContents.emit('will-navigate', navEvent(ACTION_URLS.restart));
    await vi.waitFor(() => expect(pageText()).toContain('The data folder is open in another Log Explorer process'), { timeout: 20_000 });
    expect(fake.forks).toHaveLength(forks); // no server of ours was started against its lock
    expect(pageText()).toContain(`pid ${other.child.pid}: npm run serve`);
    expect(pageText()).toContain(`<code>${otherUrl}</code>`);
    expect(pageText()).toContain(`href="${ACTION_URLS.openRunning}"`);
    expect(pageText()).toContain(`npm run import -- --data-dir &quot;${dataDir}&quot; FILE...`);
    expect(pageText()).not.toContain('other-key');
    expect(menuItem(MENU_IDS.importLogs).enabled).toBe(false);

    // "Open It Here": the window shows that server's own page, which is the app's origin now.
    win().webContents.emit('will-navigate', navEvent(ACTION_URLS.openRunning));
    await vi.waitFor(() => expect(lastUrl()).toBe(`${otherUrl}/#key=other-key`));
    expect(menuItem(MENU_IDS.importLogs).enabled).toBe(true);
    const nav = navEvent(`${otherUrl}/logs`);
    win().webContents.emit('will-navigate', nav);
    expect(nav.defaultPrevented).toBe(false);

    // Imports go through its API.
    const file = path.join(work, 'through-other', 'function_edge_logs.ndjson');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const now = Date.now() * 1000;
    fs.writeFileSync(file, [1, 2].map((i) => JSON.stringify(fnRecord(now - i * 2_000_000, { project: 'otherprojaaaaaaaaaaa' }))).join('\n'));
    fake.openDialog.mockResolvedValueOnce({ canceled: false, filePaths: [file] });
    const result = (await invoke(CHANNELS.importFiles, `${otherUrl}/`)) as { files: Array<{ ok: boolean; report: { imported: number } }> };
    expect(result.files[0]).toMatchObject({ ok: true, report: { imported: 2 } });
    const count = async (s: { url: string; apiKey: string }) => (await appApi(s).sources()).find((x) => x.source === 'deno-relay-logs')?.count;
    expect(await count({ url: otherUrl, apiKey: 'other-key' })).toBe(5);

    // Its API takes the project chosen on the Data page.
    const REF = 'remoteprojcccccccccc';
    const authFile = path.join(work, 'through-other', 'remote-export.ndjson');
    fs.writeFileSync(authFile, [1, 2].map((i) => JSON.stringify({ timestamp: now - i * 5_000_000, event_message: `request started ${i}`, metadata: { component: 'api', msg: 'request started' } })).join('\n'));
    fake.openDialog.mockResolvedValueOnce({ canceled: false, filePaths: [authFile] });
    const withProject = (await invoke(CHANNELS.importFiles, `${otherUrl}/data`, { project: REF })) as ImportAnswer;
    expect(withProject.files).toEqual([{ file: authFile, ok: true, report: expect.objectContaining({ source: 'gotrue.logs.prod', imported: 2, rejected: 0 }) }]);
    expect((await appApi({ url: otherUrl, apiKey: 'other-key' }).sources()).find((x) => x.source === 'gotrue.logs.prod')?.projects).toContainEqual({ ref: REF, count: 2 });
    // And the source chosen there: a file whose name and records name none is stored under it.
    const plain = path.join(work, 'through-other', 'export.ndjson');
    fs.writeFileSync(plain, JSON.stringify({ timestamp: now - 9_000_000, event_message: 'plain line', metadata: {} }));
    fake.openDialog.mockResolvedValueOnce({ canceled: false, filePaths: [plain] });
    const withSource = (await invoke(CHANNELS.importFiles, `${otherUrl}/data`, { source: 'postgres_logs', project: REF })) as ImportAnswer;
    expect(withSource.files).toEqual([{ file: plain, ok: true, report: expect.objectContaining({ source: 'postgres.logs', imported: 1 }) }]);

    // It stops; File → Restart Server: our own server opens the folder, with what went through the other.
    other.child.kill('SIGTERM');
    expect(await other.exited).toBe(0);
    (menuItem(MENU_IDS.restartServer).click as () => void)();
    await vi.waitFor(() => expect(fake.forks).toHaveLength(forks + 1), { timeout: 30_000, interval: 50 });
    await vi.waitFor(() => expect(server().url).not.toBe(otherUrl), { timeout: 30_000, interval: 50 });
    expect(await count(server())).toBe(5);
  });

  it('a second start asking for another data folder is told why the window stays on this one', async () => {
    const boxes = fake.messageBox.mock.calls.length;
    fake.app.emit('second-instance', {}, [], work, { dataDir: path.join(work, 'elsewhere') });
    await vi.waitFor(() => expect(fake.messageBox.mock.calls.length).toBe(boxes + 1));
    expect(lastBox().message).toBe('Log Explorer is already open');
    expect(lastBox().detail).toContain(`  ${dataDir}\n`);
    expect(lastBox().detail).toContain(path.join(work, 'elsewhere'));
    // The same folder, or none named: just the window to the front.
    fake.app.emit('second-instance', {}, [], work, { dataDir });
    fake.app.emit('second-instance', {}, [], work, { dataDir: null });
    await new Promise((r) => setImmediate(r));
    expect(fake.messageBox.mock.calls.length).toBe(boxes + 1);
  });

  it('on quit, asks the server to save and exit before the app exits, and saves the window bounds owner-only', async () => {
    const child = fake.forks.at(-1)!.child;
    const port = Number(new URL(server().url).port);
    fake.app.quit();
    expect(fake.app.quitted).toBe(false); // held until the server has saved
    await vi.waitFor(() => expect(fake.app.quitted).toBe(true), { timeout: 30_000, interval: 50 });
    expect(child.exitCode).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'catalog.sqlite'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'LOCK'))).toBe(false);
    // The data folder holds the store only; the shell's state lives in its own folder.
    expect(fs.existsSync(path.join(dataDir, STATE_FILE))).toBe(false);
    const stateFile = path.join(userData, STATE_FILE);
    expect(JSON.parse(fs.readFileSync(stateFile, 'utf8'))).toEqual({ demoOffered: true, theme: 'dark', port, window: { x: 10, y: 20, width: 1111, height: 777, maximized: false } });
    if (process.platform !== 'win32') expect(fs.statSync(stateFile).mode & 0o777).toBe(0o600);
  });
});
