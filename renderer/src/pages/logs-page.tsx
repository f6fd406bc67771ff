import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import type { LogRow } from '../../../server/api-types.ts';
import { LOGS_PAGE_SIZE, useClock, useLogsAll, useSources } from '../api/hooks.ts';
import { useView } from '../app-state.tsx';
import { ClockHint } from '../components/clock-hint.tsx';
import { CopyButton } from '../components/copy-button.tsx';
import { CurlButton } from '../components/curl-button.tsx';
import { EmptyState } from '../components/empty-state.tsx';
import { ErrorPanel } from '../components/error-panel.tsx';
import { ExportButtons } from '../components/export-buttons.tsx';
import { Field } from '../components/field.tsx';
import { JsonTree } from '../components/json-tree.tsx';
import { PageHeader, Toolbar } from '../components/page-header.tsx';
import { ProjectPicker } from '../components/project-picker.tsx';
import { RefreshButton } from '../components/refresh-button.tsx';
import { Segmented } from '../components/segmented.tsx';
import { TableSkeleton } from '../components/skeleton.tsx';
import { TimeText } from '../components/time-text.tsx';
import { formatInt } from '../lib/format.ts';
import {
  mergePages,
  RANGE_PRESETS,
  requestFields,
  resolveRange,
  RETENTION,
  retentionCut,
  rowMatches,
  statusClass,
  TIERS,
  tierCovering,
  type RangeChoice,
  type RetentionCut,
  type RequestFields,
  type Tier,
} from '../lib/logs.ts';
import { formatDateTime, formatSpan, formatUtc, fromLocalInputValue, isoMicros, localZoneName, toLocalInputValue } from '../lib/time.ts';
import { logsRequest } from '../lib/view-request.ts';
import { EDGE_SOURCE, sourceOf, useSourceProjects } from './page-data.ts';

const ROW_HEIGHT = 30;

const RANGE_LABELS: Record<RangeChoice, string> = {
  '15m': '15 min',
  '1h': '1 h',
  '3h': '3 h',
  '24h': '24 h',
  '7d': '7 days',
  custom: 'Custom',
};

interface Item {
  row: LogRow;
  fields: RequestFields;
}

