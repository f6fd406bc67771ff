/**
 * What the shell remembers between runs (window bounds, theme, whether the demo was offered,
 * the server's port, which stores it already pointed out), in one small JSON file in the
 * shell's own folder (Electron's userData, never the data folder): owner-only (0600), written
 * atomically, and read leniently (a damaged file means defaults, never a failed start).
 */
import fs from 'node:fs';
import path from 'node:path';
import { isRememberablePort } from './port-choice.ts';

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface WindowState extends Rect {
  maximized: boolean;
}

export type ThemeSource = 'system' | 'light' | 'dark';

export interface ShellState {
  window?: WindowState;
  theme?: ThemeSource;
  /** The first-start demo was offered (loaded, or the store already had data). */
  demoOffered?: boolean;
  /** The server's last port, tried first at the next start: the page's origin, and so its storage, stays the same. */
  port?: number;
  /** Unused stores in earlier locations the user was already told about (told once each). */
  toldUnusedStores?: string[];
}

export const STATE_FILE = 'shell-state.json';
export const DEFAULT_SIZE = { width: 1280, height: 820 } as const;
export const MIN_SIZE = { width: 720, height: 480 } as const;

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && Math.abs(v) < 1e6;

function parseWindow(v: unknown): WindowState | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const w = v as Record<string, unknown>;
  if (!isInt(w.x) || !isInt(w.y) || !isInt(w.width) || !isInt(w.height)) return undefined;
  if (w.width < MIN_SIZE.width || w.height < MIN_SIZE.height) return undefined;
  return { x: w.x, y: w.y, width: w.width, height: w.height, maximized: w.maximized === true };
}

export function readShellState(file: string): ShellState {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
  if (typeof raw !== 'object' || raw === null) return {};
  const r = raw as Record<string, unknown>;
  const state: ShellState = {};
  const window = parseWindow(r.window);
  if (window) state.window = window;
  if (r.theme === 'system' || r.theme === 'light' || r.theme === 'dark') state.theme = r.theme;
  if (r.demoOffered === true) state.demoOffered = true;
  if (isRememberablePort(r.port)) state.port = r.port;
  if (Array.isArray(r.toldUnusedStores)) {
    const told = r.toldUnusedStores.filter((v): v is string => typeof v === 'string' && v !== '');
    if (told.length) state.toldUnusedStores = told.slice(0, 20);
  }
  return state;
}

/**
 * Earlier versions kept shell-state.json in the data folder (it was Electron's userData on macOS
 * and Windows): moves it to `file` when there is none there yet, so window bounds, theme and the
 * demo flag carry over. True when it moved.
 */
export function adoptShellState(oldDir: string, file: string): boolean {
  const old = path.join(oldDir, STATE_FILE);
  if (path.resolve(old) === path.resolve(file) || fs.existsSync(file) || !fs.existsSync(old)) return false;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    fs.renameSync(old, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    fs.copyFileSync(old, file);
    fs.chmodSync(file, 0o600);
    fs.rmSync(old, { force: true });
  }
  return true;
}

/** Writes the state owner-only: temp file (0600), then rename, so a crash leaves the old file or the new one. */
export function writeShellState(file: string, state: ShellState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  // The mode above is filtered by umask; make it exact before the file becomes visible.
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

/** Width and height of the intersection of two rectangles (0 when they do not meet). */
function intersection(a: Rect, b: Rect): { w: number; h: number } {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? { w, h } : { w: 0, h: 0 };
}

/**
 * Bounds to open the window with: the saved ones when enough of their title bar lands on a
 * display that exists now (so the window can be grabbed; a monitor may have been unplugged),
 * shrunk to that display; else the default size, centered by the OS.
 */
export function initialBounds(saved: WindowState | undefined, workAreas: readonly Rect[]): { bounds: Partial<Rect> & { width: number; height: number }; maximized: boolean } {
  if (saved) {
    const titleBar: Rect = { x: saved.x, y: saved.y, width: saved.width, height: 32 };
    const area = workAreas.find((d) => {
      const { w, h } = intersection(titleBar, d);
      return w >= Math.min(200, saved.width / 4) && h >= 16;
    });
    if (area) {
      const width = Math.max(MIN_SIZE.width, Math.min(saved.width, area.width));
      const height = Math.max(MIN_SIZE.height, Math.min(saved.height, area.height));
      return { bounds: { x: saved.x, y: saved.y, width, height }, maximized: saved.maximized };
    }
  }
  return { bounds: { ...DEFAULT_SIZE }, maximized: saved?.maximized ?? false };
}
