import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, type KeyboardEvent, type ReactNode } from 'react';
import type { ExplorerColumn, ExplorerFields } from '../api/logs.ts';
import { statusClass } from '../lib/logs.ts';
import { formatDateTime, formatUtc, isoMicros } from '../lib/time.ts';
import type { Highlighter, TextPart } from '../pages/logs/highlight.ts';
import { levelTone } from '../pages/logs/series.ts';

export const ROW_HEIGHT = 30;
/** A cell shows one line; more of a long message is never visible, so it is not rendered. */
const CELL_CHARS = 400;

export interface TableItem {
  id: string;
  timestamp: number;
  event_message: string;
  fields: ExplorerFields;
  /** Where a filter matched when the row does not show it (the id, or far into the message). */
  matchNote?: string;
}

const HEADERS: Record<ExplorerColumn, string> = {
  timestamp: 'Time',
  status: 'Status',
  method: 'Method',
  path: 'Path',
  level: 'Level',
  function_id: 'Function',
  event_message: 'Event message',
};

// The time column's width comes from a variable that a container query narrows (styles.css).
const WIDTHS: Record<ExplorerColumn, string> = {
  timestamp: 'var(--ex-time-col)',
  status: '50px',
  method: '58px',
  level: '66px',
  function_id: 'minmax(80px, 15%)',
  path: 'minmax(96px, 28%)',
  event_message: 'minmax(120px, 1fr)',
};

export function gridColumns(columns: readonly ExplorerColumn[]): string {
  return columns.map((c, i) => (i === columns.length - 1 && c !== 'event_message' ? 'minmax(0, 1fr)' : WIDTHS[c])).join(' ');
}

export function statusNumber(v: ExplorerFields['status']): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  return null;
}

export function StatusBadge({ status }: { status: ExplorerFields['status'] }) {
  const n = statusNumber(status);
  return <span className={`badge badge--${statusClass(n)}`}>{n ?? (status === null || status === undefined ? '—' : String(status))}</span>;
}

export function LevelBadge({ level }: { level: string | null | undefined }) {
  if (!level) return <span className="muted">—</span>;
  return <span className={`ex-level ex-level--${levelTone(level)}`}>{level}</span>;
}

export function Marked({ parts }: { parts: TextPart[] }) {
  return (
    <>
      {parts.map((p, i) =>
        p.match ? (
          <mark key={i} className="ex-mark">
            {p.text}
          </mark>
        ) : (
          p.text
        ),
      )}
    </>
  );
}

/**
 * `2026-03-14 16:04:56.097` in parts: a narrow table hides the year and the milliseconds
 * (container query), keeping the day, since a range can span several.
 */
function TimeCell({ us }: { us: number }) {
  const text = formatDateTime(us, 'ms'); // YYYY-MM-DD HH:MM:SS.mmm
  return (
    <time dateTime={isoMicros(us)} title={`${formatUtc(us, 'us')}\n${us} µs since epoch`}>
      <span className="ex-year">{text.slice(0, 5)}</span>
      {text.slice(5, 19)}
      <span className="ex-ms">{text.slice(19)}</span>
    </time>
  );
}

function cellText(text: string): string {
  return text.length > CELL_CHARS ? `${text.slice(0, CELL_CHARS)}…` : text;
}

function Cell({ column, item, highlight }: { column: ExplorerColumn; item: TableItem; highlight: Highlighter }) {
  const f = item.fields;
  switch (column) {
    case 'timestamp':
      return (
        <span role="gridcell" className="mono ex-cell-time">
          <TimeCell us={item.timestamp} />
        </span>
      );
    case 'status':
      return (
        <span role="gridcell">
          <StatusBadge status={f.status} />
        </span>
      );
    case 'method':
      return (
        <span role="gridcell" className="mono method">
          {f.method ?? '—'}
        </span>
      );
    case 'level':
      return (
        <span role="gridcell">
          <LevelBadge level={f.level} />
        </span>
      );
    case 'function_id':
      return (
        <span role="gridcell" className="mono ellipsis" title={f.function_id ?? undefined}>
          {f.function_slug ? (
            <>
              {f.function_slug} <span className="muted">{f.function_id}</span>
            </>
          ) : (
            (f.function_id ?? '—')
          )}
        </span>
      );
    case 'path':
      return (
        <span role="gridcell" className="mono ellipsis" title={f.path ?? undefined} data-col="path">
          {f.path ? <Marked parts={highlight(cellText(f.path))} /> : '—'}
        </span>
      );
    case 'event_message':
      return (
        <span role="gridcell" className="mono ellipsis muted-strong" title={item.event_message.slice(0, 2000)} data-col="message">
          {item.matchNote && (
            <span className="ex-match-note" data-testid="match-note">
              {item.matchNote}
            </span>
          )}
          <Marked parts={highlight(cellText(item.event_message))} />
        </span>
      );
  }
}

