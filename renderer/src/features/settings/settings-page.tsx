import { useEffect, useState } from 'react';
import { getApiKey, serverOrigin } from '../../api/client.ts';
import { useClock, useSetClock } from '../../api/hooks.ts';
import { useEndpointList } from './settings-api.ts';
import { useView } from '../../app-state.tsx';
import { CopyButton } from '../../ui/copy-button.tsx';
import { ErrorPanel } from '../../ui/error-panel.tsx';
import { ExportButtons } from '../../ui/export-buttons.tsx';
import { useExportCurrentView } from '../../lib/view-export.ts';
import { PageHeader } from '../../ui/page-header.tsx';
import { LinesSkeleton, Skeleton } from '../../ui/skeleton.tsx';
import { TableCard, TableScroll } from '../../ui/table-card.tsx';
import { curlCommand } from '../../lib/curl.ts';
import { formatInt } from '../../lib/format.ts';
import { formatIsoMicros } from '../../../../contract/instants.ts';
import { formatDateTime, formatUtc, formatWallTime, localZoneName, parseWallTime } from '../../lib/time.ts';
import { functionsRequest, logsRequest, usageRequest, type EndpointRequest } from '../../lib/view-request.ts';
import type { ThemePref } from '../../lib/theme.ts';
import { spanLabel, unitName } from '../../lib/buckets.ts';
import type { EndpointListing } from '../../../../contract/api-types.ts';
import './settings.css';

/** The rules the registry lists for an endpoint, as the server applies them (never restated here). */
function EndpointRules({ endpoint: e }: { endpoint: EndpointListing }) {
  const items: Array<{ key: string; label?: string; text: string }> = [];
  for (const [k, w] of Object.entries(e.intervals ?? {})) items.push({ key: `i-${k}`, label: k, text: `${spanLabel(w.spanUs)} by ${unitName(w.unitUs)}` });
  if (e.tiers) items.push({ key: 'tiers', text: `retention: ${Object.entries(e.tiers).map(([k, t]) => `${k} ${spanLabel(t.retentionUs)}`).join(' · ')}` });
  if (e.rows !== undefined) items.push({ key: 'rows', text: `at most ${formatInt(e.rows)} rows per answer` });
  if (e.errorRule) items.push({ key: 'errors', text: `errors: status ≥ ${e.errorRule.statusAtLeast}` });
  if (items.length === 0) return null;
  return (
    <ul className="lg-rules small" data-testid="endpoint-rules">
      {items.map((i) => (
        <li key={i.key}>
          {i.label && <code className="lg-rules__key">{i.label}</code>}
          {i.text}
        </li>
      ))}
    </ul>
  );
}

