/**
 * The explorer's fields inside the records and table layout, in one place so the
 * explorer view only places the pieces: the field picker and the field chips beside the
 * built-in chips, field facets in the sidebar, the column chooser, the table's columns and
 * the detail panel's "filter for this value". State is the view's (the URL's), changed through
 * `setLogs` like every other explorer control.
 */
import { useMemo, type ReactNode } from 'react';
import { useFieldFacets } from './field-paths-api.ts';
import type { ExplorerSource, LogsParams } from '../../../api/logs.ts';
import type { UpdateOptions } from '../../../app-state.tsx';
import { MAX_FIELD_FACETS, MAX_FIELD_FILTERS, type FieldFilter } from '../../../../../contract/fields.ts';
import { addFieldFilter, removeFieldFilter } from '../../../lib/field-filters.ts';
import { formatIsoMicros } from '../../../../../contract/instants.ts';
import type { LogsRange } from '../../../lib/logs-range.ts';
import type { LogsView } from '../../../lib/logs-view.ts';
import { searchProgress } from '../../../lib/search-progress.ts';
import { effectiveColumns, fieldColumn, isDefaultLayout, resizeColumn, toggleColumn, type ColumnId, type ColumnSpec } from '../../../lib/table-columns.ts';
import { ColumnChooser, columnFields } from './column-chooser.tsx';
import { FieldChips } from './field-chips.tsx';
import { FieldFacets } from './field-facets.tsx';
import { FieldPicker } from './field-picker.tsx';

const EMPTY: never[] = [];

export interface ExplorerFields {
  /** The chips on fields inside the records (sent as `field=`). */
  filters: readonly FieldFilter[];
  addFilter: (f: FieldFilter) => void;
  /** The chips, for ExplorerChips' `extra`. */
  chips: ReactNode;
  /** The picker's button, for ExplorerChips' `actions`. */
  picker: ReactNode;
  /** The field facets and their button, for ExplorerFacets' children. */
  facets: ReactNode;
  /** The column chooser's button. */
  chooser: ReactNode;
  /** The table's columns (without the method while the detail panel is open, as before). */
  tableColumns: (detailOpen: boolean) => ColumnSpec[];
  onResize: (id: ColumnId, width: number | undefined) => void;
  /** The paths shown as columns, for the table's CSV. */
  fieldColumns: string[];
  wrap: boolean;
  dense: boolean;
}

