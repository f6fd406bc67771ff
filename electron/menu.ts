/**
 * The application menu as data: a template built from named actions, so its shape is tested
 * without Electron and main.ts only hands it to `Menu.buildFromTemplate`.
 */
import type { MenuItemConstructorOptions } from 'electron';
import { VIEW_EXPORT_FORMATS, type ViewExportFormat } from './bridge.ts';

export interface MenuActions {
  importLogs(): void;
  openDataFolder(): void;
  /** Asks the page to export what it shows, in `format`. */
  exportView(format: ViewExportFormat): void;
  restartServer(): void;
  reload(): void;
  toggleDarkMode(): void;
  showApiDocs(): void;
  showAbout(): void;
}

export interface MenuOptions {
  platform: NodeJS.Platform;
  appName: string;
  darkMode: boolean;
  /** The app page is showing (server ready): import, export and API docs need it. */
  serverUp: boolean;
  /** Offer the developer tools (unpackaged runs). */
  devTools: boolean;
}

/** Stable ids, for tests (Menu.getApplicationMenu().getMenuItemById) and for menu refreshes. */
export const MENU_IDS = {
  importLogs: 'import-logs',
  openDataFolder: 'open-data-folder',
  exportView: 'export-view',
  exportCsv: 'export-view-csv',
  exportNdjson: 'export-view-ndjson',
  exportJson: 'export-view-json',
  restartServer: 'restart-server',
  reload: 'reload',
  darkMode: 'dark-mode',
  apiDocs: 'api-docs',
  about: 'about',
} as const;

/** The File → Export Current View item of each format. */
export const EXPORT_MENU_IDS: Readonly<Record<ViewExportFormat, string>> = { csv: MENU_IDS.exportCsv, ndjson: MENU_IDS.exportNdjson, json: MENU_IDS.exportJson };

const EXPORT_LABELS: Readonly<Record<ViewExportFormat, string>> = { csv: 'CSV…', ndjson: 'NDJSON…', json: 'JSON…' };

export function menuTemplate(actions: MenuActions, opts: MenuOptions): MenuItemConstructorOptions[] {
  const mac = opts.platform === 'darwin';
  const about: MenuItemConstructorOptions = { id: MENU_IDS.about, label: `About ${opts.appName}`, click: () => actions.showAbout() };
  const template: MenuItemConstructorOptions[] = [];
  if (mac) {
    template.push({
      label: opts.appName,
      submenu: [about, { type: 'separator' }, { role: 'services' }, { type: 'separator' }, { role: 'hide' }, { role: 'hideOthers' }, { role: 'unhide' }, { type: 'separator' }, { role: 'quit' }],
    });
  }
  template.push(
    {
      label: '&File',
      submenu: [
        { id: MENU_IDS.importLogs, label: 'Import Logs…', accelerator: 'CmdOrCtrl+O', enabled: opts.serverUp, click: () => actions.importLogs() },
        {
          id: MENU_IDS.exportView,
          label: 'Export Current View',
          enabled: opts.serverUp,
          // The format is chosen here, so the page saves at once (CSV keeps the old shortcut).
          submenu: VIEW_EXPORT_FORMATS.map((format) => ({
            id: EXPORT_MENU_IDS[format],
            label: EXPORT_LABELS[format],
            enabled: opts.serverUp,
            ...(format === 'csv' ? { accelerator: 'CmdOrCtrl+E' } : {}),
            click: () => actions.exportView(format),
          })),
        },
        { type: 'separator' },
        { id: MENU_IDS.openDataFolder, label: 'Open Data Folder', click: () => actions.openDataFolder() },
        { id: MENU_IDS.restartServer, label: 'Restart Server', click: () => actions.restartServer() },
        ...(mac ? [] : [{ type: 'separator' } as const, { role: 'quit' } as const]),
      ],
    },
    // Without an Edit menu, copy and paste shortcuts do nothing on macOS.
    {
      label: '&Edit',
      submenu: [{ role: 'undo' }, { role: 'redo' }, { type: 'separator' }, { role: 'cut' }, { role: 'copy' }, { role: 'paste' }, { role: 'selectAll' }],
    },
    {
      label: '&View',
      submenu: [
        { id: MENU_IDS.reload, label: 'Reload', accelerator: 'CmdOrCtrl+R', click: () => actions.reload() },
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { id: MENU_IDS.darkMode, label: 'Dark Mode', type: 'checkbox', checked: opts.darkMode, click: () => actions.toggleDarkMode() },
        { role: 'togglefullscreen' },
        ...(opts.devTools ? [{ type: 'separator' } as const, { role: 'toggleDevTools' } as const] : []),
      ],
    },
    { role: 'windowMenu' },
    {
      label: '&Help',
      role: 'help',
      submenu: [{ id: MENU_IDS.apiDocs, label: 'API Documentation', enabled: opts.serverUp, click: () => actions.showApiDocs() }, ...(mac ? [] : [{ type: 'separator' } as const, about])],
    },
  );
  return template;
}

/** Every item of a template, depth first (for tests and lookups). */
export function menuItems(template: readonly MenuItemConstructorOptions[]): MenuItemConstructorOptions[] {
  const out: MenuItemConstructorOptions[] = [];
  for (const item of template) {
    out.push(item);
    if (Array.isArray(item.submenu)) out.push(...menuItems(item.submenu));
  }
  return out;
}
