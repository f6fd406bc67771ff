/**
 * The "Saved views" menu in the app shell's sidebar, on every page: save the
 * current page and its URL state under a name, reopen, rename or delete saved views, and
 * reopen one of the last 20 searches. The server keeps both in its data folder.
 *
 * Keyboard: the button opens the menu (ArrowDown or ArrowRight at the first item, ArrowUp at
 * the last); inside it, menu-keys.ts moves between items; F2 renames and Delete deletes the
 * focused view, Escape cancels an edit or closes the menu (focus returns to the button).
 */
import { useEffect, useId, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { useView } from '../../app-state.tsx';
import { decodeView, type PageId } from '../../lib/url-state.ts';
import { onMenuKey, primaryItems } from './menu-keys.ts';
import { SaveForm } from './name-form.tsx';
import { MenuItem, RecentSearchItem, SavedViewItem } from './saved-view-items.tsx';
import { useClearSearches, useDeleteView, useRecentSearches, useRenameView, useSavedViews, useSaveView } from './saved-views-storage.ts';
import { currentState, describeView, errorText, PAGE_LABELS, suggestName } from './view-labels.ts';
import './views.css';

/** Room kept below the menu, and its tallest, px. */
const MENU_MARGIN = 12;
const MENU_MAX_HEIGHT = 620;

type Mode = { kind: 'list' } | { kind: 'save' } | { kind: 'rename'; id: string } | { kind: 'delete'; id: string };

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

  /** Back to the list, focus on `selector` once it is rendered. */
  const backToList = (selector: string) => {
    pendingFocus.current = selector;
    setMode({ kind: 'list' });
  };
  const itemOf = (id: string) => `[data-sv-id="${id}"] [data-sv-primary]`;

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
          onKeyDown={(e) => {
            if (menuRef.current) onMenuKey(e, menuRef.current, close);
          }}
          onBlur={(e) => {
            // Focus that left the control (Tab, a click elsewhere) closes it; focus that vanished
            // with an edit (relatedTarget null) does not.
            if (e.relatedTarget && !rootRef.current?.contains(e.relatedTarget as Node)) close(false);
          }}
        >
          {mode.kind === 'save' ? (
            <SaveForm
              initial={suggestName(view)}
              describe={describeView(view.page, currentState(view).state)}
              pending={saveView.isPending}
              error={saveView.error}
              onCancel={() => {
                saveView.reset();
                backToList('[data-sv-save]');
              }}
              onSave={(name) => {
                saveView.mutate(
                  { name, ...currentState(view) },
                  {
                    onSuccess: (saved) => {
                      setStatus(`Saved “${saved.name}”.`);
                      backToList(itemOf(saved.id));
                    },
                  },
                );
              }}
            />
          ) : (
            <MenuItem
              primary
              className="sv-item sv-item--action"
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
            </MenuItem>
          )}

          <MenuSection
            id={`${menuId}-views`}
            title={<>Saved views{views.data ? <span className="sv-section__count"> · {savedList.length}</span> : null}</>}
            list={views}
            empty="No saved views yet. Save this page’s view to come back to it later."
          >
            {savedList.map((v) => (
              <SavedViewItem
                key={v.id}
                view={v}
                editing={(mode.kind === 'rename' || mode.kind === 'delete') && mode.id === v.id ? mode.kind : null}
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
                onCancel={() => backToList(itemOf(v.id))}
                renameError={mode.kind === 'rename' && mode.id === v.id ? renameView.error : null}
                deleteError={mode.kind === 'delete' && mode.id === v.id ? deleteView.error : null}
                onRename={(name) =>
                  renameView.mutate(
                    { id: v.id, name },
                    {
                      onSuccess: (r) => {
                        setStatus(`Renamed to “${r.name}”.`);
                        backToList(itemOf(v.id));
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
                      backToList(neighbour ? itemOf(neighbour.id) : '[data-sv-save]');
                    },
                  });
                }}
              />
            ))}
          </MenuSection>

          <MenuSection id={`${menuId}-searches`} title="Recent searches" list={searches} empty="No searches yet. The last 20 searches you run on the Logs page appear here.">
            {searchList.map((s) => (
              <RecentSearchItem key={s.id} search={s} onOpen={() => openView(s.page, s.state)} />
            ))}
            {searchList.length > 0 && (
              <MenuItem
                primary
                className="sv-item sv-item--action sv-item--quiet"
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
              </MenuItem>
            )}
            {clearSearches.isError && <ErrorNote error={clearSearches.error} />}
          </MenuSection>
          <p className="sv-status" role="status" aria-live="polite" data-testid="sv-status">
            {status}
          </p>
        </div>
      )}
    </div>
  );
}

/** One of the menu's lists: its heading, then loading, failed or empty, then its items. */
function MenuSection({
  id,
  title,
  list,
  empty,
  children,
}: {
  id: string;
  title: ReactNode;
  list: { isPending: boolean; isError: boolean; error: Error | null; data: readonly unknown[] | undefined };
  empty: string;
  children: ReactNode;
}) {
  return (
    <div className="sv-section" role="group" aria-labelledby={id}>
      <div className="sv-section__head" id={id}>
        {title}
      </div>
      {list.isPending && <p className="sv-note">Loading…</p>}
      {list.isError && <ErrorNote error={list.error} />}
      {list.data && list.data.length === 0 && <p className="sv-note">{empty}</p>}
      {children}
    </div>
  );
}

function ErrorNote({ error }: { error: unknown }) {
  return (
    <p className="sv-note sv-note--error" role="alert">
      {errorText(error)}
    </p>
  );
}
