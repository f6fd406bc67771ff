/**
 * The exact logs.all view: the endpoint as Logflare serves it (edge requests of a project,
 * tier retention, the newest page of rows per request), paged backwards from the oldest row's microsecond
 * (exact-query.ts), with a filter over the loaded rows. Tiers, their retention and the row cut
 * are the registry's (`GET /api/endpoints`).
 */
import { useMemo, useState } from 'react';
import type { LogRow } from '../../../../../contract/api-types.ts';
import { useClock, useSources } from '../../../api/hooks.ts';
import { useTierRules, type LogsAllRules } from '../../../api/rules.ts';
import { useView } from '../../../app-state.tsx';
import { ClockHint } from '../../../ui/clock-hint.tsx';
import { EmptyState } from '../../../ui/empty-state.tsx';
import { ErrorPanel } from '../../../ui/error-panel.tsx';
import { fileStamp, useExportCurrentView } from '../../../lib/view-export.ts';
import type { TableItem } from '../explorer-table.tsx';
import { Field } from '../../../ui/field.tsx';
import { Toolbar } from '../../../ui/page-header.tsx';
import { ViewActions } from '../../../ui/view-actions.tsx';
import { ProjectPicker } from '../../../ui/project-picker.tsx';
import { TableSkeleton } from '../../../ui/skeleton.tsx';
import { formatInt } from '../../../lib/format.ts';
import { mergePages, requestFields, hiddenMatch, rowMatches, type RequestFields } from './logs-all-rows.ts';
import { resolveRange, type LogsRange } from '../../../lib/logs-range.ts';
import { listedTiers, longestTier, retentionCut, retentionOf, tierCovering, type RetentionCut } from '../../../lib/retention.ts';
import { isTier, type Tier } from '../../../../../contract/registry.ts';
import { formatIsoMicros } from '../../../../../contract/instants.ts';
import { formatDateTime, formatSpan, localZoneName } from '../../../lib/time.ts';
import { logsRequest } from '../../../lib/view-request.ts';
import { EDGE_SOURCE, sourceOf, useSourceProjects } from '../../../lib/source-projects.ts';
import { LogsHeader, RangeControls } from '../controls.tsx';
import { useExactLogs } from './exact-query.ts';
import { makeHighlighter } from '../highlight.ts';
import { columnsBesideDetail, LogDetail } from '../log-detail.tsx';
import { EndOfRange, LogResults, MoreRows, useRecordSelection } from '../log-results.tsx';

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
  const rules = useTierRules();
  const pageSize = rules.data?.rows;
  const logs = useExactLogs(request?.params ?? null, pageSize);
  const [filter, setFilter] = useState('');

  const items: Item[] = useMemo(
    () =>
      mergePages(logs.data?.pages.map((p) => p.rows) ?? []).map((row) => {
        const request = requestFields(row);
        return { id: row.id, timestamp: row.timestamp, event_message: row.event_message, row, request, fields: { status: request.status, method: request.method, path: request.path } };
      }),
    [logs.data],
  );
  const visible = useMemo(
    () => (filter.trim() ? items.filter((i) => rowMatches(i.row, i.request, filter)).map((i) => ({ ...i, matchNote: hiddenMatch(i.row, i.request, filter) ?? undefined })) : items),
    [items, filter],
  );
  const highlight = useMemo(() => makeHighlighter(filter.trim(), false), [filter]);
  const selection = useRecordSelection(items, JSON.stringify(request?.params ?? null));

  const range = now === undefined ? undefined : resolveRange(view.logs.range, now, { start: view.logs.start, end: view.logs.end });
  const retention = rules.data ? retentionOf(rules.data, view.logs.tier) : undefined;
  const cut = now === undefined || !range || retention === undefined ? null : retentionCut(retention, now, range);
  const crowded = useMemo(() => (logs.data?.pages ?? []).flatMap((p) => p.crowded), [logs.data]);

  const noSources = !sourcesLoading && sources.data !== undefined && !hasData;
  const fileBase = `logs_${view.project ?? 'none'}_${view.logs.tier}_${fileStamp(now)}`;
  // What the table shows: the rows the filter box keeps (the buttons and the desktop menu's Export Current View).
  const currentView = {
    what: 'log rows',
    fileBase,
    rows: visible.map((i) => i.row),
    csvRows: () =>
      visible.map(({ row, request: f }) => ({
        id: row.id,
        timestamp: row.timestamp,
        timestamp_iso: formatIsoMicros(row.timestamp),
        method: f.method,
        path: f.path,
        status_code: f.status,
        event_message: row.event_message,
        metadata: row.metadata,
      })),
  };
  useExportCurrentView(currentView);

  return (
    <div className="page page--fill" data-testid="logs-page" data-mode="exact">
      <LogsHeader
        description={
          <>
            <strong>Exact logs.all view</strong> · the <code>logs.all</code> endpoint as Logflare answers it: edge requests of a project, newest first, within the tier’s retention,{' '}
            {pageSize !== undefined ? `${formatInt(pageSize)} per request` : 'one page per request'}
          </>
        }
        actions={<ViewActions curl={{ endpoint: request }} shown={currentView} />}
      />
      <Toolbar>
        <ProjectPicker projects={projects} value={view.project} onChange={(ref) => update((v) => ({ ...v, project: ref }))} />
        <Field label="Tier" htmlFor="tier-picker">
          <select
            id="tier-picker"
            className="select"
            value={view.logs.tier}
            data-testid="tier-picker"
            onChange={(e) => {
              const tier = e.target.value;
              if (isTier(tier)) update((v) => ({ ...v, logs: { ...v.logs, tier } }));
            }}
          >
            {(rules.data ? listedTiers(rules.data) : [{ tier: view.logs.tier, retentionUs: undefined }]).map((t) => (
              <option key={t.tier} value={t.tier}>
                {t.tier}
                {t.retentionUs !== undefined && ` · ${formatSpan(t.retentionUs)}`}
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

      {range && cut && cut.kind !== 'none' && now !== undefined && rules.data && (
        <RetentionNotice rules={rules.data} tier={view.logs.tier} cut={cut} range={range} now={now} onTier={(tier) => update((v) => ({ ...v, logs: { ...v.logs, tier } }))} />
      )}

      {noSources ? (
        <EmptyState title="No edge request logs yet">
          <p>
            This view reads <code>cloudflare.logs.prod</code> (Supabase’s <code>edge_logs</code>). Import an export of it on the Data page, or load the demo data.
          </p>
        </EmptyState>
      ) : rules.isError ? (
        <ErrorPanel error={rules.error} onRetry={() => void rules.refetch()} />
      ) : logs.isError ? (
        <ErrorPanel error={logs.error} onRetry={() => void logs.refetch()} />
      ) : !logs.data ? (
        <TableSkeleton />
      ) : (
        <>
          {/* A range older than the retention is empty for that reason (the notice says so), not because of the clock. */}
          {items.length === 0 && cut?.kind !== 'all' && <ClockHint what="edge requests" source={sourceOf(sources.data, EDGE_SOURCE)} />}
          <LogResults
            items={visible}
            selection={selection}
            refetching={logs.isPlaceholderData}
            fetching={logs.isFetching}
            columns={columnsBesideDetail(COLUMNS, selection.selected !== null)}
            highlight={highlight}
            empty={cut?.kind === 'all' ? `No rows: the whole range is older than the ${view.logs.tier} tier’s retention.` : 'No rows to show.'}
            footer={
              <>
                <span data-testid="logs-count">
                  {filter.trim() ? `${formatInt(visible.length)} of ${formatInt(items.length)} loaded rows match` : `${formatInt(items.length)} rows loaded`} · newest first · times in {localZoneName()}
                </span>
                {crowded.length > 0 && (
                  <span className="muted" data-testid="crowded-note" title="logs.all orders records of one microsecond by id and answers at most one page of them">
                    More than {formatInt(pageSize ?? 0)} records share {crowded.map((t) => formatDateTime(t, 'us')).join(', ')}: only the first {formatInt(pageSize ?? 0)} of them by id can be shown
                  </span>
                )}
                {logs.hasNextPage ? (
                  <MoreRows pages={logs} testId="load-older" loadingLabel="Loading…">
                    {`Load older (${formatInt(pageSize ?? 0)} more)`}
                  </MoreRows>
                ) : (
                  items.length > 0 && <EndOfRange />
                )}
              </>
            }
            detail={(record) => <LogDetail record={{ ...record, metadata: record.row.metadata }} onClose={selection.closeDetail} />}
          />
        </>
      )}
    </div>
  );
}

function RetentionNotice({
  rules,
  tier,
  cut,
  range,
  now,
  onTier,
}: {
  rules: LogsAllRules;
  tier: Tier;
  cut: Exclude<RetentionCut, { kind: 'none' }>;
  range: LogsRange;
  now: number;
  onTier: (t: Tier) => void;
}) {
  const keeps = formatSpan(retentionOf(rules, tier) ?? 0);
  const better = range.start === undefined ? null : tierCovering(rules, range.start, now, tier);
  const longest = longestTier(rules);
  return (
    <div className="notice notice--warn" data-testid="retention-notice" data-cut={cut.kind} role="status">
      <div>
        {cut.kind === 'all' ? (
          <>
            <strong>This range is older than the {tier} tier’s retention.</strong> {tier} keeps {keeps} of logs: nothing before {formatDateTime(cut.cutoff, 'second')} is returned, and
            the range ends at {formatDateTime(range.end! + 1, 'second')}.
          </>
        ) : (
          <>
            <strong>Retention cuts this range.</strong> The {tier} tier keeps {keeps} of logs: records before {formatDateTime(cut.cutoff, 'second')} are not returned
            {range.start !== undefined ? `, although the range starts at ${formatDateTime(range.start, 'second')}.` : '.'}
          </>
        )}
        {range.start !== undefined && better === null && longest && (
          <>
            {' '}
            No tier keeps logs that old: the longest retention is {longest.tier}’s {formatSpan(longest.retentionUs)}.
          </>
        )}
      </div>
      {better && better !== tier && (
        <button type="button" className="btn btn--small" onClick={() => onTier(better)} data-testid="retention-upgrade">
          Query as {better} (keeps {formatSpan(retentionOf(rules, better) ?? 0)})
        </button>
      )}
    </div>
  );
}
