import type { ReactNode } from 'react';
import { useView } from '../app-state.tsx';

/** Says what is missing and where to get it: the Data page. */
export function EmptyState({ title, children, showDataLink = true }: { title: string; children?: ReactNode; showDataLink?: boolean }) {
  const { navigate } = useView();
  return (
    <div className="empty-state" data-testid="empty-state">
      <div className="empty-state__art" aria-hidden="true">
        <span />
        <span />
        <span />
      </div>
      <h2>{title}</h2>
      {children && <div className="empty-state__body">{children}</div>}
      {showDataLink && (
        <a
          className="btn btn--primary"
          href="/data"
          onClick={(e) => {
            e.preventDefault();
            navigate('data');
          }}
        >
          Go to Data to import
        </a>
      )}
    </div>
  );
}
