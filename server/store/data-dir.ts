/**
 * Where the data lives. Every mode (the desktop app, `npm start` in either mode, `npm run serve`,
 * `npm run import`) uses the one folder `resolveDataDir` picks: `--data-dir`, else
 * LOG_EXPLORER_DATA_DIR, else the per-OS default (`dataDirFor`):
 *
 *   Linux    $XDG_DATA_HOME/log-explorer (~/.local/share/log-explorer)
 *   macOS    ~/Library/Application Support/Log Explorer
 *   Windows  %APPDATA%\Log Explorer
 *
 * Earlier versions' desktop app kept its store in Electron's userData, which on Linux is
 * another folder (`legacyDataDirs`). A store found there is adopted: moved into the default
 * folder when that folder holds no data, never merged with one that does (it is named instead).
 * The folder also holds only the store: the desktop app keeps Chromium's profile elsewhere.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { acquireDataLock, DataFolderLocked, pidAlive, readDataLock, type DataLock, type DataLockInfo } from './data-lock.ts';

/** Overrides the per-OS default in every mode (`--data-dir` still wins). */
export const DATA_DIR_ENV = 'LOG_EXPLORER_DATA_DIR';

/** The journal of a move in progress: `{"from": DIR}`. A move cut short resumes from it. */
export const ADOPTING_FILE = 'ADOPTING';

/** Files and folders a store is made of (the current store, the single-file store before it, their temp and set-aside files). */
const STORE_ENTRY = /^(?:(?:catalog\.sqlite|urls\.log|paths\.log|views\.json|store\.sqlite)(?:\..+)?|parts|records)$/;

/** An XDG base directory: the variable when it is an absolute path (the spec ignores relative ones), else its default under home. */
export function xdgDir(env: NodeJS.ProcessEnv, home: string, name: 'XDG_DATA_HOME' | 'XDG_CONFIG_HOME', fallback: string): string {
  const v = env[name];
  return v && path.posix.isAbsolute(v) ? v : path.posix.join(home, fallback);
}

/** The per-OS data folder of every mode: XDG data on Linux, Application Support, %APPDATA%. */
export function dataDirFor(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, home: string): string {
  if (platform === 'darwin') return path.posix.join(home, 'Library', 'Application Support', 'Log Explorer');
  if (platform === 'win32') return path.win32.join(env.APPDATA || path.win32.join(home, 'AppData', 'Roaming'), 'Log Explorer');
  return path.posix.join(xdgDir(env, home, 'XDG_DATA_HOME', '.local/share'), 'log-explorer');
}

/**
 * Where earlier versions kept a store this version would otherwise not see: the desktop app's
 * userData (Electron's appData + app name). On macOS and Windows that is the default folder
 * itself; on Linux it is `$XDG_CONFIG_HOME/Log Explorer` (~/.config/Log Explorer).
 */
export function legacyDataDirs(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, home: string): string[] {
  if (platform === 'darwin' || platform === 'win32') return [];
  return [path.posix.join(xdgDir(env, home, 'XDG_CONFIG_HOME', '.config'), 'Log Explorer')];
}

/** The store's own entries in a folder (other files, such as a browser profile's, are not the store's). */
export function storeEntries(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir)
      .filter((name) => STORE_ENTRY.test(name))
      .sort();
  } catch {
    return [];
  }
}

/**
 * Calls `visit` for every file under `dir` (depth first, unreadable folders skipped) until it
 * returns true; returns whether one did.
 */
export function walkFiles(dir: string, visit: (file: string) => boolean | void): boolean {
  const work = [dir];
  for (let d = work.pop(); d !== undefined; d = work.pop()) {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) work.push(full);
      else if (visit(full)) return true;
    }
  }
  return false;
}

const holdsAnyFile = (dir: string): boolean => walkFiles(dir, () => true);

/** True when views.json is absent or lists no view and no search; a file that cannot be read counts as holding some. */
function viewsEmpty(dir: string): boolean {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, 'views.json'), 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
  try {
    const v = JSON.parse(text) as { views?: unknown; searches?: unknown } | null;
    return Array.isArray(v?.views) && v.views.length === 0 && Array.isArray(v.searches) && v.searches.length === 0;
  } catch {
    return false;
  }
}

