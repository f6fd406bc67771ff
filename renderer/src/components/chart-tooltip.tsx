import { formatRange, localZoneName, type TimePrecision } from '../lib/time.ts';

export interface TooltipRow {
  label: string;
  value: string;
  color?: string;
  strong?: boolean;
}

/** A chart tooltip: the bucket's range in local time and UTC, then exact values with units. */
export function BucketTooltip({ start, end, precision, rows, footer }: { start: number; end: number; precision: TimePrecision; rows: TooltipRow[]; footer?: string }) {
  return (
    <div className="chart-tooltip" data-testid="chart-tooltip">
      <div className="chart-tooltip__range">{formatRange(start, end, precision)}</div>
      <div className="chart-tooltip__sub">
        {localZoneName()} · {formatRange(start, end, precision, 'UTC')} UTC
      </div>
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
      {footer && <div className="chart-tooltip__footer">{footer}</div>}
    </div>
  );
}
