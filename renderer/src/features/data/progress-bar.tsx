/** A determinate bar (value 0..1) or an indeterminate one (value null). */
export function ProgressBar({ value, label, tone }: { value: number | null; label: string; tone?: 'ok' | 'error' }) {
  const pct = value === null ? undefined : Math.round(Math.min(1, Math.max(0, value)) * 1000) / 10;
  return (
    <div
      className={`progress${value === null ? ' progress--indeterminate' : ''}${tone ? ` progress--${tone}` : ''}`}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={pct}
    >
      <span style={value === null ? undefined : { width: `${pct}%` }} />
    </div>
  );
}
