import os from 'node:os';
import path from 'node:path';

/** The OS's usual place for an app's data: XDG on Linux, Application Support, %APPDATA%. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const home = os.homedir();
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'Log Explorer');
  if (platform === 'win32') return path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), 'Log Explorer');
  return path.join(env.XDG_DATA_HOME || path.join(home, '.local', 'share'), 'log-explorer');
}