/**
 * What a folder holds: 'none' (no store), 'empty' (a store with no records and no saved views or
 * searches: nothing a user made) or 'data'. Anything unclear counts as 'data', so it is never
 * replaced.
 */
export type StoreState = 'none' | 'empty' | 'data';

export function storeState(dir: string): StoreState {
  const entries = storeEntries(dir);
  if (entries.length === 0) return 'none';
  const data = entries.some((name) => {
    if (name === 'parts' || name === 'records') return holdsAnyFile(path.join(dir, name));
    if (name === 'views.json') return !viewsEmpty(dir);
    // The single-file store, a set-aside views file: someone's data.
    return name.startsWith('store.sqlite') || name.startsWith('views.json.corrupt');
  });
  return data ? 'data' : 'empty';
}

/**
 * The live process holding a folder's lock, if any, by the lock's own rules: a lock of another
 * host is always held; a dead pid, or our own, is stale.
 */
export function liveHolder(dir: string): DataLockInfo | undefined {
  const h = readDataLock(dir);
  if (!h) return undefined;
  if (h.hostname !== os.hostname()) return h;
  return h.pid !== process.pid && pidAlive(h.pid) ? h : undefined;
}

export interface DataDirChoice {
  dir: string;
  /** flag or env: given; default: the per-OS folder; adopted: an earlier store was moved in; in-place: an earlier store is used where it is, this run. */
  how: 'given' | 'default' | 'adopted' | 'in-place';
  /** The folder a store was moved from (how = 'adopted') or is used in (how = 'in-place'). */
  from?: string;
  /** Stores in earlier locations that are not used (the chosen folder holds data of its own). */
  unused: string[];
  /** What to tell the user, one line each. */
  notes: string[];
}

export interface ResolveOptions {
  /** `--data-dir`: used as given. */
  dir?: string;
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  home?: string;
}

const EARLIER = 'where an earlier version of the desktop app kept it';

/**
 * The data folder to open: `dir`, else LOG_EXPLORER_DATA_DIR, else the per-OS default, having
 * adopted an earlier location's store when the default holds no data:
 *
 * - the default holds data: it is used; a store elsewhere is named in `notes`, never merged;
 * - it holds none (or an empty store) and one earlier location holds data: that store moves in
 *   (with both folders locked; an empty store there is replaced); a move cut short resumes at
 *   the next start (ADOPTING);
 * - the earlier store is open in another process (its lock is live): it stays and is used where
 *   it is for this run, so the caller meets that process's lock and says who holds it; it
 *   moves at a later start;
 * - the move fails (a full disk): nothing is lost; the store is used where it is.
 */
export function resolveDataDir(opts: ResolveOptions = {}): DataDirChoice {
  const env = opts.env ?? process.env;
  if (opts.dir) return { dir: path.resolve(opts.dir), how: 'given', unused: [], notes: [] };
  if (env[DATA_DIR_ENV]) return { dir: path.resolve(env[DATA_DIR_ENV]), how: 'given', unused: [], notes: [] };
  const platform = opts.platform ?? process.platform;
  const home = opts.home ?? os.homedir();
  const target = dataDirFor(platform, env, home);
  const legacy = legacyDataDirs(platform, env, home).filter((d) => d !== target);
  const journal = readJournal(target);
  // Only a move from an earlier location is resumed: the journal never sends files elsewhere.
  if (journal && legacy.includes(journal)) return adopt(target, journal, true);
  const withData = legacy.filter((d) => storeState(d) === 'data');
  if (storeState(target) === 'data' || withData.length > 1) {
    return { dir: target, how: 'default', unused: withData, notes: withData.map((d) => unusedNote(d, target)) };
  }
  if (withData.length === 1) return adopt(target, withData[0]!, false);
  return { dir: target, how: 'default', unused: [], notes: [] };
}

function unusedNote(other: string, target: string): string {
  return (
    `Another Log Explorer store is in ${other} (${EARLIER}); it is not used, nor merged: ${target} is. ` +
    `Open it with --data-dir "${other}", or stop Log Explorer and move its files into ${target} in place of the ones there.`
  );
}

