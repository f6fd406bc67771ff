/**
 * The saved-views menu's keyboard: ArrowUp/ArrowDown/Home/End move between items (a saved view's
 * row counts once), ArrowLeft/ArrowRight between a saved view and its rename and delete buttons,
 * Escape closes the menu, Tab from an item leaves it. Inside a form the keys are the form's.
 */
import type { KeyboardEvent } from 'react';

/** The menu's items for ArrowUp/ArrowDown: one per row, in order. */
export function primaryItems(menu: HTMLElement): HTMLElement[] {
  return [...menu.querySelectorAll<HTMLElement>('[data-sv-primary]')].filter((el) => !(el as HTMLButtonElement).disabled);
}

/** Handles a key pressed inside `menu`; `close` closes it, giving focus back to its button when `refocus`. */
export function onMenuKey(e: KeyboardEvent<HTMLElement>, menu: HTMLElement, close: (refocus: boolean) => void): void {
  if (e.key === 'Escape') {
    e.preventDefault();
    e.stopPropagation();
    close(true);
    return;
  }
  // Inside a form the keys are the form's (text editing, Enter submits).
  if ((e.target as HTMLElement).closest('form')) return;
  const items = primaryItems(menu);
  const current = (e.target as HTMLElement).closest<HTMLElement>('.sv-row')?.querySelector<HTMLElement>('[data-sv-primary]') ?? (e.target as HTMLElement);
  const at = items.indexOf(current);
  const move = (i: number) => items[(i + items.length) % items.length]?.focus();
  switch (e.key) {
    case 'ArrowDown':
      e.preventDefault();
      move(at + 1);
      break;
    case 'ArrowUp':
      e.preventDefault();
      move(at < 0 ? -1 : at - 1);
      break;
    case 'Home':
      e.preventDefault();
      move(0);
      break;
    case 'End':
      e.preventDefault();
      move(-1);
      break;
    case 'ArrowRight':
    case 'ArrowLeft': {
      const row = (e.target as HTMLElement).closest('.sv-row');
      if (!row) break;
      e.preventDefault();
      const cells = [...row.querySelectorAll<HTMLElement>('[data-sv-cell]')];
      const i = cells.indexOf(e.target as HTMLElement);
      cells[(i + (e.key === 'ArrowRight' ? 1 : -1) + cells.length) % cells.length]?.focus();
      break;
    }
    case 'Tab':
      // From an item (not the buttons of a delete confirmation): focus goes back to the
      // button, and the browser's Tab then moves on as if the menu were not there.
      if ((e.target as HTMLElement).getAttribute('role') === 'menuitem') close(true);
      break;
    default:
      break;
  }
}
