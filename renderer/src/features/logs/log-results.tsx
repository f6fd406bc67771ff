/**
 * The results both Logs views show under their controls: the log table with the open record's
 * detail beside it, which record is selected, and the table footer's way to older records.
 */
import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { ExplorerTable, type ExplorerTableProps, type TableItem } from './explorer-table.tsx';

export interface RecordSelection<T> {
  selectedId: string | null;
  /** The record whose detail is open; null while none is. */
  selected: T | null;
  select: (id: string | null) => void;
  openDetail: (id: string) => void;
  closeDetail: () => void;
  /** No record selected, no detail open. */
  clear: () => void;
}

/** Which record of `items` is selected and whether its detail is open; a new request (`resetKey`) forgets both. */
export function useRecordSelection<T extends TableItem>(items: readonly T[], resetKey: string): RecordSelection<T> {
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [detailOpen, setDetailOpen] = useState(false);
  useEffect(() => {
    setSelectedId(null);
    setDetailOpen(false);
  }, [resetKey]);
  const openDetail = useCallback((id: string) => {
    setSelectedId(id);
    setDetailOpen(true);
  }, []);
  const closeDetail = useCallback(() => setDetailOpen(false), []);
  const clear = useCallback(() => {
    setSelectedId(null);
    setDetailOpen(false);
  }, []);
  const selected = detailOpen ? (items.find((i) => i.id === selectedId) ?? null) : null;
  return { selectedId, selected, select: setSelectedId, openDetail, closeDetail, clear };
}

type SelectionProps = 'items' | 'selectedId' | 'detailOpen' | 'onSelect' | 'onOpen' | 'onClose';

/** The log table and, while a record is open, its detail beside it. */
export function LogResults<T extends TableItem>({
  items,
  selection,
  refetching,
  fetching,
  detail,
  ...table
}: Omit<ExplorerTableProps, SelectionProps> & {
  items: readonly T[];
  selection: RecordSelection<T>;
  /** The rows shown are the previous request's while the new one loads. */
  refetching: boolean;
  fetching: boolean;
  detail: (record: T) => ReactNode;
}) {
  const { selected } = selection;
  return (
    <div className={`logs-layout ex-results${selected ? ' has-detail' : ''}${refetching ? ' is-refetching' : ''}`} aria-busy={fetching}>
      <ExplorerTable
        {...table}
        items={items}
        selectedId={selection.selectedId}
        detailOpen={selected !== null}
        onSelect={selection.select}
        onOpen={selection.openDetail}
        onClose={selection.closeDetail}
      />
      {selected && detail(selected)}
    </div>
  );
}

/** The footer's button for the next page of rows (older records, or a search continued further back). */
export function MoreRows({ pages, testId, loadingLabel, children }: { pages: { isFetchingNextPage: boolean; fetchNextPage: () => Promise<unknown> }; testId: string; loadingLabel: string; children: ReactNode }) {
  return (
    <button type="button" className="btn btn--small" data-testid={testId} disabled={pages.isFetchingNextPage} onClick={() => void pages.fetchNextPage()}>
      {pages.isFetchingNextPage ? loadingLabel : children}
    </button>
  );
}

/** The footer's note once the oldest record of the range is loaded. */
export function EndOfRange() {
  return (
    <span className="muted" data-testid="end-of-range">
      Oldest record in range reached
    </span>
  );
}
