/**
 * The "Saved views" menu in the app shell's sidebar, on every page: save the
 * current page and its URL state under a name, reopen, rename or delete saved views, and
 * reopen one of the last 20 searches. The server keeps both in its data folder.
 *
 * Keyboard: the button opens the menu (ArrowDown or ArrowRight at the first item, ArrowUp at
 * the last); ArrowUp/ArrowDown/Home/End move between items, ArrowLeft/ArrowRight between a
 * saved view and its rename and delete buttons, F2 renames and Delete deletes the focused view,
 * Escape cancels an edit or closes the menu (focus returns to the button), Tab from an item
 * leaves and closes it.
 */
import { useEffect, useId, useLayoutEffect, useRef, useState, type FormEvent, type KeyboardEvent, type ReactNode } from 'react';
import { ApiError } from '../api/client.ts';
import { useClearSearches, useDeleteView, useRecentSearches, useRenameView, useSavedViews, useSaveView, type RecentSearch, type SavedView } from '../api/views.ts';
import { useView } from '../app-state.tsx';
import { formatDateTime } from '../lib/time.ts';
import { decodeView, encodeView, type AppView, type PageId } from '../lib/url-state.ts';

const PAGE_LABELS: Record<PageId, string> = {
  functions: 'Functions',
  logs: 'Logs',
  usage: 'API usage',
  data: 'Data',
  settings: 'Settings & API',
};
const MAX_NAME_CHARS = 100;
/** Room kept below the menu, and its tallest, px. */
const MENU_MARGIN = 12;
const MENU_MAX_HEIGHT = 620;

type Mode = { kind: 'list' } | { kind: 'save' } | { kind: 'rename'; id: string } | { kind: 'delete'; id: string };

/** The current view as the server stores it: the page and its URL query string. */
function currentState(view: AppView): { page: PageId; state: string } {
  const url = encodeView(view);
  const q = url.indexOf('?');
  return { page: view.page, state: q < 0 ? '' : url.slice(q + 1) };
}

/** `interval daily · project abc`: a state's parameters, readable; the project (long, often the same) last. */
function describeState(state: string): string {
  const entries = [...new URLSearchParams(state)];
  const ordered = [...entries.filter(([k]) => k !== 'project'), ...entries.filter(([k]) => k === 'project')];
  const parts = ordered.map(([k, v]) => (v ? `${k} ${v}` : k));
  return parts.length ? parts.join(' · ') : 'defaults';
}

function suggestName(view: AppView): string {
  const label = PAGE_LABELS[view.page];
  return view.project && view.page !== 'data' && view.page !== 'settings' ? `${label} · ${view.project}` : label;
}

function errorText(err: unknown): string {
  return err instanceof ApiError || err instanceof Error ? err.message : String(err);
}

function whenSaved(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? '' : formatDateTime(ms * 1000, 'minute');
}

