/**
 * A panel that opens under its trigger, over the page (a portal, so a scrolling sidebar does
 * not clip it). Escape or a press outside closes it, and focus goes back to the trigger.
 */
import { useEffect, useLayoutEffect, useRef, useState, type ReactNode, type RefObject } from 'react';
import { createPortal } from 'react-dom';

const MARGIN = 8;

export function Popover({
  anchor,
  open,
  onClose,
  width,
  align = 'start',
  label,
  testId,
  className,
  children,
}: {
  anchor: RefObject<HTMLElement | null>;
  open: boolean;
  onClose: () => void;
  /** px; kept inside the window. */
  width: number;
  /** Line the panel up with the trigger's left edge (start) or right edge (end). */
  align?: 'start' | 'end';
  label: string;
  testId?: string;
  className?: string;
  children: ReactNode;
}) {
  const panel = useRef<HTMLDivElement>(null);
  const [place, setPlace] = useState<{ top?: number; bottom?: number; left: number; width: number; maxHeight: number } | null>(null);

  useLayoutEffect(() => {
    if (!open) return;
    const measure = () => {
      const a = anchor.current?.getBoundingClientRect();
      if (!a) return;
      const w = Math.min(width, window.innerWidth - 2 * MARGIN);
      const wanted = align === 'end' ? a.right - w : a.left;
      const left = Math.max(MARGIN, Math.min(wanted, window.innerWidth - w - MARGIN));
      const below = window.innerHeight - a.bottom - 4 - MARGIN;
      const above = a.top - 4 - MARGIN;
      // Under the trigger, unless it sits low in the window and there is more room above it.
      if (below < 320 && above > below) setPlace({ bottom: window.innerHeight - a.top + 4, left, width: w, maxHeight: above });
      else setPlace({ top: a.bottom + 4, left, width: w, maxHeight: Math.max(120, below) });
    };
    measure();
    window.addEventListener('resize', measure);
    window.addEventListener('scroll', measure, true);
    return () => {
      window.removeEventListener('resize', measure);
      window.removeEventListener('scroll', measure, true);
    };
  }, [open, anchor, width, align]);

  useEffect(() => {
    if (!open) return;
    const trigger = anchor.current;
    const onDown = (e: PointerEvent) => {
      const t = e.target as Node;
      if (panel.current?.contains(t) || trigger?.contains(t)) return;
      onClose();
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.stopPropagation();
      onClose();
      trigger?.focus();
    };
    document.addEventListener('pointerdown', onDown, true);
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('pointerdown', onDown, true);
      document.removeEventListener('keydown', onKey, true);
    };
  }, [open, anchor, onClose]);

  if (!open || !place) return null;
  return createPortal(
    <div ref={panel} className={`pop${className ? ` ${className}` : ''}`} role="dialog" aria-label={label} style={place} data-testid={testId}>
      {children}
    </div>,
    document.body,
  );
}
