/**
 * The data folder lock between real processes: a second owner is refused with the holder
 * named, a dead holder's lock is taken over, release and exit remove only our own lock.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireDataLock, commandLine, DataFolderLocked, LOCK_FILE, readDataLock, type DataLock, type DataLockInfo } from './data-lock.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const MODULE = path.join(ROOT, 'server', 'store', 'data-lock.ts');

const dirs: string[] = [];
const locks: DataLock[] = [];
afterEach(() => {
  for (const l of locks.splice(0)) l.release();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempData(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-lock-'));
  dirs.push(dir);
  return path.join(dir, 'data');
}

function acquire(dir: string, kind: DataLockInfo['kind'] = 'serve'): DataLock {
  const lock = acquireDataLock(dir, { kind });
  locks.push(lock);
  return lock;
}

/**
 * A child Node process that tries to take the lock: prints {ok, pid} or {ok: false, name,
 * message, holder}; with `hold`, keeps it until killed.
 */
function child(dir: string, opts: { kind?: string; hold?: boolean } = {}) {
  const script = `
    import { acquireDataLock } from ${JSON.stringify(MODULE)};
    try {
      acquireDataLock(${JSON.stringify(dir)}, { kind: ${JSON.stringify(opts.kind ?? 'import')} });
      console.log(JSON.stringify({ ok: true, pid: process.pid }));
      if (${opts.hold === true}) setInterval(() => {}, 1000);
    } catch (err) {
      console.log(JSON.stringify({ ok: false, name: err.name, message: err.message, holder: err.holder }));
      process.exitCode = 3;
    }`;
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const line = new Promise<{ ok: boolean; pid?: number; name?: string; message?: string; holder?: DataLockInfo }>((resolve, reject) => {
    proc.stdout.on('data', () => {
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!));
    });
    proc.once('exit', (code) => reject(new Error(`child exited ${code} without a line: ${out}`)));
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, line, exited };
}

