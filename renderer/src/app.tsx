import './app.css';
import { useEffect, useState, type ReactNode } from 'react';
import { useShellEvents } from './api/bridge.ts';
import { ApiError, askOtherTabsForKey, forgetApiKey, getApiKey, setApiKey } from './api/client.ts';
import { useClock, useSources } from './api/hooks.ts';
import { useView } from './app-state.tsx';
import { ErrorPanel } from './ui/error-panel.tsx';
import { Notices } from './ui/notices.tsx';
import { SavedViews } from './features/views/saved-views-menu.tsx';
import { encodeView, type PageId } from './lib/url-state.ts';
import { formatDateTime, formatUtc, localZoneName } from './lib/time.ts';
import type { ThemePref } from './lib/theme.ts';
import { exportCurrentView } from './lib/view-export.ts';
import { DataPage } from './features/data/data-page.tsx';
import { FunctionsPage } from './features/functions/functions-page.tsx';
import { LogsPage } from './features/logs/logs-page.tsx';
import { busiestProject, EDGE_SOURCE, FUNCTION_SOURCE, sourceOf } from './lib/source-projects.ts';
import { SettingsPage } from './features/settings/settings-page.tsx';
import { UsagePage } from './features/usage/usage-page.tsx';

const NAV: Array<{ page: PageId; label: string; icon: ReactNode }> = [
  { page: 'functions', label: 'Functions', icon: <Icon d="M4 17l6-6-6-6M12 19h8" /> },
  { page: 'logs', label: 'Logs', icon: <Icon d="M4 6h16M4 12h16M4 18h10" /> },
  { page: 'usage', label: 'API usage', icon: <Icon d="M5 20V10M12 20V4M19 20v-7" /> },
  { page: 'data', label: 'Data', icon: <Icon d="M4 7c0-1.7 3.6-3 8-3s8 1.3 8 3-3.6 3-8 3-8-1.3-8-3zm0 0v10c0 1.7 3.6 3 8 3s8-1.3 8-3V7M4 12c0 1.7 3.6 3 8 3s8-1.3 8-3" /> },
  { page: 'settings', label: 'Settings & API', icon: <Icon d="M12 15a3 3 0 100-6 3 3 0 000 6zM19.4 15a1.7 1.7 0 00.3 1.8l.1.1a2 2 0 11-2.8 2.8l-.1-.1a1.7 1.7 0 00-1.8-.3 1.7 1.7 0 00-1 1.5V21a2 2 0 11-4 0v-.1a1.7 1.7 0 00-1.1-1.5 1.7 1.7 0 00-1.8.3l-.1.1a2 2 0 11-2.8-2.8l.1-.1a1.7 1.7 0 00.3-1.8 1.7 1.7 0 00-1.5-1H3a2 2 0 110-4h.1a1.7 1.7 0 001.5-1.1 1.7 1.7 0 00-.3-1.8l-.1-.1a2 2 0 112.8-2.8l.1.1a1.7 1.7 0 001.8.3H9a1.7 1.7 0 001-1.5V3a2 2 0 114 0v.1a1.7 1.7 0 001 1.5 1.7 1.7 0 001.8-.3l.1-.1a2 2 0 112.8 2.8l-.1.1a1.7 1.7 0 00-.3 1.8V9a1.7 1.7 0 001.5 1H21a2 2 0 110 4h-.1a1.7 1.7 0 00-1.5 1z" /> },
];

function Icon({ d }: { d: string }) {
  return (
    <svg viewBox="0 0 24 24" width="16" height="16" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
      <path d={d} />
    </svg>
  );
}

export function App() {
  // Without a key, another open tab of this origin may hold it (a link opened in a new tab).
  const [key, setKey] = useState<'yes' | 'asking' | 'no'>(() => (getApiKey() !== null ? 'yes' : 'asking'));
  useEffect(() => {
    if (key !== 'asking') return;
    let live = true;
    void askOtherTabsForKey().then((k) => {
      if (!live) return;
      if (k) setApiKey(k);
      setKey(k ? 'yes' : 'no');
    });
    return () => {
      live = false;
    };
  }, [key]);
  // The desktop shell's events (no-op in a browser): refresh after outside data changes, menu export.
  useShellEvents(exportCurrentView);
  return (
    <>
      {key === 'yes' ? <Shell onUnauthorized={() => setKey('no')} /> : key === 'no' ? <KeyPrompt onKey={() => setKey('yes')} /> : <div className="key-prompt" data-testid="key-asking" aria-busy="true" />}
      <Notices />
    </>
  );
}

