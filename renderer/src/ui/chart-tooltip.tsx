import { formatRange, localZoneName, type TimePrecision } from '../lib/time.ts';

export interface TooltipRow {
  label: string;
  value: string;
  color?: string;
  strong?: boolean;
}

/** A line saying how the values were computed, e.g. p95/p99 accuracy; `kind` is exposed for tests. */
export interface TooltipNote {
  text: string;
  kind?: string;
}

/**
 * A chart tooltip: the bucket's range in local time and UTC, then the values with units, and
 * a note where some of them are not exact (the caller says which, from one wording).
 */
export function BucketTooltip({
  start,
  end,
  precision,
  rows,
  note,
  footer,
  utc = false,
}: {
  start: number;
  end: number;
  precision: TimePrecision;
  /** UTC day buckets: their range is written in UTC first (a local range would cross midnight). */
  utc?: boolean;
  rows: TooltipRow[];
  note?: TooltipNote;
  footer?: string;
}) {
  return (
    <div className="chart-tooltip" data-testid="chart-tooltip">
      {utc ? (
        <>
          <div className="chart-tooltip__range">{formatRange(start, end, precision, 'UTC')} UTC</div>
          <div className="chart-tooltip__sub">
            {formatRange(start, end, precision)} {localZoneName()}
          </div>
        </>
      ) : (
        <>
          <div className="chart-tooltip__range">{formatRange(start, end, precision)}</div>
          <div className="chart-tooltip__sub">
            {localZoneName()} · {formatRange(start, end, precision, 'UTC')} UTC
          </div>
        </>
      )}
      <table>
        <tbody>
          {rows.map((r) => (
            <tr key={r.label} className={r.strong ? 'is-strong' : undefined}>
              <th>
                {r.color && <span className="swatch" style={{ background: r.color }} aria-hidden="true" />}
                {r.label}
              </th>
              <td>{r.value}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {note && (
        <div className="lg-tip-note" data-testid="tooltip-note" data-kind={note.kind}>
          {note.text}
        </div>
      )}
      {footer && <div className="chart-tooltip__footer">{footer}</div>}
    </div>
  );
}
