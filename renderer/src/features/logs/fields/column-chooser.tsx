/**
 * The column chooser: which columns the table shows for this source (its own and
 * any field inside the records), their order and width (kept in the URL, lib/table-columns.ts);
 * rows wrapped or dense; and how times are shown (local, UTC or relative, a setting of this
 * browser, ui/time-mode.tsx).
 */
import { useMemo, useRef, useState } from 'react';
import { useFieldPaths } from './field-paths-api.ts';
import type { ExplorerColumn, LogsParams } from '../../../api/logs.ts';
import { columnHeader } from '../explorer-table.tsx';
import { Popover } from '../../../ui/popover.tsx';
import { TimeModeSwitch } from '../../../ui/time-mode.tsx';
import { clampWidth, columnField, fieldColumn, isDefaultLayout, MAX_COLUMNS, MAX_COLUMN_WIDTH, MIN_COLUMN_WIDTH, moveColumn, resizeColumn, toggleColumn, type ColumnId, type ColumnSpec } from '../../../lib/table-columns.ts';
import { matchFields } from './field-picker.tsx';

export interface TableLayout {
  columns: ColumnSpec[];
  wrap: boolean;
  dense: boolean;
}

export function ColumnChooser({
  layout,
  sourceColumns,
  sourceLabel,
  fieldParams,
  onChange,
}: {
  layout: TableLayout;
  /** The source's own columns, in its order. */
  sourceColumns: readonly ExplorerColumn[];
  sourceLabel: string;
  /** For the list of fields to add (source, project, range); null until known. */
  fieldParams: LogsParams | null;
  /** The new layout; `columns` undefined = the source's own. */
  onChange: (next: { columns?: ColumnSpec[]; wrap: boolean; dense: boolean }) => void;
}) {
  const [open, setOpen] = useState(false);
  const trigger = useRef<HTMLButtonElement>(null);
  const custom = !isDefaultLayout(layout.columns, sourceColumns);
  return (
    <>
      <button
        ref={trigger}
        type="button"
        className={`btn btn--tiny cc-trigger${open ? ' is-open' : ''}`}
        aria-expanded={open}
        aria-haspopup="dialog"
        title="Choose the table’s columns, rows and how times are shown"
        onClick={() => setOpen(!open)}
        data-testid="column-chooser-open"
      >
        Columns{custom ? ` · ${layout.columns.length}` : ''}
        {(layout.wrap || layout.dense) && <span className="muted">{[layout.wrap && 'wrap', layout.dense && 'dense'].filter(Boolean).join(', ')}</span>}
      </button>
      <Popover anchor={trigger} open={open} onClose={() => setOpen(false)} width={400} align="end" label="Table columns" testId="column-chooser" className="cc">
        <ChooserBody layout={layout} sourceColumns={sourceColumns} sourceLabel={sourceLabel} fieldParams={fieldParams} onChange={onChange} custom={custom} />
      </Popover>
    </>
  );
}

function ChooserBody({
  layout,
  sourceColumns,
  sourceLabel,
  fieldParams,
  onChange,
  custom,
}: {
  layout: TableLayout;
  sourceColumns: readonly ExplorerColumn[];
  sourceLabel: string;
  fieldParams: LogsParams | null;
  onChange: (next: { columns?: ColumnSpec[]; wrap: boolean; dense: boolean }) => void;
  custom: boolean;
}) {
  const { columns, wrap, dense } = layout;
  const setColumns = (next: ColumnSpec[]) => onChange({ columns: isDefaultLayout(next, sourceColumns) || next.length === 0 ? undefined : next, wrap, dense });
  const hidden = sourceColumns.filter((c) => !columns.some((s) => s.id === c));
  const shownFields = columns.map((c) => columnField(c.id)).filter((p): p is string => p !== null);

  return (
    <div className="cc__body">
      <div className="cc__section">
        <div className="cc__head">
          <span>Columns · {sourceLabel}</span>
          <button type="button" className="link-btn small" disabled={!custom} onClick={() => onChange({ columns: undefined, wrap, dense })} data-testid="columns-reset">
            Reset
          </button>
        </div>
        <ol className="cc__list" data-testid="column-list">
          {columns.map((c, i) => (
            <ColumnRow
              key={c.id}
              spec={c}
              first={i === 0}
              last={i === columns.length - 1}
              only={columns.length === 1}
              onMove={(by) => setColumns(moveColumn(columns, c.id, by))}
              onRemove={() => setColumns(toggleColumn(columns, c.id))}
              onWidth={(w) => setColumns(resizeColumn(columns, c.id, w))}
            />
          ))}
        </ol>
        {hidden.length > 0 && (
          <div className="cc__hidden">
            <span className="muted small">Hidden:</span>
            {hidden.map((c) => (
              <button key={c} type="button" className="btn btn--tiny" onClick={() => setColumns(toggleColumn(columns, c))} data-testid={`column-show-${c}`}>
                + {columnHeader(c)}
              </button>
            ))}
          </div>
        )}
        <AddFieldColumn params={fieldParams} shown={shownFields} full={columns.length >= MAX_COLUMNS} onAdd={(path) => setColumns(toggleColumn(columns, fieldColumn(path)))} />
      </div>
      <div className="cc__section cc__section--row">
        <div className="cc__group">
          <div className="cc__head">Rows</div>
          <div className="cc__toggles">
            <button type="button" className={`btn btn--tiny${wrap ? ' is-on' : ''}`} aria-pressed={wrap} onClick={() => onChange({ columns: custom ? columns : undefined, wrap: !wrap, dense })} data-testid="rows-wrap">
              Wrap long values
            </button>
            <button type="button" className={`btn btn--tiny${dense ? ' is-on' : ''}`} aria-pressed={dense} onClick={() => onChange({ columns: custom ? columns : undefined, wrap, dense: !dense })} data-testid="rows-dense">
              Dense
            </button>
          </div>
        </div>
        <div className="cc__group" title="Relative times count back from the server’s clock. A setting of this browser, for every page.">
          <div className="cc__head">Times</div>
          <TimeModeSwitch />
        </div>
      </div>
    </div>
  );
}

