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
import path from 'node:path';
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  nativeTheme,
  screen,
  session,
  shell,
  utilityProcess,
  type IpcMainInvokeEvent,
  type MessageBoxOptions,
  type OpenDialogOptions,
  type Session,
} from 'electron';
import { appApi, demoSources, storeIsEmpty } from './app-api.ts';
import { CHANNELS, type ImportFilesResult } from './bridge.ts';
import { checkSender, decideNavigation, isAppOrigin, webPreferencesFor, withCsp } from './guards.ts';
import { menuTemplate } from './menu.ts';
import { about, DEMO_BUTTONS, demoLoaded, importSummary } from './messages.ts';
import { apiDocsHtml, dataUrl, errorPageHtml } from './pages.ts';
import { SERVER_SERVICE_NAME } from './protocol.ts';
import { runtimePaths } from './runtime-paths.ts';
import { initialBounds, MIN_SIZE, readShellState, STATE_FILE, writeShellState, type ShellState } from './shell-state.ts';
import { forEachLine, ServerStartError, ServerSupervisor, type ServerReady, type SpawnServer } from './supervisor.ts';

/** Set by electron/build.ts from package.json (a dev run has no package.json next to main.cjs). */
declare const LOG_EXPLORER_VERSION: string;

const APP_NAME = 'Log Explorer';

const paths = runtimePaths(import.meta.dirname);

// Before anything reads it: the user-data folder is also the single-instance lock's scope.
// LOG_EXPLORER_USER_DATA_DIR gives e2e tests (and portable setups) a folder of their own.
app.setName(APP_NAME);
const userDataOverride = process.env.LOG_EXPLORER_USER_DATA_DIR;
app.setPath('userData', userDataOverride ? path.resolve(userDataOverride) : path.join(app.getPath('appData'), APP_NAME));
app.enableSandbox();

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  run();
}

