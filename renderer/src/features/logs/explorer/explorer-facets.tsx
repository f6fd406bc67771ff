import type { ReactNode } from 'react';
import type { FacetsAnswer, FacetValue } from '../../../api/logs.ts';
import { facetChangeOf, type FacetChange } from '../../../lib/compare.ts';
import { formatInt } from '../../../lib/format.ts';
import { checkFilterValue, type FilterField } from '../../../../../contract/filters.ts';
import { findFilter, type LogFilter } from '../../../lib/explorer-filters.ts';
import { FacetValueRow } from '../fields/facet-value.tsx';
import { Skeleton } from '../../../ui/skeleton.tsx';

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

/** The filter value a facet value stands for: records without a status or a level are `status=none`, `level=none`. */
function filterValueOf(field: FilterField, value: string | number | null): string | null {
  if (value === null) return field === 'status' || field === 'level' ? 'none' : null;
  return String(value);
}

/**
 * Top values of each field over the current result, with counts. A click includes a value
 * (adds a chip, or removes it when it is already included); "−" excludes it. With a compared
 * period each count carries its change; `labelOf` names a value (a function's slug).
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
  note,
  compared,
  labelOf,
  children,
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
  /** A line under the title (a search still counting). */
  note?: ReactNode;
  /** The compared period's facets, and what it is. */
  compared?: { answer: FacetsAnswer | undefined; label: string } | null;
  labelOf?: (field: FilterField, value: string | number) => string | null;
  /** Facets chosen by the user (fields inside the records) and their controls, before the built-in ones. */
  children?: ReactNode;
}) {
  return (
    <aside className={`ex-facets${busy ? ' is-refetching' : ''}`} aria-label="Fields" data-testid="facets" aria-busy={busy}>
      <div className="ex-facets__title">Fields</div>
      {note && (
        <div className="ex-facets__note muted small" data-testid="facets-progress">
          {note}
        </div>
      )}
      {children}
      {fields.length === 0 && <p className="muted small ex-facets__none">This source has no built-in filter fields: search its messages, or add a facet on a field inside its records.</p>}
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
                {values.map((v) => {
                  const filterValue = filterValueOf(field, v.value);
                  const change = facetChangeOf(compared?.answer, field, v);
                  return (
                    <FacetRow
                      key={String(v.value)}
                      field={field}
                      v={v}
                      max={max}
                      chip={filterValue === null ? undefined : findFilter(filters, field, normalized(field, filterValue))}
                      label={v.value === null ? null : (labelOf?.(field, v.value) ?? null)}
                      change={change && compared ? { change, label: compared.label } : null}
                      onInclude={onInclude}
                      onExclude={onExclude}
                      onRemove={onRemove}
                    />
                  );
                })}
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
  label,
  change,
  onInclude,
  onExclude,
  onRemove,
}: {
  field: FilterField;
  v: FacetValue;
  max: number;
  chip: LogFilter | undefined;
  /** A readable name for the value (a function's slug), shown before it. */
  label: string | null;
  change: { change: FacetChange; label: string } | null;
  onInclude: (field: FilterField, value: string) => void;
  onExclude: (field: FilterField, value: string) => void;
  onRemove: (field: FilterField, value: string) => void;
}) {
  const text = v.value === null ? (field === 'status' ? 'no status' : field === 'level' ? 'no level' : '(none)') : String(v.value);
  const raw = filterValueOf(field, v.value);
  const check = raw === null ? null : checkFilterValue(field, raw);
  // A missing value, or one the wire form cannot carry (a comma), is shown but not filterable.
  const usable = check?.ok === true;
  const value = check?.ok ? check.value : text;
  const state = chip ? (chip.exclude ? 'excluded' : 'included') : 'none';
  return (
    <FacetValueRow
      testId="facet"
      value={text}
      state={state}
      count={v.count}
      max={max}
      change={change}
      include={{
        disabled: !usable,
        title: usable ? (state === 'included' ? `Remove the filter ${field} ${value}` : `Show only ${field} ${value}${field === 'path' ? ' (and paths under it)' : ''}`) : check && !check.ok ? check.reason : 'Records without this field cannot be filtered',
        onClick: () => (state === 'included' ? onRemove(field, value) : onInclude(field, value)),
      }}
      exclude={{
        disabled: !usable,
        label: `Exclude ${field} ${text}`,
        title: state === 'excluded' ? `Remove the exclusion of ${text}` : `Exclude ${field} ${text}`,
        onClick: () => (state === 'excluded' ? onRemove(field, value) : onExclude(field, value)),
      }}
    >
      {label ? (
        <span className="ex-facet__text ex-facet__text--named ellipsis" title={text}>
          {label} <span className="mono muted">{text.slice(0, 8)}</span>
        </span>
      ) : (
        <span className={`ex-facet__text ellipsis${v.value === null ? ' ex-facet__text--none' : ' mono'}`}>{text}</span>
      )}
    </FacetValueRow>
  );
}