function readJournal(target: string): string | undefined {
  try {
    const v = JSON.parse(fs.readFileSync(path.join(target, ADOPTING_FILE), 'utf8')) as { from?: unknown };
    return typeof v.from === 'string' && v.from !== '' ? v.from : undefined;
  } catch {
    return undefined;
  }
}

function holderText(h: DataLockInfo): string {
  return `pid ${h.pid}${h.hostname !== os.hostname() ? ` on host ${h.hostname}` : ''}${h.command ? `, ${h.command}` : ''}`;
}

/**
 * Moves the store of `from` into `target` under both folders' locks. Never throws: on any
 * obstacle the store stays in `from` and is used there (another process holding it included).
 */
function adopt(target: string, from: string, resuming: boolean): DataDirChoice {
  const inPlace = (note: string): DataDirChoice => ({ dir: from, how: 'in-place', from, unused: [], notes: [note] });
  try {
    return adoptLocked(target, from, resuming, inPlace);
  } catch (err) {
    return inPlace(`Could not move the store from ${from} to ${target} (${(err as Error).message}); it is used where it is.`);
  }
}

function adoptLocked(target: string, from: string, resuming: boolean, inPlace: (note: string) => DataDirChoice): DataDirChoice {
  if (resuming && !fs.existsSync(from)) {
    // The source is gone (removed by hand): what moved is all there is.
    fs.rmSync(path.join(target, ADOPTING_FILE), { force: true });
    return { dir: target, how: 'default', unused: [], notes: [] };
  }
  let targetLock: DataLock;
  try {
    targetLock = acquireDataLock(target, { kind: 'store' });
  } catch (err) {
    if (!(err instanceof DataFolderLocked)) throw err;
    // Another process has the target open (with no data): leave both be; the caller meets its lock.
    return { dir: target, how: 'default', unused: [], notes: [`The store in ${from} (${EARLIER}) will move to ${target} once the process using ${target} (${holderText(err.holder)}) stops.`] };
  }
  try {
    let fromLock: DataLock;
    try {
      fromLock = acquireDataLock(from, { kind: 'store' });
    } catch (err) {
      if (!(err instanceof DataFolderLocked)) throw err;
      return inPlace(
        `Log Explorer now keeps its data in ${target}; the store in ${from} (${EARLIER}) moves there once the process using it (${holderText(err.holder)}) stops. Until then it is used where it is.`,
      );
    }
    try {
      // Again, under the locks: another process may have filled or moved a store meanwhile.
      if (!resuming && storeState(target) === 'data') return { dir: target, how: 'default', unused: [from], notes: [unusedNote(from, target)] };
      if (!resuming && storeState(from) !== 'data') return { dir: target, how: 'default', unused: [], notes: [] };
      moveStore(from, target, resuming);
    } finally {
      fromLock.release();
    }
  } finally {
    targetLock.release();
  }
  return { dir: target, how: 'adopted', from, unused: [], notes: [`Log Explorer now keeps its data in ${target}: moved the store there from ${from} (${EARLIER}).`] };
}

/**
 * The move itself, both locks held. An empty store in `target` is removed first (it holds
 * nothing a user made). The journal is written before the first entry moves and removed after
 * the last, so a move cut short is finished at the next start. Entries are renamed; across file
 * systems (EXDEV) every entry is copied first and the originals removed only once all copies
 * exist, so a failed copy (a full disk) leaves `from` whole.
 */
function moveStore(from: string, target: string, resuming: boolean): void {
  const journal = path.join(target, ADOPTING_FILE);
  if (!resuming) {
    for (const name of storeEntries(target)) fs.rmSync(path.join(target, name), { recursive: true, force: true });
    fs.writeFileSync(journal, JSON.stringify({ from }), { mode: 0o600 });
  }
  // Resuming: what is still in `from` is the truth; a copy of it in `target` may be partial.
  const entries = storeEntries(from);
  for (const name of entries) fs.rmSync(path.join(target, name), { recursive: true, force: true });
  try {
    moveEntries(from, target, entries);
  } catch (err) {
    fs.rmSync(journal, { force: true });
    throw err;
  }
  fs.rmSync(journal, { force: true });
}

