/**
 * The Data page's live projects: "Connect a project" (kind, project ref or
 * server URL, token, dialect, sources, history start, "Test" before saving) and one card per
 * connection with each source's state, records, synced-through time, backfill progress, waits
 * as countdowns, problems in plain words with what to do, pause/resume, following, and removal
 * (keeping or deleting the synced records).
 */
import { useEffect, useId, useMemo, useState, type ReactNode } from 'react';
import type { ConnectionTestResult, SyncErrorKind } from '../../../../contract/api-types.ts';
import { ApiError } from '../../api/client.ts';
import {
  syncNow,
  useConnections,
  useCreateConnection,
  useRemoveConnection,
  useTestConnection,
  useUpdateConnection,
  type ConnectionBody,
  type ConnectionsAnswer,
  type ConnectionView,
  type SourceSyncView,
} from '../../api/connections.ts';
import { useClock } from '../../api/hooks.ts';
import { ConfirmDialog } from '../../ui/confirm-dialog.tsx';
import { ErrorPanel } from '../../ui/error-panel.tsx';
import { Field } from '../../ui/field.tsx';
import { ProgressBar } from './progress-bar.tsx';
import { Segmented } from '../../ui/segmented.tsx';
import { TableScroll } from '../../ui/table-card.tsx';
import { TimeText } from '../../ui/time-text.tsx';
import { formatInt } from '../../lib/format.ts';
import { SOURCE_LABELS, sourceAlias, sourceLabel } from '../../../../contract/sources.ts';
import {
  backfillProgress,
  formatAge,
  formatCountdown,
  formatDuration,
  parseProjectRef,
  problemWords,
  remoteLabel,
  SUPABASE_TOKENS_URL,
} from '../../lib/sync.ts';
import { formatIsoMicros, MICROS } from '../../../../contract/instants.ts';
import { fromLocalInputValue, toLocalInputValue } from '../../lib/time.ts';
import { useTick } from '../../lib/use-tick.ts';

type Kind = 'supabase' | 'logflare';
type DialectChoice = 'detect' | 'bigquery' | 'clickhouse';
const HISTORY = ['1d', '7d', '30d', '90d', 'date'] as const;
type History = (typeof HISTORY)[number];
const HISTORY_LABELS: Record<History, string> = { '1d': '1 day', '7d': '7 days', '30d': '30 days', '90d': '90 days', date: 'From…' };
const HISTORY_SPAN: Record<Exclude<History, 'date'>, number> = { '1d': MICROS.day, '7d': 7 * MICROS.day, '30d': 30 * MICROS.day, '90d': 90 * MICROS.day };
const EDGE = 'cloudflare.logs.prod';

const STATE_LABELS: Record<SourceSyncView['state'], string> = {
  backfilling: 'Backfilling',
  following: 'Following',
  waiting: 'Waiting',
  paused: 'Paused',
  failed: 'Failed',
};

/** Busy connections are asked about every second (progress, countdowns); settled ones every few. */
function pollOf(answer: ConnectionsAnswer | undefined): number {
  const busy = answer?.result.some((c) => Object.values(c.sources).some((s) => s.state === 'backfilling' || s.state === 'waiting'));
  return busy ? 1_000 : 3_000;
}

export function ConnectionsSection() {
  const conns = useConnections(pollOf);
  const perf = useTick(1_000);
  const list = conns.data?.result ?? [];
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<ConnectionView | null>(null);

  return (
    <section className="card" data-testid="connections-card">
      <div className="card__head">
        <div className="conn-intro">
          <h2>Sync a live project</h2>
          <div className="card__note">A Supabase project’s logs (either log engine) or a Logflare server’s, synced in the background and kept past the plan’s retention</div>
        </div>
        {!open && (
          <button type="button" className="btn btn--small btn--primary" onClick={() => setOpen(true)} data-testid="connect-open">
            Connect a project…
          </button>
        )}
      </div>
      {open && (
        <ConnectForm
          onCancel={() => setOpen(false)}
          onCreated={(view) => {
            setCreated(view);
            setOpen(false);
          }}
        />
      )}
      {created && list.some((c) => c.id === created.id) && !open && (
        <div className="pad">
          <div className="notice notice--ok" data-testid="connect-done">
            <span>
              Connected to <span className="mono">{created.ref}</span>: syncing {Object.keys(created.sources).length}{' '}
              {Object.keys(created.sources).length === 1 ? 'source' : 'sources'} in the background. You can leave this page; the sync goes on.
            </span>
            <button type="button" className="icon-btn" aria-label="Dismiss" onClick={() => setCreated(null)}>
              ×
            </button>
          </div>
        </div>
      )}
      {conns.isError && (
        <div className="pad">
          <ErrorPanel error={conns.error} title="Cannot read the connections" onRetry={() => void conns.refetch()} />
        </div>
      )}
      {list.length > 0 && (
        <ul className="conn-list" data-testid="connections">
          {list.map((c) => (
            <ConnectionCard key={c.id} connection={c} now={syncNow(conns.data!, c, perf)} />
          ))}
        </ul>
      )}
    </section>
  );
}

