import type { FacetsAnswer, FacetValue } from '../api/logs.ts';
import { formatInt } from '../lib/format.ts';
import { checkFilterValue, findFilter, type FilterField, type LogFilter } from '../lib/logs.ts';
import { Skeleton } from './skeleton.tsx';

const FIELD_LABELS: Record<FilterField, string> = {
  status: 'Status',
  method: 'Method',
  path: 'Path',
  level: 'Level',
  function_id: 'Function',
};

export function fieldLabel(field: FilterField): string {
  return FIELD_LABELS[field];
}

/**
 * Top values of each field over the current result, with counts. A click includes a value
 * (adds a chip, or removes it when it is already included); "−" excludes it.
 */
export function ExplorerFacets({
  fields,
  answer,
  loading,
  busy,
  error,
  filters,
  onInclude,
  onExclude,
  onRemove,
}: {
  fields: readonly FilterField[];
  answer: FacetsAnswer | undefined;
  loading: boolean;
  busy: boolean;
  error: string | null;
  filters: readonly LogFilter[];
  onInclude: (field: FilterField, value: string) => void;
  onExclude: (field: FilterField, value: string) => void;
  onRemove: (field: FilterField, value: string) => void;
}) {
  return (
    <aside className={`ex-facets${busy ? ' is-refetching' : ''}`} aria-label="Fields" data-testid="facets" aria-busy={busy}>
      <div className="ex-facets__title">Fields</div>
      {fields.length === 0 && <p className="muted small ex-facets__none">This source has no filter fields; search its messages instead.</p>}
      {error && <p className="text-error small ex-facets__none">{error}</p>}
      {fields.map((field) => {
        const values = answer?.result[field] ?? [];
        const others = answer?.others[field] ?? 0;
        const max = values.reduce((m, v) => Math.max(m, v.count), 0);
        return (
          <section key={field} className="ex-facet" data-testid={`facet-${field}`}>
            <h3 className="ex-facet__name">{FIELD_LABELS[field]}</h3>
            {loading && !answer ? (
              <div className="ex-facet__loading">
                <Skeleton width="80%" height={12} />
                <Skeleton width="60%" height={12} />
                <Skeleton width="70%" height={12} />
              </div>
            ) : values.length === 0 ? (
              <div className="muted small">No values</div>
            ) : (
              <ul className="ex-facet__values">
                {values.map((v) => (
                  <FacetRow key={String(v.value)} field={field} v={v} max={max} chip={v.value === null ? undefined : findFilter(filters, field, normalized(field, v.value))} onInclude={onInclude} onExclude={onExclude} onRemove={onRemove} />
                ))}
              </ul>
            )}
            {others > 0 && (
              <div className="ex-facet__others muted small" data-testid={`facet-${field}-others`}>
                {formatInt(others)} other {others === 1 ? 'value' : 'values'}
              </div>
            )}
          </section>
        );
      })}
    </aside>
  );
}

function normalized(field: FilterField, value: string | number): string {
  const c = checkFilterValue(field, String(value));
  return c.ok ? c.value : String(value);
}

function FacetRow({
  field,
  v,
  max,
  chip,
  onInclude,
  onExclude,
  onRemove,
}: {
  field: FilterField;
  v: FacetValue;
  max: number;
  chip: LogFilter | undefined;
  onInclude: (field: FilterField, value: string) => void;
  onExclude: (field: FilterField, value: string) => void;
  onRemove: (field: FilterField, value: string) => void;
}) {
  const text = v.value === null ? '(none)' : String(v.value);
  const check = v.value === null ? null : checkFilterValue(field, String(v.value));
  // A missing value, or one the wire form cannot carry (a comma), is shown but not filterable.
  const usable = check?.ok === true;
  const value = check?.ok ? check.value : text;
  const state = chip ? (chip.exclude ? 'excluded' : 'included') : 'none';
  return (
    <li className={`ex-facet__row is-${state}`} data-testid="facet-value" data-value={text}>
      <button
        type="button"
        className="ex-facet__value"
        disabled={!usable}
        aria-pressed={state === 'included'}
        title={usable ? (state === 'included' ? `Remove the filter ${field} ${value}` : `Show only ${field} ${value}${field === 'path' ? ' (and paths under it)' : ''}`) : check && !check.ok ? check.reason : 'Records without this field cannot be filtered'}
        onClick={() => (state === 'included' ? onRemove(field, value) : onInclude(field, value))}
      >
        <span className="ex-facet__bar" style={{ width: `${max ? Math.max(2, (v.count / max) * 100) : 0}%` }} aria-hidden="true" />
        <span className="ex-facet__text mono ellipsis">{text}</span>
        <span className="ex-facet__count">{formatInt(v.count)}</span>
      </button>
      <button
        type="button"
        className="ex-facet__exclude"
        disabled={!usable}
        aria-pressed={state === 'excluded'}
        aria-label={`Exclude ${field} ${text}`}
        title={state === 'excluded' ? `Remove the exclusion of ${text}` : `Exclude ${field} ${text}`}
        onClick={() => (state === 'excluded' ? onRemove(field, value) : onExclude(field, value))}
        data-testid="facet-exclude"
      >
        −
      </button>
    </li>
  );
}
