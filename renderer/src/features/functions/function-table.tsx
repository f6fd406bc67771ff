import { useMemo, useState, type MouseEvent, type ReactNode } from 'react';
import type { FunctionStatsRow } from '../../../../contract/api-types.ts';
import { ErrorPanel } from '../../ui/error-panel.tsx';
import { TableSkeleton } from '../../ui/skeleton.tsx';
import { TableCard, TableNote, TableScroll } from '../../ui/table-card.tsx';
import { unitName } from '../../lib/buckets.ts';
import { formatInt, formatMs, formatPercent } from '../../lib/format.ts';
import { percentileAccuracy, type PercentileKind } from './stats.ts';
import { DEFAULT_SORT, functionLogsHref, nextSort, sortFunctionRows, type SortKey, type TableSort } from './function-table-rows.ts';

/** Times are shown without their unit: the header says ms once, which keeps the table narrow. */
function columns(errorStatusAtLeast: number | undefined): ReadonlyArray<{ key: SortKey; label: string; unit?: string; title: string; numeric: boolean }> {
  const rule = errorStatusAtLeast !== undefined ? `status ≥ ${errorStatusAtLeast}` : 'an error status';
  return [
    { key: 'name', label: 'Function', title: 'Slug from the function’s newest records (/functions/v1/<slug>), and its id', numeric: false },
    { key: 'invocations', label: 'Invocations', title: 'Invocations in the whole window', numeric: true },
    { key: 'errors', label: 'Errors', title: `Invocations answered with ${rule}`, numeric: true },
    { key: 'errorRate', label: 'Error rate', title: 'Errors / invocations', numeric: true },
    { key: 'avgMs', label: 'Avg', unit: 'ms', title: 'Average execution time over the whole window, ms', numeric: true },
    { key: 'p95Ms', label: 'p95', unit: 'ms', title: 'Execution time p95 over the whole window, ms', numeric: true },
    { key: 'p99Ms', label: 'p99', unit: 'ms', title: 'Execution time p99 over the whole window, ms', numeric: true },
  ];
}

/**
 * How the window's p95/p99 were computed, in words (the wording is stats.ts's): exact over the
 * records, or merged from the sketches of the window's bucket unit (hour or day rollups).
 */
export function percentileNote(kind: PercentileKind, unitUs: number | undefined): string {
  const accuracy = `p95/p99 ${percentileAccuracy(kind, 'window')}`;
  if (kind === 'exact') return `${accuracy} over every invocation`;
  return unitUs === undefined ? accuracy : `${accuracy} · merged ${unitName(unitUs)} sketches`;
}

/**
 * Every function of the project over the whole window, sortable by any column; each row links
 * to its chart (selects it on this page) and to its invocation logs.
 */