export function SavedViews() {
  const { view, navigate } = useView();
  const [open, setOpen] = useState(false);
  const [mode, setMode] = useState<Mode>({ kind: 'list' });
  const [maxHeight, setMaxHeight] = useState<number | undefined>(undefined);
  const [status, setStatus] = useState('');
  const views = useSavedViews(open);
  const searches = useRecentSearches(open);
  const saveView = useSaveView();
  const renameView = useRenameView();
  const deleteView = useDeleteView();
  const clearSearches = useClearSearches();
  const rootRef = useRef<HTMLDivElement>(null);
  const menuRef = useRef<HTMLDivElement>(null);
  const triggerRef = useRef<HTMLButtonElement>(null);
  /** What to focus once it is rendered: a selector inside the menu, 'first' or 'last'. */
  const pendingFocus = useRef<string | null>(null);
  const menuId = useId();

  const close = (refocus: boolean) => {
    setOpen(false);
    setMode({ kind: 'list' });
    if (refocus) triggerRef.current?.focus();
  };

  const openMenu = (focus: 'first' | 'last') => {
    // The menu opens beside the button, downwards: it may use the window's height below its top.
    const r = triggerRef.current?.getBoundingClientRect();
    setMaxHeight(r ? Math.max(240, Math.min(MENU_MAX_HEIGHT, window.innerHeight - r.top - MENU_MARGIN)) : undefined);
    setStatus('');
    setMode({ kind: 'list' });
    pendingFocus.current = focus;
    setOpen(true);
  };

  // Focus follows the menu's content: after it opens, an edit starts or ends, or a list loads.
  useLayoutEffect(() => {
    const menu = menuRef.current;
    const want = pendingFocus.current;
    if (!open || !menu || !want) return;
    const items = primaryItems(menu);
    const target = want === 'first' ? items[0] : want === 'last' ? items[items.length - 1] : menu.querySelector<HTMLElement>(want);
    if (target) {
      target.focus();
      pendingFocus.current = null;
    }
  });

  // A click outside closes the menu (focus moving outside does too, in onBlur below).
  useEffect(() => {
    if (!open) return;
    const onDown = (e: PointerEvent) => {
      if (rootRef.current && !rootRef.current.contains(e.target as Node)) close(false);
    };
    document.addEventListener('pointerdown', onDown);
    return () => document.removeEventListener('pointerdown', onDown);
  }, [open]);

  const openView = (page: PageId, state: string) => {
    // As a menu does: the choice closes it and focus goes back to the button.
    close(true);
    navigate(page, (v) => decodeView(`/${page}`, `?${state}`, v));
  };

  const onMenuKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const menu = menuRef.current;
    if (!menu) return;
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
  };

  const busy = saveView.isPending || renameView.isPending || deleteView.isPending || clearSearches.isPending;
  const savedList = views.data ?? [];
  const searchList = searches.data ?? [];

  return (
    <div className="sv" ref={rootRef} data-testid="saved-views">
      <button
        ref={triggerRef}
        type="button"
        className={`sv-trigger${open ? ' is-open' : ''}`}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        data-testid="saved-views-trigger"
        onClick={() => (open ? close(false) : openMenu('first'))}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown' || e.key === 'ArrowRight' || e.key === 'ArrowUp') {
            e.preventDefault();
            openMenu(e.key === 'ArrowUp' ? 'last' : 'first');
          }
        }}
      >
        <svg viewBox="0 0 24 24" width="16" height="16" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
          <path d="M6 3h12a1 1 0 011 1v17l-7-4.5L5 21V4a1 1 0 011-1z" />
        </svg>
        Saved views
        <svg className="sv-trigger__caret" viewBox="0 0 24 24" width="12" height="12" fill="none" stroke="currentColor" strokeWidth="2.2" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
          <path d="M9 6l6 6-6 6" />
        </svg>
      </button>
      {open && (
        <div
          ref={menuRef}
          id={menuId}
          className="sv-menu"
          style={{ maxHeight }}
          role="menu"
          aria-label="Saved views and recent searches"
          data-testid="saved-views-menu"
          onKeyDown={onMenuKeyDown}
          onBlur={(e) => {
            // Focus that left the control (Tab, a click elsewhere) closes it; focus that vanished
            // with an edit (relatedTarget null) does not.
            if (e.relatedTarget && !rootRef.current?.contains(e.relatedTarget as Node)) close(false);
          }}
        >
          {mode.kind === 'save' ? (
            <SaveForm
              initial={suggestName(view)}
              describe={`${PAGE_LABELS[view.page]} · ${describeState(currentState(view).state)}`}
              pending={saveView.isPending}
              error={saveView.error}
              onCancel={() => {
                saveView.reset();
                pendingFocus.current = '[data-sv-save]';
                setMode({ kind: 'list' });
              }}
              onSave={(name) => {
                saveView.mutate(
                  { name, ...currentState(view) },
                  {
                    onSuccess: (saved) => {
                      setStatus(`Saved “${saved.name}”.`);
                      pendingFocus.current = `[data-sv-id="${saved.id}"] [data-sv-primary]`;
                      setMode({ kind: 'list' });
                    },
                  },
                );
              }}
            />
          ) : (
            <button
              type="button"
              role="menuitem"
              tabIndex={-1}
              className="sv-item sv-item--action"
              data-sv-primary=""
              data-sv-save=""
              data-testid="sv-save-current"
              onClick={() => {
                saveView.reset();
                setStatus('');
                setMode({ kind: 'save' });
              }}
            >
              <span className="sv-item__plus" aria-hidden="true">
                +
              </span>
              <span className="sv-item__title">Save current view…</span>
              <span className="sv-item__meta">{PAGE_LABELS[view.page]}</span>
            </button>
          )}

          <div className="sv-section" role="group" aria-labelledby={`${menuId}-views`}>
            <div className="sv-section__head" id={`${menuId}-views`}>
              Saved views{views.data ? <span className="sv-section__count"> · {savedList.length}</span> : null}
            </div>
            {views.isPending && <p className="sv-note">Loading…</p>}
            {views.isError && (
              <p className="sv-note sv-note--error" role="alert">
                {errorText(views.error)}
              </p>
            )}
            {views.data && savedList.length === 0 && <p className="sv-note">No saved views yet. Save this page’s view to come back to it later.</p>}
            {savedList.map((v) => (
              <SavedRow
                key={v.id}
                view={v}
                mode={mode}
                busy={busy}
                onOpen={() => openView(v.page, v.state)}
                onStartRename={() => {
                  renameView.reset();
                  setStatus('');
                  setMode({ kind: 'rename', id: v.id });
                }}
                onStartDelete={() => {
                  deleteView.reset();
                  setStatus('');
                  setMode({ kind: 'delete', id: v.id });
                  pendingFocus.current = '[data-sv-confirm]';
                }}
                onCancel={() => {
                  pendingFocus.current = `[data-sv-id="${v.id}"] [data-sv-primary]`;
                  setMode({ kind: 'list' });
                }}
                renameError={mode.kind === 'rename' && mode.id === v.id ? renameView.error : null}
                deleteError={mode.kind === 'delete' && mode.id === v.id ? deleteView.error : null}
                onRename={(name) =>
                  renameView.mutate(
                    { id: v.id, name },
                    {
                      onSuccess: (r) => {
                        setStatus(`Renamed to “${r.name}”.`);
                        pendingFocus.current = `[data-sv-id="${v.id}"] [data-sv-primary]`;
                        setMode({ kind: 'list' });
                      },
                    },
                  )
                }
                onDelete={() => {
                  const i = savedList.indexOf(v);
                  const neighbour = savedList[i + 1] ?? savedList[i - 1];
                  deleteView.mutate(v.id, {
                    onSuccess: () => {
                      setStatus(`Deleted “${v.name}”.`);
                      pendingFocus.current = neighbour ? `[data-sv-id="${neighbour.id}"] [data-sv-primary]` : '[data-sv-save]';
                      setMode({ kind: 'list' });
                    },
                  });
                }}
              />
            ))}
          </div>

          <div className="sv-section" role="group" aria-labelledby={`${menuId}-searches`}>
            <div className="sv-section__head" id={`${menuId}-searches`}>
              Recent searches
            </div>
            {searches.isPending && <p className="sv-note">Loading…</p>}
            {searches.isError && (
              <p className="sv-note sv-note--error" role="alert">
                {errorText(searches.error)}
              </p>
            )}
            {searches.data && searchList.length === 0 && <p className="sv-note">No searches yet. The last 20 searches you run on the Logs page appear here.</p>}
            {searchList.map((s) => (
              <SearchItem key={s.id} search={s} onOpen={() => openView(s.page, s.state)} />
            ))}
            {searchList.length > 0 && (
              <button
                type="button"
                role="menuitem"
                tabIndex={-1}
                className="sv-item sv-item--action sv-item--quiet"
                data-sv-primary=""
                data-testid="sv-clear-searches"
                disabled={busy}
                onClick={() =>
                  clearSearches.mutate(undefined, {
                    onSuccess: () => {
                      setStatus('Recent searches cleared.');
                      pendingFocus.current = 'first';
                    },
                  })
                }
              >
                <span className="sv-item__title">Clear recent searches</span>
              </button>
            )}
            {clearSearches.isError && (
              <p className="sv-note sv-note--error" role="alert">
                {errorText(clearSearches.error)}
              </p>
            )}
          </div>
          <p className="sv-status" role="status" aria-live="polite" data-testid="sv-status">
            {status}
          </p>
        </div>
      )}
    </div>
  );
}