function Shell({ onUnauthorized }: { onUnauthorized: () => void }) {
  const { view, update, navigate } = useView();
  const sources = useSources();

  // A wrong or stale key: ask for it again rather than showing every page's error.
  useEffect(() => {
    if (sources.error instanceof ApiError && sources.error.code === 401) {
      forgetApiKey();
      onUnauthorized();
    }
  }, [sources.error, onUnauthorized]);

  // Until a project is chosen, take the busiest one of the page's source (else of any source).
  useEffect(() => {
    if (view.project || !sources.data) return;
    const pageSource = view.page === 'functions' ? FUNCTION_SOURCE : EDGE_SOURCE;
    const s = sourceOf(sources.data, pageSource);
    const pick = busiestProject(s ? [s] : []) ?? busiestProject(sources.data);
    // Filled in, not chosen: it replaces the entry, so Back does not stop at the view without it.
    if (pick) update((v) => ({ ...v, project: pick }), { replace: true });
  }, [view.project, view.page, sources.data, update]);

  let page: ReactNode;
  switch (view.page) {
    case 'functions':
      page = <FunctionsPage />;
      break;
    case 'logs':
      page = <LogsPage />;
      break;
    case 'usage':
      page = <UsagePage />;
      break;
    case 'data':
      page = <DataPage />;
      break;
    case 'settings':
      page = <SettingsPage />;
      break;
  }

  return (
    <div className="shell">
      <nav className="sidebar" aria-label="Pages">
        <div className="brand">
          <span className="brand__mark" aria-hidden="true" />
          <span>Log Explorer</span>
        </div>
        <ul className="nav">
          {NAV.map((n) => (
            <li key={n.page}>
              <a
                href={encodeView({ ...view, page: n.page })}
                className={view.page === n.page ? 'is-active' : undefined}
                aria-current={view.page === n.page ? 'page' : undefined}
                data-testid={`nav-${n.page}`}
                onClick={(e) => {
                  if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
                  e.preventDefault();
                  navigate(n.page);
                }}
              >
                {n.icon}
                {n.label}
              </a>
            </li>
          ))}
        </ul>
        <SavedViews />
        <div className="sidebar__foot">
          <ClockChip />
          <ThemeSwitch />
        </div>
      </nav>
      <main className="main">
        {sources.isError && !(sources.error instanceof ApiError && sources.error.code === 401) && (
          <ErrorPanel error={sources.error} title="Cannot reach the server" onRetry={() => void sources.refetch()} />
        )}
        {page}
      </main>
    </div>
  );
}

function ClockChip() {
  const clock = useClock();
  const { navigate } = useView();
  if (!clock.data) return <div className="clock-chip clock-chip--loading">Reading clock…</div>;
  const label = clock.data.mode === 'system' ? 'Real time' : clock.data.mode === 'latest' ? 'Newest record' : 'Fixed';
  return (
    <button
      type="button"
      className={`clock-chip clock-chip--${clock.data.mode}`}
      title={`Every window ends at the server clock:\n${formatUtc(clock.data.now, 'us')}\nChange it in Settings.`}
      onClick={() => navigate('settings')}
      data-testid="clock-chip"
    >
      <span className="clock-chip__label">As of · {label}</span>
      <span className="clock-chip__time mono">{formatDateTime(clock.data.now, 'minute')}</span>
      <span className="clock-chip__zone">{localZoneName()}</span>
    </button>
  );
}

function ThemeSwitch() {
  const { themePref, setThemePref } = useView();
  const options: Array<[ThemePref, string]> = [
    ['system', 'Auto'],
    ['light', 'Light'],
    ['dark', 'Dark'],
  ];
  return (
    <div className="theme-switch" role="radiogroup" aria-label="Theme" data-testid="theme-switch">
      {options.map(([v, label]) => (
        <button key={v} type="button" role="radio" aria-checked={themePref === v} className={themePref === v ? 'is-active' : undefined} onClick={() => setThemePref(v)}>
          {label}
        </button>
      ))}
    </div>
  );
}

function KeyPrompt({ onKey }: { onKey: () => void }) {
  const [value, setValue] = useState('');
  return (
    <div className="key-prompt" data-testid="key-prompt">
      <form
        className="card key-prompt__card"
        onSubmit={(e) => {
          e.preventDefault();
          if (!value.trim()) return;
          setApiKey(value.trim());
          onKey();
        }}
      >
        <div className="brand">
          <span className="brand__mark" aria-hidden="true" />
          <span>Log Explorer</span>
        </div>
        <h1>API key needed</h1>
        <p className="muted">
          Open the link the server printed when it started (it ends in <code>#key=…</code>), or paste the key here. It is kept for this tab, and handed to the links you open from it in new tabs; never in the address bar.
        </p>
        <input className="input input--mono" type="password" autoFocus placeholder="API key" value={value} onChange={(e) => setValue(e.target.value)} aria-label="API key" />
        <button type="submit" className="btn btn--primary">
          Continue
        </button>
      </form>
    </div>
  );
}
