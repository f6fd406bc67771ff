/**
 * The exact logs.all view: the endpoint as Logflare serves it (edge requests of a project,
 * tier retention, 100 newest per request), paged by the oldest row's microsecond, with a
 * filter over the loaded rows.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { LogRow } from '../../../../server/api-types.ts';
import { LOGS_PAGE_SIZE, useClock, useLogsAll, useSources } from '../../api/hooks.ts';
import { useView } from '../../app-state.tsx';
import { ClockHint } from '../../components/clock-hint.tsx';
import { CurlButton } from '../../components/curl-button.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorPanel } from '../../components/error-panel.tsx';
import { ExportButtons } from '../../components/export-buttons.tsx';
import { ExplorerTable, type TableItem } from '../../components/explorer-table.tsx';
import { Field } from '../../components/field.tsx';
import { Toolbar } from '../../components/page-header.tsx';
import { ProjectPicker } from '../../components/project-picker.tsx';
import { RefreshButton } from '../../components/refresh-button.tsx';
import { TableSkeleton } from '../../components/skeleton.tsx';
import { formatInt } from '../../lib/format.ts';
import { mergePages, requestFields, resolveRange, RETENTION, retentionCut, rowMatches, TIERS, tierCovering, type RequestFields, type RetentionCut, type Tier } from '../../lib/logs.ts';
import { formatDateTime, formatSpan, isoMicros, localZoneName } from '../../lib/time.ts';
import { logsRequest } from '../../lib/view-request.ts';
import { EDGE_SOURCE, sourceOf, useSourceProjects } from '../page-data.ts';
import { LogsHeader, RangeControls } from './controls.tsx';
import { makeHighlighter } from './highlight.ts';
import { LogDetail } from './log-detail.tsx';

interface Item extends TableItem {
  row: LogRow;
  request: RequestFields;
}

const COLUMNS = ['timestamp', 'status', 'method', 'path', 'event_message'] as const;

export function ExactView() {
  const { view, update } = useView();
  const clock = useClock();
  const sources = useSources();
  const { projects, hasData, loading: sourcesLoading } = useSourceProjects(EDGE_SOURCE);
  const now = clock.data?.now;
  const request = logsRequest(view, now);
  const logs = useLogsAll(request?.params ?? null);
  const [filter, setFilter] = useState('');
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [detailOpen, setDetailOpen] = useState(false);

  const items: Item[] = useMemo(
    () =>
      mergePages(logs.data?.pages.map((p) => p.rows) ?? []).map((row) => {
        const request = requestFields(row);
        return { id: row.id, timestamp: row.timestamp, event_message: row.event_message, row, request, fields: { status: request.status, method: request.method, path: request.path } };
      }),
    [logs.data],
  );
  const visible = useMemo(() => (filter.trim() ? items.filter((i) => rowMatches(i.row, i.request, filter)) : items), [items, filter]);
  const selected = detailOpen ? (items.find((i) => i.id === selectedId) ?? null) : null;
  const highlight = useMemo(() => makeHighlighter(filter.trim(), false), [filter]);

  const requestKey = JSON.stringify(request?.params ?? null);
  useEffect(() => {
    setSelectedId(null);
    setDetailOpen(false);
  }, [requestKey]);

  const range = now === undefined ? undefined : resolveRange(view.logs.range, now, { start: view.logs.start, end: view.logs.end });
  const cut = now === undefined || !range ? null : retentionCut(view.logs.tier, now, range);

  const noSources = !sourcesLoading && sources.data !== undefined && !hasData;
  const fileBase = `logs_${view.project ?? 'none'}_${view.logs.tier}_${now ? isoMicros(now).slice(0, 19).replace(/:/g, '') : ''}`;
  const onOpen = useCallback((id: string) => {
    setSelectedId(id);
    setDetailOpen(true);
  }, []);
  const onClose = useCallback(() => setDetailOpen(false), []);

  return (
    <div className="page page--fill" data-testid="logs-page" data-mode="exact">
      <LogsHeader
        description={
          <>
            <strong>Exact logs.all view</strong> · the <code>logs.all</code> endpoint as Logflare answers it: edge requests of a project, newest first, within the tier’s retention, 100 per request
          </>
        }
        actions={
          <>
            <CurlButton request={request} />
            {/* What the table shows: the rows the filter box keeps. */}
            <ExportButtons
              fileBase={fileBase}
              rows={visible.map((i) => i.row)}
              csvRows={() =>
                visible.map(({ row, request: f }) => ({
                  id: row.id,
                  timestamp: row.timestamp,
                  timestamp_iso: isoMicros(row.timestamp),
                  method: f.method,
                  path: f.path,
                  status_code: f.status,
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
        <RangeControls now={now} />
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
        <RetentionNotice tier={view.logs.tier} cut={cut} start={range.start} now={now} onTier={(tier) => update((v) => ({ ...v, logs: { ...v.logs, tier } }))} />
      )}

      {noSources ? (
        <EmptyState title="No edge request logs yet">
          <p>
            This view reads <code>cloudflare.logs.prod</code> (Supabase’s <code>edge_logs</code>). Import an export of it on the Data page, or load the demo data.
          </p>
        </EmptyState>
      ) : logs.isError ? (
        <ErrorPanel error={logs.error} onRetry={() => void logs.refetch()} />
      ) : !logs.data ? (
        <TableSkeleton />
      ) : (
        <>
          {items.length === 0 && <ClockHint what="edge requests" source={sourceOf(sources.data, EDGE_SOURCE)} />}
          <div className={`logs-layout ex-results${selected ? ' has-detail' : ''}${logs.isPlaceholderData ? ' is-refetching' : ''}`} aria-busy={logs.isFetching}>
            <ExplorerTable
              items={visible}
              columns={COLUMNS}
              highlight={highlight}
              selectedId={selectedId}
              detailOpen={selected !== null}
              onSelect={setSelectedId}
              onOpen={onOpen}
              onClose={onClose}
              empty="No rows to show."
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
                    items.length > 0 && (
                      <span className="muted" data-testid="end-of-range">
                        Oldest record in range reached
                      </span>
                    )
                  )}
                </div>
              }
            />
            {selected && <LogDetail record={{ ...selected, metadata: selected.row.metadata }} onClose={onClose} />}
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
