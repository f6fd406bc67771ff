/**
 * The desktop app's two folders: the data folder (the store only, the same one `npm run serve`
 * and `npm run import` use: server/store/data-dir.ts decides it) and the shell's own folder,
 * Electron's userData, holding Chromium's profile and caches and shell-state.json. They are kept
 * apart so the data folder holds only the store.
 *
 *   Linux    $XDG_CONFIG_HOME/Log Explorer (~/.config/Log Explorer: Electron's default userData)
 *   macOS    ~/Library/Application Support/Log Explorer Desktop
 *   Windows  %LOCALAPPDATA%\Log Explorer (a browser profile and its caches do not roam)
 *
 * LOG_EXPLORER_USER_DATA_DIR=DIR gives a run folders of its own (the e2e tests): the shell's in
 * DIR, the store in DIR/data. LOG_EXPLORER_DATA_DIR (what `npm start -- --data-dir` sets)
 * names the store's folder in every mode.
 */
import path from 'node:path';
import { DATA_DIR_ENV, xdgDir } from '../server/store/data-dir.ts';

export const USER_DATA_ENV = 'LOG_EXPLORER_USER_DATA_DIR';
/** The store's folder inside LOG_EXPLORER_USER_DATA_DIR. */
export const USER_DATA_STORE = 'data';

export function shellDirFor(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, home: string): string {
  if (platform === 'darwin') return path.posix.join(home, 'Library', 'Application Support', 'Log Explorer Desktop');
  if (platform === 'win32') return path.win32.join(env.LOCALAPPDATA || path.win32.join(home, 'AppData', 'Local'), 'Log Explorer');
  return path.posix.join(xdgDir(env, home, 'XDG_CONFIG_HOME', '.config'), 'Log Explorer');
}

export interface ShellPaths {
  /** Electron's userData (and so sessionData, and the single-instance lock's scope). */
  shellDir: string;
  /** A data folder named by the environment; absent: the default (resolveDataDir). */
  dataDir?: string;
}

export function shellPaths(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, home: string): ShellPaths {
  const own = env[USER_DATA_ENV] ? path.resolve(env[USER_DATA_ENV]) : undefined;
  const data = env[DATA_DIR_ENV] ? path.resolve(env[DATA_DIR_ENV]) : own ? path.join(own, USER_DATA_STORE) : undefined;
  return { shellDir: own ?? shellDirFor(platform, env, home), ...(data ? { dataDir: data } : {}) };
}
