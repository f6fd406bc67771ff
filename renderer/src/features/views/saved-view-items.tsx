/** The menu's items: a saved view (open, rename, delete) and a recent search (run again). */
import type { ButtonHTMLAttributes } from 'react';
import type { RecentSearch, SavedView } from '../../../../contract/views.ts';
import type { PageId } from '../../lib/url-state.ts';
import { NameForm } from './name-form.tsx';
import { describeState, describeView, errorText, PAGE_LABELS, whenSaved } from './view-labels.ts';

/**
 * A saved view in the menu: opens it, with its rename and delete buttons (F2 and Delete on the
 * item); while `editing`, the rename form or the delete question takes its place.
 */
export function SavedViewItem({
  view,
  editing,
  busy,
  renameError,
  deleteError,
  onOpen,
  onStartRename,
  onStartDelete,
  onCancel,
  onRename,
  onDelete,
}: {
  view: SavedView;
  editing: 'rename' | 'delete' | null;
  busy: boolean;
  renameError: Error | null;
  deleteError: Error | null;
  onOpen: () => void;
  onStartRename: () => void;
  onStartDelete: () => void;
  onCancel: () => void;
  onRename: (name: string) => void;
  onDelete: () => void;
}) {
  if (editing === 'rename') {
    return (
      <div className="sv-row sv-row--edit" data-sv-id={view.id} data-testid="sv-view">
        <NameForm
          className="sv-form"
          label={`New name for “${view.name}”`}
          initial={view.name}
          submitLabel="Rename"
          pending={busy}
          error={renameError}
          onSubmit={onRename}
          onCancel={onCancel}
          testId="sv-rename-form"
        />
      </div>
    );
  }
  if (editing === 'delete') {
    return (
      <div
        className="sv-row sv-row--confirm"
        data-sv-id={view.id}
        data-testid="sv-view"
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            onCancel();
          }
        }}
      >
        <span className="sv-row__question">
          Delete <strong>“{view.name}”</strong>?
        </span>
        <button type="button" className="btn btn--small btn--danger" data-sv-confirm="" disabled={busy} onClick={onDelete} data-testid="sv-delete-confirm">
          {busy ? 'Deleting…' : 'Delete'}
        </button>
        <button type="button" className="btn btn--small" onClick={onCancel}>
          Cancel
        </button>
        {deleteError && (
          <p className="sv-form__error" role="alert">
            {errorText(deleteError)}
          </p>
        )}
      </div>
    );
  }
  const detail = describeView(view.page, view.state);
  return (
    <div className="sv-row" data-sv-id={view.id} data-testid="sv-view">
      <MenuItem
        primary
        cell
        className="sv-item"
        title={`Open “${view.name}”: ${detail}\nSaved ${whenSaved(view.createdAt)}. F2 renames, Delete deletes.`}
        onClick={onOpen}
        onKeyDown={(e) => {
          if (e.key === 'F2') {
            e.preventDefault();
            onStartRename();
          } else if (e.key === 'Delete') {
            e.preventDefault();
            onStartDelete();
          }
        }}
        data-testid="sv-view-open"
      >
        <span className="sv-item__title">{view.name}</span>
        <ItemDetail page={view.page} state={view.state} />
      </MenuItem>
      <MenuItem cell className="sv-icon" aria-label={`Rename “${view.name}”`} title="Rename (F2)" disabled={busy} onClick={onStartRename} data-testid="sv-rename">
        <svg viewBox="0 0 24 24" width="14" height="14" fill="none" stroke="currentColor" strokeWidth="1.9" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
          <path d="M4 20h4L19 9l-4-4L4 16v4zM13.5 6.5l4 4" />
        </svg>
      </MenuItem>
      <MenuItem
        cell
        className="sv-icon sv-icon--danger"
        aria-label={`Delete “${view.name}”`}
        title="Delete (Del)"
        disabled={busy}
        onClick={onStartDelete}
        data-testid="sv-delete"
      >
        <svg viewBox="0 0 24 24" width="14" height="14" fill="none" stroke="currentColor" strokeWidth="1.9" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
          <path d="M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13M10 11v6M14 11v6" />
        </svg>
      </MenuItem>
    </div>
  );
}

/** A recent search in the menu: runs it again. */
export function RecentSearchItem({ search, onOpen }: { search: RecentSearch; onOpen: () => void }) {
  const detail = describeView(search.page, search.state);
  return (
    <MenuItem
      primary
      className="sv-item sv-item--search"
      title={`Run again: ${detail}\nLast run ${whenSaved(search.at)}.`}
      onClick={onOpen}
      data-testid="sv-search"
    >
      <span className="sv-item__title">{search.label || <span className="muted">(no text)</span>}</span>
      <ItemDetail page={search.page} state={search.state} />
    </MenuItem>
  );
}

/**
 * A button of the menu. Not a Tab stop: the menu moves focus itself (menu-keys.ts); `primary`
 * makes it a stop for ArrowUp and ArrowDown, `cell` one for ArrowLeft and ArrowRight in its row.
 */
export function MenuItem({ primary = false, cell = false, ...button }: ButtonHTMLAttributes<HTMLButtonElement> & { primary?: boolean; cell?: boolean }) {
  return <button type="button" role="menuitem" tabIndex={-1} data-sv-primary={primary ? '' : undefined} data-sv-cell={cell ? '' : undefined} {...button} />;
}

/** The item's second line: the page, then the view's parameters. */
function ItemDetail({ page, state }: { page: PageId; state: string }) {
  return (
    <span className="sv-item__detail">
      <span className="sv-item__page">{PAGE_LABELS[page]}</span>
      <span className="sv-item__state">{describeState(state)}</span>
    </span>
  );
}