// ---- the form ----

/**
 * The sync's "now", from which a history start is counted back: the app's clock when it is
 * fixed, else the system clock (server/server.ts), which is this machine's (the server listens on
 * 127.0.0.1 only), so the page's own clock reads it.
 */
function syncClockNow(clock: { mode: string; now: number } | undefined): number {
  return clock?.mode === 'fixed' ? clock.now : Date.now() * 1000;
}

function ConnectForm({ onCancel, onCreated }: { onCancel: () => void; onCreated: (view: ConnectionView) => void }) {
  const id = useId();
  const clock = useClock();
  const [kind, setKind] = useState<Kind>('supabase');
  const [refText, setRefText] = useState('');
  const [apiUrl, setApiUrl] = useState('');
  const [serverUrl, setServerUrl] = useState('');
  const [token, setToken] = useState('');
  const [dialect, setDialect] = useState<DialectChoice>('detect');
  const [picked, setPicked] = useState<string[]>(() => SOURCE_LABELS.map((s) => s.name));
  const [history, setHistory] = useState<History>('7d');
  const [fromDate, setFromDate] = useState('');
  const [follow, setFollow] = useState(true);
  const test = useTestConnection();
  const create = useCreateConnection();

  const parsedRef = kind === 'supabase' ? parseProjectRef(refText) : null;
  const ref = kind === 'supabase' ? (parsedRef ?? refText.trim()) : refText.trim();
  const sources = kind === 'logflare' ? [EDGE] : picked;

  // A changed setting makes an earlier test's answer stale.
  const settingsKey = JSON.stringify([kind, ref, apiUrl, serverUrl, token, dialect, sources]);
  const resetTest = test.reset;
  useEffect(() => resetTest(), [settingsKey, resetTest]);

  const body = (): ConnectionBody => {
    const b: ConnectionBody = { kind, ref, token: token.trim(), sources, follow };
    const url = (kind === 'supabase' ? apiUrl : serverUrl).trim();
    if (url) b.url = url;
    if (kind === 'supabase') b.dialect = dialect;
    // 7 days is the server's own default, counted from its own clock.
    if (history === 'date') {
      const us = fromLocalInputValue(fromDate);
      if (us !== undefined) b.start = formatIsoMicros(us);
    } else if (history !== '7d') b.start = formatIsoMicros(syncClockNow(clock.data) - HISTORY_SPAN[history]);
    return b;
  };

  const error = create.error ?? test.error;
  const blamed = error instanceof ApiError ? error.locations : [];
  const ready = ref !== '' && token.trim() !== '' && sources.length > 0 && (history !== 'date' || fromLocalInputValue(fromDate) !== undefined);

  return (
    <form
      className="connect-form"
      data-testid="connect-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!ready) return;
        test.reset();
        create.mutate(body(), {
          onSuccess: (view) => {
            setToken('');
            onCreated(view);
          },
        });
      }}
    >
      <div className="connect-form__grid">
        <div className="connect-form__col">
          <Field label="Kind">
            <Segmented
              label="Kind"
              testId="connect-kind"
              options={['supabase', 'logflare'] as const}
              labels={{ supabase: 'Supabase', logflare: 'Logflare' }}
              value={kind}
              onChange={(k) => {
                setKind(k);
                create.reset();
              }}
            />
          </Field>
          {kind === 'supabase' ? (
            <>
              <MonoField label="Project ref or URL" id={`${id}-ref`} placeholder="abcdefghijklmnopqrst or https://abcdefghijklmnopqrst.supabase.co" value={refText} invalid={blamed.includes('ref')} onChange={setRefText} testId="connect-ref" />
              {parsedRef && parsedRef !== refText.trim() && (
                <p className="muted small connect-form__hint" data-testid="connect-ref-parsed">
                  Project ref <code>{parsedRef}</code>
                </p>
              )}
            </>
          ) : (
            <>
              <MonoField label="Server URL" id={`${id}-server`} placeholder="https://logflare.example.com" value={serverUrl} invalid={blamed.includes('url')} onChange={setServerUrl} testId="connect-server-url" />
              <MonoField label="Project" id={`${id}-ref`} placeholder="the project logs.all is asked about" value={refText} invalid={blamed.includes('ref')} onChange={setRefText} testId="connect-ref" />
            </>
          )}
          <MonoField label={kind === 'supabase' ? 'Personal access token' : 'Access token'} id={`${id}-token`} type="password" placeholder={kind === 'supabase' ? 'sbp_…' : 'the server’s access token'} value={token} invalid={blamed.includes('token')} onChange={setToken} testId="connect-token" />
          <p className="muted small connect-form__hint">
            {kind === 'supabase' ? (
              <>
                Create one under{' '}
                <a href={SUPABASE_TOKENS_URL} target="_blank" rel="noreferrer">
                  Account → Access Tokens
                </a>
                . It is sent only to the API, in a header; the app shows only its last four characters.
              </>
            ) : (
              'Sent only to this server, in a header; the app shows only its last four characters.'
            )}
          </p>
          {kind === 'supabase' && (
            <>
              <Field label="SQL dialect">
                <Segmented
                  label="SQL dialect"
                  testId="connect-dialect"
                  options={['detect', 'clickhouse', 'bigquery'] as const}
                  labels={{ detect: 'Detect', clickhouse: 'ClickHouse', bigquery: 'BigQuery' }}
                  value={dialect}
                  onChange={setDialect}
                />
              </Field>
              <p className="muted small connect-form__hint">Projects created since June 2026 keep their logs in ClickHouse, older ones in BigQuery; Detect tries ClickHouse first.</p>
              <details className="connect-form__advanced" open={apiUrl !== '' || undefined}>
                <summary>Management API address</summary>
                <MonoField label="API URL" id={`${id}-api`} placeholder="https://api.supabase.com" value={apiUrl} invalid={blamed.includes('url')} onChange={setApiUrl} testId="connect-api-url" />
              </details>
            </>
          )}
        </div>
        <div className="connect-form__col">
          <fieldset className="connect-form__sources" aria-invalid={blamed.includes('sources')}>
            <legend className="field__label">
              Sources to sync
              {kind === 'supabase' && (
                <span className="connect-form__all">
                  <button type="button" className="link-btn" onClick={() => setPicked(SOURCE_LABELS.map((s) => s.name))}>
                    all
                  </button>{' '}
                  ·{' '}
                  <button type="button" className="link-btn" onClick={() => setPicked([])}>
                    none
                  </button>
                </span>
              )}
            </legend>
            <div className="connect-form__checks">
              {SOURCE_LABELS.map((s) => {
                const fixed = kind === 'logflare';
                const checked = fixed ? s.name === EDGE : picked.includes(s.name);
                return (
                  <label key={s.name} className={`check${fixed && s.name !== EDGE ? ' is-disabled' : ''}`}>
                    <input
                      type="checkbox"
                      checked={checked}
                      disabled={fixed}
                      onChange={(e) => setPicked((cur) => (e.target.checked ? [...cur, s.name] : cur.filter((n) => n !== s.name)))}
                      data-testid={`connect-source-${s.alias}`}
                    />
                    <span>
                      {s.label} <span className="mono muted">{s.alias}</span>
                    </span>
                  </label>
                );
              })}
            </div>
            {kind === 'logflare' && <p className="muted small connect-form__hint">A Logflare server’s logs.all answers edge requests only.</p>}
          </fieldset>
          <Field label="History starts">
            <div className="connect-form__history">
              <Segmented
                label="History starts"
                testId="connect-history"
                options={HISTORY}
                labels={HISTORY_LABELS}
                value={history}
                onChange={(h) => {
                  if (h === 'date' && !fromDate) setFromDate(toLocalInputValue(syncClockNow(clock.data) - 7 * MICROS.day));
                  setHistory(h);
                }}
              />
              {history === 'date' && (
                <input
                  className="input input--time"
                  type="datetime-local"
                  step={1}
                  aria-label="History starts at (local time)"
                  aria-invalid={blamed.includes('start')}
                  value={fromDate}
                  onChange={(e) => setFromDate(e.target.value)}
                  data-testid="connect-start"
                />
              )}
            </div>
          </Field>
          <p className="muted small connect-form__hint">
            {history === 'date' ? 'From this local time on' : `The last ${HISTORY_LABELS[history]}`}; the platform keeps 1 day of logs on Free and 7 on Pro, so older history may not be there.
            Synced records stay here after the platform drops them.
          </p>
          <label className="check">
            <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} data-testid="connect-follow" />
            <span>Keep following new records (a poll every minute)</span>
          </label>
        </div>
      </div>

      <div className="connect-form__actions">
        <button type="button" className="btn btn--small" disabled={!ready || test.isPending || create.isPending} onClick={() => test.mutate(body())} data-testid="connect-test">
          {test.isPending ? 'Testing…' : 'Test'}
        </button>
        <button type="submit" className="btn btn--small btn--primary" disabled={!ready || create.isPending} data-testid="connect-submit">
          {create.isPending ? 'Connecting…' : 'Connect and sync'}
        </button>
        <button type="button" className="btn btn--small" onClick={onCancel} data-testid="connect-cancel">
          Cancel
        </button>
        {!ready && <span className="muted small">{ref === '' ? (kind === 'supabase' ? 'Enter the project ref' : 'Enter the server URL and project') : token.trim() === '' ? 'Paste the token' : sources.length === 0 ? 'Pick at least one source' : 'Pick the start'}</span>}
      </div>
      {test.data && <TestAnswer answer={test.data} kind={kind} ref_={ref} />}
      {error && <ErrorPanel error={error} title={create.error ? 'The connection was not saved' : 'The test did not run'} />}
    </form>
  );
}