export function LogsPage() {
  const { view, update } = useView();
  const clock = useClock();
  const sources = useSources();
  const { projects, hasData, loading: sourcesLoading } = useSourceProjects(EDGE_SOURCE);
  const now = clock.data?.now;
  const request = logsRequest(view, now);
  const logs = useLogsAll(request?.params ?? null);
  const [filter, setFilter] = useState('');
  const [selectedId, setSelectedId] = useState<string | null>(null);

  const items: Item[] = useMemo(() => mergePages(logs.data?.pages.map((p) => p.rows) ?? []).map((row) => ({ row, fields: requestFields(row) })), [logs.data]);
  const visible = useMemo(() => (filter.trim() ? items.filter((i) => rowMatches(i.row, i.fields, filter)) : items), [items, filter]);
  const selected = useMemo(() => items.find((i) => i.row.id === selectedId) ?? null, [items, selectedId]);

  const requestKey = JSON.stringify(request?.params ?? null);
  useEffect(() => setSelectedId(null), [requestKey]);

  const range = now === undefined ? undefined : resolveRange(view.logs.range, now, { start: view.logs.start, end: view.logs.end });
  const cut = now === undefined || !range ? null : retentionCut(view.logs.tier, now, range);

  const noSources = !sourcesLoading && sources.data !== undefined && !hasData;
  const fileBase = `logs_${view.project ?? 'none'}_${view.logs.tier}_${now ? isoMicros(now).slice(0, 19).replace(/:/g, '') : ''}`;

  return (
    <div className="page page--fill" data-testid="logs-page">
      <PageHeader
        title="Logs"
        endpoint="logs.all"
        description="Edge request logs of a project, newest first, within the tier’s retention."
        actions={
          <>
            <CurlButton request={request} />
            <ExportButtons
              fileBase={fileBase}
              rows={items.map((i) => i.row)}
              csvRows={() =>
                items.map(({ row, fields }) => ({
                  id: row.id,
                  timestamp: row.timestamp,
                  timestamp_iso: isoMicros(row.timestamp),
                  method: fields.method,
                  path: fields.path,
                  status_code: fields.status,
                  event_message: row.event_message,
                  metadata: row.metadata,
                }))
              }
            />
            <RefreshButton />
          </>
        }
      />
      <Toolbar>
        <ProjectPicker projects={projects} value={view.project} onChange={(ref) => update((v) => ({ ...v, project: ref }))} />
        <Field label="Tier" htmlFor="tier-picker">
          <select
            id="tier-picker"
            className="select"
            value={view.logs.tier}
            data-testid="tier-picker"
            onChange={(e) => update((v) => ({ ...v, logs: { ...v.logs, tier: e.target.value as Tier } }))}
          >
            {TIERS.map((t) => (
              <option key={t} value={t}>
                {t} · {formatSpan(RETENTION[t])}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Time range">
          <Segmented
            label="Time range"
            testId="range"
            options={[...RANGE_PRESETS, 'custom'] as const}
            labels={RANGE_LABELS}
            value={view.logs.range}
            onChange={(r) =>
              update((v) => {
                if (r !== 'custom') return { ...v, logs: { tier: v.logs.tier, range: r } };
                // Custom starts from what is on screen, so nothing jumps.
                const cur = now === undefined ? {} : resolveRange(v.logs.range, now, { start: v.logs.start, end: v.logs.end });
                return { ...v, logs: { tier: v.logs.tier, range: 'custom', start: cur.start, end: cur.end } };
              })
            }
          />
        </Field>
        {view.logs.range === 'custom' && (
          <CustomRange
            start={view.logs.start}
            end={view.logs.end}
            onApply={(start, end) => update((v) => ({ ...v, logs: { tier: v.logs.tier, range: 'custom', start, end } }))}
          />
        )}
        <Field label="Filter loaded rows" htmlFor="logs-filter">
          <input
            id="logs-filter"
            className="input"
            type="search"
            placeholder="message, path, status, method…"
            value={filter}
            data-testid="logs-filter"
            onChange={(e) => setFilter(e.target.value)}
          />
        </Field>
      </Toolbar>

      {range && cut && cut.kind !== 'none' && now !== undefined && (
        <RetentionNotice
          tier={view.logs.tier}
          cut={cut}
          start={range.start}
          now={now}
          onTier={(tier) => update((v) => ({ ...v, logs: { ...v.logs, tier } }))}
        />
      )}

      {noSources ? (
        <EmptyState title="No edge request logs yet">
          <p>
            This page reads <code>cloudflare.logs.prod</code> (Supabase’s <code>edge_logs</code>). Import an export of it on the Data page, or load the demo data.
          </p>
        </EmptyState>
      ) : logs.isError ? (
        <ErrorPanel error={logs.error} onRetry={() => void logs.refetch()} />
      ) : !logs.data ? (
        <TableSkeleton />
      ) : (
        <>
          {items.length === 0 && (
            <ClockHint what="edge requests" source={sourceOf(sources.data, EDGE_SOURCE)} />
          )}
          <div className={`logs-layout${selected ? ' has-detail' : ''}${logs.isPlaceholderData ? ' is-refetching' : ''}`} aria-busy={logs.isFetching}>
            <LogsTable
              items={visible}
              selectedId={selectedId}
              onSelect={setSelectedId}
              footer={
                <div className="table-footer">
                  <span data-testid="logs-count">
                    {filter.trim() ? `${formatInt(visible.length)} of ${formatInt(items.length)} loaded rows match` : `${formatInt(items.length)} rows loaded`} · newest first · times in {localZoneName()}
                  </span>
                  {logs.hasNextPage ? (
                    <button type="button" className="btn btn--small" data-testid="load-older" disabled={logs.isFetchingNextPage} onClick={() => void logs.fetchNextPage()}>
                      {logs.isFetchingNextPage ? 'Loading…' : `Load older (${LOGS_PAGE_SIZE} more)`}
                    </button>
                  ) : (
                    items.length > 0 && <span className="muted" data-testid="end-of-range">Oldest record in range reached</span>
                  )}
                </div>
              }
            />
            {selected && <LogDetail item={selected} onClose={() => setSelectedId(null)} />}
          </div>
        </>
      )}
    </div>
  );
}

function RetentionNotice({ tier, cut, start, now, onTier }: { tier: Tier; cut: Exclude<RetentionCut, { kind: 'none' }>; start: number | undefined; now: number; onTier: (t: Tier) => void }) {
  const better = start === undefined ? null : tierCovering(start, now, tier);
  return (
    <div className="notice notice--warn" data-testid="retention-notice" role="status">
      <div>
        {cut.kind === 'all' ? (
          <>
            <strong>The whole range is outside retention.</strong> The {tier} tier keeps {formatSpan(RETENTION[tier])} of logs, so nothing before {formatDateTime(cut.cutoff, 'second')} is
            returned.
          </>
        ) : (
          <>
            <strong>Retention cuts this range.</strong> The {tier} tier keeps {formatSpan(RETENTION[tier])} of logs: records before {formatDateTime(cut.cutoff, 'second')} are not returned
            {start !== undefined ? `, although the range starts at ${formatDateTime(start, 'second')}.` : '.'}
          </>
        )}
      </div>
      {better && better !== tier && (
        <button type="button" className="btn btn--small" onClick={() => onTier(better)} data-testid="retention-upgrade">
          Query as {better} ({formatSpan(RETENTION[better])})
        </button>
      )}
    </div>
  );
}

function CustomRange({ start, end, onApply }: { start?: number; end?: number; onApply: (start: number | undefined, end: number | undefined) => void }) {
  const [draftStart, setDraftStart] = useState(start === undefined ? '' : toLocalInputValue(start));
  const [draftEnd, setDraftEnd] = useState(end === undefined ? '' : toLocalInputValue(end));
  useEffect(() => setDraftStart(start === undefined ? '' : toLocalInputValue(start)), [start]);
  useEffect(() => setDraftEnd(end === undefined ? '' : toLocalInputValue(end)), [end]);
  const s = draftStart ? fromLocalInputValue(draftStart) : undefined;
  const e = draftEnd ? fromLocalInputValue(draftEnd) : undefined;
  const invalid = s !== undefined && e !== undefined && s >= e;
  // An unchanged field keeps its microseconds.
  const sameStart = start !== undefined && draftStart === toLocalInputValue(start);
  const sameEnd = end !== undefined && draftEnd === toLocalInputValue(end);
  return (
    <form
      className="custom-range"
      onSubmit={(ev) => {
        ev.preventDefault();
        if (!invalid) onApply(sameStart ? start : s, sameEnd ? end : e);
      }}
    >
      <Field label="After (local)" htmlFor="range-start">
        <input id="range-start" className="input input--time" type="datetime-local" step={1} value={draftStart} onChange={(ev) => setDraftStart(ev.target.value)} data-testid="range-start" />
      </Field>
      <Field label="Until (local, inclusive)" htmlFor="range-end">
        <input id="range-end" className="input input--time" type="datetime-local" step={1} value={draftEnd} onChange={(ev) => setDraftEnd(ev.target.value)} data-testid="range-end" />
      </Field>
      <button type="submit" className="btn btn--small btn--primary" disabled={invalid} data-testid="range-apply">
        Apply
      </button>
      {invalid && <span className="field-error">Start must be before end</span>}
    </form>
  );
}

function StatusBadge({ status }: { status: number | null }) {
  return <span className={`badge badge--${statusClass(status)}`}>{status ?? '—'}</span>;
}

function LogsTable({ items, selectedId, onSelect, footer }: { items: Item[]; selectedId: string | null; onSelect: (id: string | null) => void; footer: ReactNode }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const selectedIndex = selectedId === null ? -1 : items.findIndex((i) => i.row.id === selectedId);

  const move = (to: number) => {
    if (items.length === 0) return;
    const i = Math.max(0, Math.min(items.length - 1, to));
    onSelect(items[i]!.row.id);
    virtualizer.scrollToIndex(i, { align: 'auto' });
  };

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 300) / ROW_HEIGHT) - 1);
    switch (e.key) {
      case 'ArrowDown':
        move(selectedIndex < 0 ? 0 : selectedIndex + 1);
        break;
      case 'ArrowUp':
        move(selectedIndex < 0 ? 0 : selectedIndex - 1);
        break;
      case 'PageDown':
        move(selectedIndex + page);
        break;
      case 'PageUp':
        move(selectedIndex - page);
        break;
      case 'Home':
        move(0);
        break;
      case 'End':
        move(items.length - 1);
        break;
      case 'Escape':
        onSelect(null);
        break;
      default:
        return;
    }
    e.preventDefault();
  };

  return (
    <div className="logs-table" data-testid="logs-table">
      <div className="logs-table__head" role="row">
        <span role="columnheader">Time</span>
        <span role="columnheader">Status</span>
        <span role="columnheader">Method</span>
        <span role="columnheader">Path</span>
        <span role="columnheader">Event message</span>
      </div>
      <div
        ref={scrollRef}
        className="logs-table__body"
        role="grid"
        aria-label="Log records"
        aria-rowcount={items.length}
        tabIndex={0}
        onKeyDown={onKeyDown}
        data-testid="logs-grid"
      >
        {items.length === 0 ? (
          <div className="logs-table__empty">No rows to show.</div>
        ) : (
          <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {virtualizer.getVirtualItems().map((vi) => {
              const { row, fields } = items[vi.index]!;
              const isSel = row.id === selectedId;
              return (
                <div
                  key={row.id}
                  role="row"
                  aria-rowindex={vi.index + 1}
                  aria-selected={isSel}
                  className={`logs-row${isSel ? ' is-selected' : ''}${vi.index % 2 ? ' is-odd' : ''}`}
                  style={{ transform: `translateY(${vi.start}px)`, height: ROW_HEIGHT }}
                  data-testid="log-row"
                  data-id={row.id}
                  onClick={() => {
                    onSelect(row.id);
                    scrollRef.current?.focus({ preventScroll: true });
                  }}
                >
                  <span role="gridcell" className="mono">
                    <TimeText us={row.timestamp} precision="ms" />
                  </span>
                  <span role="gridcell">
                    <StatusBadge status={fields.status} />
                  </span>
                  <span role="gridcell" className="mono method">
                    {fields.method ?? '—'}
                  </span>
                  <span role="gridcell" className="mono ellipsis" title={fields.path ?? undefined}>
                    {fields.path ?? '—'}
                  </span>
                  <span role="gridcell" className="mono ellipsis muted-strong" title={row.event_message}>
                    {row.event_message}
                  </span>
                </div>
              );
            })}
          </div>
        )}
      </div>
      {footer}
    </div>
  );
}

