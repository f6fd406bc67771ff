import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { importRecords, NOW, edgeRecord, storeKeeper } from '../testing/fixtures.ts';
import { ADOPTING_FILE, DATA_DIR_ENV, dataDirFor, defaultDataDir, legacyDataDirs, liveHolder, resolveDataDir, storeState, makeOwnerOnly } from './data-dir.ts';
import { LOCK_FILE } from './data-lock.ts';
import { LogStore } from './log-store.ts';

const keeper = storeKeeper();
const children: ChildProcess[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await keeper.cleanup();
});

/** Every entry under dir with its permission bits, as text like `0600 parts/x`. */
function modes(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      out.push(`${(fs.lstatSync(full).mode & 0o777).toString(8).padStart(4, '0')} ${path.relative(dir, full)}`);
      if (e.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return out.sort();
}

describe.skipIf(process.platform === 'win32')('the data folder is owner-only', () => {
  it('opening a folder left at 0777 with 0644 files makes every folder 0700 and every file 0600', async () => {
    const dir = keeper.newDir();
    let store = await keeper.open(dir);
    await importRecords(store, 'edge_logs', [edgeRecord(NOW - 1000), edgeRecord(NOW - 2000)]);
    await keeper.close(store);
    const loosen = (d: string) => {
      fs.chmodSync(d, 0o777);
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const full = path.join(d, e.name);
        if (e.isDirectory()) loosen(full);
        else fs.chmodSync(full, 0o644);
      }
    };
    loosen(dir);
    expect(modes(dir).some((m) => m.startsWith('0644 parts/edge_logs/'))).toBe(true);
    store = await keeper.open(dir);
    // The folder itself at once; what is inside once the store's walk is done.
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    await store.ownerOnlyDone();
    const all = modes(dir);
    expect(all.length).toBeGreaterThan(4);
    for (const m of all) {
      const name = m.slice(5);
      expect(m, name).toBe(`${fs.statSync(path.join(dir, name)).isDirectory() ? '0700' : '0600'} ${name}`);
    }
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  });
});

describe.skipIf(process.platform === 'win32')('makeOwnerOnly walks a folder in steps', () => {
  /** A folder at 0777 with `n` files at 0644 in two levels. */
  function loose(n: number): string {
    const dir = keeper.newDir();
    fs.mkdirSync(path.join(dir, 'a', 'b'), { recursive: true });
    for (let i = 0; i < n; i++) fs.writeFileSync(path.join(dir, i % 2 ? 'a' : path.join('a', 'b'), `f${i}`), 'x', { mode: 0o644 });
    for (const d of [dir, path.join(dir, 'a'), path.join(dir, 'a', 'b')]) fs.chmodSync(d, 0o777);
    return dir;
  }

  it('tightens the folder before its first turn and everything inside over the turns; a stop ends it early', async () => {
    const dir = loose(40);
    let turns = 0;
    let atFirstTurn = -1;
    const walk = makeOwnerOnly(dir, {
      stepMs: 0,
      turn: async () => {
        if (turns++ === 0) atFirstTurn = fs.statSync(dir).mode & 0o777;
      },
    });
    expect(await walk).toEqual([]);
    expect(atFirstTurn).toBe(0o700);
    // One step an entry (steps of 0 ms): 2 folders and 40 files.
    expect(turns).toBeGreaterThanOrEqual(40);
    for (const m of modes(dir)) expect(m, m).toMatch(/^0700 a(\/b)?$|^0600 a\/(b\/)?f\d+$/);
    const again = loose(40);
    let n = 0;
    await makeOwnerOnly(again, { stepMs: 0, turn: async () => void n++, stopped: () => n >= 3 });
    expect(modes(again).filter((m) => m.startsWith('0644')).length).toBeGreaterThan(30);
    expect(fs.statSync(again).mode & 0o777).toBe(0o700);
  });
});