/** What the remote answered to "Test", in words. */
function TestAnswer({ answer, kind, ref_ }: { answer: ConnectionTestResult; kind: Kind; ref_: string }) {
  const remote = kind === 'supabase' ? 'Supabase' : 'The Logflare server';
  if (answer.ok) {
    return (
      <div className="notice notice--ok" data-testid="connect-test-result" data-ok="true">
        <span>
          <strong>It works.</strong> {remote} answered {answer.status} with {formatInt(answer.rows)} {answer.rows === 1 ? 'record' : 'records'} of the last minute
          {answer.dialect && <> in the {answer.dialect === 'clickhouse' ? 'ClickHouse' : 'BigQuery'} dialect</>}.
        </span>
      </div>
    );
  }
  const status = answer.status;
  const kindOf: SyncErrorKind = status === null ? 'remote' : status === 401 || status === 403 ? 'auth' : status === 429 ? 'rate_limited' : status >= 500 ? 'remote' : 'refused';
  const words = problemWords(kindOf, status, { kind, ref: ref_ });
  return (
    <div className="notice notice--warn sync-problem" data-testid="connect-test-result" data-ok="false">
      <div>
        <strong>{words.title}.</strong>
        {answer.message && (
          <>
            {' '}
            {status !== null ? `${remote} said` : 'The app says'}: <span className="sync-problem__said">“{answer.message}”</span>
          </>
        )}
        <div className="small">{words.advice}</div>
      </div>
    </div>
  );
}