/** The menu's items for ArrowUp/ArrowDown: one per row, in order. */
function primaryItems(menu: HTMLElement): HTMLElement[] {
  return [...menu.querySelectorAll<HTMLElement>('[data-sv-primary]')].filter((el) => !(el as HTMLButtonElement).disabled);
}

function SaveForm({
  initial,
  describe,
  pending,
  error,
  onSave,
  onCancel,
}: {
  initial: string;
  describe: string;
  pending: boolean;
  error: Error | null;
  onSave: (name: string) => void;
  onCancel: () => void;
}) {
  const hintId = useId();
  return (
    <NameForm
      className="sv-form sv-form--save"
      label="Name this view"
      initial={initial}
      submitLabel="Save"
      pending={pending}
      error={error}
      hint={
        <p className="sv-form__hint" id={hintId}>
          {describe}
        </p>
      }
      hintId={hintId}
      onSubmit={onSave}
      onCancel={onCancel}
      testId="sv-save-form"
    />
  );
}

function NameForm({
  className,
  label,
  initial,
  submitLabel,
  pending,
  error,
  hint,
  hintId,
  onSubmit,
  onCancel,
  testId,
}: {
  className: string;
  label: string;
  initial: string;
  submitLabel: string;
  pending: boolean;
  error: Error | null;
  hint?: ReactNode;
  hintId?: string;
  onSubmit: (name: string) => void;
  onCancel: () => void;
  testId: string;
}) {
  const [name, setName] = useState(initial);
  const inputRef = useRef<HTMLInputElement>(null);
  const errorId = useId();
  const fieldError = error instanceof ApiError && error.locations.includes('name');
  useEffect(() => {
    inputRef.current?.focus();
    inputRef.current?.select();
  }, []);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (name.trim() && !pending) onSubmit(name.trim());
  };
  return (
    <form
      className={className}
      onSubmit={submit}
      data-testid={testId}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          // Escape ends the edit, not the whole menu.
          e.preventDefault();
          e.stopPropagation();
          onCancel();
        }
      }}
    >
      <input
        ref={inputRef}
        className="input sv-form__input"
        aria-label={label}
        placeholder={label}
        value={name}
        maxLength={MAX_NAME_CHARS * 2}
        onChange={(e) => setName(e.target.value)}
        aria-invalid={fieldError || undefined}
        aria-describedby={[error ? errorId : '', hintId ?? ''].filter(Boolean).join(' ') || undefined}
        data-testid="sv-name-input"
      />
      <div className="sv-form__buttons">
        <button type="submit" className="btn btn--small btn--primary" disabled={pending || !name.trim()} data-testid="sv-name-submit">
          {pending ? 'Saving…' : submitLabel}
        </button>
        <button type="button" className="btn btn--small" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {hint}
      {error && (
        <p className="sv-form__error" id={errorId} role="alert" data-testid="sv-error">
          {errorText(error)}
        </p>
      )}
    </form>
  );
}

