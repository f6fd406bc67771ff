/**
 * "Filter for this value / exclude it" beside each scalar of the detail panel's metadata
 *: + adds `field=<path>:<value>`, − adds `field=<path>:!<value>`, with the path as
 * the server reads it (lib/field-filters.ts, fieldPathAt). Values no filter can name (a null,
 * an element of a longer array, a key with a dot) get no buttons.
 */
import type { JsonPath, ScalarActions } from './json-tree.tsx';
import type { FieldFilter } from '../../../../contract/fields.ts';
import { fieldFilterFor, fieldFilterLabel } from '../../lib/field-filters.ts';

export function fieldFilterActions(metadata: unknown, onFilter: (f: FieldFilter) => void): ScalarActions {
  return (path: JsonPath, value: unknown) => {
    const include = fieldFilterFor(metadata, path, value, false);
    const exclude = fieldFilterFor(metadata, path, value, true);
    if (!include && !exclude) return null;
    const at = (include ?? exclude)!.path;
    return (
      <span className="jf-actions" data-testid="json-filter" data-path={at}>
        {include && (
          <button type="button" className="jf-btn" title={`Filter for ${fieldFilterLabel(include)}`} aria-label={`Filter for ${fieldFilterLabel(include)}`} onClick={() => onFilter(include)} data-testid="json-filter-include">
            +
          </button>
        )}
        {exclude && (
          <button type="button" className="jf-btn jf-btn--not" title={`Exclude: ${fieldFilterLabel(exclude)}`} aria-label={`Exclude: ${fieldFilterLabel(exclude)}`} onClick={() => onFilter(exclude)} data-testid="json-filter-exclude">
            −
          </button>
        )}
      </span>
    );
  };
}
