import { useMemo, useRef, useState } from 'react';
import { Bar, CartesianGrid, Cell, ComposedChart, Line, ReferenceArea, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { HistogramAnswer, HistogramBucket } from '../../../api/logs.ts';
import { formatCompact, formatInt } from '../../../lib/format.ts';
import type { SearchProgress } from '../../../lib/search-progress.ts';
import { chartPalette, type Theme } from '../../../lib/theme.ts';
import { MICROS } from '../../../../../contract/instants.ts';
import { formatDateTime, formatShortDate, formatTime, type TimePrecision } from '../../../lib/time.ts';
import { partialBucket, selectionRange, seriesOf, toneColor, type Series } from '../series.ts';
import { BucketTooltip, type TooltipNote } from '../../../ui/chart-tooltip.tsx';
import { useTimeMode } from '../../../ui/time-mode.tsx';
import { zoneOf } from '../../../lib/time-display.ts';
import { chartBucketIndex } from '../../../lib/buckets.ts';

function precisionFor(width: number): TimePrecision {
  return width < MICROS.minute ? 'second' : 'minute';
}

/** Axis labels in the zone times are shown in (time-mode.tsx: UTC, or the browser's zone). */
function tickFormatter(width: number, span: number, timeZone?: string): (us: number) => string {
  if (span > 2 * MICROS.day) return (us) => `${formatShortDate(us, timeZone)} ${formatTime(us, 'minute', timeZone)}`;
  return (us) => formatTime(us, precisionFor(width), timeZone);
}

/** The compared period's counts, one per bucket on screen (null where it has none). */
export interface HistogramComparison {
  counts: ReadonlyArray<number | null>;
  /** `1 week earlier`: what the line is. */
  label: string;
  /** Still loading or still counting: the line is drawn faint. */
  partial: boolean;
}

interface Datum extends HistogramBucket {
  prev: number | null;
  partial: 'start' | 'end' | null;
}

/** A partial bucket is drawn this much lighter: it holds part of its width, not a drop. */
const PARTIAL_OPACITY = 0.45;

/**
 * Matching records per bucket, stacked by status class or level. Hover shows exact counts and
 * the bucket's range; dragging across buckets zooms to them; a click narrows to one bucket;
 * a legend entry filters by its class or level. While a search is still counting, a thin bar
 * shows how much of the range it has covered and the buckets it has not reached are shaded;
 * buckets cut by the range's ends are drawn lighter; a compared period is a dashed line.
 */
export function ExplorerHistogram({
  answer,
  range,
  theme,
  onRange,
  onSeries,
  busy,
  progress,
  compared,
}: {
  answer: HistogramAnswer;
  /** The range on screen: a selection never reaches past it. */
  range: { start?: number; end?: number };
  theme: Theme;
  /** A new range in the API's terms: (start, end], µs. */
  onRange: (start: number, end: number) => void;
  /** Filter by a legend entry (null when that entry cannot be a filter). */
  onSeries: ((s: Series) => void) | null;
  busy: boolean;
  progress: SearchProgress | null;
  compared: HistogramComparison | null;
}) {
  const palette = chartPalette(theme);
  const buckets = answer.result;
  const width = answer.width;
  const series = useMemo(() => seriesOf(buckets, answer.split), [buckets, answer.split]);
  const totals = useMemo(() => {
    const t = new Map<string, number>();
    for (const b of buckets) for (const s of series) t.set(s.key, (t.get(s.key) ?? 0) + (b.by[s.key] ?? 0));
    return t;
  }, [buckets, series]);
  const data: Datum[] = useMemo(
    () => buckets.map((b, i) => ({ ...b, prev: compared?.counts[i] ?? null, partial: partialBucket(b.timestamp, width, range) })),
    [buckets, compared, width, range],
  );
  const comparedTotal = useMemo(() => (compared ? compared.counts.reduce<number>((n, c) => n + (c ?? 0), 0) : 0), [compared]);
  const [drag, setDrag] = useState<{ from: number; to: number } | null>(null);
  const hover = useRef<number | null>(null);
  const span = buckets.length ? buckets[buckets.length - 1]!.timestamp + width - buckets[0]!.timestamp : 0;
  const timeZone = zoneOf(useTimeMode());
  const fmtTick = tickFormatter(width, span, timeZone);
  const precision = precisionFor(width);
  // Buckets the search has not reached yet (any part of them older than `through`).
  const through = progress && !progress.complete ? progress.through : null;
  let unsearched = -1;
  if (through !== null) for (let i = 0; i < buckets.length && buckets[i]!.timestamp < through; i++) unsearched = i;
  const prevColor = theme === 'dark' ? '#e8ecf1' : '#3b4350';

  const finish = () => {
    if (!drag) return;
    const a = buckets[drag.from];
    const b = buckets[drag.to];
    setDrag(null);
    if (!a || !b) return;
    const r = selectionRange(a.timestamp, b.timestamp, width, range);
    onRange(r.start, r.end);
  };

  const lo = drag ? Math.min(drag.from, drag.to) : -1;
  const hi = drag ? Math.max(drag.from, drag.to) : -1;

  const noteOf = (d: Datum): TooltipNote | undefined => {
    if (through !== null && d.timestamp < through) {
      return { kind: 'unsearched', text: d.timestamp + width <= through ? 'Not searched yet: the search has not reached this bucket' : `Searched only from ${formatDateTime(through, 'second')} on so far` };
    }
    if (d.partial === 'end' && range.end !== undefined) return { kind: 'partial', text: `Partial bucket: counts only up to ${formatDateTime(range.end, 'second')}, the range's end` };
    if (d.partial === 'start' && range.start !== undefined) return { kind: 'partial', text: `Partial bucket: counts only after ${formatDateTime(range.start, 'second')}, the range's start` };
    return undefined;
  };

  return (
    <section className={`card ex-hist${busy ? ' is-refetching' : ''}`} data-testid="histogram" aria-busy={busy}>
      {progress && !progress.complete && (
        <div
          className="ex-hist__progress"
          role="progressbar"
          aria-label="Search progress"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round(progress.fraction * 100)}
          data-testid="histogram-progress"
        >
          <span style={{ width: `${Math.max(2, progress.fraction * 100)}%` }} />
        </div>
      )}
      <div className="ex-hist__head">
        <div className="ex-legend" role="group" aria-label={answer.split === 'status' ? 'Status classes' : 'Levels'}>
          {series.map((s) => (
            <button
              key={s.key}
              type="button"
              className="ex-legend__item"
              disabled={!onSeries || s.key === 'none'}
              title={onSeries && s.key !== 'none' ? `Show only ${s.label}` : undefined}
              onClick={() => onSeries?.(s)}
              data-testid={`legend-${s.key}`}
            >
              <span className="swatch" style={{ background: toneColor(s.tone, theme) }} aria-hidden="true" />
              {s.label}
              <span className="ex-legend__count">{formatInt(totals.get(s.key) ?? 0)}</span>
            </button>
          ))}
          {compared && (
            <span className="ex-legend__item ex-legend__item--line" data-testid="legend-compared" title={`The compared period, ${compared.label.toLowerCase()}: its count per bucket`}>
              <span className="ex-legend__line" style={{ borderColor: prevColor }} aria-hidden="true" />
              {compared.label}
              <span className="ex-legend__count">{compared.partial ? '…' : formatInt(comparedTotal)}</span>
            </span>
          )}
          {series.length === 0 && <span className="muted small">{through !== null ? 'No matches so far' : 'No matching records in this range'}</span>}
        </div>
        {through !== null ? (
          <span className="small ex-hist__searching" data-testid="search-progress" title={`Every record from ${formatDateTime(through, 'second')} to the range's end is counted; the search goes on`}>
            Searching… counted back to {throughText(through, range.end)}
          </span>
        ) : (
          <span className="muted small ex-hist__hint">Drag to zoom · click a bar for its bucket</span>
        )}
      </div>
      <div className="ex-hist__chart" data-testid="histogram-chart">
        <ResponsiveContainer width="100%" height="100%">
          <ComposedChart
            data={data}
            // Room on the right for the last time label, which is centred on the last bucket.
            margin={{ top: 6, right: 24, bottom: 0, left: 0 }}
            barCategoryGap={buckets.length > 40 ? '10%' : '20%'}
            onMouseDown={(state) => {
              // The hover index, when the press comes before the chart has seen the pointer move.
              const i = chartBucketIndex(state?.activeTooltipIndex) ?? hover.current;
              if (i !== null) setDrag({ from: i, to: i });
            }}
            onMouseMove={(state) => {
              const i = chartBucketIndex(state?.activeTooltipIndex);
              hover.current = i;
              if (drag && i !== null && i !== drag.to) setDrag({ ...drag, to: i });
            }}
            onMouseUp={finish}
            onMouseLeave={() => {
              hover.current = null;
              setDrag(null);
            }}
          >
            <CartesianGrid stroke={palette.grid} vertical={false} />
            <XAxis dataKey="timestamp" tickFormatter={fmtTick} stroke={palette.axis} tick={{ fontSize: 11 }} minTickGap={36} tickLine={false} />
            <YAxis allowDecimals={false} stroke={palette.axis} tick={{ fontSize: 11 }} tickFormatter={formatCompact} width={40} axisLine={false} tickLine={false} />
            <Tooltip
              cursor={{ fill: palette.cursor }}
              isAnimationActive={false}
              // Pinned to the chart's top: it then hangs over the table, never over the count above the chart.
              position={{ y: 0 }}
              allowEscapeViewBox={{ x: false, y: true }}
              wrapperStyle={{ zIndex: 20 }}
              content={({ active, payload }) => {
                const d = payload?.[0]?.payload as Datum | undefined;
                if (!active || !d) return null;
                const rows = [
                  ...series.map((s) => ({ label: s.label, value: formatInt(d.by[s.key] ?? 0), color: toneColor(s.tone, theme) })),
                  { label: 'Total', value: formatInt(d.count), strong: true },
                ];
                if (compared) rows.push({ label: compared.label, value: d.prev === null ? '—' : `${formatInt(d.prev)}${changeText(d.count, d.prev)}`, color: prevColor });
                return <BucketTooltip start={d.timestamp} end={d.timestamp + width} precision={precision} rows={rows} note={noteOf(d)} footer="Click to narrow to this bucket · drag to zoom" />;
              }}
            />
            {unsearched >= 0 && buckets[0] && buckets[unsearched] && (
              <ReferenceArea
                x1={buckets[0].timestamp}
                x2={buckets[unsearched]!.timestamp}
                fill={palette.axis}
                fillOpacity={0.1}
                ifOverflow="visible"
                label={{ value: 'not searched yet', position: 'insideTopLeft', fontSize: 10, fill: palette.axis }}
              />
            )}
            {series.map((s) => (
              <Bar key={s.key} dataKey={(b: Datum) => b.by[s.key] ?? 0} name={s.label} stackId="n" fill={toneColor(s.tone, theme)} isAnimationActive={false}>
                {data.map((d) => (
                  <Cell key={d.timestamp} fillOpacity={d.partial ? PARTIAL_OPACITY : 1} />
                ))}
              </Bar>
            ))}
            {compared && (
              <Line
                dataKey="prev"
                name={compared.label}
                type="linear"
                stroke={prevColor}
                strokeOpacity={compared.partial ? 0.4 : 0.85}
                strokeWidth={1.5}
                strokeDasharray="4 3"
                dot={false}
                activeDot={false}
                connectNulls={false}
                isAnimationActive={false}
              />
            )}
            {drag && lo !== hi && buckets[lo] && buckets[hi] && (
              <ReferenceArea x1={buckets[lo]!.timestamp} x2={buckets[hi]!.timestamp} fill={palette.avg} fillOpacity={0.15} stroke={palette.avg} strokeOpacity={0.5} ifOverflow="visible" />
            )}
          </ComposedChart>
        </ResponsiveContainer>
      </div>
    </section>
  );
}

/** The instant a search has counted back to: its time alone when it is the range end's day, else with the date. */
function throughText(through: number, end: number | undefined): string {
  const t = formatDateTime(through, 'second');
  return end !== undefined && formatDateTime(end, 'second').slice(0, 10) === t.slice(0, 10) ? t.slice(11) : t;
}

/** ` · now +25%` after a compared count; nothing where a percentage says nothing. */
function changeText(now: number, before: number): string {
  if (before === 0) return now === 0 ? '' : ' (new)';
  const pct = Math.round(((now - before) / before) * 100);
  return ` · now ${pct >= 0 ? '+' : '−'}${Math.abs(pct)}%`;
}