// ---- a connection ----

interface Problem {
  kind: SyncErrorKind;
  status: number | null;
  message: string;
  sources: string[];
  /** The earliest next try among those sources (µs), when the sync retries by itself. */
  waitUntil: number | null;
}

/** The distinct problems of a connection's sources (one refused token fails them all: one box). */
function problemsOf(c: ConnectionView): Problem[] {
  const out: Problem[] = [];
  for (const [name, s] of Object.entries(c.sources)) {
    if (!s.error || !s.errorKind) continue;
    const same = out.find((p) => p.kind === s.errorKind && p.status === s.errorStatus && p.message === s.error);
    if (same) {
      same.sources.push(name);
      if (s.waitUntil !== null && (same.waitUntil === null || s.waitUntil < same.waitUntil)) same.waitUntil = s.waitUntil;
    } else out.push({ kind: s.errorKind, status: s.errorStatus, message: s.error, sources: [name], waitUntil: s.waitUntil });
  }
  return out;
}

function overallState(c: ConnectionView): SourceSyncView['state'] {
  const states = Object.values(c.sources).map((s) => s.state);
  for (const s of ['failed', 'waiting', 'backfilling', 'following', 'paused'] as const) if (states.includes(s)) return s;
  return 'paused';
}

function ConnectionCard({ connection: c, now }: { connection: ConnectionView; now: number }) {
  const update = useUpdateConnection();
  const [removing, setRemoving] = useState(false);
  // The box shows the choice at once; the server's answer then agrees (or the choice is dropped).
  const [follow, setFollow] = useState<boolean | null>(null);
  useEffect(() => {
    if (follow !== null && c.follow === follow) setFollow(null);
  }, [c.follow, follow]);
  const problems = problemsOf(c);
  const names = Object.keys(c.sources);
  const records = Object.values(c.sources).reduce((n, s) => n + s.records, 0);
  const dialect =
    c.kind === 'logflare'
      ? 'logs.all (edge requests)'
      : c.dialect === 'detect'
        ? c.detectedDialect
          ? `${c.detectedDialect === 'clickhouse' ? 'ClickHouse' : 'BigQuery'} (detected)`
          : 'dialect: detecting…'
        : c.dialect === 'clickhouse'
          ? 'ClickHouse'
          : 'BigQuery';
  const protection = c.tokenProtection === 'os keychain key' ? 'sealed by the system keychain' : 'in the owner-only connections file';

  return (
    <li className={`conn conn--${overallState(c)}`} data-testid="connection-card" data-ref={c.ref} data-id={c.id} data-state={overallState(c)}>
      <div className="conn__head">
        <div className="conn__title">
          <strong>{remoteLabel(c)}</strong> <span className="mono">{c.ref}</span>
          <div className="muted small">
            {dialect} · history from <TimeText us={c.start} precision="minute" /> · {formatInt(records)} records synced · token <span className="mono">{c.token}</span>{' '}
            <span title={`What protects the stored token: ${c.tokenProtection}`}>({protection})</span> · {c.callsLastMinute} {c.callsLastMinute === 1 ? 'call' : 'calls'} in the last minute
          </div>
        </div>
        <div className="conn__tools">
          <label className="check" title="Once caught up, poll every minute for new records">
            <input
              type="checkbox"
              checked={follow ?? c.follow}
              disabled={update.isPending}
              onChange={(e) => {
                const on = e.target.checked;
                setFollow(on);
                update.mutate({ id: c.id, patch: { follow: on } }, { onError: () => setFollow(null) });
              }}
              data-testid="conn-follow"
            />
            <span>Follow new records</span>
          </label>
          <button type="button" className="btn btn--small" disabled={update.isPending} onClick={() => update.mutate({ id: c.id, patch: { paused: !c.paused } })} data-testid="conn-pause">
            {c.paused ? 'Resume' : 'Pause'}
          </button>
          <button type="button" className="btn btn--small btn--ghost-danger" onClick={() => setRemoving(true)} data-testid="conn-remove">
            Remove…
          </button>
        </div>
      </div>
      {update.isError && <ErrorPanel error={update.error} title="The change was not saved" />}
      {problems.map((p) => (
        <ProblemBox key={`${p.kind}-${p.status}-${p.message}`} problem={p} connection={c} all={p.sources.length === names.length} now={now} />
      ))}
      <TableScroll className="conn-table" testId="sync-table">
        <colgroup>
          <col className="conn-table__source" />
          <col className="conn-table__state" />
          <col className="conn-table__records" />
          <col className="conn-table__through" />
          <col />
        </colgroup>
        <thead>
          <tr>
            <th>Source</th>
            <th>State</th>
            <th className="num">Records</th>
            <th>Synced through</th>
            <th>Progress</th>
          </tr>
        </thead>
        <tbody>
          {names.map((name) => (
            <SourceRow key={name} name={name} s={c.sources[name]!} c={c} now={now} />
          ))}
        </tbody>
      </TableScroll>
      <RemoveDialog open={removing} connection={c} records={records} onClose={() => setRemoving(false)} />
    </li>
  );
}

