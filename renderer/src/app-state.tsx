/**
 * The view (page + its parameters) lives in React state and mirrors the URL. Every change a
 * person makes (a range, a filter, a zoom, a source, a search, a page) adds a history entry, so
 * Back undoes it step by step and Forward redoes it; a change the app makes on its
 * own (a default filled in) replaces the entry instead, so Back never lands on a view that only
 * existed for a moment.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { decodeView, encodeView, type AppView, type PageId } from './lib/url-state.ts';
import { useTheme, type Theme, type ThemePref } from './lib/theme.ts';

export interface UpdateOptions {
  /** Replace the current history entry instead of adding one: for what the app fills in itself. */
  replace?: boolean;
}

interface ViewContextValue {
  view: AppView;
  /** Changes parameters of the current view: a new history entry, unless `replace`. */
  update: (patch: (v: AppView) => AppView, opts?: UpdateOptions) => void;
  /** Opens a page, optionally changing the view first (adds a history entry). */
  navigate: (page: PageId, patch?: (v: AppView) => AppView) => void;
  theme: Theme;
  themePref: ThemePref;
  setThemePref: (p: ThemePref) => void;
}

const ViewContext = createContext<ViewContextValue | null>(null);

export function ViewProvider({ children }: { children: ReactNode }) {
  const [view, setView] = useState<AppView>(() => decodeView(window.location.pathname, window.location.search));
  const viewRef = useRef(view);
  viewRef.current = view;
  const { theme, pref, setPref } = useTheme();

  useEffect(() => {
    const onPop = () => {
      const next = decodeView(window.location.pathname, window.location.search, viewRef.current);
      viewRef.current = next;
      setView(next);
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

  // The URL always reflects the view (the first render may have filled defaults).
  useEffect(() => {
    const url = encodeView(view);
    if (url !== `${window.location.pathname}${window.location.search}`) history.replaceState(null, '', url);
  }, [view]);

  const update = useCallback((patch: (v: AppView) => AppView, opts: UpdateOptions = {}) => {
    // From the ref, not a state updater: the entry is written once, here (an updater may run twice).
    const next = patch(viewRef.current);
    if (next === viewRef.current) return;
    viewRef.current = next;
    const url = encodeView(next);
    if (url !== `${window.location.pathname}${window.location.search}`) {
      if (opts.replace) history.replaceState(null, '', url);
      else history.pushState(null, '', url);
    }
    setView(next);
  }, []);
  const navigate = useCallback((page: PageId, patch?: (v: AppView) => AppView) => {
    const next = { ...(patch ? patch(viewRef.current) : viewRef.current), page };
    viewRef.current = next;
    history.pushState(null, '', encodeView(next));
    setView(next);
  }, []);

  const value = useMemo(() => ({ view, update, navigate, theme, themePref: pref, setThemePref: setPref }), [view, update, navigate, theme, pref, setPref]);
  return <ViewContext.Provider value={value}>{children}</ViewContext.Provider>;
}

export function useView(): ViewContextValue {
  const v = useContext(ViewContext);
  if (!v) throw new Error('useView outside ViewProvider');
  return v;
}
