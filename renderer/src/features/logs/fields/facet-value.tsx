/** One value of a facet, as the explorer's facets and the facets on fields inside the records show it. */
import type { ReactNode } from 'react';
import { facetChangeText, facetChangeTitle, type FacetChange } from '../../../lib/compare.ts';
import { formatInt } from '../../../lib/format.ts';

/** A facet value's change against the compared period (`+12%`, `new`…), its exact count on hover. */
export function FacetChangeBadge({ change, label }: { change: FacetChange; label: string }) {
  const tone = change.kind === 'change' ? (change.diff > 0 ? 'up' : change.diff < 0 ? 'down' : 'same') : change.kind;
  return (
    <span className={`ex-facet__change is-${tone}`} title={facetChangeTitle(change, label)} data-testid="facet-change">
      {facetChangeText(change)}
    </span>
  );
}

interface FacetAction {
  disabled: boolean;
  title: string;
  onClick: () => void;
}

/**
 * The row: a button that filters for the value (its bar, text, change and count) and `−` beside
 * it that excludes the value; each undoes its own filter when pressed again (`state`).
 */
export function FacetValueRow({
  testId,
  value,
  state,
  count,
  max,
  change,
  include,
  exclude,
  children,
}: {
  /** The row's test id; its exclude button's is `<testId>-exclude` without the `-value`. */
  testId: 'facet' | 'field-facet';
  /** The value as the row's data-value says it. */
  value: string;
  state: 'included' | 'excluded' | 'none';
  count: number;
  /** The facet's largest count: the bar's full width. */
  max: number;
  change: { change: FacetChange; label: string } | null;
  include: FacetAction;
  exclude: FacetAction & { label: string };
  /** The value's text. */
  children: ReactNode;
}) {
  return (
    <li className={`ex-facet__row is-${state}`} data-testid={`${testId}-value`} data-value={value}>
      <button type="button" className="ex-facet__value" disabled={include.disabled} aria-pressed={state === 'included'} title={include.title} onClick={include.onClick}>
        <span className="ex-facet__bar" style={{ width: `${max ? Math.max(2, (count / max) * 100) : 0}%` }} aria-hidden="true" />
        {children}
        {change && <FacetChangeBadge change={change.change} label={change.label} />}
        <span className="ex-facet__count">{formatInt(count)}</span>
      </button>
      <button
        type="button"
        className="icon-btn ex-facet__exclude"
        disabled={exclude.disabled}
        aria-pressed={state === 'excluded'}
        aria-label={exclude.label}
        title={exclude.title}
        onClick={exclude.onClick}
        data-testid={`${testId}-exclude`}
      >
        −
      </button>
    </li>
  );
}
