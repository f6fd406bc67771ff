/**
 * The explorer: every imported source, searched and filtered by the server. Source
 * picker, search (plain or RE2) and filter chips; a histogram stacked by status class or level
 * (hover, drag to zoom, click a bar); top values per field; the matching records newest first,
 * paged by the server's cursor; exports of what is shown and of everything that matches.
 */
import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useClock, useSources } from '../../../api/hooks.ts';
import { recordSearch } from '../../../api/views.ts';
import { EXPLORER_PAGE_SIZE, logsUrl, useExplorerLogs, useFacets, useHistogram, useLogFields, type ExplorerRow } from '../../../api/logs.ts';
import { ApiError } from '../../../api/client.ts';
import { useView, type UpdateOptions } from '../../../app-state.tsx';
import { ClockHint } from '../../../ui/clock-hint.tsx';
import { EmptyState } from '../../../ui/empty-state.tsx';
import { ErrorPanel } from '../../../ui/error-panel.tsx';
import { fileStamp, useExportCurrentView } from '../../../lib/view-export.ts';
import { ExplorerChips } from './explorer-chips.tsx';
import { ExplorerExportDialog } from './explorer-export-dialog.tsx';
import { ExplorerFacets } from './explorer-facets.tsx';
import { ExplorerHistogram } from './explorer-histogram.tsx';
import { Field } from '../../../ui/field.tsx';
import { ProjectPicker } from '../../../ui/project-picker.tsx';
import { Toolbar } from '../../../ui/page-header.tsx';
import { ViewActions } from '../../../ui/view-actions.tsx';
import { ChartSkeleton, TableSkeleton } from '../../../ui/skeleton.tsx';
import { formatInt } from '../../../lib/format.ts';
import type { FilterField } from '../../../../../contract/filters.ts';
import { addFilter, explorerParams, removeFilter, type LogFilter } from '../../../lib/explorer-filters.ts';
import { resolveRange } from '../../../lib/logs-range.ts';
import { formatIsoMicros } from '../../../../../contract/instants.ts';
import { formatDateTime, formatRange } from '../../../lib/time.ts';
import { encodeView, type LogsView } from '../../../lib/url-state.ts';
import { sourceOf, useSourceProjects } from '../../../lib/source-projects.ts';
import { LogsHeader, RangeControls } from '../controls.tsx';
import { pagingState, resolveSource, searchLabel, switchSource, usableFilters, zoomOut, type PagingState } from './explorer-state.ts';
import { matchCountText, searchProgress } from '../../../lib/search-progress.ts';
import { COMPARE_LABELS, compareOffset, shiftRange, withCompare } from '../../../lib/compare.ts';
import { ComparePicker } from '../../../ui/compare-picker.tsx';
import { re2Problem } from './re2-check.ts';
import { alignPrevious } from '../series.ts';
import { withNoStatus } from './explorer-state.ts';
import { canHighlight, makeHighlighter } from '../highlight.ts';
import { LogDetail } from '../log-detail.tsx';
import { EndOfRange, LogResults, MoreRows, useRecordSelection } from '../log-results.tsx';
import { LiveToggle } from './live-toggle.tsx';
import { fieldParams } from '../../../lib/field-state.ts';
import { useTimeMode } from '../../../ui/time-mode.tsx';
import { zoneLabel, zoneOf } from '../../../lib/time-display.ts';
import { useExplorerFields } from '../fields/explorer-fields.tsx';
import { fieldText, valueAtPath } from '../../../../../contract/fields.ts';

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

  // An RE2 pattern is checked here first: one the server would refuse is never sent.
  const patternCheck = useQuery({ queryKey: ['re2-check', q], queryFn: () => re2Problem(q), enabled: regex && q !== '', staleTime: Infinity });
  const patternOk = !regex || q === '' || patternCheck.data === null;
  const patternProblem = regex && q !== '' && typeof patternCheck.data === 'string' ? patternCheck.data : null;

  // Until the sources are known the app may still pick the project: wait, rather than ask twice.
  const params = useMemo(
    () => (source && range && sources.data !== undefined && patternOk ? { ...explorerParams({ source: source.source, project: view.project, range, q, regex, filters: applied }), ...fieldParams(logsView.fieldFilters) } : null),
    [source, range, sources.data, view.project, q, regex, applied, patternOk, logsView.fieldFilters],
  );
  const paramsKey = JSON.stringify(params);

  const logs = useExplorerLogs(params);
  const histogram = useHistogram(params);
  const facets = useFacets(params, source?.fields ?? []);

  // The compared period: the same search over the window moved back.
  const compare = logsView.compare;
  const compareShift = compare && range?.start !== undefined && range.end !== undefined ? compareOffset(compare, range.end - range.start) : null;
  const comparedRange = useMemo(() => (range && compareShift !== null ? shiftRange(range, compareShift) : undefined), [range, compareShift]);
  const comparedParams = useMemo(
    () => (params && comparedRange ? { ...explorerParams({ source: source!.source, project: view.project, range: comparedRange, q, regex, filters: applied }), ...fieldParams(logsView.fieldFilters) } : null),
    [params, comparedRange, source, view.project, q, regex, applied, logsView.fieldFilters],
  );
  const comparedHistogram = useHistogram(comparedParams);
  const comparedFacets = useFacets(comparedParams, source?.fields ?? []);

  const setLogs = useCallback((patch: (l: LogsView) => LogsView, opts?: UpdateOptions) => update((v) => ({ ...v, logs: patch(v.logs) }), opts), [update]);
  // Fields inside the records: picker, chips, facets, columns.
  const fx = useExplorerFields({
    source,
    logs: logsView,
    setLogs,
    params,
    project: view.project,
    range,
    compared: compare && comparedParams && comparedRange ? { params: comparedParams, range: comparedRange, label: COMPARE_LABELS[compare] } : null,
  });
  const timeMode = useTimeMode();
  const narrowed = applied.length > 0 || fx.filters.length > 0;

  // The URL names the source once the list is known, so a copied link keeps meaning the same.
  useEffect(() => {
    if (!logsView.source && list[0]) setLogs((l) => (l.source ? l : { ...l, source: list[0]!.alias }), { replace: true });
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
  const total = histogram.data && !histogram.isPlaceholderData ? histogram.data.result.reduce((n, b) => n + b.count, 0) : undefined;
  const comparedProgress = comparedHistogram.data && !comparedHistogram.isPlaceholderData ? searchProgress(comparedHistogram.data.scanned, comparedRange ?? {}) : null;
  const compared = useMemo(() => {
    const h = histogram.data;
    const c = comparedHistogram.data;
    if (!compare || !h || !c || compareShift === null || c.width !== h.width) return null;
    return { counts: alignPrevious(h.result, h.width, c.result, compareShift), label: COMPARE_LABELS[compare], partial: comparedHistogram.isPlaceholderData || comparedProgress?.complete === false };
  }, [compare, histogram.data, comparedHistogram.data, comparedHistogram.isPlaceholderData, compareShift, comparedProgress?.complete]);
  // Function ids read as their slugs, where a loaded record names one.
  const slugs = useMemo(() => new Map(items.filter((r) => r.fields.function_id && r.fields.function_slug).map((r) => [r.fields.function_id!, r.fields.function_slug!])), [items]);
  // A text search's aggregates are partial until the server's walk has covered the range.
  const progress = histogram.data && !histogram.isPlaceholderData ? searchProgress(histogram.data.scanned, range ?? {}) : null;
  const facetProgress = facets.data && !facets.isPlaceholderData ? searchProgress(facets.data.scanned, range ?? {}) : null;
  // Nothing matches in the whole range: the table has nothing to continue to.
  const nothingMatches = total === 0 && progress?.complete === true;
  const paging: PagingState = nothingMatches ? { kind: 'none' } : pagingState(logs.data?.pages[logs.data.pages.length - 1], items.length, range?.start);

  const selection = useRecordSelection(items, paramsKey);

  const highlight = useMemo(() => makeHighlighter(q, regex), [q, regex]);

  // A search someone submitted (Enter, Search, the regex toggle) is remembered in the recent
  // searches once its first page has come back: not a facet click, a zoom or a chip,
  // and never a pattern RE2 refuses (it is not sent at all).
  const submitted = useRef<{ q: string; regex: boolean } | null>(null);
  const firstPageOk = logs.isSuccess && !logs.isPlaceholderData;
  useEffect(() => {
    const s = submitted.current;
    if (!firstPageOk || !s || s.q !== q || s.regex !== regex || !q) return;
    submitted.current = null;
    void recordSearch('logs', encodeView(view).split('?')[1] ?? '', searchLabel(source, view.logs, range));
    // Keyed by the request only: the search is recorded once, when its answer arrives.
  }, [firstPageOk, paramsKey]);

  const include = (field: FilterField, value: string) => setLogs((l) => ({ ...l, filters: addFilter(l.filters ?? [], { field, value, exclude: false }) }));
  const exclude = (field: FilterField, value: string) => setLogs((l) => ({ ...l, filters: addFilter(l.filters ?? [], { field, value, exclude: true }) }));
  const remove = (field: FilterField, value: string) => setLogs((l) => ({ ...l, filters: removeFilter(l.filters ?? [], { field, value }) }));
  const setRange = (start: number, end: number) => setLogs((l) => ({ ...l, range: 'custom', start, end }));

  const [exportOpen, setExportOpen] = useState(false);
  const fileBase = `logs_${source?.alias ?? 'source'}_${view.project ?? 'all'}_${fileStamp(now)}`;
  const columns = source?.columns ?? [];
  // What the table shows: the loaded matching rows, in the source's columns (the buttons and the
  // desktop menu's Export Current View; "Export all matching…" is the server-side export of all).
  const currentView = {
    what: 'loaded log records',
    fileBase: `${fileBase}_loaded`,
    rows: items,
    csvRows: () =>
      items.map((r) => {
        const row: Record<string, unknown> = { id: r.id, timestamp: r.timestamp, timestamp_iso: formatIsoMicros(r.timestamp) };
        for (const c of columns) if (c !== 'timestamp' && c !== 'event_message') row[c] = r.fields[c];
        // Columns on fields inside the records, by their path.
        for (const p of fx.fieldColumns) row[p] = fieldText(valueAtPath(r.metadata, p));
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
          <ViewActions curl={{ search: logsUrl('', params ?? {}) }} shown={currentView}>
            <button type="button" className="btn btn--small" disabled={!params} onClick={() => setExportOpen(true)} data-testid="export-all" title="Download every record that matches, not only the loaded ones">
              Export all matching…
            </button>
            <LiveToggle params={params} paused={selection.selectedId !== null} onResume={selection.clear} />
          </ViewActions>
        }
        description={
          <>
            <strong>Explorer</strong> · every imported source, searched and filtered by the server{source ? ` · ${source.label} (${source.alias})` : ''} · times in {zoneLabel(timeMode)}
          </>
        }
      />

      <Toolbar className="ex-toolbar">
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
      </Toolbar>

      <SearchBar
        q={q}
        regex={regex}
        what={source?.fields.includes('path') ? 'messages and paths' : 'messages'}
        onSearch={(text, re) => {
          submitted.current = text ? { q: text, regex: re } : null;
          setLogs((l) => ({ ...l, q: text, regex: re }));
        }}
      />
      {source && (
        <ExplorerChips
          filters={filters}
          fields={source.fields}
          onRemove={(f) => remove(f.field, f.value)}
          onFlip={(f) => setLogs((l) => ({ ...l, filters: addFilter(l.filters ?? [], { ...f, exclude: !f.exclude }) }))}
          onAdd={(f: LogFilter) => setLogs((l) => ({ ...l, filters: addFilter(l.filters ?? [], f) }))}
          onClear={() => setLogs((l) => ({ ...l, filters: [], fieldFilters: [] }))}
          extra={fx.chips}
          extraCount={fx.filters.length}
          actions={fx.picker}
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
      ) : patternProblem !== null ? (
        <ErrorPanel
          title="The search pattern is not valid RE2; nothing was sent"
          error={new ApiError({ code: 0, status: 'INVALID', message: `q is not a valid RE2 pattern: ${patternProblem}`, errors: [{ reason: 'invalid', location: 'q', message: patternProblem }] })}
        />
      ) : logs.isError ? (
        <ErrorPanel error={logs.error} onRetry={() => void logs.refetch()} />
      ) : (
        <div className="ex-body">
          <ExplorerFacets
            fields={source?.fields ?? []}
            answer={withNoStatus(facets.data, histogram.isPlaceholderData ? undefined : histogram.data)}
            note={facetProgress && !facetProgress.complete && facetProgress.through !== null ? `Counted back to ${formatDateTime(facetProgress.through, 'second', zoneOf(timeMode))} so far…` : null}
            // Changes only between finished counts: a partial count against a whole one says nothing.
            compared={
              compare
                ? {
                    answer:
                      facetProgress?.complete && comparedFacets.data && !comparedFacets.isPlaceholderData && searchProgress(comparedFacets.data.scanned, comparedRange ?? {}).complete
                        ? withNoStatus(comparedFacets.data, comparedHistogram.isPlaceholderData ? undefined : comparedHistogram.data)
                        : undefined,
                    label: COMPARE_LABELS[compare],
                  }
                : null
            }
            labelOf={(field, value) => (field === 'function_id' ? (slugs.get(String(value)) ?? null) : null)}
            loading={facets.isPending}
            busy={facets.isPlaceholderData}
            error={facets.isError ? facets.error.message : null}
            filters={filters}
            onInclude={include}
            onExclude={exclude}
            onRemove={remove}
          >
            {fx.facets}
          </ExplorerFacets>
          <div className="ex-main">
            {range && range.start !== undefined && range.end !== undefined && (
              <div className="ex-rangebar">
                <span className="muted small" data-testid="range-text">
                  {/* (start, end] is [start + 1 µs, end + 1 µs): whole seconds read as such, not as :59.999999. */}
                  {formatRange(range.start + 1, range.end + 1, 'second', zoneOf(timeMode))}
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
                <label className="ex-compare">
                  <ComparePicker
                    compact
                    title="Draw another period over the histogram and show each facet value’s change"
                    value={compare}
                    onChange={(c) => setLogs((l) => withCompare(l, c))}
                  />
                </label>
                {total !== undefined && progress && (
                  <span className="small ex-rangebar__total" data-testid="match-total" data-complete={progress.complete}>
                    {matchCountText(total, progress)}
                  </span>
                )}
                {fx.chooser}
              </div>
            )}
            {histogram.isError ? (
              <div className="notice notice--warn">{histogram.error.message}</div>
            ) : histogram.data ? (
              <ExplorerHistogram
                answer={histogram.data}
                range={range ?? {}}
                theme={theme}
                busy={histogram.isPlaceholderData}
                progress={progress}
                compared={compared}
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
            {total === 0 && !q && !narrowed && <ClockHint what={source ? `${source.label.toLowerCase()} logs` : 'logs'} source={sourceOf(sources.data, source?.source ?? '')} />}
            {!logs.data ? (
              <TableSkeleton />
            ) : (
              <LogResults
                items={items}
                selection={selection}
                refetching={logs.isPlaceholderData}
                fetching={logs.isFetching}
                columns={fx.tableColumns(selection.selected !== null)}
                onResize={fx.onResize}
                wrap={fx.wrap}
                dense={fx.dense}
                highlight={highlight}
                empty={
                  paging.kind === 'continue' ? (
                    <>No matches yet: the search looked back to {formatDateTime(paging.through, 'second', zoneOf(timeMode))}. Continue below to search further.</>
                  ) : (
                    <>No records match{q || narrowed ? ' this search' : ''} in this range.</>
                  )
                }
                footer={
                  <>
                    <span data-testid="logs-count">
                      {formatInt(items.length)}
                      {total !== undefined ? ` of ${progress?.complete === false ? 'at least ' : ''}${formatInt(total)} matching` : ''} {items.length === 1 && total === undefined ? 'record' : 'records'} loaded · newest first
                    </span>
                    {paging.kind === 'continue' ? (
                      <MoreRows pages={logs} testId="scan-continue" loadingLabel="Searching…">
                        {`Searched back to ${formatDateTime(paging.through, 'second', zoneOf(timeMode))} — continue`}
                      </MoreRows>
                    ) : paging.kind === 'older' ? (
                      <MoreRows pages={logs} testId="load-older" loadingLabel="Loading…">
                        {`Load older (${EXPLORER_PAGE_SIZE} more)`}
                      </MoreRows>
                    ) : (
                      paging.kind === 'end' && <EndOfRange />
                    )}
                  </>
                }
                detail={(record) => <LogDetail record={record} onClose={selection.closeDetail} onFieldFilter={fx.addFilter} now={now} />}
              />
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

  // A pattern RE2 refuses stays in the box with the engine's reason; nothing is sent or recorded.
  const [problem, setProblem] = useState<string | null>(null);
  const run = async (text: string, re: boolean) => {
    const t = re ? text : text.trim();
    const p = re && t ? await re2Problem(t) : null;
    setProblem(p);
    if (p === null) onSearch(t, re);
  };
  const highlightable = canHighlight(q, regex);

  return (
    <form
      className="ex-search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        void run(draft, regex);
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
          aria-invalid={problem !== null}
          aria-describedby={problem !== null ? 'search-problem' : undefined}
          onChange={(e) => {
            setDraft(e.target.value);
            setProblem(null);
            // The field's clear button (or deleting everything) shows everything again at once.
            if (e.target.value === '' && q !== '') void run('', regex);
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
        onClick={() => void run(draft, !regex)}
        data-testid="regex-toggle"
      >
        .*
      </button>
      <button type="submit" className="btn btn--small btn--primary" data-testid="search-submit">
        Search
      </button>
      {problem !== null ? (
        <span className="field-error small" id="search-problem" role="alert" data-testid="search-problem">
          Not a valid RE2 pattern: {problem}
        </span>
      ) : (
        draft !== q && <span className="muted small">Enter to search</span>
      )}
      {!highlightable && <span className="muted small" data-testid="no-highlight">Matches are not highlighted: the browser cannot run this pattern safely</span>}
    </form>
  );
}