/**
 * The virtualized log table. Arrow keys, Page Up/Down, Home and End move the selection;
 * Enter opens the selected record's details; Esc closes them (or clears the selection).
 */
export function ExplorerTable({
  items,
  columns,
  highlight,
  selectedId,
  detailOpen,
  onSelect,
  onOpen,
  onClose,
  footer,
  empty,
}: {
  items: readonly TableItem[];
  columns: readonly ExplorerColumn[];
  highlight: Highlighter;
  selectedId: string | null;
  detailOpen: boolean;
  onSelect: (id: string | null) => void;
  onOpen: (id: string) => void;
  onClose: () => void;
  footer: ReactNode;
  empty: ReactNode;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const selectedIndex = selectedId === null ? -1 : items.findIndex((i) => i.id === selectedId);
  const template = gridColumns(columns);

  // A selection that left the list (new search) is forgotten.
  useEffect(() => {
    if (selectedId !== null && selectedIndex < 0) onSelect(null);
  }, [selectedId, selectedIndex, onSelect]);

  const move = (to: number) => {
    if (items.length === 0) return;
    const i = Math.max(0, Math.min(items.length - 1, to));
    onSelect(items[i]!.id);
    virtualizer.scrollToIndex(i, { align: 'auto' });
  };

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 300) / ROW_HEIGHT) - 1);
    switch (e.key) {
      case 'ArrowDown':
        move(selectedIndex < 0 ? 0 : selectedIndex + 1);
        break;
      case 'ArrowUp':
        move(selectedIndex < 0 ? 0 : selectedIndex - 1);
        break;
      case 'PageDown':
        move(selectedIndex + page);
        break;
      case 'PageUp':
        move(selectedIndex - page);
        break;
      case 'Home':
        move(0);
        break;
      case 'End':
        move(items.length - 1);
        break;
      case 'Enter':
        if (selectedIndex >= 0) onOpen(items[selectedIndex]!.id);
        else if (items.length > 0) move(0);
        break;
      case 'Escape':
        if (detailOpen) onClose();
        else onSelect(null);
        break;
      default:
        return;
    }
    e.preventDefault();
  };

  return (
    <div className="logs-table ex-table" data-testid="logs-table">
      <div className="logs-table__head ex-row-grid" role="row" style={{ gridTemplateColumns: template }}>
        {columns.map((c) => (
          <span role="columnheader" key={c}>
            {HEADERS[c]}
          </span>
        ))}
      </div>
      <div
        ref={scrollRef}
        className="logs-table__body"
        role="grid"
        aria-label="Log records"
        aria-rowcount={items.length}
        aria-activedescendant={selectedIndex >= 0 ? `log-row-${selectedIndex}` : undefined}
        tabIndex={0}
        onKeyDown={onKeyDown}
        data-testid="logs-grid"
      >
        {items.length === 0 ? (
          <div className="logs-table__empty">{empty}</div>
        ) : (
          <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {virtualizer.getVirtualItems().map((vi) => {
              const item = items[vi.index]!;
              const isSel = item.id === selectedId;
              return (
                <div
                  key={item.id}
                  id={`log-row-${vi.index}`}
                  role="row"
                  aria-rowindex={vi.index + 1}
                  aria-selected={isSel}
                  className={`logs-row ex-row-grid${isSel ? ' is-selected' : ''}${vi.index % 2 ? ' is-odd' : ''}`}
                  style={{ transform: `translateY(${vi.start}px)`, height: ROW_HEIGHT, gridTemplateColumns: template }}
                  data-testid="log-row"
                  data-id={item.id}
                  onClick={() => {
                    onSelect(item.id);
                    onOpen(item.id);
                    scrollRef.current?.focus({ preventScroll: true });
                  }}
                >
                  {columns.map((c) => (
                    <Cell key={c} column={c} item={item} highlight={highlight} />
                  ))}
                </div>
              );
            })}
          </div>
        )}
      </div>
      {footer}
    </div>
  );
}
