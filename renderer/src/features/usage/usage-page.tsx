import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type MutableRefObject } from 'react';
import { Bar, BarChart, CartesianGrid, Cell, ResponsiveContainer, Tooltip, useActiveTooltipDataPoints, XAxis, YAxis } from 'recharts';
import { ApiError } from '../../api/client.ts';
import { useClock, useSources } from '../../api/hooks.ts';
import { useApiCounts } from './usage-api.ts';
import { useIntervalRules } from '../../api/rules.ts';
import { API_COUNTS, API_FAMILIES, USAGE_INTERVALS, type ApiFamilyKey, type UsageInterval } from '../../../../contract/registry.ts';
import { useView } from '../../app-state.tsx';
import { ChartLegend, useSeriesToggle, type LegendItem } from '../../ui/chart-legend.tsx';
import { BucketTooltip } from '../../ui/chart-tooltip.tsx';
import { ClockHint } from '../../ui/clock-hint.tsx';
import { EmptyState } from '../../ui/empty-state.tsx';
import { ErrorPanel } from '../../ui/error-panel.tsx';
import { fileStamp, useExportCurrentView } from '../../lib/view-export.ts';
import { Field } from '../../ui/field.tsx';
import { Freshness } from '../../ui/freshness.tsx';
import { EndpointPageHeader, Toolbar } from '../../ui/page-header.tsx';
import { ProjectPicker } from '../../ui/project-picker.tsx';
import { Segmented } from '../../ui/segmented.tsx';
import { ChartSkeleton, StatsSkeleton } from '../../ui/skeleton.tsx';
import { Stat } from '../../ui/stat.tsx';
import { chartBucketIndex, isUtcDayUnit, seriesOf, spanLabel, unitName, usageTotals, zeroFillUsageBuckets, type UsageBucket } from '../../lib/buckets.ts';
import { formatCompact, formatInt } from '../../lib/format.ts';
import { usageBucketLogs } from '../../lib/logs-view.ts';
import { escapeRe2 } from '../../lib/regex.ts';
import { chartPalette } from '../../lib/theme.ts';
import { MICROS } from '../../../../contract/instants.ts';
import { formatRange, formatShortDate, formatTime, localZoneName, type TimePrecision } from '../../lib/time.ts';
import { fieldError, usagePattern, usageRequest } from '../../lib/view-request.ts';
import { sourceAlias } from '../../../../contract/sources.ts';
import { EDGE_SOURCE, sourceOf, useSourceProjects } from '../../lib/source-projects.ts';
import './usage.css';

const INTERVAL_NAMES: Record<UsageInterval, string> = { minutely: 'Minutely', hourly: 'Hourly', daily: 'Daily' };
const ORDER: readonly UsageInterval[] = ['minutely', 'hourly', 'daily'];

/** The endpoint's parameters as the page's fields call them: an error names what the user sees. */
const FIELD_LABELS: Record<string, string> = { project: 'URL pattern', interval: 'Interval' };

const FAMILY_KEYS: readonly ApiFamilyKey[] = API_FAMILIES.map((f) => f.key);

function tickFormat(unit: number): (us: number) => string {
  // Day buckets are UTC days; a local date could name the day before.
  if (isUtcDayUnit(unit)) return (us) => formatShortDate(us, 'UTC');
  return (us) => formatTime(us, 'minute');
}

const PRECISION: TimePrecision = 'minute';

/** Keeps the bucket the tooltip shows (hover or arrow keys) where the keyboard handler can read it. */
function ActiveBucket({ into }: { into: MutableRefObject<UsageBucket | null> }) {
  const points = useActiveTooltipDataPoints<UsageBucket>();
  useEffect(() => {
    into.current = points?.[0] ?? null;
  }, [points, into]);
  return null;
}

