/**
 * Short messages the page shows for a few seconds (a toast): the answer to something asked
 * from outside the page, such as the desktop menu's Export Current View, which has no
 * button of its own to show a result beside.
 */
export type NoticeTone = 'info' | 'ok' | 'warn';

export interface Notice {
  id: number;
  tone: NoticeTone;
  text: string;
}

export interface NoticeStore {
  show(text: string, tone?: NoticeTone): number;
  dismiss(id: number): void;
  /** The shown notices, oldest first (a new array after each change, for useSyncExternalStore). */
  list(): readonly Notice[];
  subscribe(listener: () => void): () => void;
}

/** At most this many at once: a burst of menu clicks must not cover the page. */
export const MAX_NOTICES = 3;

export function createNoticeStore(): NoticeStore {
  let notices: readonly Notice[] = [];
  let nextId = 1;
  const listeners = new Set<() => void>();
  const set = (next: readonly Notice[]) => {
    notices = next;
    for (const l of [...listeners]) l();
  };
  return {
    show(text, tone = 'info') {
      const id = nextId++;
      set([...notices, { id, tone, text }].slice(-MAX_NOTICES));
      return id;
    },
    dismiss(id) {
      if (notices.some((n) => n.id === id)) set(notices.filter((n) => n.id !== id));
    },
    list: () => notices,
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}

/** The app's notices (one page, one stack). */
export const notices = createNoticeStore();