export function FunctionTable({
  rows,
  loading,
  refetching,
  error,
  onRetry,
  project,
  countedWindow,
  selected,
  percentiles,
  unitUs,
  errorStatusAtLeast,
  windowText,
  onChart,
  onLogs,
}: {
  rows: FunctionStatsRow[] | undefined;
  loading: boolean;
  refetching: boolean;
  error: unknown;
  onRetry: () => void;
  project: string;
  /** The window the figures cover, [start, end) µs (from `/api/functions`): the logs links open exactly it. */
  countedWindow: { start: number; end: number } | undefined;
  selected: string;
  percentiles: PercentileKind | undefined;
  /** The interval's bucket unit, µs (from the listing): names the sketches approximate figures merge. */
  unitUs: number | undefined;
  /** The listing's error rule. */
  errorStatusAtLeast: number | undefined;
  windowText: string;
  onChart: (functionId: string) => void;
  onLogs: (href: string) => void;
}) {
  const [sort, setSort] = useState<TableSort>(DEFAULT_SORT);
  const sorted = useMemo(() => sortFunctionRows(rows ?? [], sort), [rows, sort]);
  const cols = useMemo(() => columns(errorStatusAtLeast), [errorStatusAtLeast]);
  const maxRate = useMemo(() => Math.max(0, ...(rows ?? []).map((r) => r.errorRate ?? 0)), [rows]);

  let body: ReactNode;
  if (error) body = <div className="pad"><ErrorPanel error={error} onRetry={onRetry} /></div>;
  else if (!rows && loading) body = <TableSkeleton rows={4} />;
  else if (sorted.length === 0) body = <TableNote testId="function-table-empty">This project has no edge function invocations stored.</TableNote>;
  else
    body = (
      <TableScroll className="fn-table" testId="function-table-grid">
        <thead>
          <tr>
            {cols.map((c) => {
              const active = sort.key === c.key;
              const arrow = (
                <span className="fn-sort__arrow" aria-hidden="true">
                  {active && sort.dir === 'asc' ? '▲' : '▼'}
                </span>
              );
              return (
                <th key={c.key} className={c.numeric ? 'num' : undefined} aria-sort={active ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'} title={c.title}>
                  <button type="button" className={`fn-sort${active ? ' is-active' : ''}`} data-testid={`sort-${c.key}`} onClick={() => setSort((s) => nextSort(s, c.key))}>
                    {c.label}
                    {c.unit && <span className="fn-unit">{c.unit}</span>}
                    {arrow}
                  </button>
                </th>
              );
            })}
            <th className="fn-links-head">
              <span className="fn-sr-only">Links</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((r) => {
            const idle = r.invocations === 0;
            const href = countedWindow ? functionLogsHref(project, r.functionId, countedWindow) : undefined;
            return (
              <tr
                key={r.functionId}
                className={`fn-row${r.functionId === selected ? ' is-selected' : ''}${idle ? ' is-idle' : ''}`}
                data-testid="function-row"
                data-function-id={r.functionId}
                aria-selected={r.functionId === selected}
              >
                <td className="fn-name-cell">
                  <div className="fn-name">
                    {r.slug !== null ? (
                      <span className="fn-slug" data-testid="function-slug">
                        {r.slug}
                      </span>
                    ) : (
                      <span className="fn-slug fn-slug--none" data-testid="function-slug" title="No record of this function names a /functions/v1/<slug> URL">
                        no slug
                      </span>
                    )}
                    <span className="fn-id mono" data-testid="function-id">
                      {r.functionId}
                    </span>
                  </div>
                </td>
                <td className="num mono" data-testid="function-invocations">
                  {formatInt(r.invocations)}
                </td>
                <td className="num mono" data-testid="function-errors">
                  {formatInt(r.errors)}
                </td>
                <td className="num mono" data-testid="function-error-rate">
                  <span className="fn-rate">
                    <span className="fn-rate__track" aria-hidden="true">
                      <span className="fn-rate__bar" style={{ width: `${maxRate > 0 ? ((r.errorRate ?? 0) / maxRate) * 100 : 0}%` }} />
                    </span>
                    {formatPercent(r.errorRate)}
                  </span>
                </td>
                <td className="num mono" data-testid="function-avg">
                  {formatMs(r.avgMs, false)}
                </td>
                <td className="num mono" data-testid="function-p95">
                  {formatMs(r.p95Ms, false)}
                </td>
                <td className="num mono" data-testid="function-p99">
                  {formatMs(r.p99Ms, false)}
                </td>
                <td className="actions fn-links">
                  <button type="button" className="link-btn" data-testid="function-chart" title="Show this function’s charts" onClick={() => onChart(r.functionId)}>
                    Chart
                  </button>
                  <a
                    href={href}
                    aria-disabled={href === undefined}
                    data-testid="function-logs"
                    title="Open this function’s invocation logs over the window the table counts"
                    onClick={(e: MouseEvent<HTMLAnchorElement>) => {
                      // Modified clicks open a new tab as links do.
                      if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
                      e.preventDefault();
                      if (href) onLogs(href);
                    }}
                  >
                    Logs
                  </a>
                </td>
              </tr>
            );
          })}
        </tbody>
      </TableScroll>
    );

  return (
    <TableCard
      testId="function-table"
      refetching={refetching}
      title={
        <>
          Functions{' '}
          <span className="card__note" data-testid="function-table-window">
            · whole window{windowText ? ` · ${windowText}` : ''}
            {rows ? ` · ${rows.length} ${rows.length === 1 ? 'function' : 'functions'}` : ''}
          </span>
        </>
      }
      aside={
        percentiles && (
          <span className="fn-note" data-testid="function-percentiles" data-kind={percentiles}>
            {percentileNote(percentiles, unitUs)}
          </span>
        )
      }
    >
      {body}
    </TableCard>
  );
}
