/**
 * The one chart legend: every entry is a toggle button for its series (click, Enter or Space),
 * with aria-pressed saying whether the series is shown. The last shown series cannot be hidden,
 * so a chart never goes blank by accident. Use it with `useSeriesToggle` on every chart.
 */
import { useCallback, useState } from 'react';

export interface LegendItem<K extends string = string> {
  key: K;
  label: string;
  color: string;
  /** How the series is drawn: a filled box (bars, areas), a line, or a dashed line. */
  shape?: 'box' | 'line' | 'dashed';
}

export interface SeriesToggle<K extends string> {
  hidden: ReadonlySet<K>;
  shown: (key: K) => boolean;
  toggle: (key: K) => void;
}

/** Which series of a chart are hidden; at least one of `keys` always stays shown. */
export function useSeriesToggle<K extends string>(keys: readonly K[]): SeriesToggle<K> {
  const [hidden, setHidden] = useState<ReadonlySet<K>>(() => new Set());
  const count = keys.length;
  const toggle = useCallback(
    (key: K) =>
      setHidden((h) => {
        const next = new Set(h);
        if (next.has(key)) next.delete(key);
        else if (next.size < count - 1) next.add(key);
        return next;
      }),
    [count],
  );
  const shown = useCallback((key: K) => !hidden.has(key), [hidden]);
  return { hidden, shown, toggle };
}

export function ChartLegend<K extends string>({
  items,
  toggle,
  label = 'Series',
  testId = 'chart-legend',
}: {
  items: ReadonlyArray<LegendItem<K>>;
  toggle: SeriesToggle<K>;
  /** The group's accessible name. */
  label?: string;
  testId?: string;
}) {
  const shownCount = items.filter((i) => toggle.shown(i.key)).length;
  return (
    <div className="lg-legend" role="group" aria-label={label} data-testid={testId}>
      {items.map((item) => {
        const on = toggle.shown(item.key);
        const last = on && shownCount <= 1;
        return (
          <button
            key={item.key}
            type="button"
            className={`lg-item${on ? '' : ' is-off'}`}
            aria-pressed={on}
            // Still focusable when it cannot act, so the reason is reachable by keyboard too.
            aria-disabled={last || undefined}
            title={last ? `${item.label}: the last series shown stays on` : on ? `Hide ${item.label}` : `Show ${item.label}`}
            data-series={item.key}
            onClick={() => {
              if (!last) toggle.toggle(item.key);
            }}
          >
            <span className={`lg-swatch lg-swatch--${item.shape ?? 'box'}`} style={item.shape === 'box' || !item.shape ? { background: item.color } : { borderColor: item.color }} aria-hidden="true" />
            {item.label}
          </button>
        );
      })}
    </div>
  );
}