function LogDetail({ item, onClose }: { item: Item; onClose: () => void }) {
  const { row, fields } = item;
  const record = { id: row.id, timestamp: row.timestamp, event_message: row.event_message, metadata: row.metadata };
  return (
    <aside className="log-detail" data-testid="log-detail" aria-label="Selected record">
      <div className="log-detail__head">
        <div className="log-detail__title">
          <StatusBadge status={fields.status} />
          <span className="mono method">{fields.method ?? '—'}</span>
          <span className="mono ellipsis" title={fields.path ?? undefined}>
            {fields.path ?? '—'}
          </span>
        </div>
        <button type="button" className="icon-btn" aria-label="Close details" title="Close (Esc)" onClick={onClose}>
          ×
        </button>
      </div>
      <div className="log-detail__body">
        <dl className="kv">
          <dt>Time</dt>
          <dd className="mono">{formatDateTime(row.timestamp, 'us')} <span className="muted">{localZoneName()}</span></dd>
          <dt>UTC</dt>
          <dd className="mono">{formatUtc(row.timestamp, 'us')}</dd>
          <dt>Timestamp</dt>
          <dd className="mono" data-testid="detail-us">{row.timestamp} µs</dd>
          <dt>ID</dt>
          <dd className="mono" data-testid="detail-id">{row.id}</dd>
          <dt>Status</dt>
          <dd className="mono">{fields.status ?? '—'}</dd>
        </dl>
        <div className="log-detail__section">
          <div className="log-detail__section-head">
            <h3>Event message</h3>
            <CopyButton text={row.event_message} label="Copy message" testId="copy-message" />
          </div>
          <pre className="code-block" data-testid="detail-message">{row.event_message}</pre>
        </div>
        <div className="log-detail__section">
          <div className="log-detail__section-head">
            <h3>Metadata</h3>
            <CopyButton text={() => JSON.stringify(record, null, 2)} label="Copy record JSON" testId="copy-record" />
          </div>
          <JsonTree value={row.metadata} openDepth={5} />
        </div>
      </div>
    </aside>
  );
}