describe('dataDirFor: one folder per OS for every mode', () => {
  it('Linux: XDG data home, else ~/.local/share, in log-explorer', () => {
    expect(dataDirFor('linux', {}, '/home/ada')).toBe('/home/ada/.local/share/log-explorer');
    expect(dataDirFor('linux', { XDG_DATA_HOME: '/srv/xdg' }, '/home/ada')).toBe('/srv/xdg/log-explorer');
    // The XDG spec ignores a relative value.
    expect(dataDirFor('linux', { XDG_DATA_HOME: 'rel/xdg' }, '/home/ada')).toBe('/home/ada/.local/share/log-explorer');
    expect(dataDirFor('freebsd', {}, '/home/ada')).toBe('/home/ada/.local/share/log-explorer');
  });

  it('macOS: Application Support', () => {
    expect(dataDirFor('darwin', { XDG_DATA_HOME: '/ignored' }, '/Users/ada')).toBe('/Users/ada/Library/Application Support/Log Explorer');
  });

  it('Windows: %APPDATA%, else the roaming folder under the profile', () => {
    expect(dataDirFor('win32', { APPDATA: 'D:\\Roam' }, 'C:\\Users\\ada')).toBe('D:\\Roam\\Log Explorer');
    expect(dataDirFor('win32', {}, 'C:\\Users\\ada')).toBe('C:\\Users\\ada\\AppData\\Roaming\\Log Explorer');
  });

  it("names the desktop app's old Linux folder (Electron's userData) as the only earlier location", () => {
    expect(legacyDataDirs('linux', {}, '/home/ada')).toEqual(['/home/ada/.config/Log Explorer']);
    expect(legacyDataDirs('linux', { XDG_CONFIG_HOME: '/cfg' }, '/home/ada')).toEqual(['/cfg/Log Explorer']);
    // There the desktop app and the CLI already shared one folder.
    expect(legacyDataDirs('darwin', {}, '/Users/ada')).toEqual([]);
    expect(legacyDataDirs('win32', {}, 'C:\\Users\\ada')).toEqual([]);
  });
});

/** A store with `n` edge records in dir (closed again). */
async function storeWith(dir: string, n: number, id = 'r'): Promise<void> {
  const store = await keeper.open(dir);
  if (n > 0) await importRecords(store, 'edge_logs', Array.from({ length: n }, (_, i) => edgeRecord(NOW - (i + 1) * 1_000_000, { id: `${id}-${i}` })));
  await keeper.close(store);
}

/** How many edge records the store in dir holds. */
async function edgeCount(dir: string): Promise<number> {
  const store = await keeper.open(dir);
  try {
    return store.summary().find((s) => s.alias === 'edge_logs')?.count ?? 0;
  } finally {
    await keeper.close(store);
  }
}

/** A live process that is not this one, named in a LOCK file as its holder. */
function lockByOther(dir: string, extra: Record<string, string> = {}): number {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(child);
  fs.mkdirSync(dir, { recursive: true });
  const info = { pid: child.pid, hostname: os.hostname(), kind: 'serve', startedAt: '2026-01-02T03:04:05.000Z', command: 'node server/main.mjs', token: 'other', ...extra };
  fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify(info));
  return child.pid!;
}

