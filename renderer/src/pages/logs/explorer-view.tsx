/**
 * The explorer (issue 12): every imported source, searched and filtered by the server. Source
 * picker, search (plain or RE2) and filter chips; a histogram stacked by status class or level
 * (hover, drag to zoom, click a bar); top values per field; the matching records newest first,
 * paged by the server's cursor; exports of what is shown and of everything that matches.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useClock, useSources } from '../../api/hooks.ts';
import { recordSearch } from '../../api/views.ts';
import { EXPLORER_PAGE_SIZE, logsUrl, useExplorerLogs, useFacets, useHistogram, useLogFields, type ExplorerRow } from '../../api/logs.ts';
import { getApiKey, serverOrigin } from '../../api/client.ts';
import { useView } from '../../app-state.tsx';
import { ClockHint } from '../../components/clock-hint.tsx';
import { CopyButton } from '../../components/copy-button.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorPanel } from '../../components/error-panel.tsx';
import { ExportButtons } from '../../components/export-buttons.tsx';
import { useExportCurrentView } from '../../lib/view-export.ts';
import { ExplorerChips } from '../../components/explorer-chips.tsx';
import { ExplorerExportDialog } from '../../components/explorer-export-dialog.tsx';
import { ExplorerFacets } from '../../components/explorer-facets.tsx';
import { ExplorerHistogram } from '../../components/explorer-histogram.tsx';
import { ExplorerTable } from '../../components/explorer-table.tsx';
import { Field } from '../../components/field.tsx';
import { ProjectPicker } from '../../components/project-picker.tsx';
import { RefreshButton } from '../../components/refresh-button.tsx';
import { ChartSkeleton, TableSkeleton } from '../../components/skeleton.tsx';
import { shellQuote } from '../../lib/curl.ts';
import { formatInt } from '../../lib/format.ts';
import { addFilter, explorerParams, removeFilter, resolveRange, type FilterField, type LogFilter } from '../../lib/logs.ts';
import { formatDateTime, isoMicros, localZoneName } from '../../lib/time.ts';
import { encodeView, type LogsView } from '../../lib/url-state.ts';
import { sourceOf, useSourceProjects } from '../page-data.ts';
import { LogsHeader, RangeControls } from './controls.tsx';
import { pagingState, resolveSource, searchLabel, switchSource, usableFilters, zoomOut } from './explorer-state.ts';
import { canHighlight, makeHighlighter } from './highlight.ts';
import { columnsBesideDetail, LogDetail } from './log-detail.tsx';

export function ExplorerView() {
  const { view, update, theme } = useView();
  const clock = useClock();
  const sources = useSources();
  const fieldsQuery = useLogFields();
  const list = useMemo(() => fieldsQuery.data ?? [], [fieldsQuery.data]);
  const source = resolveSource(list, view.logs.source);
  const { projects, hasData, loading: sourcesLoading } = useSourceProjects(source?.source ?? '');
  const now = clock.data?.now;
  const logsView = view.logs;
  const q = logsView.q ?? '';
  const regex = logsView.regex ?? false;
  const filters = useMemo(() => logsView.filters ?? [], [logsView.filters]);
  const applied = useMemo(() => usableFilters(filters, source), [filters, source]);
  const range = useMemo(() => (now === undefined ? undefined : resolveRange(logsView.range, now, { start: logsView.start, end: logsView.end })), [now, logsView.range, logsView.start, logsView.end]);

  // Until the sources are known the app may still pick the project: wait, rather than ask twice.
  const params = useMemo(
    () => (source && range && sources.data !== undefined ? explorerParams({ source: source.source, project: view.project, range, q, regex, filters: applied }) : null),
    [source, range, sources.data, view.project, q, regex, applied],
  );
  const paramsKey = JSON.stringify(params);

  const logs = useExplorerLogs(params);
  const histogram = useHistogram(params);
  const facets = useFacets(params, source?.fields ?? []);

  const setLogs = useCallback((patch: (l: LogsView) => LogsView) => update((v) => ({ ...v, logs: patch(v.logs) })), [update]);

  // The URL names the source once the list is known, so a copied link keeps meaning the same.
  useEffect(() => {
    if (!logsView.source && list[0]) setLogs((l) => (l.source ? l : { ...l, source: list[0]!.alias }));
  }, [logsView.source, list, setLogs]);

  const items = useMemo(() => {
    const seen = new Set<string>();
    const out: ExplorerRow[] = [];
    for (const page of logs.data?.pages ?? []) {
      for (const r of page.result) {
        if (seen.has(r.id)) continue;
        seen.add(r.id);
        out.push(r);
      }
    }
    return out;
  }, [logs.data]);
  const paging = pagingState(logs.data?.pages[logs.data.pages.length - 1], items.length);
  const total = histogram.data && !histogram.isPlaceholderData ? histogram.data.result.reduce((n, b) => n + b.count, 0) : undefined;

  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [detailOpen, setDetailOpen] = useState(false);
  useEffect(() => {
    setSelectedId(null);
    setDetailOpen(false);
  }, [paramsKey]);
  const selected = detailOpen ? (items.find((r) => r.id === selectedId) ?? null) : null;
  const onOpen = useCallback((id: string) => {
    setSelectedId(id);
    setDetailOpen(true);
  }, []);
  const onClose = useCallback(() => setDetailOpen(false), []);

  const highlight = useMemo(() => makeHighlighter(q, regex), [q, regex]);

  // A search that ran is remembered in the recent searches (where the app keeps them).
  const recorded = useRef<string | null>(null);
  const firstPageOk = logs.isSuccess && !logs.isPlaceholderData;
  useEffect(() => {
    if (!firstPageOk || (!q && applied.length === 0)) return;
    const state = encodeView(view).split('?')[1] ?? '';
    if (recorded.current === state) return;
    recorded.current = state;
    void recordSearch('logs', state, searchLabel(source, view.logs, range));
    // Keyed by the request only: a finished search is recorded, not every change of the view.
  }, [firstPageOk, paramsKey]);

  const include = (field: FilterField, value: string) => setLogs((l) => ({ ...l, filters: addFilter(l.filters ?? [], { field, value, exclude: false }) }));
  const exclude = (field: FilterField, value: string) => setLogs((l) => ({ ...l, filters: addFilter(l.filters ?? [], { field, value, exclude: true }) }));
  const remove = (field: FilterField, value: string) => setLogs((l) => ({ ...l, filters: removeFilter(l.filters ?? [], { field, value }) }));
  const setRange = (start: number, end: number) => setLogs((l) => ({ ...l, range: 'custom', start, end }));

  const [exportOpen, setExportOpen] = useState(false);
  const stamp = now ? isoMicros(now).slice(0, 19).replace(/:/g, '') : '';
  const fileBase = `logs_${source?.alias ?? 'source'}_${view.project ?? 'all'}_${stamp}`;
  const columns = source?.columns ?? [];
  // What the table shows: the loaded matching rows, in the source's columns (the buttons and the
  // desktop menu's Export Current View; "Export all matching…" is the server-side export of all).
  const currentView = {
    what: 'loaded log records',
    fileBase: `${fileBase}_loaded`,
    rows: items,
    csvRows: () =>
      items.map((r) => {
        const row: Record<string, unknown> = { id: r.id, timestamp: r.timestamp, timestamp_iso: isoMicros(r.timestamp) };
        for (const c of columns) if (c !== 'timestamp' && c !== 'event_message') row[c] = r.fields[c];
        row.event_message = r.event_message;
        row.metadata = r.metadata;
        return row;
      }),
  };
  useExportCurrentView(currentView);

  const noData = !sourcesLoading && sources.data !== undefined && !hasData;
  const unknownSource = fieldsQuery.isSuccess && !source;

  return (
    <div className="page page--fill ex-page" data-testid="logs-page" data-mode="explore">
      <LogsHeader
        actions={
          <>
            <CopyButton
              label="Copy as curl"
              testId="copy-curl"
              title="Copy this search as a curl command (includes your API key)"
              text={() => `curl -sS -H ${shellQuote(`X-API-KEY: ${getApiKey() ?? ''}`)} ${shellQuote(`${serverOrigin()}${logsUrl('', params ?? {})}`)}`}
            />
            <ExportButtons {...currentView} />
            <button type="button" className="btn btn--small" disabled={!params} onClick={() => setExportOpen(true)} data-testid="export-all" title="Download every record that matches, not only the loaded ones">
              Export all matching…
            </button>
            <RefreshButton />
          </>
        }
        description={
          <>
            <strong>Explorer</strong> · every imported source, searched and filtered by the server{source ? ` · ${source.label} (${source.alias})` : ''} · times in {localZoneName()}
          </>
        }
      />

      <div className="toolbar ex-toolbar">
        <Field label="Source" htmlFor="source-picker">
          <select
            id="source-picker"
            className="select"
            value={source?.alias ?? logsView.source ?? ''}
            data-testid="source-picker"
            disabled={list.length === 0}
            onChange={(e) => {
              const to = list.find((s) => s.alias === e.target.value);
              if (to) setLogs((l) => switchSource(l, to));
            }}
          >
            {!source && <option value={logsView.source ?? ''}>{fieldsQuery.isPending ? 'Loading sources…' : `Unknown: ${logsView.source}`}</option>}
            {list.map((s) => (
              <option key={s.alias} value={s.alias}>
                {s.label} · {formatInt(sourceOf(sources.data, s.source)?.count ?? 0)}
              </option>
            ))}
          </select>
        </Field>
        <ProjectPicker projects={projects} value={view.project} onChange={(ref) => update((v) => ({ ...v, project: ref }))} />
        <RangeControls now={now} />
      </div>

      <SearchBar q={q} regex={regex} what={source?.fields.includes('path') ? 'messages and paths' : 'messages'} onSearch={(text, re) => setLogs((l) => ({ ...l, q: text, regex: re }))} />
      {source && (
        <ExplorerChips
          filters={filters}
          fields={source.fields}
          onRemove={(f) => remove(f.field, f.value)}
          onFlip={(f) => setLogs((l) => ({ ...l, filters: addFilter(l.filters ?? [], { ...f, exclude: !f.exclude }) }))}
          onAdd={(f: LogFilter) => setLogs((l) => ({ ...l, filters: addFilter(l.filters ?? [], f) }))}
          onClear={() => setLogs((l) => ({ ...l, filters: [] }))}
        />
      )}

      {fieldsQuery.isError ? (
        <ErrorPanel error={fieldsQuery.error} title="Cannot list the log sources" onRetry={() => void fieldsQuery.refetch()} />
      ) : unknownSource ? (
        <div className="notice notice--warn" data-testid="unknown-source">
          <div>
            <strong>No source named “{logsView.source}”.</strong> Pick one of the {list.length} sources above.
          </div>
        </div>
      ) : noData && source ? (
        <EmptyState title={`No ${source.label.toLowerCase()} logs yet`}>
          <p>
            This source is <code>{source.source}</code> (Supabase’s <code>{source.alias}</code>). Import an export of it on the Data page, pick another source, or load the demo data.
          </p>
        </EmptyState>
      ) : logs.isError ? (
        <ErrorPanel error={logs.error} onRetry={() => void logs.refetch()} />
      ) : (
        <div className="ex-body">
          <ExplorerFacets
            fields={source?.fields ?? []}
            answer={facets.data}
            loading={facets.isPending}
            busy={facets.isPlaceholderData}
            error={facets.isError ? facets.error.message : null}
            filters={filters}
            onInclude={include}
            onExclude={exclude}
            onRemove={remove}
          />
          <div className="ex-main">
            {histogram.isError ? (
              <div className="notice notice--warn">{histogram.error.message}</div>
            ) : histogram.data ? (
              <ExplorerHistogram
                answer={histogram.data}
                range={range ?? {}}
                theme={theme}
                busy={histogram.isPlaceholderData}
                onRange={setRange}
                onSeries={
                  source && source.fields.includes(histogram.data.split)
                    ? (s) => include(histogram.data!.split, s.key)
                    : null
                }
              />
            ) : (
              <ChartSkeleton height={120} />
            )}
            {range && range.start !== undefined && range.end !== undefined && (
              <div className="ex-rangebar">
                <span className="muted small" data-testid="range-text">
                  {formatDateTime(range.start, 'second')} – {formatDateTime(range.end, 'second')}
                </span>
                <button
                  type="button"
                  className="btn btn--tiny"
                  data-testid="zoom-out"
                  disabled={now === undefined}
                  onClick={() => {
                    if (now === undefined || range.start === undefined || range.end === undefined) return;
                    const z = zoomOut({ start: range.start, end: range.end }, now);
                    setRange(z.start, z.end);
                  }}
                >
                  Zoom out
                </button>
                {total !== undefined && (
                  <span className="small ex-rangebar__total" data-testid="match-total">
                    {formatInt(total)} matching {total === 1 ? 'record' : 'records'}
                  </span>
                )}
              </div>
            )}
            {total === 0 && !q && applied.length === 0 && <ClockHint what={source ? `${source.label.toLowerCase()} logs` : 'logs'} source={sourceOf(sources.data, source?.source ?? '')} />}
            {!logs.data ? (
              <TableSkeleton />
            ) : (
              <div className={`logs-layout ex-results${selected ? ' has-detail' : ''}${logs.isPlaceholderData ? ' is-refetching' : ''}`} aria-busy={logs.isFetching}>
                <ExplorerTable
                  items={items}
                  columns={columnsBesideDetail(columns, selected !== null)}
                  highlight={highlight}
                  selectedId={selectedId}
                  detailOpen={selected !== null}
                  onSelect={setSelectedId}
                  onOpen={onOpen}
                  onClose={onClose}
                  empty={
                    paging.kind === 'continue' ? (
                      <>No matches yet: the search looked back to {formatDateTime(paging.through, 'second')}. Continue below to search further.</>
                    ) : (
                      <>No records match{q || applied.length ? ' this search' : ''} in this range.</>
                    )
                  }
                  footer={
                    <div className="table-footer">
                      <span data-testid="logs-count">
                        {formatInt(items.length)}
                        {total !== undefined ? ` of ${formatInt(total)} matching` : ''} {items.length === 1 && total === undefined ? 'record' : 'records'} loaded · newest first
                      </span>
                      {paging.kind === 'continue' ? (
                        <button type="button" className="btn btn--small" data-testid="scan-continue" disabled={logs.isFetchingNextPage} onClick={() => void logs.fetchNextPage()}>
                          {logs.isFetchingNextPage ? 'Searching…' : `Searched back to ${formatDateTime(paging.through, 'second')} — continue`}
                        </button>
                      ) : paging.kind === 'older' ? (
                        <button type="button" className="btn btn--small" data-testid="load-older" disabled={logs.isFetchingNextPage} onClick={() => void logs.fetchNextPage()}>
                          {logs.isFetchingNextPage ? 'Loading…' : `Load older (${EXPLORER_PAGE_SIZE} more)`}
                        </button>
                      ) : (
                        paging.kind === 'end' && (
                          <span className="muted" data-testid="end-of-range">
                            Oldest record in range reached
                          </span>
                        )
                      )}
                    </div>
                  }
                />
                {selected && <LogDetail record={selected} onClose={onClose} />}
              </div>
            )}
          </div>
        </div>
      )}

      <ExplorerExportDialog
        open={exportOpen}
        params={params}
        fileBase={fileBase}
        summary={searchLabel(source, logsView, range)}
        onClose={() => setExportOpen(false)}
      />
    </div>
  );
}

/** The search box (`/` focuses it) and the regex toggle; a search runs on Enter. */
function SearchBar({ q, regex, what, onSearch }: { q: string; regex: boolean; what: string; onSearch: (q: string, regex: boolean) => void }) {
  const [draft, setDraft] = useState(q);
  const inputRef = useRef<HTMLInputElement>(null);
  useEffect(() => setDraft(q), [q]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
      if (document.querySelector('dialog[open]')) return;
      e.preventDefault();
      inputRef.current?.focus();
      inputRef.current?.select();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const run = (text: string, re: boolean) => onSearch(re ? text : text.trim(), re);
  const highlightable = canHighlight(q, regex);

  return (
    <form
      className="ex-search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        run(draft, regex);
      }}
    >
      <div className="ex-search__box">
        <svg className="ex-search__icon" viewBox="0 0 24 24" width="14" height="14" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
          <circle cx="11" cy="11" r="7" />
          <path d="M20 20l-3.5-3.5" />
        </svg>
        <input
          ref={inputRef}
          className={`input ex-search__input${regex ? ' input--mono' : ''}`}
          type="search"
          aria-label={`Search ${what}`}
          placeholder={regex ? `RE2 pattern over ${what}, e.g. timeout|5\\d\\d` : `Search ${what}… (case-insensitive)`}
          value={draft}
          onChange={(e) => {
            setDraft(e.target.value);
            // The field's clear button (or deleting everything) shows everything again at once.
            if (e.target.value === '' && q !== '') run('', regex);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Escape' && draft !== q) {
              e.preventDefault();
              setDraft(q);
            }
          }}
          data-testid="search-input"
        />
        <kbd className="ex-search__kbd" aria-hidden="true">
          /
        </kbd>
      </div>
      <button
        type="button"
        className={`btn btn--small ex-regex${regex ? ' is-on' : ''}`}
        aria-pressed={regex}
        title={regex ? 'Regular expression (RE2) — click for plain text' : 'Plain text, case-insensitive — click for a regular expression (RE2)'}
        onClick={() => run(draft, !regex)}
        data-testid="regex-toggle"
      >
        .*
      </button>
      <button type="submit" className="btn btn--small btn--primary" data-testid="search-submit">
        Search
      </button>
      {draft !== q && <span className="muted small">Enter to search</span>}
      {!highlightable && <span className="muted small" data-testid="no-highlight">Matches are not highlighted: the browser cannot run this pattern safely</span>}
    </form>
  );
}