export function useExplorerFields({
  source,
  logs,
  setLogs,
  params,
  project,
  range,
  compared,
}: {
  source: ExplorerSource | undefined;
  logs: LogsView;
  setLogs: (patch: (l: LogsView) => LogsView, opts?: UpdateOptions) => void;
  /** The explorer's query (with the field chips), or null until it can be asked. */
  params: LogsParams | null;
  project: string | null;
  range: LogsRange | undefined;
  /** The compared period's query (the same chips over the window moved back), its range and its name; null when not comparing. */
  compared: { params: LogsParams; range: LogsRange; label: string } | null;
}): ExplorerFields {
  const filters = logs.fieldFilters ?? EMPTY;
  const facetPaths = logs.fieldFacets ?? EMPTY;
  const sourceColumns = source?.columns ?? EMPTY;
  const columns = useMemo(() => effectiveColumns(logs.columns, sourceColumns), [logs.columns, sourceColumns]);
  const wrap = logs.wrap ?? false;
  const dense = logs.dense ?? false;

  // The picker lists the fields of the window's records, whatever the chips and the search:
  // the list stays put while filters change, and never waits for a search's walk.
  const pathParams = useMemo((): LogsParams | null => {
    if (!source || !params) return null;
    const p: Record<string, string> = { source: source.source };
    if (project) p.project = project;
    if (range?.start !== undefined) p.start = formatIsoMicros(range.start);
    if (range?.end !== undefined) p.end = formatIsoMicros(range.end);
    return p;
  }, [source, params, project, range?.start, range?.end]);

  const facetAnswer = useFieldFacets(params, facetPaths);
  const counting = facetAnswer.data !== undefined && !searchProgress(facetAnswer.data.scanned, range ?? {}).complete;
  const comparedAnswer = useFieldFacets(compared?.params ?? null, facetPaths);
  // Changes only between finished counts of the periods asked for: a partial count against a whole one says nothing.
  const done = (a: typeof facetAnswer, r: LogsRange) => a.data !== undefined && !a.isPlaceholderData && searchProgress(a.data.scanned, r).complete;
  const comparedCounts = compared && range && done(facetAnswer, range) && done(comparedAnswer, compared.range) ? comparedAnswer.data : undefined;

  const addFilter = (f: FieldFilter) =>
    setLogs((l) => {
      const list = l.fieldFilters ?? [];
      return list.length >= MAX_FIELD_FILTERS ? l : { ...l, fieldFilters: addFieldFilter(list, f) };
    });
  const removeFilter = (f: FieldFilter) => setLogs((l) => ({ ...l, fieldFilters: removeFieldFilter(l.fieldFilters ?? [], f) }));
  const addFacet = (path: string) =>
    setLogs((l) => {
      const list = l.fieldFacets ?? [];
      return list.includes(path) || list.length >= MAX_FIELD_FACETS ? l : { ...l, fieldFacets: [...list, path] };
    });
  const removeFacet = (path: string) => setLogs((l) => ({ ...l, fieldFacets: (l.fieldFacets ?? []).filter((p) => p !== path) }));
  const setColumns = (next: ColumnSpec[] | undefined, opts?: UpdateOptions) =>
    setLogs((l) => {
      const { columns: _old, ...rest } = l;
      return next && !isDefaultLayout(next, sourceColumns) ? { ...rest, columns: next } : rest;
    }, opts);
  const addColumn = (path: string) => {
    if (!columns.some((c) => c.id === fieldColumn(path))) setColumns(toggleColumn(columns, fieldColumn(path)));
  };

  const shownFields = columnFields(columns);
  const picker = (
    <FieldPicker params={pathParams} facets={facetPaths} columns={shownFields} onFilter={addFilter} onFacet={addFacet} onColumn={addColumn} label="+ Field filter" />
  );

  return {
    filters,
    addFilter,
    // A flipped chip replaces its pair in place (addFieldFilter).
    chips: <FieldChips filters={filters} onRemove={removeFilter} onFlip={addFilter} />,
    picker,
    facets: (
      <>
        <div className="ff-add">
          {facetPaths.length < MAX_FIELD_FACETS ? (
            <FieldPicker
              params={pathParams}
              facets={facetPaths}
              columns={shownFields}
              onFilter={addFilter}
              onFacet={addFacet}
              onColumn={addColumn}
              label="+ Facet on a field"
              title="Top values of any field inside the records"
              testId="facet-picker"
              className="link-btn small"
            />
          ) : (
            <span className="muted small">At most {MAX_FIELD_FACETS} field facets</span>
          )}
        </div>
        <FieldFacets
          paths={facetPaths}
          answer={facetAnswer.data}
          loading={facetAnswer.isPending}
          counting={counting}
          error={facetAnswer.isError ? facetAnswer.error.message : null}
          filters={filters}
          onInclude={addFilter}
          onExclude={addFilter}
          onRemoveFilter={removeFilter}
          onRemoveFacet={removeFacet}
          compared={compared ? { answer: comparedCounts, label: compared.label } : null}
        />
      </>
    ),
    chooser: source ? (
      <ColumnChooser
        layout={{ columns, wrap, dense }}
        sourceColumns={sourceColumns}
        sourceLabel={source.label}
        fieldParams={pathParams}
        onChange={(next) =>
          setLogs((l) => {
            const { columns: _c, wrap: _w, dense: _d, ...rest } = l;
            const out: LogsView = { ...rest };
            if (next.columns) out.columns = next.columns;
            if (next.wrap) out.wrap = true;
            if (next.dense) out.dense = true;
            return out;
          })
        }
      />
    ) : null,
    tableColumns: (detailOpen) => (detailOpen ? columns.filter((c) => c.id !== 'method') : columns),
    // A width is a small adjustment: it replaces the history entry rather than adding one.
    onResize: (id, width) => setColumns(resizeColumn(columns, id, width), { replace: true }),
    fieldColumns: shownFields,
    wrap,
    dense,
  };
}