/** The server process as an Electron utilityProcess, behind the supervisor's small interface. */
function utilitySpawner(entry: string, cwd: string): SpawnServer {
  return () => {
    const child = utilityProcess.fork(entry, [], { serviceName: SERVER_SERVICE_NAME, stdio: 'pipe', cwd });
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
  const dataDir = app.getPath('userData');
  const stateFile = path.join(dataDir, STATE_FILE);
  let state: ShellState = readShellState(stateFile);
  const saveState = (patch: Partial<ShellState>) => {
    state = { ...state, ...patch };
    try {
      writeShellState(stateFile, state);
    } catch (err) {
      console.error(`cannot save ${stateFile}: ${(err as Error).message}`);
    }
  };

  const supervisor = new ServerSupervisor({
    spawn: utilitySpawner(paths.serverProcess, paths.serverCwd),
    config: { dataDir, rendererDir: paths.rendererDir, demo: process.env.LOG_EXPLORER_DEMO !== '0' },
    onLog: (line, level) => (level === 'error' || level === 'warn' ? console.error : console.log)(`[server] ${line}`),
  });
  const appOrigin = () => supervisor.current?.origin;
  const serverDown = () => supervisor.state === 'crashed';

  let win: BrowserWindow | undefined;
  let quitting: 'no' | 'saving' | 'done' = 'no';
  let restarting = false;

  // ---- security: every webContents, the session ----
  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', (event) => {
      const decision = decideNavigation(event.url, appOrigin(), serverDown());
      if (decision.kind === 'allow') return;
      event.preventDefault();
      if (decision.kind === 'external') void shell.openExternal(decision.url);
      if (decision.kind === 'restart') void restartServer();
    });
    contents.on('will-frame-navigate', (event) => {
      if (!event.isMainFrame && !isAppOrigin(event.url, appOrigin())) event.preventDefault();
    });
    contents.on('will-redirect', (event) => {
      if (!isAppOrigin(event.url, appOrigin())) event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      const decision = decideNavigation(url, appOrigin(), false);
      if (decision.kind === 'external') void shell.openExternal(decision.url);
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
  function handle<T>(channel: string, handler: () => Promise<T>): void {
    ipcMain.handle(channel, async (event: IpcMainInvokeEvent) => {
      if (!checkSender(event.senderFrame?.url, appOrigin())) throw new Error(`${channel} is not available to this page`);
      return handler();
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
      webPreferences: webPreferencesFor(paths.preload),
    });
    if (maximized) w.maximize();
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
    win.loadURL(url).catch((err: Error) => console.error(`cannot load the page: ${err.message}`));
    refreshMenu();
  }

  function showApp(ready: ServerReady): void {
    // The page moves the key from the fragment to memory and strips it (docs/ARCHITECTURE.md, "Flow").
    load(`${ready.url}/#key=${ready.apiKey}`);
  }

  function showServerError(title: string, message: string, lastLines: readonly string[]): void {
    win?.setProgressBar(-1);
    load(dataUrl(errorPageHtml({ title, message, lastLines: lastLines.slice(-60), dataDir })));
  }

  function showStartFailure(err: unknown): void {
    showServerError('The server could not start', (err as Error).message, err instanceof ServerStartError ? err.lastLines : []);
  }

  async function restartServer(): Promise<void> {
    if (restarting || quitting !== 'no') return;
    restarting = true;
    try {
      showApp(await supervisor.restart());
    } catch (err) {
      showStartFailure(err);
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

  async function importWithDialog(): Promise<ImportFilesResult> {
    const options: OpenDialogOptions = {
      title: 'Import log exports',
      properties: ['openFile', 'multiSelections'],
      filters: [
        { name: 'Log exports', extensions: ['ndjson', 'jsonl', 'json', 'csv', 'log', 'txt'] },
        { name: 'All files', extensions: ['*'] },
      ],
    };
    const choice = win ? await dialog.showOpenDialog(win, options) : await dialog.showOpenDialog(options);
    if (choice.canceled || choice.filePaths.length === 0) return { canceled: true, files: [] };
    win?.setProgressBar(2); // indeterminate until the first progress report
    const offProgress = supervisor.onImportProgress((p) => {
      const fraction = p.totalBytes > 0 ? (p.index + Math.min(1, p.bytes / p.totalBytes)) / p.count : 2;
      win?.setProgressBar(fraction);
    });
    try {
      const files = await supervisor.importFiles(choice.filePaths);
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
      result = await importWithDialog();
    } catch (err) {
      dialog.showErrorBox('Import failed', (err as Error).message);
      return;
    }
    if (result.canceled) return;
    await showMessage(importSummary(result));
  }

  async function openDataFolder(): Promise<void> {
    const error = await shell.openPath(dataDir);
    if (error) throw new Error(error);
  }

  async function showApiDocs(): Promise<void> {
    const ready = supervisor.current;
    if (!ready) return;
    const endpoints = await appApi(ready).endpoints();
    const docs = new BrowserWindow({ width: 900, height: 680, title: 'API Documentation', autoHideMenuBar: true, ...(win ? { parent: win } : {}), webPreferences: webPreferencesFor() });
    await docs.loadURL(dataUrl(apiDocsHtml({ url: ready.url, apiKey: ready.apiKey, endpoints })));
  }

  async function showAbout(): Promise<void> {
    await showMessage(about({ appName: APP_NAME, version: LOG_EXPLORER_VERSION, dataDir, server: supervisor.current?.url ?? supervisor.state, versions: process.versions }));
  }

  function toggleDarkMode(): void {
    nativeTheme.themeSource = nativeTheme.shouldUseDarkColors ? 'light' : 'dark';
    saveState({ theme: nativeTheme.themeSource });
    refreshMenu();
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
            exportView: () => win?.webContents.send(CHANNELS.exportRequested),
            restartServer: () => void restartServer(),
            reload: () => {
              if (supervisor.current) showApp(supervisor.current);
            },
            toggleDarkMode,
            showApiDocs: () => void showApiDocs().catch((err: Error) => dialog.showErrorBox('API documentation', err.message)),
            showAbout: () => void showAbout(),
          },
          { platform: process.platform, appName: APP_NAME, darkMode: nativeTheme.shouldUseDarkColors, serverUp: supervisor.state === 'ready', devTools: !app.isPackaged },
        ),
      ),
    );
  }

  // ---- lifecycle ----
  app.on('second-instance', () => {
    if (!win) return;
    if (win.isMinimized()) win.restore();
    win.focus();
  });

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  app.on('activate', () => {
    if (win || quitting !== 'no') return;
    if (supervisor.current) showApp(supervisor.current);
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
      handle(CHANNELS.importFiles, importWithDialog);
      handle(CHANNELS.openDataFolder, openDataFolder);
      refreshMenu();
      if (!fs.existsSync(path.join(paths.rendererDir, 'index.html'))) console.error(`${paths.rendererDir}/index.html is missing: the window will have no UI (npm run build)`);
      let ready: ServerReady;
      try {
        ready = await supervisor.start();
      } catch (err) {
        showStartFailure(err);
        return;
      }
      showApp(ready);
      await offerDemo(ready).catch((err: Error) => console.error(`demo data: ${err.message}`));
    })
    .catch((err: Error) => {
      console.error(err);
      dialog.showErrorBox(APP_NAME, `Cannot start: ${err.message}`);
      app.exit(1);
    });
}
