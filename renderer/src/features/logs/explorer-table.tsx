import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, useState, type KeyboardEvent, type PointerEvent as ReactPointerEvent, type ReactNode } from 'react';
import type { ExplorerColumn, ExplorerFields } from '../../api/logs.ts';
import { useClock } from '../../api/hooks.ts';
import { fieldText, valueAtPath } from '../../../../contract/fields.ts';
import { messageText } from './message-text.ts';
import { clampWidth, columnField, MIN_COLUMN_WIDTH, type ColumnId, type ColumnSpec } from '../../lib/table-columns.ts';
import { formatIsoMicros } from '../../../../contract/instants.ts';
import { formatDateTime, formatUtc, localZoneName } from '../../lib/time.ts';
import { relativeText, zoneOf, type TimeMode } from '../../lib/time-display.ts';
import { useTimeMode } from '../../ui/time-mode.tsx';
import type { Highlighter, TextPart } from './highlight.ts';
import { levelTone } from './series.ts';

export const ROW_HEIGHT = 30;
/** Rows of the dense table. */
export const DENSE_ROW_HEIGHT = 24;
/** A cell shows one line; more of a long message is never visible, so it is not rendered. */
const CELL_CHARS = 400;
/** A wrapped cell shows this much of a long text. */
const WRAP_CHARS = 4000;

export interface TableItem {
  id: string;
  timestamp: number;
  event_message: string;
  fields: ExplorerFields;
  /** Where a filter matched when the row does not show it (the id, or far into the message). */
  matchNote?: string;
  /** The record's metadata, for columns on fields inside the records. */
  metadata?: unknown;
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

// The time column's width comes from a variable that a container query narrows (logs.css).
const WIDTHS: Record<ExplorerColumn, string> = {
  timestamp: 'var(--ex-time-col)',
  status: '50px',
  method: '58px',
  level: '66px',
  function_id: 'minmax(120px, 20%)',
  path: 'minmax(96px, 28%)',
  event_message: 'minmax(120px, 1fr)',
};

/** A column on a field inside the records, without a width of its own. */
const FIELD_WIDTH = 'minmax(72px, 12%)';

/**
 * The grid's tracks. A chosen width is the most a column takes (minmax), so a narrow window
 * shrinks the columns rather than cutting the row off; the last column, unless it has a width
 * or is the message, takes the rest.
 */
export function gridColumns(columns: readonly (ExplorerColumn | ColumnSpec)[]): string {
  return columns
    .map((raw, i) => {
      const c = typeof raw === 'string' ? { id: raw } : raw;
      if (c.width !== undefined) return `minmax(${Math.min(MIN_COLUMN_WIDTH, c.width)}px, ${c.width}px)`;
      if (i === columns.length - 1 && c.id !== 'event_message') return 'minmax(0, 1fr)';
      return columnField(c.id) === null ? WIDTHS[c.id as ExplorerColumn] : FIELD_WIDTH;
    })
    .join(' ');
}

/** A column's header: the built-in name, or the last part of a field's path (the whole path on hover). */
export function columnHeader(id: ColumnId, timeMode: TimeMode = 'local'): string {
  const field = columnField(id);
  if (field !== null) return field.split('.').slice(-2).join('.');
  if (id === 'timestamp') return timeMode === 'utc' ? 'Time (UTC)' : timeMode === 'relative' ? 'Time (ago)' : 'Time';
  return HEADERS[id as ExplorerColumn];
}

export function statusNumber(v: ExplorerFields['status']): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  return null;
}