describe('storeState', () => {
  it('tells no store, an empty one and one holding data apart', async () => {
    const dir = keeper.newDir();
    expect(storeState(path.join(dir, 'missing'))).toBe('none');
    // A browser profile and a lock are not a store.
    fs.mkdirSync(path.join(dir, 'Local Storage'));
    fs.writeFileSync(path.join(dir, 'Preferences'), '{}');
    fs.writeFileSync(path.join(dir, 'shell-state.json'), '{}');
    expect(storeState(dir)).toBe('none');
    await storeWith(dir, 0);
    expect(storeState(dir)).toBe('empty');
    await storeWith(dir, 2);
    expect(storeState(dir)).toBe('data');
  });

  it('counts saved views, a set-aside views file and the single-file store as data', () => {
    const views = keeper.newDir();
    fs.writeFileSync(path.join(views, 'catalog.sqlite'), '');
    fs.writeFileSync(path.join(views, 'views.json'), JSON.stringify({ version: 1, views: [], searches: [] }));
    expect(storeState(views)).toBe('empty');
    fs.writeFileSync(path.join(views, 'views.json'), JSON.stringify({ version: 1, views: [{ id: 'v', name: 'mine' }], searches: [] }));
    expect(storeState(views)).toBe('data');
    fs.writeFileSync(path.join(views, 'views.json'), '{ damaged');
    expect(storeState(views)).toBe('data');
    const aside = keeper.newDir();
    fs.writeFileSync(path.join(aside, 'views.json.corrupt-2026-01-01T00-00-00-000Z'), 'x');
    expect(storeState(aside)).toBe('data');
    const single = keeper.newDir();
    fs.writeFileSync(path.join(single, 'store.sqlite'), '');
    expect(storeState(single)).toBe('data');
  });
});