export function UsagePage() {
  const { view, update, navigate, theme } = useView();
  const clock = useClock();
  const sources = useSources();
  const rules = useIntervalRules(API_COUNTS);
  const { projects, hasData, loading: sourcesLoading } = useSourceProjects(EDGE_SOURCE);
  const request = usageRequest(view);
  const counts = useApiCounts(request ? { project: request.params.project ?? '', interval: request.params.interval ?? '' } : null);
  const palette = chartPalette(theme);
  // While a new interval loads, the previous rows stay on screen with their own bucket size.
  const shownInterval = counts.data?.interval;
  const interval: UsageInterval = (USAGE_INTERVALS as readonly string[]).includes(shownInterval ?? '') ? (shownInterval as UsageInterval) : view.usage.interval;
  // Windows and bucket units are the registry's (GET /api/endpoints), never restated here.
  const spec = rules.data ? seriesOf(rules.data, interval) : undefined;
  const unit = spec?.unit;
  const rows = counts.data?.rows;
  // Zero-fill from the clock read with these rows; links to Logs use the same instant.
  const rowsNow = counts.data?.now;
  const now = clock.data?.now;
  const intervalLabels = useMemo(() => {
    const windows = rules.data?.windows;
    return Object.fromEntries(ORDER.map((i) => [i, windows?.[i] ? `${INTERVAL_NAMES[i]} · ${spanLabel(windows[i].span)}` : INTERVAL_NAMES[i]])) as Record<UsageInterval, string>;
  }, [rules.data]);

  const buckets = useMemo(() => (rows && rowsNow !== undefined && spec ? zeroFillUsageBuckets(rows, rowsNow, spec) : []), [rows, rowsNow, spec]);
  const totals = useMemo(() => usageTotals(rows ?? []), [rows]);
  const grand = totals.rest + totals.storage + totals.auth + totals.realtime;
  // The window starts at now − span, inside the first bucket: that bucket counts only from there.
  const windowStart = rowsNow !== undefined && spec ? rowsNow - spec.span : undefined;
  const firstPartial = windowStart !== undefined && buckets.length > 0 && buckets[0]!.start < windowStart;
  const shownStart = (b: UsageBucket) => (windowStart !== undefined ? Math.max(b.start, windowStart) : b.start);
  // The bucket that holds now is still filling: drawn lighter too, so it does not read as a drop.
  const inProgress = (b: UsageBucket) => rowsNow !== undefined && unit !== undefined && b.start <= rowsNow && rowsNow < b.start + unit;
  // Day buckets are UTC days: their window is written in UTC, as their labels are.
  const utcDays = unit !== undefined && isUtcDayUnit(unit);
  const zone = utcDays ? 'UTC' : undefined;

  const families = useSeriesToggle(FAMILY_KEYS);
  const legendItems: Array<LegendItem<ApiFamilyKey>> = API_FAMILIES.map((f) => ({ key: f.key, label: f.label, color: palette[f.key] }));

  // The pattern input is a draft; it is applied after a pause in typing or on Enter.
  const pattern = usagePattern(view) ?? '';
  const [draft, setDraft] = useState(pattern);
  useEffect(() => setDraft(pattern), [pattern]);
  // Typing makes one history entry, not one per pause: the first applied draft adds it, later
  // ones replace it, until Enter or leaving the field ends the edit.
  const editing = useRef(false);
  const apply = (text: string, done: boolean) => {
    // A cleared field follows the project again rather than asking with an empty pattern (a 400).
    const followsProject = text.trim() === '' || (view.project !== null && text === escapeRe2(view.project));
    update((v) => ({ ...v, usage: { ...v.usage, regex: followsProject ? null : text } }), { replace: editing.current });
    editing.current = !done;
  };
  useEffect(() => {
    if (draft === pattern) return;
    const t = setTimeout(() => apply(draft, false), 500);
    return () => clearTimeout(t);
  }, [draft]);

  // The jump keeps the pattern: the explorer searches it (RE2) over edge requests in the bucket.
  const openLogs = (b: UsageBucket) => {
    if (unit === undefined || windowStart === undefined || !request) return;
    const sent = request.params.project ?? pattern;
    // The Logs URL names a source by its alias.
    navigate('logs', (v) => ({ ...v, logs: usageBucketLogs(v.logs, { start: b.start, end: b.start + unit }, windowStart, sent, sourceAlias(EDGE_SOURCE)) }));
  };
  const active = useRef<UsageBucket | null>(null);
  const onChartKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key !== 'Enter' && e.key !== ' ') return;
    const b = active.current;
    if (!b) return;
    e.preventDefault();
    openLogs(b);
  };

  const error = counts.isError ? fieldError(counts.error, FIELD_LABELS) : rules.isError ? rules.error : null;
  const noSources = !sourcesLoading && sources.data !== undefined && !hasData;
  const fileBase = `api-counts_${view.usage.interval}_${fileStamp(now)}`;
  // The current view (desktop menu's Export Current View): the buckets the chart draws.
  const currentView = { what: 'API request counts', fileBase, rows };
  useExportCurrentView(currentView);
  const fmtTick = tickFormat(unit ?? MICROS.minute);
  const unitWord = unit === undefined ? 'bucket' : unitName(unit);

  return (
    <div className="page" data-testid="usage-page">
      <EndpointPageHeader
        title="API usage"
        endpoint="usage.api-counts"
        description="Requests per bucket by API family, for request URLs matching a pattern."
        request={request}
        shown={currentView}
      />
      <Toolbar>
        <ProjectPicker projects={projects} value={view.project} onChange={(ref) => update((v) => ({ ...v, project: ref, usage: { ...v.usage, regex: null } }))} />
        <Field label="URL pattern (RE2, project)" htmlFor="usage-regex">
          <div className="input-group">
            <input
              id="usage-regex"
              className="input input--mono input--wide"
              value={draft}
              aria-invalid={counts.error instanceof ApiError && counts.error.locations.includes('project')}
              spellCheck={false}
              data-testid="usage-regex"
              placeholder="e.g. abcdefghij\.supabase\.co"
              onChange={(e) => setDraft(e.target.value)}
              onBlur={() => (editing.current = false)}
              onKeyDown={(e) => {
                if (e.key === 'Enter') apply(draft, true);
              }}
            />
            {view.usage.regex !== null && view.project && (
              <button type="button" className="btn btn--small" title="Match the selected project's ref again" onClick={() => update((v) => ({ ...v, usage: { ...v.usage, regex: null } }))}>
                Reset
              </button>
            )}
          </div>
        </Field>
        <Field label="Interval">
          <Segmented label="Interval" testId="interval" options={ORDER} labels={intervalLabels} value={view.usage.interval} onChange={(i) => update((v) => ({ ...v, usage: { ...v.usage, interval: i } }))} />
        </Field>
        <Freshness source={EDGE_SOURCE} project={view.project} />
      </Toolbar>

      {noSources ? (
        <EmptyState title="No edge request logs yet">
          <p>
            API usage counts <code>cloudflare.logs.prod</code> (Supabase’s <code>edge_logs</code>) requests by path family. Import an export of it on the Data page, or load the demo data.
          </p>
        </EmptyState>
      ) : error ? (
        <ErrorPanel
          error={error}
          title={counts.isError && error instanceof ApiError && error.locations.length > 0 ? `The server rejected the ${error.locations.join(', ')}` : undefined}
          onRetry={() => void (counts.isError ? counts.refetch() : rules.refetch())}
        />
      ) : !rows || now === undefined || unit === undefined || windowStart === undefined ? (
        <>
          <StatsSkeleton count={4} />
          <ChartSkeleton height={280} />
        </>
      ) : (
        <div className={`page-body${counts.isFetching ? ' is-refetching' : ''}`} aria-busy={counts.isFetching}>
          <div className="stats" data-testid="usage-totals">
            {API_FAMILIES.map((f) => (
              <Stat
                key={f.key}
                label={f.label}
                testId={`total-${f.key}`}
                swatch={palette[f.key]}
                value={formatInt(totals[f.key])}
                note={
                  <>
                    paths containing <code>{f.path}</code>
                  </>
                }
              />
            ))}
          </div>
          {grand === 0 && <ClockHint what="matching requests" source={sourceOf(sources.data, EDGE_SOURCE)} />}
          <section className="card" data-testid="chart-usage">
            <div className="card__head">
              <h2>
                Requests per {utcDays ? `${unitWord} (UTC days)` : unitWord}{' '}
                <span className="card__note" data-testid="window">
                  ·{' '}
                  {buckets.length > 0 &&
                    `${formatRange(windowStart, buckets[buckets.length - 1]!.start + unit, PRECISION, zone)}${utcDays ? ' UTC' : ''} · ${buckets.length} buckets${firstPartial ? ` (the first from ${formatTime(windowStart, 'minute', zone)} only)` : ''}`}
                </span>
              </h2>
              <ChartLegend items={legendItems} toggle={families} label="API families" testId="legend-usage" />
            </div>
            <div
              className="chart chart--clickable fx-usage-chart"
              style={{ height: 280 }}
              onKeyDown={onChartKey}
              aria-label={`Requests per ${unitWord}. Arrow keys move between buckets; Enter or Space opens the bucket’s requests in Logs.`}
              role="group"
              data-testid="usage-chart-keys"
            >
              <ResponsiveContainer width="100%" height="100%">
                <BarChart
                  data={buckets}
                  // Room on the right for the last label, centred on the last bucket.
                  margin={{ top: 8, right: 24, bottom: 0, left: 0 }}
                  barCategoryGap={buckets.length > 30 ? '8%' : '20%'}
                  onClick={(state) => {
                    const i = chartBucketIndex(state?.activeTooltipIndex);
                    const b = i === null ? undefined : buckets[i];
                    if (b) openLogs(b);
                  }}
                >
                  <ActiveBucket into={active} />
                  <CartesianGrid stroke={palette.grid} vertical={false} />
                  <XAxis dataKey="start" tickFormatter={fmtTick} stroke={palette.axis} tick={{ fontSize: 11 }} minTickGap={28} tickLine={false} />
                  <YAxis allowDecimals={false} stroke={palette.axis} tick={{ fontSize: 11 }} tickFormatter={formatCompact} width={48} axisLine={false} tickLine={false} />
                  <Tooltip
                    cursor={{ fill: palette.cursor }}
                    isAnimationActive={false}
                    content={({ active: isActive, payload }) => {
                      const b = payload?.[0]?.payload as UsageBucket | undefined;
                      if (!isActive || !b) return null;
                      const partial = b.start < windowStart;
                      return (
                        <BucketTooltip
                          start={shownStart(b)}
                          end={b.start + unit}
                          precision={PRECISION}
                          utc={utcDays}
                          rows={API_FAMILIES.filter((f) => families.shown(f.key)).map((f) => ({ label: f.label, value: `${formatInt(b[f.key])} requests`, color: palette[f.key] }))}
                          note={
                            partial
                              ? {
                                  kind: 'partial',
                                  text: `Partial ${unitWord}: counts only from ${formatTime(windowStart, 'minute', zone)}${utcDays ? ' UTC' : ''}, where the window (the last ${spanLabel(spec!.span)}) starts.`,
                                }
                              : inProgress(b)
                                ? { kind: 'partial', text: `In progress: this ${unitWord} runs past now (${formatTime(rowsNow!, 'minute', zone)}${utcDays ? ' UTC' : ''}), so it holds less than a whole one.` }
                                : undefined
                          }
                          footer="Click, or press Enter, to open these requests in Logs"
                        />
                      );
                    }}
                  />
                  {API_FAMILIES.map(
                    (f) =>
                      families.shown(f.key) && (
                        <Bar key={f.key} dataKey={f.key} name={f.label} stackId="f" fill={palette[f.key]} isAnimationActive={false}>
                          {/* The partial first bucket and the one still filling are drawn lighter: they are not dips. */}
                          {buckets.map((b) => (
                            <Cell key={b.start} fillOpacity={b.start < windowStart || inProgress(b) ? 0.45 : 1} />
                          ))}
                        </Bar>
                      ),
                  )}
                </BarChart>
              </ResponsiveContainer>
            </div>
          </section>
          <p className="footnote">
            A request counts in every family its path contains, so stacked heights can exceed the number of requests. Buckets without requests are shown as zero.
            {firstPartial ? ' The first and the last bucket are drawn lighter: the window starts inside the first, and the last is still filling.' : ' The last bucket is drawn lighter: it is still filling.'}{' '}
            {utcDays ? `Days are UTC days; other times are in ${localZoneName()}` : `Times are in ${localZoneName()}`}; click a bucket (or focus the chart, move with the arrow keys
            and press Enter) to open its requests in Logs, searched with this URL pattern.
          </p>
        </div>
      )}
    </div>
  );
}
