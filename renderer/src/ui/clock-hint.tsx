import type { SourceListing } from '../../../contract/api-types.ts';
import { MICROS } from '../../../contract/instants.ts';
import { useClock, useSetClock } from '../api/hooks.ts';
import { formatDateTime } from '../lib/time.ts';

/**
 * Shown when a window is empty although the source has data: usually the export is older
 * than the clock's "now". Offers to pin the clock to the newest record.
 */
export function ClockHint({ what, source }: { what: string; source: SourceListing | undefined }) {
  const clock = useClock();
  const setClock = useSetClock();
  if (!clock.data) return null;
  const hasSpan = source && source.minTimestamp !== null && source.maxTimestamp !== null;
  const stale = hasSpan && source.maxTimestamp! < clock.data.now - MICROS.minute;
  return (
    <div className="notice" data-testid="clock-hint">
      <div>
        <strong>No {what} in this window.</strong> The window ends at the server’s clock, {formatDateTime(clock.data.now, 'second')} ({clock.data.mode === 'system' ? 'real time' : clock.data.mode === 'latest' ? 'newest record' : 'fixed'}).
        {hasSpan && (
          <>
            {' '}
            The imported <code>{source.source}</code> records span {formatDateTime(source.minTimestamp!, 'minute')} – {formatDateTime(source.maxTimestamp!, 'minute')}.
          </>
        )}
      </div>
      {stale && clock.data.mode !== 'latest' && (
        <button type="button" className="btn btn--small" disabled={setClock.isPending} onClick={() => setClock.mutate({ mode: 'latest' })}>
          Pin clock to newest record
        </button>
      )}
    </div>
  );
}
