/**
 * Facets on chosen fields inside the records, in the facet sidebar below the
 * built-in ones: each field's top values with exact counts, and with a compared period each
 * count's change, as the built-in facets show it; a click includes a value (an `is` chip, or
 * removes it when included), − excludes it, × takes the facet away.
 */
import { useEffect, useRef } from 'react';
import type { FieldFacetsAnswer } from './field-paths-api.ts';
import type { FacetValue } from '../../../api/logs.ts';
import { FacetValueRow } from './facet-value.tsx';
import { Skeleton } from '../../../ui/skeleton.tsx';
import { facetChangeOf, type FacetChange } from '../../../lib/compare.ts';
import { unsendable, type FieldFilter } from '../../../../../contract/fields.ts';
import { formatInt } from '../../../lib/format.ts';

/** `headers.cf_ipcountry` for `request.headers.cf_ipcountry`: the sidebar is narrow; the whole path is the title. */
export function shortPath(path: string): string {
  const parts = path.split('.');
  return parts.length > 2 ? `…${parts.slice(-2).join('.')}` : path;
}

export function FieldFacets({
  paths,
  answer,
  loading,
  counting,
  error,
  filters,
  onInclude,
  onExclude,
  onRemoveFilter,
  onRemoveFacet,
  compared,
}: {
  paths: readonly string[];
  answer: FieldFacetsAnswer | undefined;
  loading: boolean;
  /** The server's walk has not covered the range yet: the counts are partial. */
  counting: boolean;
  error: string | null;
  filters: readonly FieldFilter[];
  onInclude: (f: FieldFilter) => void;
  onExclude: (f: FieldFilter) => void;
  onRemoveFilter: (f: FieldFilter) => void;
  onRemoveFacet: (path: string) => void;
  /** The compared period's counts (undefined until both periods are counted whole), and what it is. */
  compared?: { answer: FieldFacetsAnswer | undefined; label: string } | null;
}) {
  // A facet just added is scrolled to: it goes below the built-in ones, often out of sight.
  const last = paths[paths.length - 1];
  const count = useRef(paths.length);
  useEffect(() => {
    if (paths.length > count.current && last) document.querySelector(`[data-testid="field-facet"][data-path="${last}"]`)?.scrollIntoView({ block: 'nearest' });
    count.current = paths.length;
  }, [paths.length, last]);
  if (!paths.length) return null;
  return (
    <>
      {error && <p className="text-error small ex-facets__none">{error}</p>}
      {paths.map((path) => {
        const values = answer?.result[path];
        const others = answer?.others[path] ?? 0;
        const max = (values ?? []).reduce((m, v) => Math.max(m, v.count), 0);
        return (
          <section key={path} className="ex-facet ff-facet" data-testid="field-facet" data-path={path}>
            <div className="ff-facet__head">
              <h3 className="ex-facet__name mono ellipsis" title={path}>
                {shortPath(path)}
              </h3>
              <button type="button" className="icon-btn ff-facet__remove" aria-label={`Remove the facet ${path}`} title="Remove this facet" onClick={() => onRemoveFacet(path)} data-testid="field-facet-remove">
                ×
              </button>
            </div>
            {!values ? (
              loading || !error ? (
                <div className="ex-facet__loading">
                  <Skeleton width="80%" height={12} />
                  <Skeleton width="60%" height={12} />
                </div>
              ) : null
            ) : values.length === 0 ? (
              <div className="muted small">{counting ? 'No values so far' : 'No records carry it'}</div>
            ) : (
              <ul className="ex-facet__values">
                {values.map((v) => (
                  <FieldFacetRow
                    key={String(v.value)}
                    path={path}
                    v={v}
                    max={max}
                    filters={filters}
                    change={compared ? facetChangeOf(compared.answer, path, v) : null}
                    changeLabel={compared?.label ?? ''}
                    onInclude={onInclude}
                    onExclude={onExclude}
                    onRemove={onRemoveFilter}
                  />
                ))}
              </ul>
            )}
            {(others > 0 || counting) && values && (
              <div className="ex-facet__others muted small">
                {others > 0 && `${formatInt(others)} other ${others === 1 ? 'value' : 'values'}`}
                {others > 0 && counting && ' · '}
                {counting && 'counting…'}
              </div>
            )}
          </section>
        );
      })}
    </>
  );
}

function FieldFacetRow({
  path,
  v,
  max,
  filters,
  change,
  changeLabel,
  onInclude,
  onExclude,
  onRemove,
}: {
  path: string;
  v: FacetValue;
  max: number;
  filters: readonly FieldFilter[];
  change: FacetChange | null;
  changeLabel: string;
  onInclude: (f: FieldFilter) => void;
  onExclude: (f: FieldFilter) => void;
  onRemove: (f: FieldFilter) => void;
}) {
  const text = v.value === null ? null : String(v.value);
  const chip = text === null ? undefined : filters.find((f) => f.path === path && f.value === text && (f.op === 'is' || f.op === 'not'));
  const state = chip ? (chip.op === 'not' ? 'excluded' : 'included') : 'none';
  // A value the wire form cannot match exactly (a leading !, a trailing *) can still be excluded.
  const canInclude = text !== null && unsendable('is', text) === null;
  const canExclude = text !== null;
  const is: FieldFilter | null = text === null ? null : { path, op: 'is', value: text };
  const not: FieldFilter | null = text === null ? null : { path, op: 'not', value: text };
  return (
    <FacetValueRow
      testId="field-facet"
      value={text ?? ''}
      state={state}
      count={v.count}
      max={max}
      change={change && { change, label: changeLabel }}
      include={{
        disabled: !(state === 'included' || canInclude),
        title: text === null ? 'Records without this field cannot be filtered for' : state === 'included' ? `Remove the filter ${path} is ${text}` : canInclude ? `Show only ${path} is ${text}` : (unsendable('is', text) ?? ''),
        onClick: () => (state === 'included' && chip ? onRemove(chip) : is && onInclude(is)),
      }}
      exclude={{
        disabled: !canExclude,
        label: `Exclude ${path} ${text ?? ''}`,
        title: state === 'excluded' ? `Remove the exclusion of ${text}` : `Exclude ${path} ${text}`,
        onClick: () => (state === 'excluded' && chip ? onRemove(chip) : not && onExclude(not)),
      }}
    >
      <span className={`ex-facet__text ellipsis${text === null ? ' ex-facet__text--none' : ' mono'}`}>{text === null ? '(none)' : text === '' ? '(empty)' : text}</span>
    </FacetValueRow>
  );
}
