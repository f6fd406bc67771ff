import { useMemo, useRef, useState } from 'react';
import { Bar, BarChart, CartesianGrid, ReferenceArea, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { HistogramAnswer, HistogramBucket } from '../api/logs.ts';
import { formatCompact, formatInt } from '../lib/format.ts';
import { chartPalette, type Theme } from '../lib/theme.ts';
import { formatShortDate, formatTime, US, type TimePrecision } from '../lib/time.ts';
import { selectionRange, seriesOf, toneColor, type Series } from '../pages/logs/series.ts';
import { BucketTooltip } from './chart-tooltip.tsx';

function precisionFor(width: number): TimePrecision {
  return width < US.minute ? 'second' : 'minute';
}

function tickFormatter(width: number, span: number): (us: number) => string {
  if (span > 2 * US.day) return (us) => `${formatShortDate(us)} ${formatTime(us, 'minute')}`;
  return (us) => formatTime(us, precisionFor(width));
}

/** recharts gives the hovered bucket's index as a number or a string. */
function indexOf(raw: unknown): number | null {
  const i = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : NaN;
  return Number.isInteger(i) && i >= 0 ? i : null;
}

/**
 * Matching records per bucket, stacked by status class or level. Hover shows exact counts and
 * the bucket's range; dragging across buckets zooms to them; a click narrows to one bucket;
 * a legend entry filters by its class or level.
 */
export function ExplorerHistogram({
  answer,
  range,
  theme,
  onRange,
  onSeries,
  busy,
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
  const [drag, setDrag] = useState<{ from: number; to: number } | null>(null);
  const hover = useRef<number | null>(null);
  const span = buckets.length ? buckets[buckets.length - 1]!.timestamp + width - buckets[0]!.timestamp : 0;
  const fmtTick = tickFormatter(width, span);
  const precision = precisionFor(width);

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

  return (
    <section className={`card ex-hist${busy ? ' is-refetching' : ''}`} data-testid="histogram" aria-busy={busy}>
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
          {series.length === 0 && <span className="muted small">No matching records in this range</span>}
        </div>
        <span className="muted small ex-hist__hint">Drag to zoom · click a bar for its bucket</span>
      </div>
      <div className="ex-hist__chart" data-testid="histogram-chart">
        <ResponsiveContainer width="100%" height="100%">
          <BarChart
            data={buckets}
            margin={{ top: 6, right: 10, bottom: 0, left: 0 }}
            barCategoryGap={buckets.length > 40 ? '10%' : '20%'}
            onMouseDown={(state) => {
              // The hover index, when the press comes before the chart has seen the pointer move.
              const i = indexOf(state?.activeTooltipIndex) ?? hover.current;
              if (i !== null) setDrag({ from: i, to: i });
            }}
            onMouseMove={(state) => {
              const i = indexOf(state?.activeTooltipIndex);
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
              content={({ active, payload }) => {
                const b = payload?.[0]?.payload as HistogramBucket | undefined;
                if (!active || !b) return null;
                return (
                  <BucketTooltip
                    start={b.timestamp}
                    end={b.timestamp + width}
                    precision={precision}
                    rows={[
                      ...series.map((s) => ({ label: s.label, value: formatInt(b.by[s.key] ?? 0), color: toneColor(s.tone, theme) })),
                      { label: 'Total', value: formatInt(b.count), strong: true },
                    ]}
                    footer="Click to narrow to this bucket · drag to zoom"
                  />
                );
              }}
            />
            {series.map((s) => (
              <Bar key={s.key} dataKey={(b: HistogramBucket) => b.by[s.key] ?? 0} name={s.label} stackId="n" fill={toneColor(s.tone, theme)} isAnimationActive={false} />
            ))}
            {drag && lo !== hi && buckets[lo] && buckets[hi] && (
              <ReferenceArea x1={buckets[lo]!.timestamp} x2={buckets[hi]!.timestamp} fill={palette.avg} fillOpacity={0.15} stroke={palette.avg} strokeOpacity={0.5} ifOverflow="visible" />
            )}
          </BarChart>
        </ResponsiveContainer>
      </div>
    </section>
  );
}
