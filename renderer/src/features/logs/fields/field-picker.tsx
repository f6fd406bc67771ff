/**
 * The field picker: the fields a source's records carry, read from the newest
 * records of the window (`/api/logs/field-paths`), like Studio's field reference or Kibana's
 * field sidebar: searchable, each with its type, how many of the sampled records hold it and
 * example values. A field becomes a filter (is / is not / starts with / ≥ / ≤ a value), a
 * facet in the sidebar, or a table column.
 */
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { useFieldPaths, type FieldPath } from './field-paths-api.ts';
import type { LogsParams } from '../../../api/logs.ts';
import { Popover } from '../../../ui/popover.tsx';
import { formatInt } from '../../../lib/format.ts';
import { FIELD_OPS, isFieldPath, MAX_FIELD_FACETS, type FieldFilter, type FieldOp } from '../../../../../contract/fields.ts';
import { checkFieldFilter, FIELD_OP_LABELS } from '../../../lib/field-filters.ts';

const TYPE_LABELS: Record<string, string> = { string: 'text', number: 'number', boolean: 'bool', null: 'null', array: 'list', object: 'object' };

export function typeLabel(types: readonly string[]): string {
  const named = types.filter((t) => t !== 'null');
  return (named.length ? named : types).map((t) => TYPE_LABELS[t] ?? t).join(' · ');
}

/**
 * Paths whose text holds every word of the query (in any order), the closest first: a path
 * whose last part is the last word typed, then one whose last part starts with it (`country`
 * finds cf.country, then cf.countryside, then cf_ipcountry); otherwise in the list's order.
 */
export function matchFields(list: readonly FieldPath[], query: string): FieldPath[] {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return [...list];
  const hits = list.filter((f) => words.every((w) => f.path.toLowerCase().includes(w)));
  const word = words[words.length - 1]!;
  const rank = (f: FieldPath) => {
    const last = f.path.slice(f.path.lastIndexOf('.') + 1).toLowerCase();
    return last === word ? 2 : last.startsWith(word) ? 1 : 0;
  };
  return hits.sort((a, b) => rank(b) - rank(a));
}

/** What the picker lists and what its buttons do. */
interface PickerProps {
  /** source, project, start and end: the records whose fields are listed; null until known. */
  params: LogsParams | null;
  /** Fields already shown as facets and as columns (their buttons say so). */
  facets: readonly string[];
  columns: readonly string[];
  onFilter: (f: FieldFilter) => void;
  onFacet: (path: string) => void;
  onColumn: (path: string) => void;
}

export function FieldPicker({
  params,
  facets,
  columns,
  onFilter,
  onFacet,
  onColumn,
  label = 'Fields',
  title = 'Filter, facet or show any field inside the records',
  testId = 'field-picker',
  className = 'btn btn--tiny ex-chips__add',
}: PickerProps & {
  label?: string;
  title?: string;
  testId?: string;
  className?: string;
}) {
  const [open, setOpen] = useState(false);
  const trigger = useRef<HTMLButtonElement>(null);
  return (
    <>
      <button
        ref={trigger}
        type="button"
        className={`${className}${open ? ' is-open' : ''}`}
        aria-expanded={open}
        aria-haspopup="dialog"
        title={title}
        disabled={!params}
        onClick={() => setOpen(!open)}
        data-testid={`${testId}-open`}
      >
        {label}
      </button>
      <Popover anchor={trigger} open={open} onClose={() => setOpen(false)} width={460} label="Fields inside the records" testId={testId} className="fp">
        <PickerBody
          params={params}
          facets={facets}
          columns={columns}
          onFilter={(f) => {
            onFilter(f);
            setOpen(false);
          }}
          onFacet={onFacet}
          onColumn={onColumn}
        />
      </Popover>
    </>
  );
}

