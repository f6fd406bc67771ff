import type { MenuItemConstructorOptions } from 'electron';
import { describe, expect, it, vi } from 'vitest';
import type { ViewExportFormat } from './bridge.ts';
import { EXPORT_MENU_IDS, MENU_IDS, menuItems, menuTemplate, type MenuActions, type MenuOptions } from './menu.ts';

type Spy = ReturnType<typeof vi.fn<() => void>>;

function actions(): Record<Exclude<keyof MenuActions, 'exportView'>, Spy> & { exportView: ReturnType<typeof vi.fn<(format: ViewExportFormat) => void>> } {
  return {
    importLogs: vi.fn<() => void>(),
    openDataFolder: vi.fn<() => void>(),
    exportView: vi.fn<(format: ViewExportFormat) => void>(),
    restartServer: vi.fn<() => void>(),
    reload: vi.fn<() => void>(),
    toggleDarkMode: vi.fn<() => void>(),
    showApiDocs: vi.fn<() => void>(),
    showAbout: vi.fn<() => void>(),
  };
}

const LINUX: MenuOptions = { platform: 'linux', appName: 'Log Explorer', darkMode: false, serverUp: true, devTools: false };

const byId = (t: MenuItemConstructorOptions[], id: string) => menuItems(t).find((i) => i.id === id)!;
const click = (item: MenuItemConstructorOptions) => (item.click as unknown as () => void)();
const labels = (t: MenuItemConstructorOptions[]) => t.map((m) => m.label ?? m.role);

describe('menuTemplate', () => {
  it('has File, Edit, View, Window and Help on Linux and Windows', () => {
    expect(labels(menuTemplate(actions(), LINUX))).toEqual(['&File', '&Edit', '&View', 'windowMenu', '&Help']);
  });

  it('puts About and Quit in the app menu on macOS', () => {
    const t = menuTemplate(actions(), { ...LINUX, platform: 'darwin' });
    expect(labels(t)).toEqual(['Log Explorer', '&File', '&Edit', '&View', 'windowMenu', '&Help']);
    const appMenu = t[0]!.submenu as MenuItemConstructorOptions[];
    expect(appMenu[0]!.id).toBe(MENU_IDS.about);
    expect(appMenu.at(-1)!.role).toBe('quit');
  });

  it('wires each item to its action', () => {
    const a = actions();
    const t = menuTemplate(a, LINUX);
    const cases: Array<[string, keyof MenuActions]> = [
      [MENU_IDS.importLogs, 'importLogs'],
      [MENU_IDS.openDataFolder, 'openDataFolder'],
      [MENU_IDS.restartServer, 'restartServer'],
      [MENU_IDS.reload, 'reload'],
      [MENU_IDS.darkMode, 'toggleDarkMode'],
      [MENU_IDS.apiDocs, 'showApiDocs'],
      [MENU_IDS.about, 'showAbout'],
    ];
    for (const [id, action] of cases) {
      click(byId(t, id));
      expect(a[action], id).toHaveBeenCalledTimes(1);
    }
  });

  it('offers Export Current View as a submenu of formats, each asking the page for its format', () => {
    const a = actions();
    const t = menuTemplate(a, LINUX);
    const parent = byId(t, MENU_IDS.exportView);
    expect(parent.label).toBe('Export Current View');
    expect(parent.click).toBeUndefined();
    const items = parent.submenu as MenuItemConstructorOptions[];
    expect(items.map((i) => [i.id, i.label])).toEqual([
      ['export-view-csv', 'CSV…'],
      ['export-view-ndjson', 'NDJSON…'],
      ['export-view-json', 'JSON…'],
    ]);
    // The old File → Export shortcut now exports CSV; the others have none.
    expect(items.map((i) => i.accelerator)).toEqual(['CmdOrCtrl+E', undefined, undefined]);

    click(byId(t, EXPORT_MENU_IDS.ndjson));
    click(byId(t, EXPORT_MENU_IDS.csv));
    click(byId(t, EXPORT_MENU_IDS.json));
    expect(a.exportView.mock.calls).toEqual([['ndjson'], ['csv'], ['json']]);
  });

  it('offers the View zoom roles, and a dark mode checkbox that shows the current theme', () => {
    const view = menuTemplate(actions(), { ...LINUX, darkMode: true })[2]!.submenu as MenuItemConstructorOptions[];
    expect(view.map((i) => i.role).filter(Boolean)).toEqual(['resetZoom', 'zoomIn', 'zoomOut', 'togglefullscreen']);
    expect(view.find((i) => i.id === MENU_IDS.darkMode)).toMatchObject({ type: 'checkbox', checked: true });
  });

  it('disables what needs the server while it is down, but keeps Restart and Open Data Folder', () => {
    const t = menuTemplate(actions(), { ...LINUX, serverUp: false });
    expect(byId(t, MENU_IDS.importLogs).enabled).toBe(false);
    expect(byId(t, MENU_IDS.exportView).enabled).toBe(false);
    for (const id of Object.values(EXPORT_MENU_IDS)) expect(byId(t, id).enabled, id).toBe(false);
    expect(byId(t, MENU_IDS.apiDocs).enabled).toBe(false);
    expect(byId(t, MENU_IDS.restartServer).enabled).not.toBe(false);
    expect(byId(t, MENU_IDS.openDataFolder).enabled).not.toBe(false);
  });

  it('offers developer tools only when asked (unpackaged runs)', () => {
    const has = (o: MenuOptions) => menuItems(menuTemplate(actions(), o)).some((i) => i.role === 'toggleDevTools');
    expect(has(LINUX)).toBe(false);
    expect(has({ ...LINUX, devTools: true })).toBe(true);
  });

  it('includes the Edit roles that make copy and paste work on macOS', () => {
    const edit = menuTemplate(actions(), LINUX)[1]!.submenu as MenuItemConstructorOptions[];
    expect(edit.map((i) => i.role).filter(Boolean)).toEqual(['undo', 'redo', 'cut', 'copy', 'paste', 'selectAll']);
  });
});
