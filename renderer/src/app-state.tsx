/**
 * The view (page + its parameters) lives in React state and mirrors the URL: parameter
 * changes replace the history entry, page changes push one, and back/forward restore it.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { decodeView, encodeView, type AppView, type PageId } from './lib/url-state.ts';
import { useTheme, type Theme, type ThemePref } from './lib/theme.ts';

interface ViewContextValue {
  view: AppView;
  /** Changes parameters of the current view (replaces the history entry). */
  update: (patch: (v: AppView) => AppView) => void;
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
    const onPop = () => setView((v) => decodeView(window.location.pathname, window.location.search, v));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

  // The URL always reflects the view (the first render may have filled defaults).
  useEffect(() => {
    const url = encodeView(view);
    if (url !== `${window.location.pathname}${window.location.search}`) history.replaceState(null, '', url);
  }, [view]);

  const update = useCallback((patch: (v: AppView) => AppView) => setView((v) => patch(v)), []);
  const navigate = useCallback((page: PageId, patch?: (v: AppView) => AppView) => {
    const next = { ...(patch ? patch(viewRef.current) : viewRef.current), page };
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