function PickerBody({ params, facets, columns, onFilter, onFacet, onColumn }: PickerProps) {
  const answer = useFieldPaths(params);
  const [query, setQuery] = useState('');
  const [chosen, setChosen] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const searchRef = useRef<HTMLInputElement>(null);
  const listId = useId();
  const list = useMemo(() => answer.data?.result ?? [], [answer.data]);
  const shown = useMemo(() => matchFields(list, query), [list, query]);
  // A path typed whole that the sample does not hold (older records may): offered as is.
  const typed = query.trim();
  const extra: FieldPath | null = isFieldPath(typed) && (typed.includes('.') || shown.length === 0) && !list.some((f) => f.path === typed) ? { path: typed, types: [], count: 0, examples: [] } : null;
  const rows = extra ? [...shown, extra] : shown;

  useEffect(() => searchRef.current?.focus(), []);
  useEffect(() => setActive(0), [query]);

  return (
    <div className="fp__body">
      <div className="fp__head">
        <input
          ref={searchRef}
          className="input input--small fp__search"
          type="search"
          placeholder={list.length ? `Search ${formatInt(list.length)} fields…` : 'Search fields…'}
          aria-label="Search fields"
          aria-controls={listId}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
              e.preventDefault();
              setActive((i) => Math.max(0, Math.min(rows.length - 1, i + (e.key === 'ArrowDown' ? 1 : -1))));
            } else if (e.key === 'Enter' && rows[active]) {
              e.preventDefault();
              setChosen(rows[active]!.path);
            }
          }}
          data-testid="field-search"
        />
        <div className="fp__note muted small">
          {answer.isPending ? 'Reading the newest records…' : answer.data ? `From the newest ${formatInt(answer.data.sampled)} ${answer.data.sampled === 1 ? 'record' : 'records'} in range` : ''}
        </div>
      </div>
      {answer.isError ? (
        <p className="text-error small fp__empty">{answer.error.message}</p>
      ) : answer.data && rows.length === 0 ? (
        <p className="muted small fp__empty">{list.length === 0 ? 'No fields: no records in this range carry metadata.' : 'No field matches. Type a whole dotted path to use a field the newest records lack.'}</p>
      ) : null}
      <ul className="fp__list" id={listId} aria-label="Fields">
        {rows.map((f, i) => (
          <li key={f.path} className={`fp__item${i === active ? ' is-active' : ''}${chosen === f.path ? ' is-chosen' : ''}`} data-testid="field-item" data-path={f.path}>
            <button type="button" className="fp__row" aria-expanded={chosen === f.path} onClick={() => setChosen(chosen === f.path ? null : f.path)} onMouseEnter={() => setActive(i)}>
              <span className="fp__path mono ellipsis" title={f.path}>
                {f.path}
              </span>
              {(f.indexed || (f === extra && answer.data?.indexed.includes(f.path))) && (
                <span className="fp__indexed" title="Indexed: its filters and facets read the field index, not every record" data-testid="field-indexed">
                  indexed
                </span>
              )}
              <span className="fp__type">{f === extra ? 'typed' : typeLabel(f.types)}</span>
              {f !== extra && answer.data && answer.data.sampled > 0 && (
                <span className="fp__share" title={`${formatInt(f.count)} of the ${formatInt(answer.data.sampled)} sampled records hold it`}>
                  {Math.round((f.count / answer.data.sampled) * 100)}%
                </span>
              )}
            </button>
            {chosen !== f.path && f.examples.length > 0 && <div className="fp__examples muted mono ellipsis">{f.examples.join(' · ')}</div>}
            {chosen === f.path && <FieldForm field={f} facets={facets} columns={columns} onFilter={onFilter} onFacet={onFacet} onColumn={onColumn} />}
          </li>
        ))}
      </ul>
    </div>
  );
}

function FieldForm({
  field,
  facets,
  columns,
  onFilter,
  onFacet,
  onColumn,
}: {
  field: FieldPath;
  facets: readonly string[];
  columns: readonly string[];
  onFilter: (f: FieldFilter) => void;
  onFacet: (path: string) => void;
  onColumn: (path: string) => void;
}) {
  const numeric = field.types[0] === 'number';
  const [op, setOp] = useState<FieldOp>('is');
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const valueRef = useRef<HTMLInputElement>(null);
  const examplesId = useId();
  useEffect(() => valueRef.current?.focus(), []);
  const faceted = facets.includes(field.path);
  const column = columns.includes(field.path);

  return (
    <form
      className="fp__form"
      data-testid="field-form"
      onSubmit={(e) => {
        e.preventDefault();
        const c = checkFieldFilter(field.path, op, value);
        if (!c.ok) {
          setError(c.reason);
          return;
        }
        onFilter(c.filter);
      }}
    >
      <div className="fp__form-row">
        <select className="select select--small" aria-label="Test" value={op} onChange={(e) => setOp(e.target.value as FieldOp)} data-testid="field-op">
          {FIELD_OPS.map((o) => (
            <option key={o} value={o}>
              {FIELD_OP_LABELS[o]}
            </option>
          ))}
        </select>
        <input
          ref={valueRef}
          className="input input--small input--mono fp__value"
          aria-label="Value"
          list={examplesId}
          inputMode={op === 'gte' || op === 'lte' ? 'decimal' : undefined}
          placeholder={op === 'gte' || op === 'lte' ? 'a number' : numeric ? 'e.g. 200' : 'value'}
          value={value}
          aria-invalid={error ? true : undefined}
          onChange={(e) => {
            setValue(e.target.value);
            setError(null);
          }}
          data-testid="field-value"
        />
        <datalist id={examplesId}>
          {field.examples.map((x) => (
            <option key={x} value={x} />
          ))}
        </datalist>
        <button type="submit" className="btn btn--tiny btn--primary" data-testid="field-add-filter">
          Filter
        </button>
      </div>
      {error && <div className="field-error">{error}</div>}
      {field.examples.length > 0 && (
        <div className="fp__chips" aria-label="Example values">
          {field.examples.map((x) => (
            <button
              key={x}
              type="button"
              className="fp__example mono"
              title={`Use ${x}`}
              onClick={() => {
                setValue(x);
                setError(null);
                valueRef.current?.focus();
              }}
              data-testid="field-example"
            >
              {x === '' ? '(empty)' : x}
            </button>
          ))}
        </div>
      )}
      <div className="fp__form-row fp__form-row--more">
        <button
          type="button"
          className="btn btn--tiny"
          disabled={faceted || facets.length >= MAX_FIELD_FACETS}
          title={faceted ? 'Already in the sidebar' : facets.length >= MAX_FIELD_FACETS ? `At most ${MAX_FIELD_FACETS} field facets` : 'Show its top values in the sidebar'}
          onClick={() => onFacet(field.path)}
          data-testid="field-add-facet"
        >
          {faceted ? '✓ Facet' : '+ Facet'}
        </button>
        <button type="button" className="btn btn--tiny" disabled={column} title={column ? 'Already a column' : 'Show it as a table column'} onClick={() => onColumn(field.path)} data-testid="field-add-column">
          {column ? '✓ Column' : '+ Column'}
        </button>
      </div>
    </form>
  );
}
