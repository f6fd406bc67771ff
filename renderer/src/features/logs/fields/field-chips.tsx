/**
 * Filters on fields inside the records as chips beside the built-in ones:
 * `request.headers.cf_ipcountry is DE`. A click flips "is" and "is not"; × removes the chip.
 */
import type { FieldFilter } from '../../../../../contract/fields.ts';
import { FIELD_OP_LABELS, fieldFilterLabel, flippedOp } from '../../../lib/field-filters.ts';

export function FieldChips({ filters, onRemove, onFlip }: { filters: readonly FieldFilter[]; onRemove: (f: FieldFilter) => void; onFlip: (f: FieldFilter) => void }) {
  return (
    <>
      {filters.map((f) => {
        const flip = flippedOp(f.op);
        const label = fieldFilterLabel(f);
        return (
          <span
            key={`${f.path}\u0000${f.op}\u0000${f.value}`}
            className={`ex-chip fc-chip${f.op === 'not' ? ' ex-chip--not' : ''}`}
            data-testid="field-chip"
            data-path={f.path}
            data-op={f.op}
            data-value={f.value}
          >
            <button
              type="button"
              className="ex-chip__body"
              title={flip ? `${label}\nClick to make it “${FIELD_OP_LABELS[flip]}”` : label}
              aria-label={flip ? `${label}: click for ${FIELD_OP_LABELS[flip]}` : label}
              disabled={!flip}
              onClick={() => flip && onFlip({ ...f, op: flip })}
            >
              <span className="ex-chip__field mono fc-chip__path">{f.path}</span>
              <span className={`fc-chip__op${f.op === 'not' ? ' ex-chip__not' : ''}`}>{FIELD_OP_LABELS[f.op]}</span>
              <span className="ex-chip__value mono">
                {f.value === '' ? <span className="muted">(empty)</span> : f.value}
                {f.op === 'prefix' && <span className="muted">…</span>}
              </span>
            </button>
            <button type="button" className="ex-chip__remove" aria-label={`Remove filter ${label}`} onClick={() => onRemove(f)} data-testid="field-chip-remove">
              ×
            </button>
          </span>
        );
      })}
    </>
  );
}