describe('resolveDataDir', () => {
  /** A fake home with the new (default) and old (desktop app's) Linux locations. */
  function home() {
    const h = keeper.newDir();
    return { home: h, fresh: path.join(h, '.local', 'share', 'log-explorer'), old: path.join(h, '.config', 'Log Explorer') };
  }
  const resolve = (h: string, env: NodeJS.ProcessEnv = {}) => resolveDataDir({ env, platform: 'linux', home: h });

  it('--data-dir and LOG_EXPLORER_DATA_DIR are used as given, without looking elsewhere', async () => {
    const { home: h, old } = home();
    await storeWith(old, 1);
    expect(resolveDataDir({ dir: 'rel/dir', env: {}, platform: 'linux', home: h })).toEqual({ dir: path.resolve('rel/dir'), how: 'given', unused: [], notes: [] });
    expect(resolve(h, { [DATA_DIR_ENV]: path.join(h, 'mine') })).toEqual({ dir: path.join(h, 'mine'), how: 'given', unused: [], notes: [] });
    expect(storeState(old)).toBe('data');
  });

  it('with no store anywhere, the default folder, untouched', () => {
    const { home: h, fresh } = home();
    expect(resolve(h)).toEqual({ dir: fresh, how: 'default', unused: [], notes: [] });
    expect(fs.existsSync(fresh)).toBe(false);
  });

  it("moves the desktop app's old store into the default folder, leaving the browser profile beside it alone", async () => {
    const { home: h, fresh, old } = home();
    await storeWith(old, 3);
    const oldStoreFiles = fs.readdirSync(old).filter((n) => n !== LOCK_FILE).sort();
    fs.mkdirSync(path.join(old, 'Local Storage'));
    fs.writeFileSync(path.join(old, 'shell-state.json'), '{"theme":"dark"}');

    const choice = resolve(h);

    expect(choice).toMatchObject({ dir: fresh, how: 'adopted', from: old, unused: [] });
    expect(choice.notes).toEqual([`Log Explorer now keeps its data in ${fresh}: moved the store there from ${old} (where an earlier version of the desktop app kept it).`]);
    expect(fs.readdirSync(fresh).sort()).toEqual(oldStoreFiles);
    expect(fs.readdirSync(old).sort()).toEqual(['Local Storage', 'shell-state.json']);
    expect(await edgeCount(fresh)).toBe(3);
    // Done once: the next start simply uses it.
    expect(resolve(h)).toEqual({ dir: fresh, how: 'default', unused: [], notes: [] });
  });

  it('replaces an empty store in the default folder (nothing a user made is in it)', async () => {
    const { home: h, fresh, old } = home();
    await storeWith(fresh, 0);
    await storeWith(old, 2);
    expect(resolve(h)).toMatchObject({ dir: fresh, how: 'adopted', from: old });
    expect(await edgeCount(fresh)).toBe(2);
    expect(storeState(old)).toBe('none');
  });

  it('when both folders hold data: keeps the default, moves nothing, and says where the other is', async () => {
    const { home: h, fresh, old } = home();
    await storeWith(fresh, 1, 'new');
    await storeWith(old, 2, 'old');
    const before = fs.readdirSync(old).sort();

    const choice = resolve(h);

    expect(choice).toMatchObject({ dir: fresh, how: 'default', unused: [old] });
    expect(choice.notes).toHaveLength(1);
    expect(choice.notes[0]).toContain(`Another Log Explorer store is in ${old}`);
    expect(choice.notes[0]).toContain(`--data-dir "${old}"`);
    expect(fs.readdirSync(old).sort()).toEqual(before);
    expect(await edgeCount(fresh)).toBe(1);
    expect(await edgeCount(old)).toBe(2);
  });

  it('an old store another process holds stays where it is and is used there this run, naming the process; it moves once free', async () => {
    const { home: h, fresh, old } = home();
    await storeWith(old, 2);
    const pid = lockByOther(old);
    const before = fs.readdirSync(old).sort();

    const choice = resolve(h);

    expect(choice).toMatchObject({ dir: old, how: 'in-place', from: old });
    expect(choice.notes[0]).toContain(`pid ${pid}, node server/main.mjs`);
    expect(choice.notes[0]).toContain(`moves there once the process using it`);
    expect(fs.readdirSync(old).sort()).toEqual(before);
    expect(storeState(fresh)).toBe('none');
    expect(liveHolder(old)?.pid).toBe(pid);
    // Our own lock on the new folder is gone again.
    expect(fs.existsSync(path.join(fresh, LOCK_FILE))).toBe(false);

    children.pop()!.kill('SIGKILL');
    await vi.waitFor(() => expect(liveHolder(old)).toBeUndefined());
    expect(resolve(h)).toMatchObject({ dir: fresh, how: 'adopted', from: old });
    expect(await edgeCount(fresh)).toBe(2);
  });

  it('leaves both alone while another process has the (empty) default folder open', async () => {
    const { home: h, fresh, old } = home();
    await storeWith(fresh, 0);
    await storeWith(old, 1);
    const pid = lockByOther(fresh);
    const choice = resolve(h);
    expect(choice).toMatchObject({ dir: fresh, how: 'default' });
    expect(choice.notes[0]).toContain(`(pid ${pid},`);
    expect(storeState(old)).toBe('data');
    expect(storeState(fresh)).toBe('empty');
  });

  it('finishes a move cut short (the journal names its source)', async () => {
    const { home: h, fresh, old } = home();
    await storeWith(old, 4);
    // As if the process died after moving some entries: the journal and part of the store are in the new folder.
    fs.mkdirSync(fresh, { recursive: true });
    fs.writeFileSync(path.join(fresh, ADOPTING_FILE), JSON.stringify({ from: old }));
    fs.renameSync(path.join(old, 'parts'), path.join(fresh, 'parts'));
    // A partial copy of another entry must be replaced by the original.
    fs.writeFileSync(path.join(fresh, 'catalog.sqlite'), 'partial');

    expect(resolve(h)).toMatchObject({ dir: fresh, how: 'adopted', from: old });
    expect(fs.existsSync(path.join(fresh, ADOPTING_FILE))).toBe(false);
    expect(storeState(old)).toBe('none');
    expect(await edgeCount(fresh)).toBe(4);
  });

  it('resumes no journal that names a folder other than an earlier location', async () => {
    const { home: h, fresh } = home();
    const elsewhere = keeper.newDir();
    await storeWith(elsewhere, 1);
    fs.mkdirSync(fresh, { recursive: true });
    fs.writeFileSync(path.join(fresh, ADOPTING_FILE), JSON.stringify({ from: elsewhere }));
    expect(resolve(h)).toEqual({ dir: fresh, how: 'default', unused: [], notes: [] });
    expect(storeState(elsewhere)).toBe('data');
    expect(storeState(fresh)).toBe('none');
  });

  it('across file systems: copies every entry, then removes the originals', async () => {
    const { home: h, fresh, old } = home();
    await storeWith(old, 2);
    vi.spyOn(fs, 'renameSync').mockImplementation(() => {
      throw Object.assign(new Error('EXDEV: cross-device link not permitted'), { code: 'EXDEV' });
    });
    expect(resolve(h)).toMatchObject({ dir: fresh, how: 'adopted' });
    vi.restoreAllMocks();
    expect(storeState(old)).toBe('none');
    expect(await edgeCount(fresh)).toBe(2);
  });

  it('a copy that fails (a full disk) leaves the old store whole and uses it where it is', async () => {
    const { home: h, fresh, old } = home();
    await storeWith(old, 2);
    const before = modes(old);
    vi.spyOn(fs, 'renameSync').mockImplementation(() => {
      throw Object.assign(new Error('EXDEV: cross-device link not permitted'), { code: 'EXDEV' });
    });
    const cp = fs.cpSync;
    let copies = 0;
    vi.spyOn(fs, 'cpSync').mockImplementation((...args: Parameters<typeof fs.cpSync>) => {
      if (++copies === 2) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      cp(...args);
    });

    const choice = resolve(h);
    vi.restoreAllMocks();

    expect(choice).toMatchObject({ dir: old, how: 'in-place', from: old });
    expect(choice.notes[0]).toContain('ENOSPC');
    expect(modes(old)).toEqual(before);
    expect(storeState(fresh)).toBe('none');
    expect(fs.existsSync(path.join(fresh, ADOPTING_FILE))).toBe(false);
    expect(await edgeCount(old)).toBe(2);
  });

  it('a default folder that cannot be made (a file in the way) leaves the old store where it is, used there', async () => {
    const { home: h, old } = home();
    await storeWith(old, 1);
    fs.writeFileSync(path.join(h, '.local'), 'not a folder');
    const choice = resolve(h);
    expect(choice).toMatchObject({ dir: old, how: 'in-place', from: old });
    expect(choice.notes[0]).toMatch(/^Could not move the store from /);
    expect(await edgeCount(old)).toBe(1);
  });

  it('defaultDataDir writes the notes to its log and returns the folder', async () => {
    const { home: h, fresh, old } = home();
    await storeWith(fresh, 1);
    await storeWith(old, 1);
    const lines: string[] = [];
    expect(defaultDataDir({ env: {}, platform: 'linux', home: h, log: (l) => lines.push(l) })).toBe(fresh);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(old);
  });

  it('on macOS and Windows there is nothing to adopt: the default folder already was the shared one', async () => {
    const h = keeper.newDir();
    const mac = path.join(h, 'Library', 'Application Support', 'Log Explorer');
    await storeWith(mac, 1);
    expect(resolveDataDir({ env: {}, platform: 'darwin', home: h })).toEqual({ dir: mac, how: 'default', unused: [], notes: [] });
    expect(await edgeCount(mac)).toBe(1);
  });
});

describe('liveHolder', () => {
  it('names a live holder, and no one for a dead pid or our own', async () => {
    const dir = keeper.newDir();
    expect(liveHolder(dir)).toBeUndefined();
    const pid = lockByOther(dir, { url: 'http://127.0.0.1:4100' });
    expect(liveHolder(dir)).toMatchObject({ pid, url: 'http://127.0.0.1:4100', command: 'node server/main.mjs' });
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: process.pid, hostname: os.hostname() }));
    expect(liveHolder(dir)).toBeUndefined();
    const store = await LogStore.open(dir, { lockKind: 'serve' });
    await store.close();
    expect(liveHolder(dir)).toBeUndefined();
  });
});
