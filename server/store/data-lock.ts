/**
 * One process owns a data folder. sql.js holds the whole database in memory and saves it as
 * one image, so two processes on one folder would each overwrite the other's imports (and the
 * second one's start-up repair would cut segment bytes the first is still writing).
 *
 * `<dir>/LOCK` names the owner: {pid, hostname, kind, startedAt, command, token} and, once a
 * server listens, its url and apiKey, so `npm run import` can import through it. The file is
 * 0600 inside the 0700 data folder: the key is as private as the data it guards.
 *
 * A lock whose pid is gone (on this host), whose file cannot be parsed, or whose pid is our own
 * (a leftover of an earlier process that had our pid, as in containers) is stale and taken
 * over. A lock from another host is always held: its pid cannot be checked from here.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type DataLockKind = 'serve' | 'import' | 'desktop' | 'store';

export const LOCK_FILE = 'LOCK';

export interface DataLockInfo {
  pid: number;
  hostname: string;
  kind: DataLockKind;
  /** ISO 8601. */
  startedAt: string;
  /** process.argv joined, truncated. */
  command: string;
  /** Tells two locks of one process apart (release removes only its own). */
  token: string;
  /** Set by a server once it listens. */
  url?: string;
  apiKey?: string;
}

export interface DataLock {
  readonly dir: string;
  readonly file: string;
  readonly info: Readonly<DataLockInfo>;
  /** Rewrites the lock with these fields (atomically, 0600). False if the lock is no longer ours. */
  update(extra: { url?: string; apiKey?: string }): boolean;
  /** Removes the lock if it is still ours. Idempotent; also runs on process exit. */
  release(): void;
}

const KIND_LABEL: Record<DataLockKind, string> = {
  serve: 'npm run serve',
  import: 'npm run import',
  desktop: 'the desktop app',
  store: '',
};

const COMMAND_MAX = 200;

/** Another live process holds the folder; `holder` is its lock, url and apiKey included. */
export class DataFolderLocked extends Error {
  override readonly name = 'DataFolderLocked';
  declare readonly holder: DataLockInfo;
  constructor(
    readonly dir: string,
    holder: DataLockInfo,
  ) {
    super(lockedMessage(dir, holder));
    // Not enumerable: logging the error (console.error(err)) must not print the holder's apiKey.
    Object.defineProperty(this, 'holder', { value: holder, enumerable: false });
  }
}

function lockedMessage(dir: string, h: DataLockInfo): string {
  // `npm start` serves in browser mode as kind 'serve'; its command line tells it apart.
  const what = h.kind === 'serve' && /scripts[\\/]start\.ts\b/.test(h.command) ? 'npm start' : KIND_LABEL[h.kind] || h.command || h.kind;
  const remote = h.hostname !== os.hostname();
  const where = remote ? `pid ${h.pid} on host ${h.hostname}` : `pid ${h.pid}`;
  const advice = remote
    ? `stop it, or if it no longer runs, delete ${path.join(dir, LOCK_FILE)}`
    : h.kind === 'import'
      ? 'wait for it to finish or stop it'
      : 'stop it or import through it';
  return `the data folder ${dir} is in use by another Log Explorer process (${where}, ${what}, started ${h.startedAt}); ${advice}`;
}

/** The lock file's content, or undefined when there is none or it cannot be parsed. */
export function readDataLock(dir: string): DataLockInfo | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8');
  } catch {
    return undefined;
  }
  return parseLock(text);
}

function parseLock(text: string): DataLockInfo | undefined {
  try {
    const v = JSON.parse(text) as Partial<DataLockInfo> | null;
    if (!v || typeof v !== 'object' || !Number.isInteger(v.pid) || typeof v.hostname !== 'string') return undefined;
    return {
      pid: v.pid!,
      hostname: v.hostname,
      kind: typeof v.kind === 'string' && v.kind in KIND_LABEL ? v.kind : 'store',
      startedAt: typeof v.startedAt === 'string' ? v.startedAt : 'at an unknown time',
      command: typeof v.command === 'string' ? v.command : '',
      token: typeof v.token === 'string' ? v.token : '',
      ...(typeof v.url === 'string' ? { url: v.url } : {}),
      ...(typeof v.apiKey === 'string' ? { apiKey: v.apiKey } : {}),
    };
  } catch {
    return undefined;
  }
}

/** True while a process with this pid exists (EPERM: it exists, owned by someone else). */
export function pidAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function held(h: DataLockInfo): boolean {
  if (h.hostname !== os.hostname()) return true;
  return h.pid !== process.pid && pidAlive(h.pid);
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Writes `info` to a temp file and renames it over the lock: readers see the old or the new file, whole. */
function writeAtomically(file: string, info: DataLockInfo): void {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(tmp, JSON.stringify(info), { mode: 0o600, flag: 'wx' });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

const live = new Set<() => void>();
let exitHook = false;

/**
 * Takes `<dir>/LOCK` for this process, or throws DataFolderLocked naming the live process that
 * holds it. Creates the folder (0700) if needed.
 */
export function acquireDataLock(dir: string, holder: { kind: DataLockKind }): DataLock {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, LOCK_FILE);
  let info: DataLockInfo = {
    pid: process.pid,
    hostname: os.hostname(),
    kind: holder.kind,
    startedAt: new Date().toISOString(),
    command: commandLine(process.argv),
    token: randomBytes(12).toString('hex'),
  };
  const ours = (h: DataLockInfo | undefined) => h?.token === info.token && h.pid === info.pid;

  let acquired = false;
  try {
    // The common case: no lock. 'wx' fails if another process created it first.
    const fd = fs.openSync(file, 'wx', 0o600);
    try {
      fs.writeSync(fd, JSON.stringify(info));
    } finally {
      fs.closeSync(fd);
    }
    acquired = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }

  for (let attempt = 0; !acquired; attempt++) {
    let current = readDataLock(dir);
    // A lock just created with 'wx' is empty until its writer's one write lands: give it a moment.
    for (let i = 0; i < 10 && !current && fs.existsSync(file); i++) {
      sleepSync(20);
      current = readDataLock(dir);
    }
    if (current && held(current)) throw new DataFolderLocked(dir, current);
    if (attempt >= 3) throw new Error(`cannot take over the stale lock ${file}: other processes keep taking it`);
    // Stale: take it over, then make sure a process that took it over at the same moment did not win.
    writeAtomically(file, info);
    sleepSync(30);
    acquired = ours(readDataLock(dir));
  }

  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    live.delete(release);
    try {
      if (ours(readDataLock(dir))) fs.rmSync(file, { force: true });
    } catch {
      // The folder may be gone (a test's temp dir): nothing to release.
    }
  };
  live.add(release);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const r of [...live]) r();
    });
  }

  return {
    dir,
    file,
    get info() {
      return info;
    },
    update(extra) {
      if (released || !ours(readDataLock(dir))) return false;
      const next = { ...info, ...extra };
      writeAtomically(file, next);
      info = next;
      return true;
    },
    release,
  };
}

/** argv joined and truncated; a key given as --api-key is left out (a lock of kind 'store' shows its command in messages). */
export function commandLine(argv: readonly string[]): string {
  const s = argv.join(' ').replace(/(--api-key[= ])\S+/g, '$1…');
  return s.length <= COMMAND_MAX ? s : `${s.slice(0, COMMAND_MAX - 1)}…`;
}
