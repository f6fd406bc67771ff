/**
 * The pieces of a card that holds a table (the Functions table, the stored sources, the
 * endpoints, a connection's sources): the card and its heading, the table in its scroll
 * container, and the note said in place of a table with no rows.
 */
import type { ReactNode } from 'react';

export function TableCard({
  title,
  aside,
  testId,
  refetching,
  children,
}: {
  /** The heading's content. */
  title: ReactNode;
  /** Beside the heading: the card's tools or notes. */
  aside?: ReactNode;
  testId?: string;
  /** Faded and busy while the rows shown are the previous request's; left out by a card that never refetches in place. */
  refetching?: boolean;
  /** The table, or what stands in for it. */
  children: ReactNode;
}) {
  return (
    <section className={`card${refetching ? ' is-refetching' : ''}`} data-testid={testId} aria-busy={refetching}>
      <div className="card__head">
        <h2>{title}</h2>
        {aside}
      </div>
      {children}
    </section>
  );
}

/** A table in the container that scrolls it sideways when the card is narrower than its columns. */
export function TableScroll({ className, testId, children }: { className?: string; testId?: string; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table className={className ? `table ${className}` : 'table'} data-testid={testId}>
        {children}
      </table>
    </div>
  );
}

/** Said in the card in place of a table with no rows. */
export function TableNote({ testId, children }: { testId?: string; children: ReactNode }) {
  return (
    <div className="pad muted" data-testid={testId}>
      {children}
    </div>
  );
}