/** `ok` 1xx–3xx split for colour: 2xx success, 3xx redirect, 4xx client, 5xx server. */
export function statusClass(status: number | null): 'success' | 'redirect' | 'client' | 'server' | 'info' | 'unknown' {
  if (status === null) return 'unknown';
  if (status >= 500) return 'server';
  if (status >= 400) return 'client';
  if (status >= 300) return 'redirect';
  if (status >= 200) return 'success';
  return 'info';
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
function TimeCell({ us, mode, now }: { us: number; mode: TimeMode; now: number | undefined }) {
  if (mode === 'relative' && now !== undefined) {
    return (
      <time dateTime={formatIsoMicros(us)} title={`${formatDateTime(us, 'us')} ${localZoneName()}\n${formatUtc(us, 'us')}\n${us} µs since epoch`}>
        {relativeText(us, now)}
      </time>
    );
  }
  const text = formatDateTime(us, 'ms', zoneOf(mode)); // YYYY-MM-DD HH:MM:SS.mmm
  return (
    <time dateTime={formatIsoMicros(us)} title={`${mode === 'utc' ? `${formatDateTime(us, 'us')} ${localZoneName()}` : formatUtc(us, 'us')}\n${us} µs since epoch`}>
      <span className="ex-year">{text.slice(0, 5)}</span>
      {text.slice(5, 19)}
      <span className="ex-ms">{text.slice(19)}</span>
    </time>
  );
}

function cellText(text: string, wrap = false): string {
  const max = wrap ? WRAP_CHARS : CELL_CHARS;
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

interface CellOptions {
  timeMode: TimeMode;
  now: number | undefined;
  wrap: boolean;
}

function Cell({ column, item, highlight, options }: { column: ColumnId; item: TableItem; highlight: Highlighter; options: CellOptions }) {
  const f = item.fields;
  const field = columnField(column);
  if (field !== null) {
    const text = fieldText(valueAtPath(item.metadata, field));
    return (
      <span role="gridcell" className="mono ellipsis" title={text === null ? undefined : text.slice(0, 2000)} data-col="field">
        {text === null ? <span className="muted">—</span> : cellText(text, options.wrap)}
      </span>
    );
  }
  switch (column as ExplorerColumn) {
    case 'timestamp':
      return (
        <span role="gridcell" className="mono ex-cell-time">
          <TimeCell us={item.timestamp} mode={options.timeMode} now={options.now} />
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
        // The slug alone (the id on hover): slug and UUID together were cut to a few characters.
        <span role="gridcell" className="mono ellipsis" title={f.function_slug ? `${f.function_slug}\n${f.function_id ?? ''}` : (f.function_id ?? undefined)} data-col="function">
          {f.function_slug ?? f.function_id ?? '—'}
        </span>
      );
    case 'path':
      return (
        <span role="gridcell" className="mono ellipsis" title={f.path ?? undefined} data-col="path">
          {f.path ? <Marked parts={highlight(cellText(f.path, options.wrap))} /> : '—'}
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
          <Marked parts={highlight(cellText(messageText(item.event_message), options.wrap))} />
        </span>
      );
  }
}

/**
 * The virtualized log table. Arrow keys, Page Up/Down, Home and End move the selection;
 * Enter opens the selected record's details; Esc closes them (or clears the selection).
 * Columns are the source's own or chosen ones (ColumnSpec, with widths; `onResize` lets the
 * headers' edges be dragged); `wrap` lets long cells take more lines, `dense` shortens rows.
 */
export interface ExplorerTableProps {
  items: readonly TableItem[];
  columns: readonly (ExplorerColumn | ColumnSpec)[];
  highlight: Highlighter;
  selectedId: string | null;
  detailOpen: boolean;
  onSelect: (id: string | null) => void;
  onOpen: (id: string) => void;
  onClose: () => void;
  /** The footer line's content: how many rows, and how to get more. */
  footer: ReactNode;
  empty: ReactNode;
  /** A column's new width (px), or undefined for its own again. */
  onResize?: (id: ColumnId, width: number | undefined) => void;
  wrap?: boolean;
  dense?: boolean;
}

export function ExplorerTable({ items, columns, highlight, selectedId, detailOpen, onSelect, onOpen, onClose, footer, empty, onResize, wrap = false, dense = false }: ExplorerTableProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const rowHeight = dense ? DENSE_ROW_HEIGHT : ROW_HEIGHT;
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan: 12,
  });
  const selectedIndex = selectedId === null ? -1 : items.findIndex((i) => i.id === selectedId);
  const timeMode = useTimeMode();
  const now = useClock().data?.now;
  // A width being dragged shows at once; the URL gets it when the drag ends.
  const [dragging, setDragging] = useState<{ id: ColumnId; width: number } | null>(null);
  const specs: ColumnSpec[] = columns.map((c) => (typeof c === 'string' ? { id: c } : c.id === dragging?.id ? { id: c.id, width: dragging.width } : c));
  const template = gridColumns(specs);
  const options: CellOptions = { timeMode, now, wrap };
  // Row heights change with wrapping, density and the columns: measure again.
  useEffect(() => virtualizer.measure(), [virtualizer, wrap, dense, template]);

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
    <div className={`logs-table ex-table${wrap ? ' ex-table--wrap' : ''}${dense ? ' ex-table--dense' : ''}`} data-testid="logs-table">
      <div className="logs-table__head ex-row-grid" role="row" style={{ gridTemplateColumns: template }}>
        {specs.map((c) => (
          <span role="columnheader" key={c.id} className={`ex-th${columnField(c.id) !== null ? ' ex-th--field' : ''}`} title={columnField(c.id) ?? undefined} data-col-id={c.id}>
            <span className="ex-th__label">{columnHeader(c.id, timeMode)}</span>
            {onResize && <ColumnResizer spec={c} onLive={(width) => setDragging(width === null ? null : { id: c.id, width })} onResize={(w) => onResize(c.id, w)} />}
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
                  ref={wrap ? virtualizer.measureElement : undefined}
                  data-index={vi.index}
                  id={`log-row-${vi.index}`}
                  role="row"
                  aria-rowindex={vi.index + 1}
                  aria-selected={isSel}
                  className={`logs-row ex-row-grid${isSel ? ' is-selected' : ''}${vi.index % 2 ? ' is-odd' : ''}`}
                  style={wrap ? { transform: `translateY(${vi.start}px)`, minHeight: rowHeight, gridTemplateColumns: template } : { transform: `translateY(${vi.start}px)`, height: rowHeight, gridTemplateColumns: template }}
                  data-testid="log-row"
                  data-id={item.id}
                  onClick={() => {
                    onSelect(item.id);
                    onOpen(item.id);
                    scrollRef.current?.focus({ preventScroll: true });
                  }}
                >
                  {specs.map((c) => (
                    <Cell key={c.id} column={c.id} item={item} highlight={highlight} options={options} />
                  ))}
                </div>
              );
            })}
          </div>
        )}
      </div>
      <div className="table-footer">{footer}</div>
    </div>
  );
}

