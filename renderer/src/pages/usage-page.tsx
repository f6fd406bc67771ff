import { useEffect, useMemo, useState } from 'react';
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { ApiError } from '../api/client.ts';
import { useApiCounts, useClock, useSources } from '../api/hooks.ts';
import { useView } from '../app-state.tsx';
import { BucketTooltip } from '../components/chart-tooltip.tsx';
import { ClockHint } from '../components/clock-hint.tsx';
import { CurlButton } from '../components/curl-button.tsx';
import { EmptyState } from '../components/empty-state.tsx';
import { ErrorPanel } from '../components/error-panel.tsx';
import { ExportButtons } from '../components/export-buttons.tsx';
import { Field } from '../components/field.tsx';
import { PageHeader, Toolbar } from '../components/page-header.tsx';
import { ProjectPicker } from '../components/project-picker.tsx';
import { RefreshButton } from '../components/refresh-button.tsx';
import { Segmented } from '../components/segmented.tsx';
import { ChartSkeleton, StatsSkeleton } from '../components/skeleton.tsx';
import { Stat } from '../components/stat.tsx';
import { USAGE_SERIES, usageTotals, zeroFillUsage, type UsageBucket, type UsageInterval } from '../lib/buckets.ts';
import { formatCompact, formatInt } from '../lib/format.ts';
import { tierCovering } from '../lib/logs.ts';
import { escapeRe2 } from '../lib/regex.ts';
import { chartPalette } from '../lib/theme.ts';
import { formatRange, formatShortDate, formatTime, isoMicros, localZoneName, type TimePrecision } from '../lib/time.ts';
import { usagePattern, usageRequest } from '../lib/view-request.ts';
import { EDGE_SOURCE, sourceOf, useSourceProjects } from './page-data.ts';

const INTERVAL_LABELS: Record<UsageInterval, string> = { minutely: 'Minutely · 60 min', hourly: 'Hourly · 1 h', daily: 'Daily · 7 days' };
const ORDER: readonly UsageInterval[] = ['minutely', 'hourly', 'daily'];

const FAMILIES = [
  { key: 'rest', label: 'REST', column: 'total_rest_requests', path: '/rest' },
  { key: 'storage', label: 'Storage', column: 'total_storage_requests', path: '/storage' },
  { key: 'auth', label: 'Auth', column: 'total_auth_requests', path: '/auth' },
  { key: 'realtime', label: 'Realtime', column: 'total_realtime_requests', path: '/realtime' },
] as const;

function tickFormat(interval: UsageInterval): (us: number) => string {
  // Day buckets are UTC days; a local date could name the day before.
  if (interval === 'daily') return (us) => formatShortDate(us, 'UTC');
  return (us) => formatTime(us, 'minute');
}

function precisionOf(_interval: UsageInterval): TimePrecision {
  return 'minute';
}

