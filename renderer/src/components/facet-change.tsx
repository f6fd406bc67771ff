import { facetChangeText, facetChangeTitle, type FacetChange } from '../lib/compare.ts';

/** A facet value's change against the compared period (`+12%`, `new`…), its exact count on hover. */
export function FacetChangeBadge({ change, label }: { change: FacetChange; label: string }) {
  const tone = change.kind === 'change' ? (change.diff > 0 ? 'up' : change.diff < 0 ? 'down' : 'same') : change.kind;
  return (
    <span className={`ex-facet__change is-${tone}`} title={facetChangeTitle(change, label)} data-testid="facet-change">
      {facetChangeText(change)}
    </span>
  );
}