function SavedRow({
  view,
  mode,
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
  mode: Mode;
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
  const editing = mode.kind !== 'list' && 'id' in mode && mode.id === view.id ? mode.kind : null;
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
  const detail = `${PAGE_LABELS[view.page]} · ${describeState(view.state)}`;
  return (
    <div className="sv-row" data-sv-id={view.id} data-testid="sv-view">
      <button
        type="button"
        role="menuitem"
        tabIndex={-1}
        className="sv-item"
        data-sv-primary=""
        data-sv-cell=""
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
        <span className="sv-item__detail">
          <span className="sv-item__page">{PAGE_LABELS[view.page]}</span>
          <span className="sv-item__state">{describeState(view.state)}</span>
        </span>
      </button>
      <button type="button" role="menuitem" tabIndex={-1} className="sv-icon" data-sv-cell="" aria-label={`Rename “${view.name}”`} title="Rename (F2)" disabled={busy} onClick={onStartRename} data-testid="sv-rename">
        <svg viewBox="0 0 24 24" width="14" height="14" fill="none" stroke="currentColor" strokeWidth="1.9" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
          <path d="M4 20h4L19 9l-4-4L4 16v4zM13.5 6.5l4 4" />
        </svg>
      </button>
      <button
        type="button"
        role="menuitem"
        tabIndex={-1}
        className="sv-icon sv-icon--danger"
        data-sv-cell=""
        aria-label={`Delete “${view.name}”`}
        title="Delete (Del)"
        disabled={busy}
        onClick={onStartDelete}
        data-testid="sv-delete"
      >
        <svg viewBox="0 0 24 24" width="14" height="14" fill="none" stroke="currentColor" strokeWidth="1.9" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
          <path d="M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13M10 11v6M14 11v6" />
        </svg>
      </button>
    </div>
  );
}

function SearchItem({ search, onOpen }: { search: RecentSearch; onOpen: () => void }) {
  const detail = `${PAGE_LABELS[search.page]} · ${describeState(search.state)}`;
  return (
    <button
      type="button"
      role="menuitem"
      tabIndex={-1}
      className="sv-item sv-item--search"
      data-sv-primary=""
      title={`Run again: ${detail}\nLast run ${whenSaved(search.at)}.`}
      onClick={onOpen}
      data-testid="sv-search"
    >
      <span className="sv-item__title">{search.label || <span className="muted">(no text)</span>}</span>
      <span className="sv-item__detail">
        <span className="sv-item__page">{PAGE_LABELS[search.page]}</span>
        <span className="sv-item__state">{describeState(search.state)}</span>
      </span>
    </button>
  );
}