/** A labelled one-line monospace input of the connect form (never spell-checked or autofilled). */
function MonoField(props: { label: string; id: string; type?: 'password'; placeholder: string; value: string; invalid: boolean; onChange: (v: string) => void; testId: string }) {
  return (
    <Field label={props.label} htmlFor={props.id}>
      <input
        id={props.id}
        className="input input--mono"
        type={props.type}
        placeholder={props.placeholder}
        value={props.value}
        spellCheck={false}
        autoComplete="off"
        aria-invalid={props.invalid}
        onChange={(e) => props.onChange(e.target.value)}
        data-testid={props.testId}
      />
    </Field>
  );
}

function SourceRow({ name, s, c, now }: { name: string; s: SourceSyncView; c: ConnectionView; now: number }) {
  const alias = sourceAlias(name);
  const p = backfillProgress(c.start, s.through, now);
  // Mid-backfill waits and stops keep their progress bar (once something is synced); a caught-up source has nothing left to show.
  const behind = s.state === 'backfilling' || ((s.state === 'waiting' || s.state === 'failed' || s.state === 'paused') && s.through !== null && p.ratio < 0.999);
  let detail: ReactNode = null;
  if (s.state === 'following') detail = s.syncedAt !== null ? `Up to date · synced ${formatAge(now - s.syncedAt)} ago` : 'Up to date';
  else if (s.state === 'paused') detail = c.paused ? 'Paused' : 'Caught up · following is off';
  else if (s.state === 'failed') detail = 'Stopped: see above';
  const wait =
    s.waitUntil !== null && s.waitReason ? (
      <span className="conn-wait" data-testid="sync-wait" data-reason={s.waitReason}>
        {s.waitReason === 'rate_limited' ? 'Rate limited: resumes in ' : s.waitReason === 'backoff' ? 'Next try in ' : 'App’s call budget: next call in '}
        <strong>{formatCountdown(s.waitUntil - now)}</strong>
      </span>
    ) : null;
  return (
    <tr data-testid="sync-row" data-source={name} data-state={s.state}>
      <td>
        <div className="strong nowrap">{sourceLabel(name)}</div>
        <div className="mono muted small">{alias}</div>
      </td>
      <td>
        <span className={`state-pill state-pill--${s.state}`} data-testid="sync-state">
          {STATE_LABELS[s.state]}
        </span>
      </td>
      <td className="num mono" data-testid="sync-records">
        {formatInt(s.records)}
        {s.rejected > 0 && <div className="small text-error">{formatInt(s.rejected)} refused</div>}
      </td>
      <td className="small" data-testid="sync-through">
        {s.through !== null ? <TimeText us={s.through} /> : '—'}
      </td>
      <td className="small">
        <div className="conn-detail">
          {behind && (
            <div className="conn-progress" data-testid="sync-progress" data-ratio={p.ratio.toFixed(3)}>
              <ProgressBar value={p.ratio} label={`Backfill of ${alias}`} tone={s.state === 'failed' ? 'error' : undefined} />
              <span className="muted">
                {Math.floor(p.ratio * 100)}% · {formatDuration(p.covered)} of {formatDuration(p.total)}
              </span>
            </div>
          )}
          {wait}
          {detail && <span className="muted">{detail}</span>}
          {s.warnings.length > 0 && (
            <ul className="conn-warnings" data-testid="sync-warnings">
              {s.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          )}
        </div>
      </td>
    </tr>
  );
}

function ProblemBox({ problem: p, connection: c, all, now }: { problem: Problem; connection: ConnectionView; all: boolean; now: number }) {
  const words = problemWords(p.kind, p.status, c);
  const update = useUpdateConnection();
  const [token, setToken] = useState('');
  const failed = !words.retries;
  const remote = c.kind === 'supabase' ? 'Supabase' : 'The server';
  const aliases = p.sources.map((n) => sourceAlias(n));
  return (
    <div className={`sync-problem notice ${failed ? 'sync-problem--error' : 'notice--warn'}`} role={failed ? 'alert' : undefined} data-testid="sync-problem" data-kind={p.kind}>
      <div className="sync-problem__body">
        <div>
          <strong data-testid="sync-problem-title">{words.title}</strong>
          {!all && <span className="muted"> ({aliases.join(', ')})</span>}
        </div>
        <div className="small">
          {p.status !== null ? `${remote} said` : 'The app says'}: <span className="sync-problem__said">“{p.message}”</span>
        </div>
        <div className="small" data-testid="sync-problem-advice">
          {words.advice}
          {words.action === 'token' && c.kind === 'supabase' && (
            <>
              {' '}
              <a href={SUPABASE_TOKENS_URL} target="_blank" rel="noreferrer">
                Open Access Tokens
              </a>
            </>
          )}
        </div>
        {words.retries && p.waitUntil !== null && (
          <div className="small" data-testid="sync-problem-countdown">
            Next try in <strong>{formatCountdown(p.waitUntil - now)}</strong>
          </div>
        )}
        {words.action === 'token' && (
          <form
            className="sync-problem__token"
            onSubmit={(e) => {
              e.preventDefault();
              if (token.trim()) update.mutate({ id: c.id, patch: { token: token.trim() } }, { onSuccess: () => setToken('') });
            }}
          >
            <input
              className="input input--mono"
              type="password"
              aria-label="New token"
              placeholder={c.kind === 'supabase' ? 'new personal access token (sbp_…)' : 'new access token'}
              autoComplete="off"
              value={token}
              onChange={(e) => setToken(e.target.value)}
              data-testid="problem-token"
            />
            <button type="submit" className="btn btn--small btn--primary" disabled={!token.trim() || update.isPending} data-testid="problem-token-submit">
              {update.isPending ? 'Saving…' : 'Use this token'}
            </button>
          </form>
        )}
        {update.isError && <ErrorPanel error={update.error} title="The token was not saved" />}
      </div>
      {failed && words.action !== 'token' && (
        <button type="button" className="btn btn--small" disabled={update.isPending} onClick={() => update.mutate({ id: c.id, patch: { paused: false } })} data-testid="problem-retry">
          Try again
        </button>
      )}
    </div>
  );
}

function RemoveDialog({ open, connection: c, records, onClose }: { open: boolean; connection: ConnectionView; records: number; onClose: () => void }) {
  const remove = useRemoveConnection();
  const [data, setData] = useState<'keep' | 'delete'>('keep');
  const name = useId();
  const aliases = useMemo(() => Object.keys(c.sources).map((n) => sourceAlias(n)), [c.sources]);
  const close = () => {
    remove.reset();
    setData('keep');
    onClose();
  };
  return (
    <ConfirmDialog
      open={open}
      title={`Remove the connection to ${c.ref}?`}
      confirmLabel={data === 'keep' ? 'Remove connection' : `Remove and delete records`}
      danger
      busy={remove.isPending}
      onCancel={close}
      onConfirm={() => remove.mutate({ id: c.id, data }, { onSuccess: close })}
    >
      <p>The sync stops and the token is forgotten. The project itself is not touched.</p>
      <div className="remove-choice" role="radiogroup" aria-label="The synced records">
        <label className="check">
          <input type="radio" name={name} checked={data === 'keep'} onChange={() => setData('keep')} data-testid="remove-keep" />
          <span>
            <strong>Keep the {formatInt(records)} synced records</strong> — they stay like imported data.
          </span>
        </label>
        <label className="check">
          <input type="radio" name={name} checked={data === 'delete'} onChange={() => setData('delete')} data-testid="remove-delete" />
          <span>
            <strong>Delete the data of {aliases.join(', ')}</strong> — every record stored in {aliases.length === 1 ? 'that source' : 'those sources'}, which can hold only this project’s records.
          </span>
        </label>
      </div>
      {remove.isError && <ErrorPanel error={remove.error} title="Nothing was removed" />}
    </ConfirmDialog>
  );
}