export function UsagePage() {
  const { view, update, navigate, theme } = useView();
  const clock = useClock();
  const sources = useSources();
  const { projects, hasData, loading: sourcesLoading } = useSourceProjects(EDGE_SOURCE);
  const request = usageRequest(view);
  const counts = useApiCounts(request ? { project: request.params.project ?? '', interval: request.params.interval ?? '' } : null);
  const palette = chartPalette(theme);
  // While a new interval loads, the previous rows stay on screen with their own bucket size.
  const shownInterval = counts.data?.interval;
  const interval: UsageInterval = shownInterval === 'hourly' || shownInterval === 'daily' || shownInterval === 'minutely' ? shownInterval : view.usage.interval;
  const unit = USAGE_SERIES[interval].unit;
  const rows = counts.data?.rows;
  // Zero-fill from the clock read with these rows; links to Logs use the current clock.
  const rowsNow = counts.data?.now;
  const now = clock.data?.now;

  const buckets = useMemo(() => (rows && rowsNow !== undefined ? zeroFillUsage(rows, rowsNow, interval) : []), [rows, rowsNow, interval]);
  const totals = useMemo(() => usageTotals(rows ?? []), [rows]);
  const grand = totals.rest + totals.storage + totals.auth + totals.realtime;

  // The pattern input is a draft; it is applied after a pause in typing or on Enter.
  const pattern = usagePattern(view) ?? '';
  const [draft, setDraft] = useState(pattern);
  useEffect(() => setDraft(pattern), [pattern]);
  const apply = (text: string) => {
    const followsProject = view.project !== null && text === escapeRe2(view.project);
    update((v) => ({ ...v, usage: { ...v.usage, regex: followsProject ? null : text } }));
  };
  useEffect(() => {
    if (draft === pattern) return;
    const t = setTimeout(() => apply(draft), 500);
    return () => clearTimeout(t);
  }, [draft]);

  const openLogs = (b: UsageBucket) => {
    if (now === undefined) return;
    // logs.all's start is exclusive, its end inclusive: (start − 1 µs, end − 1 µs] is exactly
    // [start, end). The first bucket only counts records from now − window on, so start there.
    const start = Math.max(b.start, (rowsNow ?? now) - USAGE_SERIES[interval].span) - 1;
    const end = b.start + unit - 1;
    navigate('logs', (v) => ({ ...v, logs: { tier: tierCovering(start + 1, now, v.logs.tier), range: 'custom', start, end } }));
  };

  const noSources = !sourcesLoading && sources.data !== undefined && !hasData;
  const fileBase = `api-counts_${view.usage.interval}_${now ? isoMicros(now).slice(0, 19).replace(/:/g, '') : ''}`;
  const fmtTick = tickFormat(interval);

  return (
    <div className="page" data-testid="usage-page">
      <PageHeader
        title="API usage"
        endpoint="usage.api-counts"
        description="Requests per bucket by API family, for request URLs matching a pattern."
        actions={
          <>
            <CurlButton request={request} />
            <ExportButtons fileBase={fileBase} rows={rows} />
            <RefreshButton />
          </>
        }
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
              onKeyDown={(e) => {
                if (e.key === 'Enter') apply(draft);
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
          <Segmented label="Interval" testId="interval" options={ORDER} labels={INTERVAL_LABELS} value={view.usage.interval} onChange={(i) => update((v) => ({ ...v, usage: { ...v.usage, interval: i } }))} />
        </Field>
      </Toolbar>

      {noSources ? (
        <EmptyState title="No edge request logs yet">
          <p>
            API usage counts <code>cloudflare.logs.prod</code> (Supabase’s <code>edge_logs</code>) requests by path family. Import an export of it on the Data page, or load the demo data.
          </p>
        </EmptyState>
      ) : counts.isError ? (
        <ErrorPanel error={counts.error} onRetry={() => void counts.refetch()} />
      ) : !rows || now === undefined ? (
        <>
          <StatsSkeleton count={4} />
          <ChartSkeleton height={280} />
        </>
      ) : (
        <div className={`page-body${counts.isFetching ? ' is-refetching' : ''}`} aria-busy={counts.isFetching}>
          <div className="stats" data-testid="usage-totals">
            {FAMILIES.map((f) => (
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
                Requests per {interval === 'daily' ? 'day (UTC days)' : interval === 'hourly' ? 'hour' : 'minute'}{' '}
                <span className="card__note" data-testid="window">
                  · {buckets.length > 0 && `${formatRange(buckets[0]!.start, buckets[buckets.length - 1]!.start + unit, precisionOf(interval))} · ${buckets.length} buckets`}
                </span>
              </h2>
              <div className="legend-inline">
                {FAMILIES.map((f) => (
                  <span key={f.key}>
                    <span className="swatch" style={{ background: palette[f.key] }} /> {f.label}
                  </span>
                ))}
              </div>
            </div>
            <div className="chart chart--clickable" style={{ height: 280 }}>
              <ResponsiveContainer width="100%" height="100%">
                <BarChart
                  data={buckets}
                  margin={{ top: 8, right: 12, bottom: 0, left: 0 }}
                  barCategoryGap={buckets.length > 30 ? '8%' : '20%'}
                  onClick={(state) => {
                    const idx = state?.activeTooltipIndex;
                    const i = typeof idx === 'number' ? idx : typeof idx === 'string' ? Number(idx) : NaN;
                    const b = Number.isInteger(i) ? buckets[i] : undefined;
                    if (b) openLogs(b);
                  }}
                >
                  <CartesianGrid stroke={palette.grid} vertical={false} />
                  <XAxis dataKey="start" tickFormatter={fmtTick} stroke={palette.axis} tick={{ fontSize: 11 }} minTickGap={28} tickLine={false} />
                  <YAxis allowDecimals={false} stroke={palette.axis} tick={{ fontSize: 11 }} tickFormatter={formatCompact} width={48} axisLine={false} tickLine={false} />
                  <Tooltip
                    cursor={{ fill: palette.cursor }}
                    isAnimationActive={false}
                    content={({ active, payload }) => {
                      const b = payload?.[0]?.payload as UsageBucket | undefined;
                      if (!active || !b) return null;
                      return (
                        <BucketTooltip
                          start={b.start}
                          end={b.start + unit}
                          precision={precisionOf(interval)}
                          rows={FAMILIES.map((f) => ({ label: f.label, value: `${formatInt(b[f.key])} requests`, color: palette[f.key] }))}
                          footer="Click to open these requests in Logs"
                        />
                      );
                    }}
                  />
                  {FAMILIES.map((f) => (
                    <Bar key={f.key} dataKey={f.key} name={f.label} stackId="f" fill={palette[f.key]} isAnimationActive={false} />
                  ))}
                </BarChart>
              </ResponsiveContainer>
            </div>
          </section>
          <p className="footnote">
            A request counts in every family its path contains, so stacked heights can exceed the number of requests. Buckets without requests are shown as zero. Times are in{' '}
            {localZoneName()}; click a bucket to open its requests in Logs.
          </p>
        </div>
      )}
    </div>
  );
}