/**
 * The drag handle on a header's right edge: drag to set the column's width, arrows to change
 * it by 10 px, double-click to give the column its own width back.
 */
function ColumnResizer({ spec, onLive, onResize }: { spec: ColumnSpec; onLive: (width: number | null) => void; onResize: (width: number | undefined) => void }) {
  const start = useRef<{ x: number; width: number } | null>(null);
  const widthNow = (el: HTMLElement) => Math.round(el.parentElement?.getBoundingClientRect().width ?? spec.width ?? 120);
  const onPointerDown = (e: ReactPointerEvent<HTMLSpanElement>) => {
    if (e.button !== 0) return;
    e.preventDefault();
    e.currentTarget.setPointerCapture(e.pointerId);
    start.current = { x: e.clientX, width: widthNow(e.currentTarget) };
    onLive(start.current.width);
  };
  const onPointerMove = (e: ReactPointerEvent<HTMLSpanElement>) => {
    if (start.current) onLive(clampWidth(start.current.width + e.clientX - start.current.x));
  };
  const onPointerUp = (e: ReactPointerEvent<HTMLSpanElement>) => {
    const s = start.current;
    start.current = null;
    onLive(null);
    if (s && e.clientX !== s.x) onResize(clampWidth(s.width + e.clientX - s.x));
  };
  return (
    <span
      className="ex-th__resize"
      role="separator"
      aria-orientation="vertical"
      aria-label={`Width of ${columnHeader(spec.id)}`}
      aria-valuenow={spec.width}
      tabIndex={0}
      title="Drag to resize · double-click for the column’s own width"
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={onPointerUp}
      onPointerCancel={() => {
        start.current = null;
        onLive(null);
      }}
      onDoubleClick={() => onResize(undefined)}
      onClick={(e) => e.stopPropagation()}
      onKeyDown={(e) => {
        if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
        e.preventDefault();
        onResize(clampWidth(widthNow(e.currentTarget) + (e.key === 'ArrowRight' ? 10 : -10)));
      }}
      data-testid="column-resize"
    />
  );
}
