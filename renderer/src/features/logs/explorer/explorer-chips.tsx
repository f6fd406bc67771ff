import { useEffect, useRef, useState, type ReactNode } from 'react';
import { checkFilterValue, type FilterField } from '../../../../../contract/filters.ts';
import type { LogFilter } from '../../../lib/explorer-filters.ts';
import { fieldLabel } from './explorer-facets.tsx';

const PLACEHOLDER: Record<FilterField, string> = {
  status: '503 or 5xx',
  method: 'GET',
  path: '/rest/v1/ (a prefix)',
  level: 'error',
  function_id: 'function id',
};

/**
 * The active filters as chips: each removable (×); a click on the chip flips include and
 * exclude ("not" chips). A chip for a field the source does not have is shown struck out
 * and not sent.
 */
export function ExplorerChips({
  filters,
  fields,
  onRemove,
  onFlip,
  onAdd,
  onClear,
  extra,
  extraCount = 0,
  actions,
}: {
  filters: readonly LogFilter[];
  fields: readonly FilterField[];
  onRemove: (f: LogFilter) => void;
  onFlip: (f: LogFilter) => void;
  onAdd: (f: LogFilter) => void;
  onClear: () => void;
  /** More chips after these (filters on fields inside the records), and how many they are. */
  extra?: ReactNode;
  extraCount?: number;
  /** Controls after "+ Filter" (the field picker). */
  actions?: ReactNode;
}) {
  return (
    <div className="ex-chips" data-testid="chips" role="group" aria-label="Filters">
      {filters.map((f) => {
        const usable = fields.includes(f.field);
        return (
          <span
            key={`${f.field}:${f.value}`}
            className={`ex-chip${f.exclude ? ' ex-chip--not' : ''}${usable ? '' : ' is-unavailable'}`}
            data-testid="chip"
            data-field={f.field}
            data-value={f.value}
            data-exclude={f.exclude ? 'true' : 'false'}
          >
            <button
              type="button"
              className="ex-chip__body"
              title={usable ? (f.exclude ? 'Click to include instead' : 'Click to exclude instead') : 'This source has no such field: the filter is not applied'}
              onClick={() => onFlip(f)}
            >
              {f.exclude && <span className="ex-chip__not">not</span>}
              <span className="ex-chip__field">{fieldLabel(f.field)}</span>
              <span className="ex-chip__value mono">
                {f.value}
                {f.field === 'path' && <span className="muted">*</span>}
              </span>
            </button>
            <button type="button" className="ex-chip__remove" aria-label={`Remove filter ${f.exclude ? 'not ' : ''}${f.field} ${f.value}`} onClick={() => onRemove(f)} data-testid="chip-remove">
              ×
            </button>
          </span>
        );
      })}
      {extra}
      <AddFilter fields={fields} onAdd={onAdd} />
      {actions}
      {filters.length + extraCount > 1 && (
        <button type="button" className="link-btn small" onClick={onClear} data-testid="chips-clear">
          Clear filters
        </button>
      )}
    </div>
  );
}

function AddFilter({ fields, onAdd }: { fields: readonly FilterField[]; onAdd: (f: LogFilter) => void }) {
  const [open, setOpen] = useState(false);
  const [field, setField] = useState<FilterField | ''>('');
  const [value, setValue] = useState('');
  const [exclude, setExclude] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const chosen: FilterField | undefined = field && fields.includes(field) ? field : fields[0];

  useEffect(() => {
    if (open) inputRef.current?.focus();
  }, [open]);

  if (fields.length === 0) return null;
  if (!open) {
    return (
      <button type="button" className="btn btn--tiny ex-chips__add" onClick={() => setOpen(true)} data-testid="add-filter">
        + Filter
      </button>
    );
  }
  return (
    <form
      className="ex-addfilter"
      data-testid="add-filter-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!chosen) return;
        const c = checkFilterValue(chosen, value);
        if (!c.ok) {
          setError(c.reason);
          return;
        }
        onAdd({ field: chosen, value: c.value, exclude });
        setValue('');
        setExclude(false);
        setError(null);
        setOpen(false);
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          setOpen(false);
        }
      }}
    >
      <select className="select select--small" aria-label="Field" value={chosen} onChange={(e) => setField(e.target.value as FilterField)} data-testid="add-filter-field">
        {fields.map((f) => (
          <option key={f} value={f}>
            {fieldLabel(f)}
          </option>
        ))}
      </select>
      <select className="select select--small" aria-label="Include or exclude" value={exclude ? 'not' : 'is'} onChange={(e) => setExclude(e.target.value === 'not')} data-testid="add-filter-op">
        <option value="is">{chosen === 'path' ? 'starts with' : 'is'}</option>
        <option value="not">{chosen === 'path' ? 'does not start with' : 'is not'}</option>
      </select>
      <input
        ref={inputRef}
        className="input input--small input--mono"
        aria-label="Value"
        placeholder={chosen ? PLACEHOLDER[chosen] : ''}
        value={value}
        aria-invalid={error ? true : undefined}
        onChange={(e) => {
          setValue(e.target.value);
          setError(null);
        }}
        data-testid="add-filter-value"
      />
      <button type="submit" className="btn btn--tiny btn--primary" data-testid="add-filter-apply">
        Add
      </button>
      <button type="button" className="btn btn--tiny" onClick={() => setOpen(false)}>
        Cancel
      </button>
      {error && <span className="field-error">{error}</span>}
    </form>
  );
}
