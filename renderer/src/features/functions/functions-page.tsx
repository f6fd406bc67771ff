import { useMemo, useRef, useState, type ReactNode } from 'react';
import { Bar, CartesianGrid, Cell, ComposedChart, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { InvocationStatsRow } from '../../../../contract/api-types.ts';
import { useClock, useSources } from '../../api/hooks.ts';
import { useView } from '../../app-state.tsx';
import { useIntervalRules } from '../../api/rules.ts';
import { FUNCTION_INTERVALS, INVOCATION_STATS, type FunctionInterval } from '../../../../contract/registry.ts';
import { ChartLegend, useSeriesToggle, type LegendItem } from '../../ui/chart-legend.tsx';
import { BucketTooltip, type TooltipNote } from '../../ui/chart-tooltip.tsx';
import { EmptyState } from '../../ui/empty-state.tsx';
import { ErrorPanel } from '../../ui/error-panel.tsx';
import { fileStamp, useExportCurrentView } from '../../lib/view-export.ts';
import { Field } from '../../ui/field.tsx';
import { Freshness } from '../../ui/freshness.tsx';
import { EndpointPageHeader, Toolbar } from '../../ui/page-header.tsx';
import { allTimeCount, allTimeHint, ProjectPicker } from '../../ui/project-picker.tsx';
import { Segmented } from '../../ui/segmented.tsx';
import { ChartSkeleton, StatsSkeleton, TableSkeleton } from '../../ui/skeleton.tsx';
import { Stat } from '../../ui/stat.tsx';
import { ClockHint } from '../../ui/clock-hint.tsx';
import { COMPARE_LABELS, compareOffset, comparedBuckets, withCompare } from '../../lib/compare.ts';
import { ComparePicker } from '../../ui/compare-picker.tsx';
import { bucketStarts, isUtcDayUnit, seriesOf, spanLabel, unitName, unitPrecision } from '../../lib/buckets.ts';
import { formatAxisMs, formatCompact, formatInt, formatMs, formatPercent } from '../../lib/format.ts';
import { chartPalette, type ChartPalette } from '../../lib/theme.ts';
import { clampForLog, logAxis } from './chart-scale.ts';
import { MICROS } from '../../../../contract/instants.ts';
import { localZoneName, formatRange, formatShortDate, formatTime } from '../../lib/time.ts';
import { functionsRequest } from '../../lib/view-request.ts';
import { bucketPercentileKind, percentileAccuracy, summarizeInvocations } from './stats.ts';
import { FUNCTION_SOURCE, sourceOf, useSourceProjects } from '../../lib/source-projects.ts';
import { useFunctionBuckets, useFunctionTable, useFunctionTotal, useInvocationStats } from './functions-api.ts';
import { FunctionTable, percentileNote } from './function-table.tsx';
import './functions.css';

/** "Invocations per hour": the bucket unit from the listing; day buckets are UTC days. */
function perUnit(unit: number): string {
  return `per ${unitName(unit)}${isUtcDayUnit(unit) ? ' (UTC days)' : ''}`;
}

function tickFormat(unit: number): (us: number) => string {
  if (unit < MICROS.minute) return (us) => formatTime(us, 'second');
  // Day buckets are UTC days; a local date could name the day before.
  if (isUtcDayUnit(unit)) return (us) => formatShortDate(us, 'UTC');
  return (us) => formatTime(us, 'minute');
}

/** A window's range: in UTC for UTC day buckets (their labels are UTC days), else local. */
function windowRange(start: number, end: number, unit: number): string {
  return isUtcDayUnit(unit) ? `${formatRange(start, end, unitPrecision(unit), 'UTC')} UTC` : formatRange(start, end, unitPrecision(unit));
}

/** The bucket starting at `start` as both charts' tooltips title it: its range, UTC first for UTC day buckets. */
function bucketSpan(start: number, unit: number) {
  return { start, end: start + unit, precision: unitPrecision(unit), utc: isUtcDayUnit(unit) };
}

/** A bucket's p95/p99 accuracy for the tooltip and the chart's note, worded by stats.ts. */
function bucketAccuracy(unit: number): TooltipNote {
  const kind = bucketPercentileKind(unit);
  const how = kind === 'exact' ? '' : ` · from ${unitName(unit)} sketches`;
  return { kind, text: `p95/p99 ${percentileAccuracy(kind, 'bucket')}${how}` };
}

interface Datum extends InvocationStatsRow {
  ok: number;
  /** The compared period's invocations in this bucket (null: not compared, or not known). */
  prev: number | null;
  /** The compared period's p95 in this bucket, ms (null: not compared, not known, or no timed invocation). */
  prev_p95: number | null;
  /** The bucket holds now: it is still filling. */
  partial: boolean;
}

/** A bucket still filling is drawn this much lighter, so it does not read as a drop. */
const PARTIAL_OPACITY = 0.45;

export function FunctionsPage() {
  const { view, update, theme } = useView();
  const clock = useClock();
  const sources = useSources();
  const { projects, hasData, loading: sourcesLoading, source } = useSourceProjects(FUNCTION_SOURCE);
  const request = functionsRequest(view);
  const stats = useInvocationStats(request ? { project: request.params.project ?? '', function_id: request.params.function_id ?? '', interval: request.params.interval ?? '' } : null);
  const rules = useIntervalRules(INVOCATION_STATS);
  const palette = chartPalette(theme);
  const rows = stats.data?.rows;
  // While a new interval loads, the previous rows stay on screen with their own bucket size.
  const interval = (FUNCTION_INTERVALS as readonly string[]).includes(stats.data?.interval ?? '') ? (stats.data!.interval as FunctionInterval) : view.functions.interval;
  // Windows and bucket units are the registry's (GET /api/endpoints), never restated here.
  const spec = rules.data ? seriesOf(rules.data, interval) : undefined;
  const unit = spec?.unit;
  const tableSeries = rules.data ? seriesOf(rules.data, view.functions.interval) : undefined;
  const tableUnit = tableSeries?.unit;
  const errorAtLeast = rules.data?.errorStatusAtLeast;
  const errorRule = errorAtLeast !== undefined ? `status ≥ ${errorAtLeast}` : 'error status';
  const intervalLabels = useMemo(() => {
    const windows = rules.data?.windows;
    return Object.fromEntries(FUNCTION_INTERVALS.map((i) => [i, windows?.[i] ? spanLabel(windows[i].span) : i])) as Record<FunctionInterval, string>;
  }, [rules.data]);

  const functionOptions = useMemo(
    () => (source?.functionIds ?? []).filter((f) => f.project === view.project).sort((a, b) => b.count - a.count),
    [source, view.project],
  );

  // Every function of the project over the whole window: the table, the picker's slugs and the
  // headline's period percentiles (per-bucket percentiles cannot give the period's).
  const tableParams = view.project ? { project: view.project, interval: view.functions.interval } : null;
  const table = useFunctionTable(tableParams);
  const total = useFunctionTotal(tableParams);
  const tableRows = table.data?.rows;
  const currentRows = table.data && !table.isPlaceholderData ? table.data.rows : undefined;
  const slugs = useMemo(() => new Map((tableRows ?? []).map((r) => [r.functionId, r.slug])), [tableRows]);
  const period = view.functions.fn ? currentRows?.find((r) => r.functionId === view.functions.fn) : total.data;
  const periodPending = view.functions.fn ? !currentRows : total.isPending;
  const percentiles = total.data?.percentiles ?? currentRows?.[0]?.percentiles;
  const selectedName = view.functions.fn ? (slugs.get(view.functions.fn) ?? view.functions.fn) : null;
  const tableWindow = total.data && tableUnit !== undefined ? windowRange(total.data.window.start, total.data.window.end, tableUnit) : '';
  const chartRef = useRef<HTMLElement>(null);
  const pickerLabel = (functionId: string, count: number) => {
    const slug = slugs.get(functionId);
    return `${slug ? `${slug} · ` : ''}${functionId} · ${allTimeCount(count)}`;
  };

  // The compared period: the chart's buckets over its window moved back, counted by the
  // endpoint's own rules for that window (GET /api/functions/buckets), so the compared count and
  // p95 of each bucket mean what the current ones do.
  const compare = view.functions.compare;
  const chartWindow = rows && rows.length > 0 && spec ? { start: rows[0]!.timestamp, end: rows[rows.length - 1]!.timestamp + spec.unit } : null;
  const compareShift = compare && chartWindow ? compareOffset(compare, chartWindow.end - chartWindow.start) : null;
  const compared = useFunctionBuckets(
    chartWindow && compareShift !== null && view.project && spec
      ? { project: view.project, functionId: view.functions.fn, start: chartWindow.start - compareShift, end: chartWindow.end - compareShift, width: unitName(spec.unit) }
      : null,
  );
  const prevRows = useMemo(() => (compared.data && rows && compareShift !== null ? comparedBuckets(rows, compared.data, compareShift) : null), [compared.data, rows, compareShift]);
  const prevTotal = prevRows?.reduce<number>((n, r) => n + (r?.count ?? 0), 0) ?? null;
  const nowUs = clock.data?.now;
  const data: Datum[] = useMemo(
    () =>
      (rows ?? []).map((r, i) => ({
        ...r,
        ok: r.count - r.error_count,
        prev: prevRows?.[i]?.count ?? null,
        prev_p95: prevRows?.[i]?.p95_execution_time ?? null,
        partial: nowUs !== undefined && spec !== undefined && r.timestamp <= nowUs && nowUs < r.timestamp + spec.unit,
      })),
    [rows, prevRows, nowUs, spec],
  );
  const summary = useMemo(() => summarizeInvocations(rows ?? []), [rows]);
  const windowText = useMemo(() => {
    if (!spec) return '';
    if (rows && rows.length > 0) {
      const first = rows[0]!.timestamp;
      const last = rows[rows.length - 1]!.timestamp;
      return `${windowRange(first, last + spec.unit, spec.unit)} · ${rows.length} buckets`;
    }
    if (clock.data) return `${bucketStarts(clock.data.now, spec).length} buckets`;
    return '';
  }, [rows, clock.data, spec]);
  const bars = useSeriesToggle(BAR_KEYS);
  const barItems: Array<LegendItem<BarKey>> = [
    { key: 'ok', label: 'OK', color: palette.ok },
    { key: 'error_count', label: `Errors${errorAtLeast !== undefined ? ` (≥ ${errorAtLeast})` : ''}`, color: palette.error },
  ];
  // The charts render only once the unit is known; the default never reaches an axis.
  const fmtTick = tickFormat(unit ?? MICROS.minute);
  const fileBase = `invocation-stats_${view.project ?? 'none'}_${view.functions.interval}${view.functions.fn ? `_${view.functions.fn}` : ''}_${fileStamp(clock.data?.now)}`;
  // The current view (desktop menu's Export Current View): the buckets the charts draw.
  const currentView = { what: 'invocation stats', fileBase, rows };
  useExportCurrentView(currentView);

  const noSources = !sourcesLoading && sources.data !== undefined && !hasData;

  return (
    <div className="page" data-testid="functions-page">
      <EndpointPageHeader
        title="Edge Functions"
        endpoint="functions.invocation-stats"
        description="Invocations, errors and execution time of a project’s edge functions, per time bucket."
        request={request}
        shown={currentView}
      />
      <Toolbar>
        <ProjectPicker projects={projects} value={view.project} unit="invocations" onChange={(ref) => update((v) => ({ ...v, project: ref, functions: { ...v.functions, fn: '' } }))} />
        <Field label="Function" htmlFor="function-picker">
          <select
            id="function-picker"
            className="select select--mono"
            value={view.functions.fn}
            data-testid="function-picker"
            title={allTimeHint('invocations')}
            onChange={(e) => update((v) => ({ ...v, functions: { ...v.functions, fn: e.target.value } }))}
          >
            <option value="">All functions ({functionOptions.length})</option>
            {view.functions.fn && !functionOptions.some((f) => f.functionId === view.functions.fn) && <option value={view.functions.fn}>{view.functions.fn}</option>}
            {functionOptions.map((f) => (
              <option key={f.functionId} value={f.functionId}>
                {pickerLabel(f.functionId, f.count)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Interval">
          <Segmented
            label="Interval"
            testId="interval"
            options={FUNCTION_INTERVALS}
            labels={intervalLabels}
            value={view.functions.interval}
            onChange={(i) => update((v) => ({ ...v, functions: { ...v.functions, interval: i } }))}
          />
        </Field>
        <Field label="Compare" htmlFor="fn-compare">
          <ComparePicker
            id="fn-compare"
            title="Draw another period’s invocations and p95 over the charts"
            value={compare}
            onChange={(c) => update((v) => ({ ...v, functions: withCompare(v.functions, c) }))}
          />
        </Field>
        <Freshness source={FUNCTION_SOURCE} project={view.project} />
      </Toolbar>

      {noSources ? (
        <EmptyState title="No edge function logs yet">
          <p>
            This page reads <code>deno-relay-logs</code> (Supabase’s <code>function_edge_logs</code>). Import an export of it — NDJSON, JSON or the CSV the log explorer downloads — or
            load the demo data.
          </p>
        </EmptyState>
      ) : stats.isError ? (
        <ErrorPanel error={stats.error} onRetry={() => void stats.refetch()} />
      ) : rules.isError ? (
        <ErrorPanel error={rules.error} onRetry={() => void rules.refetch()} />
      ) : !rows || !view.project || unit === undefined ? (
        <>
          <StatsSkeleton count={5} />
          <div className="card">
            <TableSkeleton rows={4} />
          </div>
          <ChartSkeleton />
          <ChartSkeleton />
        </>
      ) : (
        <div className={`page-body${stats.isFetching ? ' is-refetching' : ''}`} aria-busy={stats.isFetching}>
          <div className="stats" data-testid="headline">
            <Stat label="Invocations" testId="stat-invocations" value={formatInt(summary.invocations)} note={`${summary.activeBuckets} of ${rows.length} buckets active`} />
            <Stat
              label="Errors"
              testId="stat-errors"
              tone={summary.errors > 0 ? 'error' : undefined}
              value={formatInt(summary.errors)}
              note={<span data-testid="stat-error-rate">{formatPercent(summary.errorRate)} error rate ({errorRule})</span>}
            />
            <Stat
              label="Avg execution"
              testId="stat-avg"
              value={formatMs(summary.avgMs)}
              note="bucket averages weighted by invocations"
            />
            <Stat
              label="p95 · period"
              testId="stat-p95"
              value={periodPending ? '…' : formatMs(period?.p95Ms)}
              note={percentiles ? `whole window, ${percentileAccuracy(percentiles, 'window')}` : 'whole window'}
              hint={percentiles ? `Over every invocation of the window, not per bucket: ${percentileNote(percentiles, tableUnit)}.` : undefined}
            />
            <Stat
              label="p99 · period"
              testId="stat-p99"
              value={periodPending ? '…' : formatMs(period?.p99Ms)}
              note={<span data-testid="stat-max">max {formatMs(summary.maxMs)}</span>}
              hint={percentiles ? `Over every invocation of the window, not per bucket: ${percentileNote(percentiles, tableUnit)}.` : undefined}
            />
          </div>

          {summary.invocations === 0 && <ClockHint what="invocations" source={sourceOf(sources.data, FUNCTION_SOURCE)} />}

          <FunctionTable
            rows={tableRows}
            loading={table.isPending}
            refetching={table.isPlaceholderData || (table.isFetching && !table.isPending)}
            error={table.isError ? table.error : null}
            onRetry={() => void table.refetch()}
            project={view.project}
            countedWindow={total.data && total.data.window.interval === view.functions.interval ? total.data.window : undefined}
            selected={view.functions.fn}
            percentiles={percentiles}
            unitUs={tableUnit}
            errorStatusAtLeast={errorAtLeast}
            windowText={tableWindow}
            onChart={(fn) => {
              update((v) => ({ ...v, functions: { ...v.functions, fn } }));
              chartRef.current?.scrollIntoView({ behavior: 'smooth', block: 'start' });
            }}
            onLogs={(href) => {
              // Entered through the URL, as back/forward do: the Logs page takes every filter it knows from it.
              history.pushState(null, '', href);
              window.dispatchEvent(new PopStateEvent('popstate'));
            }}
          />

          <section className="card fn-chart-anchor" data-testid="chart-invocations" ref={chartRef}>
            <div className="card__head">
              <h2>
                Invocations {perUnit(unit)}{' '}
                {selectedName && (
                  <span className="fn-chart-fn" data-testid="chart-function">
                    · {selectedName}
                  </span>
                )}{' '}
                <span className="card__note" data-testid="window">
                  · {windowText}
                </span>
              </h2>
              <div className="card__tools">
                <ChartLegend items={barItems} toggle={bars} label="Invocation series" testId="legend-invocations" />
                {compare && (
                  <ComparedLegend testId="legend-compared" color={palette.axis} title="The compared period’s invocations per bucket (the dashed line)" error={compared.error}>
                    {COMPARE_LABELS[compare]} · {prevTotal === null ? '…' : `${formatInt(prevTotal)}${changeText(summary.invocations, prevTotal)}`}
                  </ComparedLegend>
                )}
              </div>
            </div>
            <div className="chart" style={{ height: 220 }}>
              <ResponsiveContainer width="100%" height="100%">
                {/* The same plot area as the execution chart below (margins, axis width, band x axis), so their buckets line up. */}
                <ComposedChart data={data} margin={CHART_MARGIN} barCategoryGap={data.length > 100 ? 0 : '15%'}>
                  <CartesianGrid stroke={palette.grid} vertical={false} />
                  <XAxis dataKey="timestamp" tickFormatter={fmtTick} stroke={palette.axis} tick={{ fontSize: 11 }} minTickGap={28} tickLine={false} />
                  <YAxis allowDecimals={false} stroke={palette.axis} tick={{ fontSize: 11 }} tickFormatter={formatCompact} width={Y_AXIS_WIDTH} axisLine={false} tickLine={false} />
                  <Tooltip
                    cursor={{ fill: palette.cursor }}
                    isAnimationActive={false}
                    content={({ active, payload }) => {
                      const d = payload?.[0]?.payload as Datum | undefined;
                      if (!active || !d) return null;
                      const rows = [
                        { label: 'Invocations', value: formatInt(d.count), strong: true },
                        { label: 'OK', value: formatInt(d.ok), color: palette.ok },
                        { label: 'Errors', value: `${formatInt(d.error_count)}${d.count ? ` (${formatPercent(d.error_count / d.count)})` : ''}`, color: palette.error },
                      ];
                      if (compare) rows.push({ label: COMPARE_LABELS[compare], value: d.prev === null ? '…' : `${formatInt(d.prev)}${changeText(d.count, d.prev)}`, color: palette.axis });
                      return (
                        <BucketTooltip
                          {...bucketSpan(d.timestamp, unit)}
                          rows={rows}
                          note={d.partial ? { kind: 'partial', text: `In progress: this ${unitName(unit)} runs past now, so it holds less than a whole one` } : undefined}
                        />
                      );
                    }}
                  />
                  {bars.shown('ok') && (
                    <Bar dataKey="ok" name="OK" stackId="n" fill={palette.ok} isAnimationActive={false}>
                      {data.map((d) => (
                        <Cell key={d.timestamp} fillOpacity={d.partial ? PARTIAL_OPACITY : 1} />
                      ))}
                    </Bar>
                  )}
                  {bars.shown('error_count') && (
                    <Bar dataKey="error_count" name="Errors" stackId="n" fill={palette.error} isAnimationActive={false}>
                      {data.map((d) => (
                        <Cell key={d.timestamp} fillOpacity={d.partial ? PARTIAL_OPACITY : 1} />
                      ))}
                    </Bar>
                  )}
                  {compare && <Line dataKey="prev" name={COMPARE_LABELS[compare]} type="linear" stroke={palette.axis} strokeWidth={1.5} strokeDasharray="4 3" dot={false} activeDot={false} connectNulls={false} isAnimationActive={false} />}
                </ComposedChart>
              </ResponsiveContainer>
            </div>
          </section>

          <ExecutionChart data={data} unit={unit} palette={palette} fmtTick={fmtTick} compared={compare ? { label: COMPARE_LABELS[compare], error: compared.error } : null} />
          <p className="footnote">
            {isUtcDayUnit(unit) ? `Day buckets are UTC days, written in UTC; hover one for its range in ${localZoneName()}.` : `Times are in ${localZoneName()}; hover a bucket for its UTC range.`} Windows are
            computed from the server’s clock; the bucket that holds now is drawn lighter, as it is still filling.
          </p>
        </div>
      )}
    </div>
  );
}

/** Both charts' plot areas: room on the right for the last time label, one y axis width. */
const CHART_MARGIN = { top: 8, right: 24, bottom: 0, left: 0 };
const Y_AXIS_WIDTH = 52;

/** The compared series' legend entry: a dashed swatch and its text; the request's error on hover when it failed. */
function ComparedLegend({ testId, color, title, error, children }: { testId: string; color: string; title: string; error: Error | null; children: ReactNode }) {
  return (
    <span className="fn-compared" data-testid={testId} title={error ? `The compared period could not be read: ${error.message}` : title}>
      <span className="ex-legend__line" style={{ borderColor: color }} aria-hidden="true" />
      {error ? <span className="text-error">unavailable</span> : children}
    </span>
  );
}

/** ` · now +12%` after a compared count. */
function changeText(now: number, before: number): string {
  if (before === 0) return now === 0 ? '' : ' (new)';
  const pct = Math.round(((now - before) / before) * 100);
  return ` · now ${pct >= 0 ? '+' : '−'}${Math.abs(pct)}%`;
}

const BAR_KEYS = ['ok', 'error_count'] as const;
type BarKey = (typeof BAR_KEYS)[number];

const SERIES = [
  { key: 'avg_execution_time', name: 'avg', color: 'avg', dashed: false },
  { key: 'p95_execution_time', name: 'p95', color: 'p95', dashed: false },
  { key: 'p99_execution_time', name: 'p99', color: 'p99', dashed: false },
  { key: 'max_execution_time', name: 'max', color: 'max', dashed: true },
] as const;

type SeriesKey = (typeof SERIES)[number]['key'];
const SERIES_KEYS: readonly SeriesKey[] = SERIES.map((s) => s.key);

/**
 * avg/p95/p99/max per bucket. Log scale by default: one slow outlier would otherwise press
 * the typical times flat against the axis. Legend entries toggle their series.
 */
function ExecutionChart({
  data,
  unit,
  palette,
  fmtTick,
  compared,
}: {
  data: Datum[];
  unit: number;
  palette: ChartPalette;
  fmtTick: (us: number) => string;
  /** The compared period's p95 is drawn as a dashed line (null: not comparing). */
  compared: { label: string; error: Error | null } | null;
}) {
  const [scale, setScale] = useState<'log' | 'linear'>('log');
  const series = useSeriesToggle(SERIES_KEYS);
  const { hidden } = series;
  const shown = SERIES.filter((s) => !hidden.has(s.key));
  const accuracy = bucketAccuracy(unit);
  const comparing = compared !== null;
  const axis = useMemo(
    () => logAxis(data.flatMap((d) => [...SERIES.filter((s) => !hidden.has(s.key)).map((s) => d[s.key]), ...(comparing ? [d.prev_p95] : [])])),
    [data, hidden, comparing],
  );
  // Plotted copies: on a log axis a 0 ms value sits on the floor; the tooltip reads the originals.
  const plotted = useMemo(
    () =>
      scale === 'linear'
        ? data
        : data.map((d) => ({
            ...d,
            plot_avg_execution_time: clampForLog(d.avg_execution_time, axis.domain[0]),
            plot_p95_execution_time: clampForLog(d.p95_execution_time, axis.domain[0]),
            plot_p99_execution_time: clampForLog(d.p99_execution_time, axis.domain[0]),
            plot_max_execution_time: clampForLog(d.max_execution_time, axis.domain[0]),
            plot_prev_p95: clampForLog(d.prev_p95, axis.domain[0]),
          })),
    [data, scale, axis],
  );
  const items: Array<LegendItem<SeriesKey>> = SERIES.map((s) => ({ key: s.key, label: s.name, color: palette[s.color], shape: s.dashed ? 'dashed' : 'line' }));
  return (
    <section className="card" data-testid="chart-execution">
      <div className="card__head">
        <h2>
          Execution time {perUnit(unit)}{' '}
          <span className="card__note">
            · ms ·{' '}
            <span data-testid="execution-accuracy" data-kind={accuracy.kind}>
              {accuracy.text}
            </span>{' '}
            · gaps are buckets without invocations
          </span>
        </h2>
        <div className="card__tools">
          <ChartLegend items={items} toggle={series} label="Execution time series" testId="legend-execution" />
          {compared && (
            <ComparedLegend testId="legend-compared-p95" color={palette.axis} title="The compared period’s p95 per bucket (the grey dashed line)" error={compared.error}>
              p95 · {compared.label}
            </ComparedLegend>
          )}
          <Segmented label="Y axis scale" options={['log', 'linear'] as const} labels={{ log: 'Log', linear: 'Linear' }} value={scale} onChange={setScale} testId="y-scale" />
        </div>
      </div>
      <div className="chart" style={{ height: 240 }}>
        <ResponsiveContainer width="100%" height="100%">
          <ComposedChart data={plotted} margin={CHART_MARGIN}>
            <CartesianGrid stroke={palette.grid} vertical={false} />
            <XAxis dataKey="timestamp" scale="band" tickFormatter={fmtTick} stroke={palette.axis} tick={{ fontSize: 11 }} minTickGap={28} tickLine={false} />
            {scale === 'log' ? (
              <YAxis
                scale="log"
                domain={axis.domain}
                ticks={axis.ticks}
                allowDataOverflow
                stroke={palette.axis}
                tick={{ fontSize: 11 }}
                tickFormatter={formatAxisMs}
                width={Y_AXIS_WIDTH}
                axisLine={false}
                tickLine={false}
              />
            ) : (
              <YAxis stroke={palette.axis} tick={{ fontSize: 11 }} tickFormatter={formatAxisMs} width={Y_AXIS_WIDTH} axisLine={false} tickLine={false} />
            )}
            <Tooltip
              isAnimationActive={false}
              // An empty bucket has only null values; kept, so its tooltip says it is empty.
              filterNull={false}
              content={({ active, payload }) => {
                const d = payload?.[0]?.payload as Datum | undefined;
                if (!active || !d) return null;
                return (
                  <BucketTooltip
                    {...bucketSpan(d.timestamp, unit)}
                    note={accuracy}
                    rows={[
                      ...SERIES.flatMap((s) => [
                        { label: s.name, value: formatMs(d[s.key]), color: palette[s.color] },
                        // The compared p95 right under the current one, to read them together.
                        ...(compared && s.key === 'p95_execution_time' ? [{ label: `p95 · ${compared.label}`, value: d.prev === null ? '…' : formatMs(d.prev_p95), color: palette.axis }] : []),
                      ]),
                      { label: 'min', value: formatMs(d.min_execution_time) },
                      { label: 'invocations', value: formatInt(d.count) },
                    ]}
                    footer={d.count === 0 ? 'No invocations in this bucket' : undefined}
                  />
                );
              }}
            />
            {/* Under the current series: the compared period is the background to read them against. */}
            {compared && (
              <Line
                type="linear"
                dataKey={scale === 'log' ? 'plot_prev_p95' : 'prev_p95'}
                name={`p95 · ${compared.label}`}
                stroke={palette.axis}
                strokeWidth={1.5}
                strokeDasharray="4 3"
                dot={(props: { cx?: number; cy?: number; index?: number }) => <IsolatedDot key={`prev-${props.index}`} {...props} data={data} field="prev_p95" color={palette.axis} />}
                activeDot={{ r: 3 }}
                connectNulls={false}
                isAnimationActive={false}
              />
            )}
            {shown.map((s) => (
              <Line
                key={s.key}
                type="linear"
                dataKey={scale === 'log' ? `plot_${s.key}` : s.key}
                name={s.name}
                stroke={palette[s.color]}
                strokeWidth={s.key === 'avg_execution_time' ? 2 : 1.5}
                strokeDasharray={s.dashed ? '4 3' : undefined}
                dot={(props: { cx?: number; cy?: number; index?: number }) => <IsolatedDot key={`${s.key}-${props.index}`} {...props} data={data} field={s.key} color={palette[s.color]} />}
                activeDot={{ r: 3 }}
                connectNulls={false}
                isAnimationActive={false}
              />
            ))}
          </ComposedChart>
        </ResponsiveContainer>
      </div>
    </section>
  );
}

/** A line with gaps hides a bucket whose neighbours are empty; draw a dot for it alone. */
function IsolatedDot({ cx, cy, index, data, field, color }: { cx?: number; cy?: number; index?: number; data: Datum[]; field: keyof Datum; color: string }) {
  if (index === undefined || cx === undefined || cy === undefined || data[index]?.[field] === null) return <g />;
  const prev = index > 0 ? data[index - 1]?.[field] : null;
  const next = index < data.length - 1 ? data[index + 1]?.[field] : null;
  if (prev !== null && prev !== undefined) return <g />;
  if (next !== null && next !== undefined) return <g />;
  return <circle cx={cx} cy={cy} r={2.5} fill={color} />;
}
