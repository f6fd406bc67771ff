import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../server/testing/fixtures.ts';
import { DEFAULT_SIZE, initialBounds, readShellState, writeShellState, type WindowState } from './shell-state.ts';

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
