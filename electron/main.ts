/**
 * The desktop shell's main process. It only supervises (after Actual Budget's shell): it runs the
 * server in a utility process, owns the window, the menu and the security guards, and relays
 * a few actions. Decisions live in small pure modules (guards, supervisor, shell-state, menu,
 * pages); this file wires them to Electron.
 *
 * Electron APIs are called through their module objects at call time (`dialog.showOpenDialog`,
 * never a saved reference), so the Playwright test can stub them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  nativeTheme,
  safeStorage,
  screen,
  session,
  shell,
  utilityProcess,
  type IpcMainInvokeEvent,
  type MessageBoxOptions,
  type OpenDialogOptions,
  type Session,
} from 'electron';
import { liveHolder, resolveDataDir, type DataDirChoice } from '../server/store/data-dir.ts';
import type { DataLockInfo } from '../server/store/data-lock.ts';
import { appApi, demoSources, storeIsEmpty, waitForServer, type ServerAddress } from './app-api.ts';
import { shellPaths } from './app-paths.ts';
import { appEntryUrl, reloadPlan, runningServerOf, viewOf } from './app-url.ts';
import { checkImportOptions, CHANNELS, type ImportFilesOptions, type ImportFilesResult } from './bridge.ts';
import { checkSender, decideNavigation, isAppOrigin, webPreferencesFor, withCsp, type NavigationDecision, type ShellAction } from './guards.ts';
import { menuTemplate } from './menu.ts';
import { about, alreadyOpen, confirmExternalLink, DEMO_BUTTONS, demoLoaded, EXTERNAL_BUTTONS, importSummary, loadFailure, UNUSED_STORE_BUTTONS, unusedStoresNotice } from './messages.ts';
import { apiDocsHtml, busyPageHtml, dataUrl, errorPageHtml, folderInUseHtml } from './pages.ts';
import { preferredPortEnv } from './port-choice.ts';
import { SERVER_SERVICE_NAME } from './protocol.ts';
import { importThroughServer } from './remote-import.ts';
import { runtimePaths } from './runtime-paths.ts';
import { adoptShellState, initialBounds, MIN_SIZE, readShellState, STATE_FILE, writeShellState, type ShellState } from './shell-state.ts';
import { loadTokenKey, type KeyProtector } from './token-key.ts';
import { forEachLine, ServerStartError, ServerSupervisor, type ServerProcess, type ServerReady, type SpawnServer } from './supervisor.ts';
import { SERVER_MEMORY_ENV } from '../server/memory-env.ts';

/** Set by electron/build.ts from package.json (a dev run has no package.json next to main.cjs). */
declare const LOG_EXPLORER_VERSION: string;

const APP_NAME = 'Log Explorer';
/** The page's own theme choice (renderer/src/lib/theme.ts), which would override the menu's. */
const PAGE_THEME_KEY = 'log-explorer.theme';

const paths = runtimePaths(import.meta.dirname);

// Before anything reads them: the shell's own folder (Chromium's profile and caches, the shell
// state) is also the single-instance lock's scope; the data folder, apart from it, holds only
// the store (app-paths.ts). LOG_EXPLORER_USER_DATA_DIR gives e2e tests folders of their own.
app.setName(APP_NAME);
const folders = shellPaths(process.platform, process.env, os.homedir());
app.setPath('userData', folders.shellDir);
app.setPath('sessionData', folders.shellDir);
app.enableSandbox();

// The running app learns which data folder a second start asked for (only a named one: the default is its own).
if (!app.requestSingleInstanceLock({ dataDir: folders.dataDir ?? null })) {
  console.error(`${APP_NAME} is already open; its window was brought to the front.`);
  app.quit();
} else {
  run();
}