function ColumnRow({
  spec,
  first,
  last,
  only,
  onMove,
  onRemove,
  onWidth,
}: {
  spec: ColumnSpec;
  first: boolean;
  last: boolean;
  only: boolean;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
  onWidth: (w: number | undefined) => void;
}) {
  const field = columnField(spec.id);
  const name = field ?? columnHeader(spec.id);
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft === null) return;
    const n = Number(draft);
    onWidth(draft.trim() === '' || !Number.isFinite(n) ? undefined : clampWidth(n));
    setDraft(null);
  };
  return (
    <li className="cc__row" data-testid="column-row" data-col-id={spec.id}>
      <span className={`cc__name ellipsis${field ? ' mono' : ''}`} title={field ?? undefined}>
        {name}
      </span>
      <input
        className="input input--small cc__width"
        type="number"
        min={MIN_COLUMN_WIDTH}
        max={MAX_COLUMN_WIDTH}
        step={10}
        placeholder="auto"
        aria-label={`Width of ${name} in pixels (empty: automatic)`}
        value={draft ?? (spec.width === undefined ? '' : String(spec.width))}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === 'Enter') commit();
        }}
        data-testid="column-width"
      />
      <span className="cc__px muted small">px</span>
      <button type="button" className="icon-btn cc__btn" disabled={first} aria-label={`Move ${name} left`} title="Move left" onClick={() => onMove(-1)} data-testid="column-up">
        ↑
      </button>
      <button type="button" className="icon-btn cc__btn" disabled={last} aria-label={`Move ${name} right`} title="Move right" onClick={() => onMove(1)} data-testid="column-down">
        ↓
      </button>
      <button type="button" className="icon-btn cc__btn" disabled={only} aria-label={`Hide ${name}`} title="Hide" onClick={onRemove} data-testid="column-remove">
        ×
      </button>
    </li>
  );
}

function AddFieldColumn({ params, shown, full, onAdd }: { params: LogsParams | null; shown: readonly string[]; full: boolean; onAdd: (path: string) => void }) {
  const answer = useFieldPaths(params);
  const [query, setQuery] = useState('');
  const matches = useMemo(() => matchFields(answer.data?.result ?? [], query).filter((f) => !shown.includes(f.path)).slice(0, 8), [answer.data, query, shown]);
  return (
    <div className="cc__add">
      <input
        className="input input--small cc__search"
        type="search"
        placeholder="Add a field inside the records…"
        aria-label="Add a column for a field inside the records"
        value={query}
        disabled={full}
        onChange={(e) => setQuery(e.target.value)}
        data-testid="column-field-search"
      />
      {query.trim() && (
        <ul className="cc__matches">
          {matches.length === 0 ? (
            <li className="muted small">{answer.isPending ? 'Reading the newest records…' : 'No field matches'}</li>
          ) : (
            matches.map((f) => (
              <li key={f.path}>
                <button
                  type="button"
                  className="cc__match mono ellipsis"
                  title={f.examples.length ? `e.g. ${f.examples.join(', ')}` : f.path}
                  onClick={() => {
                    onAdd(f.path);
                    setQuery('');
                  }}
                  data-testid="column-field-add"
                  data-path={f.path}
                >
                  + {f.path}
                </button>
              </li>
            ))
          )}
        </ul>
      )}
    </div>
  );
}

/** The field paths of a layout's columns (the picker marks them). */
export function columnFields(columns: readonly ColumnSpec[]): string[] {
  return columns.map((c) => columnField(c.id as ColumnId)).filter((p): p is string => p !== null);
}
