import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The OS's usual place for an app's data: XDG on Linux, Application Support, %APPDATA%. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const home = os.homedir();
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'Log Explorer');
  if (platform === 'win32') return path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), 'Log Explorer');
  return path.join(env.XDG_DATA_HOME || path.join(home, '.local', 'share'), 'log-explorer');
}

/**
 * Makes a data folder owner-only: itself and every folder inside 0700, every file 0600. New
 * files are created so; this also tightens a folder made (or loosened) by something else.
 * Symbolic links are left alone (chmod would follow them out of the folder). POSIX only:
 * Windows has no such modes. Returns what could not be changed (not ours, say).
 */
export function makeOwnerOnly(dir: string, platform: NodeJS.Platform = process.platform): string[] {
  const refused: string[] = [];
  if (platform === 'win32') return refused;
  const tighten = (file: string, mode: number) => {
    try {
      if ((fs.lstatSync(file).mode & 0o777) !== mode) fs.chmodSync(file, mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
      refused.push(file);
    }
  };
  const work = [dir];
  for (let d = work.pop(); d !== undefined; d = work.pop()) {
    tighten(d, 0o700);
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) work.push(full);
      else if (entry.isFile()) tighten(full, 0o600);
    }
  }
  return refused;
}