export function SettingsPage() {
  const { view, themePref, setThemePref } = useView();
  const clock = useClock();
  const endpoints = useEndpointList();
  const origin = serverOrigin();
  const key = getApiKey() ?? '';
  const [revealed, setRevealed] = useState(false);

  const views: Array<{ page: string; request: EndpointRequest | null }> = [
    { page: 'Functions', request: functionsRequest(view) },
    { page: 'Logs', request: logsRequest(view, clock.data?.now) },
    { page: 'API usage', request: usageRequest(view) },
  ];
  // The current view (desktop menu's Export Current View): the endpoints table, the page's one table.
  const currentView = {
    what: 'endpoints',
    fileBase: 'endpoints',
    rows: endpoints.data,
    csvRows: () =>
      (endpoints.data ?? []).map((e) => ({
        name: e.name,
        id: e.id,
        parameters: e.parameters.map((p) => `${p.name}${p.required ? '' : '?'}`).join(' '),
        cache_seconds: e.cacheSeconds,
        warm_seconds: e.warmSeconds,
        rows: e.rows ?? e.maxRows,
        max_rows: e.maxRows,
      })),
  };
  useExportCurrentView(currentView);

  return (
    <div className="page" data-testid="settings-page">
      <PageHeader title="Settings & API" description="The local server, its key, the clock every window is computed from, and the endpoints scripts can call." />

      <section className="card">
        <div className="card__head">
          <h2>Server</h2>
        </div>
        <dl className="kv kv--wide pad">
          <dt>URL</dt>
          <dd>
            <code data-testid="server-url">{origin}</code> <CopyButton text={origin} />
          </dd>
          <dt>API key</dt>
          <dd>
            <code className="secret" data-testid="api-key">
              {revealed ? key : '•'.repeat(Math.min(24, Math.max(12, key.length)))}
            </code>{' '}
            <button type="button" className="btn btn--small" onClick={() => setRevealed(!revealed)} data-testid="reveal-key">
              {revealed ? 'Hide' : 'Reveal'}
            </button>{' '}
            <CopyButton text={key} label="Copy key" testId="copy-key" />
            <div className="muted small">Send it as the <code>X-API-KEY</code> header. The key stays in this tab’s session storage and is never put in links.</div>
          </dd>
          <dt>Theme</dt>
          <dd>
            <select className="select" value={themePref} onChange={(e) => setThemePref(e.target.value as ThemePref)} aria-label="Theme">
              <option value="system">Follow the system</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </dd>
        </dl>
      </section>

      <ClockSection />

      <TableCard
        title="Endpoints"
        aside={
          <div className="card__tools">
            <span className="card__note">
              <code>GET {origin}/api/endpoints/&lt;name or UUID&gt;?params</code> → <code>{'{"result": [rows]}'}</code>
            </span>
            <ExportButtons {...currentView} />
          </div>
        }
      >
        {endpoints.isError ? (
          <ErrorPanel error={endpoints.error} />
        ) : !endpoints.data ? (
          <LinesSkeleton widths={['100%', '100%']} />
        ) : (
          <TableScroll testId="endpoints-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>UUID</th>
                <th>Parameters</th>
                <th>Cache</th>
                <th className="num" title="Rows one answer holds at most: the endpoint's own cut where it has one, else the general cap">
                  Rows at most
                </th>
              </tr>
            </thead>
            <tbody>
              {endpoints.data.map((e) => (
                <tr key={e.id} data-endpoint={e.name}>
                  <td>
                    <div className="mono strong nowrap">{e.name}</div>
                    <div className="muted small endpoint-desc">{e.description}</div>
                    <EndpointRules endpoint={e} />
                  </td>
                  <td className="nowrap">
                    <code className="small">{e.id}</code> <CopyButton text={e.id} label="Copy" className="btn btn--tiny" />
                  </td>
                  <td>
                    <ul className="params">
                      {e.parameters.map((p) => (
                        <li key={p.name} title={p.description}>
                          <span className="nowrap">
                            <code>{p.name}</code>
                            {p.required ? <span className="req">required</span> : <span className="muted"> optional</span>}
                          </span>
                          <span className="muted">
                            {' · '}
                            {p.allowed ? p.allowed.join(' | ') : <span className="nowrap">{p.kind}</span>}
                          </span>
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td className="small nowrap">
                    {e.cacheSeconds > 0 ? (
                      <>
                        {e.cacheSeconds} s<div className="muted">re-warmed every {e.warmSeconds} s</div>
                      </>
                    ) : (
                      'never cached'
                    )}
                  </td>
                  <td className="num" data-testid="endpoint-rows">
                    {/* The endpoint's own cut is what an answer holds (logs.all: 100); the cap only applies after it. */}
                    <span className="mono">{formatInt(e.rows ?? e.maxRows)}</span>
                    {e.rows !== undefined && e.rows < e.maxRows && <div className="muted small nowrap">max rows {formatInt(e.maxRows)}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </TableScroll>
        )}
      </TableCard>

      <section className="card">
        <div className="card__head">
          <h2>Copy as curl</h2>
          <span className="card__note">The request behind each page’s current view (includes your key)</span>
        </div>
        <div className="curl-list pad">
          {views.map(({ page, request }) => {
            const cmd = request ? curlCommand(origin, request.name, request.params, key) : null;
            const shown = request ? curlCommand(origin, request.name, request.params, revealed ? key : '••••••••') : null;
            return (
              <div key={page} className="curl-item" data-testid="curl-item">
                <div className="curl-item__head">
                  <strong>{page}</strong>
                  {cmd && <CopyButton text={cmd} label="Copy as curl" />}
                </div>
                {shown ? <pre className="code-block code-block--wrap">{shown}</pre> : <div className="muted small">Choose a project first.</div>}
              </div>
            );
          })}
        </div>
      </section>
      {clock.isError && <ErrorPanel error={clock.error} />}
    </div>
  );
}

function ClockSection() {
  const clock = useClock();
  const setClock = useSetClock();
  const [mode, setMode] = useState<'system' | 'latest' | 'fixed'>('system');
  const [fixed, setFixed] = useState('');
  useEffect(() => {
    if (!clock.data) return;
    setMode(clock.data.mode);
    setFixed(formatWallTime(clock.data.fixed ?? clock.data.now));
  }, [clock.data]);
  const fixedUs = parseWallTime(fixed);
  const dirty = clock.data !== undefined && (mode !== clock.data.mode || (mode === 'fixed' && fixedUs !== undefined && formatWallTime(clock.data.fixed ?? -1) !== fixed));
  return (
    <section className="card" data-testid="clock-section">
      <div className="card__head">
        <h2>“As of” clock</h2>
        <span className="card__note">Every endpoint window (last hour, last 7 days…) ends at this instant</span>
      </div>
      <div className="pad">
        {clock.data ? (
          <p className="clock-now">
            Now: <strong className="mono" data-testid="clock-now">{formatDateTime(clock.data.now, 'second')}</strong> <span className="muted">{localZoneName()}</span> ·{' '}
            <span className="mono muted">{formatUtc(clock.data.now, 'us')}</span>
          </p>
        ) : (
          <Skeleton width={320} />
        )}
        <form
          className="clock-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (mode === 'fixed') {
              if (fixedUs !== undefined) setClock.mutate({ mode: 'fixed', now: formatIsoMicros(fixedUs) });
            } else setClock.mutate({ mode });
          }}
        >
          <label className="radio">
            <input type="radio" name="clock" checked={mode === 'system'} onChange={() => setMode('system')} data-testid="clock-system" />
            <span>
              <strong>Real time</strong>
              <span className="muted"> — the system clock; for live data</span>
            </span>
          </label>
          <label className="radio">
            <input type="radio" name="clock" checked={mode === 'latest'} onChange={() => setMode('latest')} data-testid="clock-latest" />
            <span>
              <strong>Newest record</strong>
              <span className="muted"> — replay an old export as if it were live</span>
            </span>
          </label>
          <label className="radio">
            <input type="radio" name="clock" checked={mode === 'fixed'} onChange={() => setMode('fixed')} data-testid="clock-fixed" />
            <span>
              <strong>Fixed instant</strong>
              <span className="muted"> (local time, 24 h) </span>
            </span>
            {/* Text, not datetime-local: that one follows the browser's locale (12-hour in en-US) while every other time here is 24-hour. */}
            <input
              type="text"
              inputMode="numeric"
              spellCheck={false}
              placeholder="YYYY-MM-DD HH:MM:SS"
              aria-invalid={fixed !== '' && fixedUs === undefined}
              className="input input--time input--mono"
              value={fixed}
              disabled={mode !== 'fixed'}
              onChange={(e) => setFixed(e.target.value)}
              data-testid="clock-fixed-input"
              aria-label="Fixed instant"
            />
          </label>
          <div>
            <button type="submit" className="btn btn--primary btn--small" disabled={!dirty || setClock.isPending} data-testid="clock-apply">
              {setClock.isPending ? 'Applying…' : 'Apply'}
            </button>
          </div>
        </form>
        {setClock.isError && <ErrorPanel error={setClock.error} />}
      </div>
    </section>
  );
}