function moveEntries(from: string, target: string, entries: readonly string[]): void {
  const renamed: string[] = [];
  try {
    for (const name of entries) {
      fs.renameSync(path.join(from, name), path.join(target, name));
      renamed.push(name);
    }
    return;
  } catch (err) {
    for (const name of renamed.reverse()) fs.renameSync(path.join(target, name), path.join(from, name));
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
  }
  const copied: string[] = [];
  try {
    for (const name of entries) {
      copied.push(name);
      fs.cpSync(path.join(from, name), path.join(target, name), { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true });
    }
  } catch (err) {
    for (const name of copied) fs.rmSync(path.join(target, name), { recursive: true, force: true });
    throw err;
  }
  for (const name of entries) fs.rmSync(path.join(from, name), { recursive: true, force: true });
}

/**
 * `--data-dir` or the resolved default (resolveDataDir), with its notes written to `log`
 * (stderr by default: the import CLI's stdout is its JSON reports). What `npm run serve`,
 * `npm run import` and `npm start` call.
 */
export function defaultDataDir(opts: ResolveOptions & { log?: (line: string) => void } = {}): string {
  const choice = resolveDataDir(opts);
  for (const note of choice.notes) (opts.log ?? console.error)(note);
  return choice.dir;
}

/**
 * The data folder itself made 0700 (owner-only) when it is not: what a store does as it opens,
 * before it reads anything (the walk of its entries, makeOwnerOnly, follows once it is open).
 * Returns the folder when it could not be changed (not ours).
 */
export function makeFolderOwnerOnly(dir: string, platform: NodeJS.Platform = process.platform): string[] {
  const refused: string[] = [];
  if (platform !== 'win32') tighten(dir, 0o700, refused);
  return refused;
}

/** Gives `file` exactly `mode` unless it has it; one that is not ours goes to `refused`, one gone meanwhile is let be. */
function tighten(file: string, mode: number, refused: string[]): void {
  try {
    if ((fs.lstatSync(file).mode & 0o777) !== mode) fs.chmodSync(file, mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Gone meanwhile (a file the store removed between steps): nothing to tighten.
    if (code === 'ENOENT') return;
    if (code !== 'EPERM') throw err;
    refused.push(file);
  }
}

/**
 * Makes a data folder owner-only: itself and every folder inside 0700, every file 0600. New
 * files are created so; this also tightens a folder made (or loosened) by something else.
 * Symbolic links are left alone (chmod would follow them out of the folder). POSIX only:
 * Windows has no such modes. Returns what could not be changed (not ours, say).
 *
 * The folder itself is made 0700 at once: from then on no other user can reach anything inside
 * it, whatever the entries' own modes. Its entries are then walked a few milliseconds at a time,
 * with `turn` between steps (a 10M + 10M store holds about 10,000 files: their lstat calls were
 * a tenth of a start before the server listened). `stopped` ends the walk early (the store closed).
 */
export async function makeOwnerOnly(
  dir: string,
  opts: { platform?: NodeJS.Platform; turn?: () => Promise<void>; stopped?: () => boolean; stepMs?: number } = {},
): Promise<string[]> {
  const refused: string[] = [];
  if ((opts.platform ?? process.platform) === 'win32') return refused;
  tighten(dir, 0o700, refused);
  const turn = opts.turn ?? (() => new Promise<void>((resolve) => setImmediate(resolve)));
  const stepMs = opts.stepMs ?? 4;
  const work: string[] = [dir];
  let stepStart = performance.now();
  for (let d = work.pop(); d !== undefined; d = work.pop()) {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    for (const entry of entries) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) {
        tighten(full, 0o700, refused);
        work.push(full);
      } else if (entry.isFile()) tighten(full, 0o600, refused);
      if (performance.now() - stepStart >= stepMs) {
        await turn();
        if (opts.stopped?.()) return refused;
        stepStart = performance.now();
      }
    }
  }
  return refused;
}
