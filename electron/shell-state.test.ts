import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../server/testing/fixtures.ts';
import { adoptShellState, DEFAULT_SIZE, initialBounds, readShellState, STATE_FILE, writeShellState, type WindowState } from './shell-state.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function file(): string {
  const d = tempDir('le-state-');
  dirs.push(d);
  return path.join(d, 'nested', 'shell-state.json');
}

const SAVED: WindowState = { x: 100, y: 80, width: 1200, height: 800, maximized: false };
const SCREEN = { x: 0, y: 0, width: 1920, height: 1080 };

describe('shell state file', () => {
  it('round-trips window bounds, theme and the demo flag', () => {
    const f = file();
    writeShellState(f, { window: SAVED, theme: 'dark', demoOffered: true });
    expect(readShellState(f)).toEqual({ window: SAVED, theme: 'dark', demoOffered: true });
  });

  it.skipIf(process.platform === 'win32')('is readable by its owner only (0600), whatever the umask', () => {
    const f = file();
    const old = process.umask(0o000);
    try {
      writeShellState(f, { theme: 'light' });
      writeShellState(f, { theme: 'dark' });
    } finally {
      process.umask(old);
    }
    expect(fs.statSync(f).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.dirname(f))).toEqual(['shell-state.json']); // no temp file left
  });

  it('reads a missing, damaged or foreign file as defaults, keeping what is valid', () => {
    const f = file();
    expect(readShellState(f)).toEqual({});
    fs.mkdirSync(path.dirname(f), { recursive: true });
    for (const text of ['{', 'null', '[]', '"x"', '42']) {
      fs.writeFileSync(f, text);
      expect(readShellState(f), text).toEqual({});
    }
    fs.writeFileSync(f, JSON.stringify({ window: { x: 'a', y: 0, width: 100, height: 100 }, theme: 'neon', demoOffered: 'yes' }));
    expect(readShellState(f)).toEqual({});
    fs.writeFileSync(f, JSON.stringify({ window: { x: 1, y: 2, width: 300, height: 200 }, theme: 'system' }));
    expect(readShellState(f)).toEqual({ theme: 'system' }); // a window smaller than the minimum is dropped
  });

  it('remembers the server port (an unprivileged one) and the stores already pointed out', () => {
    const f = file();
    writeShellState(f, { port: 51234, toldUnusedStores: ['/old/store'] });
    expect(readShellState(f)).toEqual({ port: 51234, toldUnusedStores: ['/old/store'] });
    for (const port of [0, 80, 65536, 4100.5, '4100', null]) {
      fs.writeFileSync(f, JSON.stringify({ port, toldUnusedStores: 'x' }));
      expect(readShellState(f), String(port)).toEqual({});
    }
    fs.writeFileSync(f, JSON.stringify({ toldUnusedStores: [1, '', '/a'] }));
    expect(readShellState(f)).toEqual({ toldUnusedStores: ['/a'] });
  });
});

describe('adoptShellState', () => {
  it('moves the state file an earlier version kept in the data folder into the shell folder, once', () => {
    const data = tempDir('le-state-data-');
    const shell = tempDir('le-state-shell-');
    dirs.push(data, shell);
    const target = path.join(shell, 'nested', STATE_FILE);
    fs.writeFileSync(path.join(data, STATE_FILE), JSON.stringify({ theme: 'dark', demoOffered: true }));
    expect(adoptShellState(data, target)).toBe(true);
    expect(readShellState(target)).toEqual({ theme: 'dark', demoOffered: true });
    expect(fs.existsSync(path.join(data, STATE_FILE))).toBe(false);
    // Nothing left to move; and a state already in the shell folder is never replaced.
    expect(adoptShellState(data, target)).toBe(false);
    fs.writeFileSync(path.join(data, STATE_FILE), JSON.stringify({ theme: 'light' }));
    expect(adoptShellState(data, target)).toBe(false);
    expect(readShellState(target).theme).toBe('dark');
    expect(readShellState(path.join(data, STATE_FILE)).theme).toBe('light');
  });

  it('does nothing when the two folders are one', () => {
    const dir = tempDir('le-state-same-');
    dirs.push(dir);
    fs.writeFileSync(path.join(dir, STATE_FILE), '{}');
    expect(adoptShellState(dir, path.join(dir, STATE_FILE))).toBe(false);
    expect(fs.existsSync(path.join(dir, STATE_FILE))).toBe(true);
  });
});

describe('initialBounds', () => {
  it('uses the default size the first time', () => {
    expect(initialBounds(undefined, [SCREEN])).toEqual({ bounds: { ...DEFAULT_SIZE }, maximized: false });
  });

  it('restores saved bounds that are on a display', () => {
    expect(initialBounds(SAVED, [SCREEN])).toEqual({ bounds: { x: 100, y: 80, width: 1200, height: 800 }, maximized: false });
    expect(initialBounds({ ...SAVED, maximized: true }, [SCREEN]).maximized).toBe(true);
  });

  it('restores a window on a second display', () => {
    const right = { x: 1920, y: 0, width: 2560, height: 1440 };
    expect(initialBounds({ ...SAVED, x: 2000 }, [SCREEN, right]).bounds).toMatchObject({ x: 2000, y: 80 });
  });

  it('falls back to the default size when the saved display is gone', () => {
    expect(initialBounds({ ...SAVED, x: 3000 }, [SCREEN])).toEqual({ bounds: { ...DEFAULT_SIZE }, maximized: false });
    expect(initialBounds({ ...SAVED, y: -5000 }, [SCREEN]).bounds).toEqual({ ...DEFAULT_SIZE });
  });

  it('shrinks a window larger than the display it is on', () => {
    expect(initialBounds({ ...SAVED, x: 0, y: 0, width: 4000, height: 3000 }, [SCREEN]).bounds).toEqual({ x: 0, y: 0, width: 1920, height: 1080 });
  });
});