describe('acquireDataLock', () => {
  it('writes LOCK (0600) naming this process, in a folder it creates 0700', () => {
    const dir = tempData();
    const lock = acquire(dir, 'serve');
    const info = readDataLock(dir)!;
    expect(info).toMatchObject({ pid: process.pid, hostname: os.hostname(), kind: 'serve', token: lock.info.token });
    expect(new Date(info.startedAt).toISOString()).toBe(info.startedAt);
    expect(info.command).toContain(process.argv[0]!.slice(0, 20));
    expect(info.command.length).toBeLessThanOrEqual(200);
    if (process.platform !== 'win32') {
      expect(fs.statSync(lock.file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    }
  });

  it('a second owner in another process is refused, naming the holder pid, kind and start', async () => {
    const dir = tempData();
    const lock = acquire(dir, 'serve');
    const c = child(dir);
    const r = await c.line;
    expect(await c.exited).toBe(3);
    expect(r.name).toBe('DataFolderLocked');
    expect(r.message).toBe(
      `the data folder ${dir} is in use by another Log Explorer process (pid ${process.pid}, npm run serve, started ${lock.info.startedAt}); stop it or import through it`,
    );
    expect(r.holder).toMatchObject({ pid: process.pid, kind: 'serve' });
    // The refused process left the lock alone.
    expect(readDataLock(dir)?.token).toBe(lock.info.token);
  });

  it('a lock held by a live child is refused here with the child pid; the child exiting releases it', async () => {
    const dir = tempData();
    const c = child(dir, { kind: 'import', hold: true });
    const { pid } = await c.line;
    let err: unknown;
    try {
      acquire(dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DataFolderLocked);
    expect((err as DataFolderLocked).holder.pid).toBe(pid);
    expect((err as Error).message).toContain(`(pid ${pid}, npm run import, started `);
    expect((err as Error).message).toMatch(/; wait for it to finish or stop it$/);
    c.proc.kill('SIGTERM');
    await c.exited;
    // Killed by a signal: no exit hook ran, the lock stays, stale.
    expect(readDataLock(dir)?.pid).toBe(pid);
    expect(acquire(dir).info.pid).toBe(process.pid);
  });

  it('a process that exits normally removes its lock (exit hook)', async () => {
    const dir = tempData();
    const script = `import { acquireDataLock } from ${JSON.stringify(MODULE)}; acquireDataLock(${JSON.stringify(dir)}, { kind: 'import' });`;
    const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: 'inherit' });
    expect(await new Promise((resolve) => proc.once('exit', resolve))).toBe(0);
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
  });

  it('takes over the lock of a process that has died (kill -9)', async () => {
    const dir = tempData();
    const c = child(dir, { hold: true });
    const { pid } = await c.line;
    c.proc.kill('SIGKILL');
    await c.exited;
    expect(readDataLock(dir)?.pid).toBe(pid);
    const lock = acquire(dir, 'desktop');
    expect(readDataLock(dir)).toMatchObject({ pid: process.pid, kind: 'desktop', token: lock.info.token });
    if (process.platform !== 'win32') expect(fs.statSync(lock.file).mode & 0o777).toBe(0o600);
    // No temp files left behind.
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE]);
  });

  it('takes over an unparseable lock and a leftover of an earlier process with our own pid', () => {
    const dir = tempData();
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, LOCK_FILE), '{"pid": 12');
    const first = acquire(dir);
    expect(readDataLock(dir)?.token).toBe(first.info.token);
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ ...first.info, token: 'earlier' }));
    const second = acquire(dir);
    expect(readDataLock(dir)?.token).toBe(second.info.token);
  });

  it('names npm start, the desktop app, or the command of a bare store open', () => {
    const dir = tempData();
    const info: DataLockInfo = { pid: 1, hostname: os.hostname(), kind: 'serve', startedAt: 'T', command: '/usr/bin/node --import tsx scripts/start.ts --browser', token: 't' };
    expect(new DataFolderLocked(dir, info).message).toContain('(pid 1, npm start, started T)');
    expect(new DataFolderLocked(dir, { ...info, kind: 'desktop' }).message).toContain('(pid 1, the desktop app, started T)');
    expect(new DataFolderLocked(dir, { ...info, kind: 'store', command: 'node bench/scale.ts' }).message).toContain('(pid 1, node bench/scale.ts, started T)');
  });

  it('treats a lock from another host as held, and says how to clear it', () => {
    const dir = tempData();
    fs.mkdirSync(dir, { recursive: true });
    const other: DataLockInfo = { pid: 1, hostname: `${os.hostname()}-elsewhere`, kind: 'serve', startedAt: '2026-11-22T10:00:00.000Z', command: 'node x', token: 't' };
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify(other));
    expect(() => acquire(dir)).toThrow(
      `the data folder ${dir} is in use by another Log Explorer process (pid 1 on host ${other.hostname}, npm run serve, started 2026-11-22T10:00:00.000Z); stop it, or if it no longer runs, delete ${path.join(dir, LOCK_FILE)}`,
    );
  });

  it('records the command without a key given as --api-key, truncated to 200 characters', () => {
    expect(commandLine(['node', 'main.mjs', '--api-key', 'sekrit', '--port', '0'])).toBe('node main.mjs --api-key … --port 0');
    expect(commandLine(['node', 'main.mjs', '--api-key=sekrit'])).toBe('node main.mjs --api-key=…');
    const long = commandLine(['node', 'x'.repeat(300)]);
    expect(long).toHaveLength(200);
    expect(long.endsWith('…')).toBe(true);
  });

  it('release removes the lock, only if it is still ours, and is idempotent', () => {
    const dir = tempData();
    const lock = acquire(dir);
    lock.release();
    expect(fs.existsSync(lock.file)).toBe(false);
    lock.release();
    const next = acquire(dir);
    lock.release();
    expect(readDataLock(dir)?.token).toBe(next.info.token);
    // A lock taken over from under us (say, after a suspend) is not ours to remove.
    fs.writeFileSync(next.file, JSON.stringify({ ...next.info, token: 'someone-else' }));
    next.release();
    expect(readDataLock(dir)?.token).toBe('someone-else');
  });

  it('update adds url and apiKey atomically and keeps the lock ours; a refused process sees them', async () => {
    const dir = tempData();
    const lock = acquire(dir, 'serve');
    expect(lock.update({ url: 'http://127.0.0.1:4100', apiKey: 'secret-key' })).toBe(true);
    expect(readDataLock(dir)).toEqual({ ...lock.info, url: 'http://127.0.0.1:4100', apiKey: 'secret-key' });
    expect(lock.info).toMatchObject({ pid: process.pid, url: 'http://127.0.0.1:4100', apiKey: 'secret-key' });
    if (process.platform !== 'win32') expect(fs.statSync(lock.file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE]);

    const r = await child(dir).line;
    expect(r.holder).toMatchObject({ pid: process.pid, url: 'http://127.0.0.1:4100', apiKey: 'secret-key' });
    // The key is in the holder but never in the message, nor in the error as logged.
    expect(r.message).not.toContain('secret-key');
    const err = new DataFolderLocked(dir, readDataLock(dir)!);
    expect(util.inspect(err)).not.toContain('secret-key');

    lock.release();
    expect(lock.update({ url: 'http://127.0.0.1:1' })).toBe(false);
    expect(fs.existsSync(lock.file)).toBe(false);
  });
});
