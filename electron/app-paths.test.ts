import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATA_DIR_ENV, dataDirFor } from '../server/store/data-dir.ts';
import { shellDirFor, shellPaths, USER_DATA_ENV } from './app-paths.ts';

describe("the shell's own folder (Chromium's profile, shell-state.json)", () => {
  it('is never the data folder, on any OS', () => {
    const cases: Array<[NodeJS.Platform, NodeJS.ProcessEnv, string]> = [
      ['linux', {}, '/home/ada'],
      ['linux', { XDG_CONFIG_HOME: '/cfg', XDG_DATA_HOME: '/data' }, '/home/ada'],
      ['darwin', {}, '/Users/ada'],
      ['win32', { APPDATA: 'C:\\Users\\ada\\AppData\\Roaming', LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local' }, 'C:\\Users\\ada'],
    ];
    for (const [platform, env, home] of cases) expect(shellDirFor(platform, env, home), platform).not.toBe(dataDirFor(platform, env, home));
  });

  it("is Electron's own default on Linux, Application Support on macOS, the local (non-roaming) app data on Windows", () => {
    expect(shellDirFor('linux', {}, '/home/ada')).toBe('/home/ada/.config/Log Explorer');
    expect(shellDirFor('linux', { XDG_CONFIG_HOME: '/cfg' }, '/home/ada')).toBe('/cfg/Log Explorer');
    expect(shellDirFor('darwin', {}, '/Users/ada')).toBe('/Users/ada/Library/Application Support/Log Explorer Desktop');
    expect(shellDirFor('win32', { LOCALAPPDATA: 'E:\\Local' }, 'C:\\Users\\ada')).toBe('E:\\Local\\Log Explorer');
    expect(shellDirFor('win32', {}, 'C:\\Users\\ada')).toBe('C:\\Users\\ada\\AppData\\Local\\Log Explorer');
  });
});

describe('shellPaths', () => {
  it('by default: the per-OS shell folder, and the data folder left to resolveDataDir', () => {
    expect(shellPaths('linux', {}, '/home/ada')).toEqual({ shellDir: '/home/ada/.config/Log Explorer' });
  });

  it('LOG_EXPLORER_USER_DATA_DIR gives the run folders of its own: the shell in it, the store in its data/ folder', () => {
    expect(shellPaths('linux', { [USER_DATA_ENV]: '/tmp/e2e-1' }, '/home/ada')).toEqual({ shellDir: path.resolve('/tmp/e2e-1'), dataDir: path.resolve('/tmp/e2e-1/data') });
  });

  it('LOG_EXPLORER_DATA_DIR (npm start -- --data-dir) names the store, with or without its own shell folder', () => {
    expect(shellPaths('linux', { [DATA_DIR_ENV]: '/srv/logs' }, '/home/ada')).toEqual({ shellDir: '/home/ada/.config/Log Explorer', dataDir: path.resolve('/srv/logs') });
    expect(shellPaths('linux', { [DATA_DIR_ENV]: '/srv/logs', [USER_DATA_ENV]: '/tmp/u' }, '/home/ada')).toEqual({ shellDir: path.resolve('/tmp/u'), dataDir: path.resolve('/srv/logs') });
  });
});
