/**
 * Light and dark themes: follow the OS (prefers-color-scheme) unless the user picked one.
 * The effective theme is written to <html data-theme> (CSS) and returned (chart colours).
 */
import { useCallback, useEffect, useState, useSyncExternalStore } from 'react';

export type ThemePref = 'system' | 'light' | 'dark';
export type Theme = 'light' | 'dark';

const PREF_KEY = 'log-explorer.theme';
const media = () => window.matchMedia('(prefers-color-scheme: dark)');

export function readThemePref(): ThemePref {
  try {
    const v = localStorage.getItem(PREF_KEY);
    return v === 'light' || v === 'dark' ? v : 'system';
  } catch {
    return 'system';
  }
}

export function resolveTheme(pref: ThemePref): Theme {
  if (pref !== 'system') return pref;
  return media().matches ? 'dark' : 'light';
}

/** Sets <html data-theme> before the first render, so there is no flash of the wrong theme. */
export function applyInitialTheme(): void {
  document.documentElement.dataset.theme = resolveTheme(readThemePref());
}

function subscribeMedia(cb: () => void) {
  const m = media();
  m.addEventListener('change', cb);
  return () => m.removeEventListener('change', cb);
}

export function useTheme() {
  const [pref, setPref] = useState<ThemePref>(readThemePref);
  const osDark = useSyncExternalStore(subscribeMedia, () => media().matches);
  const theme: Theme = pref === 'system' ? (osDark ? 'dark' : 'light') : pref;
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  const choose = useCallback((next: ThemePref) => {
    setPref(next);
    try {
      if (next === 'system') localStorage.removeItem(PREF_KEY);
      else localStorage.setItem(PREF_KEY, next);
    } catch {
      // not persisted
    }
  }, []);
  return { pref, theme, setPref: choose };
}

export interface ChartPalette {
  grid: string;
  axis: string;
  ok: string;
  error: string;
  avg: string;
  p95: string;
  p99: string;
  max: string;
  rest: string;
  storage: string;
  auth: string;
  realtime: string;
  cursor: string;
}

/** Concrete colours for SVG charts (recharts props take colour strings, not CSS variables). */
export function chartPalette(theme: Theme): ChartPalette {
  return theme === 'dark'
    ? {
        grid: '#2a2f36',
        axis: '#8b949e',
        ok: '#3fb98c',
        error: '#f26d6d',
        avg: '#5aa9ff',
        p95: '#e3a33b',
        p99: '#c07be8',
        max: '#f26d6d',
        rest: '#3fb98c',
        storage: '#5aa9ff',
        auth: '#e3a33b',
        realtime: '#c07be8',
        cursor: 'rgba(255,255,255,0.06)',
      }
    : {
        grid: '#e6e8eb',
        axis: '#5f6b7a',
        ok: '#1f9d6c',
        error: '#d93f3f',
        avg: '#1f6fd1',
        p95: '#c47f12',
        p99: '#8b46c1',
        max: '#d93f3f',
        rest: '#1f9d6c',
        storage: '#1f6fd1',
        auth: '#c47f12',
        realtime: '#8b46c1',
        cursor: 'rgba(0,0,0,0.05)',
      };
}
