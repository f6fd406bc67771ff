import { useEffect, useSyncExternalStore } from 'react';
import { notices as appNotices, type Notice, type NoticeStore } from '../lib/notices.ts';

/** How long a notice stays unless dismissed; long enough to read a file name. */
const SHOWN_MS = 7_000;

/**
 * The notice stack, bottom right over the page; each notice goes away by itself or with ×.
 * The stack is the live region (present before any notice, so screen readers announce each).
 */
export function Notices({ store = appNotices }: { store?: NoticeStore }) {
  const list = useSyncExternalStore(store.subscribe, store.list);
  return (
    <div className="toasts" role="status" aria-live="polite" data-testid="notices">
      {list.map((n) => (
        <Toast key={n.id} notice={n} onDismiss={() => store.dismiss(n.id)} />
      ))}
    </div>
  );
}

function Toast({ notice, onDismiss }: { notice: Notice; onDismiss: () => void }) {
  useEffect(() => {
    const t = setTimeout(onDismiss, SHOWN_MS);
    return () => clearTimeout(t);
    // One timer per notice: a re-render must not restart it.
  }, [notice.id]);
  return (
    <div className={`toast toast--${notice.tone}`} data-testid="notice" data-tone={notice.tone}>
      <span className="toast__text" data-testid="notice-text">
        {notice.text}
      </span>
      <button type="button" className="icon-btn" aria-label="Dismiss" onClick={onDismiss}>
        ×
      </button>
    </div>
  );
}
