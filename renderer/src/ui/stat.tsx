import type { ReactNode } from 'react';

/** A headline figure: label, value, and a line of context. */
export function Stat({ label, value, note, tone, testId, swatch, hint }: { label: string; value: ReactNode; note?: ReactNode; tone?: 'error' | 'ok'; testId?: string; swatch?: string; hint?: string }) {
  return (
    <div className={`stat${tone ? ` stat--${tone}` : ''}`} data-testid={testId} title={hint}>
      <div className="stat__label">
        {swatch && <span className="swatch" style={{ background: swatch }} aria-hidden="true" />}
        {label}
      </div>
      <div className="stat__value" data-testid={testId ? `${testId}-value` : undefined}>
        {value}
      </div>
      {note && <div className="stat__note">{note}</div>}
    </div>
  );
}