/** The server process as an Electron utilityProcess, behind the supervisor's small interface; `env` is read at each spawn. */
function utilitySpawner(entry: string, cwd: string, env: () => Record<string, string>): SpawnServer {
  return () => {
    const child = utilityProcess.fork(entry, [], { serviceName: SERVER_SERVICE_NAME, stdio: 'pipe', cwd, env: { ...process.env, ...SERVER_MEMORY_ENV, ...env() } });
    return {
      get pid() {
        return child.pid;
      },
      postMessage: (message) => child.postMessage(message),
      kill: () => void child.kill(),
      onMessage: (listener) => void child.on('message', listener),
      // Electron reports only the code; a signal shows as a non-zero code.
      onExit: (listener) => void child.once('exit', (code) => listener(code, null)),
      onOutput(listener) {
        forEachLine(child.stdout, (line) => listener(line, 'stdout'));
        forEachLine(child.stderr, (line) => listener(line, 'stderr'));
      },
    };
  };
}

function run(): void {
  // The one data folder of every mode (server/store/data-dir.ts), an earlier location's store
  // adopted; resolved again on the in-use page's Try Again (the holder may be gone by then).
  let choice: DataDirChoice = resolveDataDir({ dir: folders.dataDir });
  const dataDir = () => choice.dir;
  const reresolve = () => {
    choice = resolveDataDir({ dir: folders.dataDir });
    for (const note of choice.notes) console.error(note);
  };
  for (const note of choice.notes) console.error(note);

  const stateFile = path.join(app.getPath('userData'), STATE_FILE);
  try {
    // Earlier versions kept it in the data folder (their userData on macOS and Windows).
    adoptShellState(choice.dir, stateFile);
  } catch (err) {
    console.error(`cannot move ${STATE_FILE} out of the data folder: ${(err as Error).message}`);
  }
  let state: ShellState = readShellState(stateFile);
  const saveState = (patch: Partial<ShellState>) => {
    state = { ...state, ...patch };
    try {
      writeShellState(stateFile, state);
    } catch (err) {
      console.error(`cannot save ${stateFile}: ${(err as Error).message}`);
    }
  };

  /** The token key, read (or made) once; see token-key.ts. */
  let tokenKey: { key: string | undefined } | undefined;
  const spawnServer = utilitySpawner(paths.serverProcess, paths.serverCwd, () => preferredPortEnv(state.port));
  /** Our latest server process: its lock on the data folder is no other process's. */
  let ownProcess: ServerProcess | undefined;
  const supervisor = new ServerSupervisor({
    // Each server process tries the last port first: the page's origin, and its storage, stay (port-choice.ts).
    spawn: () => (ownProcess = spawnServer()),
    // A getter: the supervisor copies the config at each start, after a re-resolve.
    config: {
      get dataDir() {
        return choice.dir;
      },
      rendererDir: paths.rendererDir,
      demo: process.env.LOG_EXPLORER_DEMO !== '0',
      get tokenKey() {
        return (tokenKey ??= { key: loadTokenKey(app.getPath('userData'), keychain()) }).key;
      },
    },
    onLog: (line, level) => (level === 'error' || level === 'warn' ? console.error : console.log)(`[server] ${line}`),
  });

  /** The server whose page the window shows: ours, or the one of the process holding the data folder ("Open It Here"). */
  let attached: (ServerAddress & { origin: string }) | undefined;
  const appServer = (): (ServerAddress & { origin: string }) | undefined => supervisor.current ?? attached;
  const appOrigin = () => appServer()?.origin;

  /** A live process other than our own server holding the data folder (its lock), if any. */
  const otherHolder = (): DataLockInfo | undefined => {
    const h = liveHolder(dataDir());
    return h && !(h.hostname === os.hostname() && h.pid === ownProcess?.pid) ? h : undefined;
  };

  /** What the window shows, and so which of the shell page's actions its links may run. */
  let shown: { kind: 'app' } | { kind: 'error' } | { kind: 'in-use'; canOpen: boolean } | { kind: 'busy' } = { kind: 'busy' };
  const offeredActions = (): ShellAction[] => (shown.kind === 'error' ? ['restart'] : shown.kind === 'in-use' ? (shown.canOpen ? ['restart', 'openRunning'] : ['restart']) : []);
  /** The page's last path and query (its view), kept across reloads and restarts. */
  let lastView: string | undefined;

  let win: BrowserWindow | undefined;
  let quitting: 'no' | 'saving' | 'done' = 'no';
  let restarting = false;
  let asking = false;

  /** A link outside the app: the system browser, at once or once the user agrees; a shell action. */
  function follow(decision: NavigationDecision): void {
    if (decision.kind === 'external') void shell.openExternal(decision.url);
    else if (decision.kind === 'ask') void askToOpen(decision.url, decision.reason);
    else if (decision.kind === 'action') void (decision.action === 'openRunning' ? openRunning() : restartServer());
  }

  async function askToOpen(url: string, reason: 'http' | 'local-network'): Promise<void> {
    // One question at a time: a page script cannot queue up dialogs.
    if (asking) return;
    asking = true;
    try {
      const { response } = await showMessage(confirmExternalLink(url, reason));
      if (response === EXTERNAL_BUTTONS.open) await shell.openExternal(url);
    } finally {
      asking = false;
    }
  }

  // ---- security: every webContents, the session ----
  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', (event) => {
      const decision = decideNavigation(event.url, appOrigin(), offeredActions());
      if (decision.kind === 'allow') return;
      event.preventDefault();
      follow(decision);
    });
    contents.on('will-frame-navigate', (event) => {
      if (!event.isMainFrame && !isAppOrigin(event.url, appOrigin())) event.preventDefault();
    });
    contents.on('will-redirect', (event) => {
      if (!isAppOrigin(event.url, appOrigin())) event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      const decision = decideNavigation(url, appOrigin(), []);
      if (decision.kind === 'external' || decision.kind === 'ask') follow(decision);
      return { action: 'deny' };
    });
  });

  function hardenSession(ses: Session): void {
    ses.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
    ses.setPermissionCheckHandler(() => false);
    ses.setDevicePermissionHandler(() => false);
    // The server already sends the CSP; set it again on the app's responses (defense in depth).
    ses.webRequest.onHeadersReceived((details, callback) => {
      if (isAppOrigin(details.url, appOrigin())) callback({ responseHeaders: withCsp(details.responseHeaders) });
      else callback({});
    });
  }

  // ---- IPC: named handlers only, each for the app's own page only ----
  /** `handler` gets what the page sent, unchecked: each handler checks its own arguments. */
  function handle<T>(channel: string, handler: (...args: unknown[]) => Promise<T>): void {
    ipcMain.handle(channel, async (event: IpcMainInvokeEvent, ...args: unknown[]) => {
      if (!checkSender(event.senderFrame?.url, appOrigin())) throw new Error(`${channel} is not available to this page`);
      return handler(...args);
    });
  }

  // ---- window ----
  function createWindow(): BrowserWindow {
    const { bounds, maximized } = initialBounds(
      state.window,
      screen.getAllDisplays().map((d) => d.workArea),
    );
    const w = new BrowserWindow({
      ...bounds,
      minWidth: MIN_SIZE.width,
      minHeight: MIN_SIZE.height,
      show: false,
      title: APP_NAME,
      backgroundColor: nativeTheme.shouldUseDarkColors ? '#111418' : '#ffffff',
      webPreferences: webPreferencesFor(paths.preload, { packaged: app.isPackaged }),
    });
    if (maximized) w.maximize();
    const track = (url: string) => {
      lastView = viewOf(url, appOrigin()) ?? lastView;
    };
    w.webContents.on('did-navigate', (_e, url) => track(url));
    w.webContents.on('did-navigate-in-page', (_e, url, isMainFrame) => {
      if (isMainFrame) track(url);
    });
    w.once('ready-to-show', () => w.show());
    w.on('close', () => saveState({ window: { ...w.getNormalBounds(), maximized: w.isMaximized() } }));
    w.on('closed', () => {
      if (win === w) win = undefined;
    });
    w.webContents.on('render-process-gone', (_e, details) => console.error(`renderer gone: ${details.reason}`));
    return w;
  }

  function load(url: string): void {
    win ??= createWindow();
    // Electron's error names the URL, whose fragment holds the key: log the origin only.
    win.loadURL(url).catch((err: Error) => console.error(loadFailure(url, err as Error & { code?: unknown })));
    refreshMenu();
  }

  function showApp(server: ServerAddress, view?: string): void {
    shown = { kind: 'app' };
    // The page moves the key from the fragment to the tab and strips it (docs/ARCHITECTURE.md, "Flow").
    load(appEntryUrl(server, view));
  }

  function showServerError(title: string, message: string, lastLines: readonly string[]): void {
    win?.setProgressBar(-1);
    shown = { kind: 'error' };
    load(dataUrl(errorPageHtml({ title, message, lastLines: lastLines.slice(-60), dataDir: dataDir() })));
  }

  function showStartFailure(err: unknown): void {
    showServerError('The server could not start', (err as Error).message, err instanceof ServerStartError ? err.lastLines : []);
  }

  /** True when the server answers with its key (within a few seconds). */
  const answers = (server: ServerAddress) =>
    waitForServer(server, { timeoutMs: 3_000 }).then(
      () => true,
      () => false,
    );

  /** The data folder is held by another live process: who, and what to do (pages.folderInUseHtml). */
  async function showInUse(holder: DataLockInfo): Promise<void> {
    attached = undefined;
    const running = runningServerOf(holder, os.hostname());
    const canOpen = running !== undefined && (await answers(running));
    shown = { kind: 'in-use', canOpen };
    load(dataUrl(folderInUseHtml({ dataDir: dataDir(), holder, remote: holder.hostname !== os.hostname(), canOpen })));
  }

  /** "Open It Here": the window shows the page of the server holding the data folder, while it runs. */
  async function openRunning(): Promise<void> {
    const holder = otherHolder();
    const running = holder && runningServerOf(holder, os.hostname());
    if (!running || !(await answers(running))) {
      if (holder) await showInUse(holder);
      else await restartServer();
      return;
    }
    attached = running;
    showApp(running, lastView);
  }

  /**
   * Starts our own server (again): at the first start, from the error page's Restart, the in-use
   * page's Try Again and File → Restart Server. A folder another process holds gets the in-use
   * page instead of a failed start.
   */
  async function restartServer(): Promise<void> {
    if (restarting || quitting !== 'no') return;
    restarting = true;
    const view = lastView;
    try {
      attached = undefined;
      if (supervisor.state === 'ready') {
        // A shell page in between: the app's next load is a new document, which reads the new key.
        shown = { kind: 'busy' };
        load(dataUrl(busyPageHtml('Restarting the server…')));
      } else if (shown.kind === 'in-use') {
        // Try Again: the holder may be gone, and an earlier location's store free to move.
        reresolve();
      }
      const holder = otherHolder();
      if (holder) {
        await showInUse(holder);
        return;
      }
      const ready = supervisor.state === 'idle' ? await supervisor.start() : await supervisor.restart();
      saveState({ port: ready.port });
      showApp(ready, view);
    } catch (err) {
      // Another process may have taken the folder between the check and the start.
      const holder = otherHolder();
      if (holder) await showInUse(holder);
      else showStartFailure(err);
    } finally {
      restarting = false;
      refreshMenu();
    }
  }

  supervisor.onCrash((crash) => {
    if (quitting !== 'no') return;
    showServerError('The server stopped', `${crash.message} Your data is safe up to the last finished import. Restart to go on.`, crash.lastLines);
  });

  // ---- actions ----
  const notifyDataChanged = () => win?.webContents.send(CHANNELS.dataChanged);
  const showMessage = (options: MessageBoxOptions) => (win ? dialog.showMessageBox(win, options) : dialog.showMessageBox(options));

  /** `options`: the Data page's Source and Project; none from the menu (recognize automatically). */
  async function importWithDialog(options: ImportFilesOptions = {}): Promise<ImportFilesResult> {
    // Showing another process's server, the files go through its API (remote-import.ts), as `npm run import` sends them.
    const otherServer = () => (attached && !supervisor.current ? attached : undefined);
    const dialogOptions: OpenDialogOptions = {
      title: 'Import log exports',
      properties: ['openFile', 'multiSelections'],
      filters: [
        { name: 'Log exports', extensions: ['ndjson', 'jsonl', 'json', 'csv', 'log', 'txt'] },
        { name: 'All files', extensions: ['*'] },
      ],
    };
    const picked = win ? await dialog.showOpenDialog(win, dialogOptions) : await dialog.showOpenDialog(dialogOptions);
    if (picked.canceled || picked.filePaths.length === 0) return { canceled: true, files: [] };
    win?.setProgressBar(2); // indeterminate until the first progress report
    const offProgress = supervisor.onImportProgress((p) => {
      const fraction = p.totalBytes > 0 ? (p.index + Math.min(1, p.bytes / p.totalBytes)) / p.count : 2;
      win?.setProgressBar(fraction);
    });
    try {
      // Showing another process's server: the files go through its API, as `npm run import` sends them.
      const other = otherServer();
      const files = other ? await importThroughServer(other, picked.filePaths, options) : await supervisor.importFiles(picked.filePaths, options);
      if (files.some((f) => f.ok)) notifyDataChanged();
      return { canceled: false, files };
    } finally {
      offProgress();
      win?.setProgressBar(-1);
    }
  }

  async function importFromMenu(): Promise<void> {
    let result: ImportFilesResult;
    try {
      result = await importWithDialog(); // the menu has no fields: recognize automatically
    } catch (err) {
      dialog.showErrorBox('Import failed', (err as Error).message);
      return;
    }
    if (result.canceled) return;
    await showMessage(importSummary(result));
  }

  async function openDataFolder(): Promise<void> {
    const error = await shell.openPath(dataDir());
    if (error) throw new Error(error);
  }

  async function showApiDocs(): Promise<void> {
    const ready = appServer();
    if (!ready) return;
    const endpoints = await appApi(ready).endpoints();
    const docs = new BrowserWindow({ width: 900, height: 680, title: 'API Documentation', autoHideMenuBar: true, ...(win ? { parent: win } : {}), webPreferences: webPreferencesFor(undefined, { packaged: app.isPackaged }) });
    await docs.loadURL(dataUrl(apiDocsHtml({ url: ready.url, apiKey: ready.apiKey, endpoints })));
  }

  async function showAbout(): Promise<void> {
    await showMessage(about({ appName: APP_NAME, version: LOG_EXPLORER_VERSION, dataDir: dataDir(), server: appServer()?.url ?? supervisor.state, versions: process.versions }));
  }

  function toggleDarkMode(): void {
    nativeTheme.themeSource = nativeTheme.shouldUseDarkColors ? 'light' : 'dark';
    saveState({ theme: nativeTheme.themeSource });
    refreshMenu();
    void pageFollowsMenuTheme().catch((err: Error) => console.error(`theme: ${err.message}`));
  }

  /**
   * The page follows the native theme unless it keeps a choice of its own (its theme switch,
   * saved per origin, which the stable port now keeps across starts); the menu's latest choice
   * wins: that choice is dropped and the page reloaded in place (view in its URL, key in its tab).
   */
  async function pageFollowsMenuTheme(): Promise<void> {
    const contents = win?.webContents;
    if (!contents || reloadPlan(contents.getURL(), appOrigin()) !== 'reload') return;
    const hadOwn = await contents.executeJavaScript(`(() => { const had = localStorage.getItem(${JSON.stringify(PAGE_THEME_KEY)}) !== null; localStorage.removeItem(${JSON.stringify(PAGE_THEME_KEY)}); return had; })()`);
    if (hadOwn === true) contents.reload();
  }

  /** Told once per folder: an earlier location holds a store that is left unused (never merged). */
  async function tellUnusedStores(): Promise<void> {
    const told = state.toldUnusedStores ?? [];
    if (choice.unused.every((d) => told.includes(d))) return;
    saveState({ toldUnusedStores: [...new Set([...told, ...choice.unused])] });
    const { response } = await showMessage(unusedStoresNotice(dataDir(), choice.unused));
    if (response === UNUSED_STORE_BUTTONS.show) await shell.openPath(choice.unused[0]!);
  }

  /** First start: an empty store gets the demo data, said so, with a one-click way out. */
  async function offerDemo(ready: ServerReady): Promise<void> {
    if (state.demoOffered || process.env.LOG_EXPLORER_DEMO === '0') return;
    const api = appApi(ready);
    if (!storeIsEmpty(await api.sources())) {
      saveState({ demoOffered: true });
      return;
    }
    const reports = await api.loadDemo();
    if (!reports) return; // this server has no demo loader: offer it again once it has one
    saveState({ demoOffered: true });
    notifyDataChanged();
    const { response } = await showMessage(demoLoaded(APP_NAME, reports));
    if (response !== DEMO_BUTTONS.clear || !supervisor.current) return;
    for (const source of demoSources(reports)) await appApi(supervisor.current).deleteSource(source);
    notifyDataChanged();
  }

  function refreshMenu(): void {
    Menu.setApplicationMenu(
      Menu.buildFromTemplate(
        menuTemplate(
          {
            importLogs: () => void importFromMenu(),
            openDataFolder: () => void openDataFolder().catch((err: Error) => dialog.showErrorBox('Cannot open the data folder', err.message)),
            exportView: (format) => win?.webContents.send(CHANNELS.exportRequested, format),
            restartServer: () => void restartServer(),
            // The page reloads in place (same URL, same view); a shell page gives way to the app.
            reload: () => {
              const server = appServer();
              const plan = reloadPlan(win?.webContents.getURL() ?? '', server?.origin);
              if (plan === 'reload') win?.webContents.reload();
              else if (plan === 'load-app' && server) showApp(server, lastView);
            },
            toggleDarkMode,
            showApiDocs: () => void showApiDocs().catch((err: Error) => dialog.showErrorBox('API documentation', err.message)),
            showAbout: () => void showAbout(),
          },
          { platform: process.platform, appName: APP_NAME, darkMode: nativeTheme.shouldUseDarkColors, serverUp: appServer() !== undefined, devTools: !app.isPackaged },
        ),
      ),
    );
  }

  // ---- lifecycle ----
  app.on('second-instance', (_event, _argv, _cwd, additionalData) => {
    if (!win) return;
    if (win.isMinimized()) win.restore();
    win.focus();
    // Started again for another folder: one window per shell folder, so say why it stays on this one.
    const requested = (additionalData as { dataDir?: unknown } | null)?.dataDir;
    if (typeof requested === 'string' && path.resolve(requested) !== path.resolve(dataDir())) void showMessage(alreadyOpen(APP_NAME, dataDir(), requested));
  });

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  app.on('activate', () => {
    if (win || quitting !== 'no') return;
    const server = appServer();
    if (server) showApp(server, lastView);
    else if (supervisor.state === 'crashed') showServerError('The server is not running', 'Restart it to go on.', supervisor.lastLines());
  });

  // Quit waits for the server to save: ask it to shut down, then quit for real.
  app.on('before-quit', (event) => {
    if (quitting === 'done') return;
    event.preventDefault();
    if (quitting === 'saving') return;
    quitting = 'saving';
    supervisor
      .shutdown()
      .catch((err: Error) => console.error(`server shutdown: ${err.message}`))
      .finally(() => {
        quitting = 'done';
        app.quit();
      });
  });

  app
    .whenReady()
    .then(async () => {
      if (state.theme) nativeTheme.themeSource = state.theme;
      hardenSession(session.defaultSession);
      // Checked again here: main trusts no renderer, its preload included.
      handle(CHANNELS.importFiles, (...args) => {
        if (args.length > 1) throw new TypeError(`${CHANNELS.importFiles} takes one argument`);
        return importWithDialog(checkImportOptions(args[0]));
      });
      handle(CHANNELS.openDataFolder, openDataFolder);
      refreshMenu();
      if (!fs.existsSync(path.join(paths.rendererDir, 'index.html'))) console.error(`${paths.rendererDir}/index.html is missing: the window will have no UI (npm run build)`);
      await restartServer();
      if (supervisor.current) await offerDemo(supervisor.current).catch((err: Error) => console.error(`demo data: ${err.message}`));
      await tellUnusedStores().catch((err: Error) => console.error(`other stores: ${err.message}`));
    })
    .catch((err: Error) => {
      console.error(err);
      dialog.showErrorBox(APP_NAME, `Cannot start: ${err.message}`);
      app.exit(1);
    });
}

/**
 * Electron's safeStorage, if this build and platform have it and it protects something: on
 * Linux without a secret service it falls back to a fixed password (`basic_text`), which would
 * only look like protection, so tokens then stay in the owner-only connections file.
 */
function keychain(): KeyProtector | undefined {
  try {
    if (process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text') return undefined;
    return safeStorage;
  } catch {
    return undefined;
  }
}
