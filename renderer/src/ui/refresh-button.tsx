import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

/**
 * Re-reads the server clock and every endpoint result: with the real-time clock, "last hour"
 * then means the last hour as of now.
 */
export function RefreshButton() {
  const qc = useQueryClient();
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className="btn btn--small"
      disabled={busy}
      title="Re-read the clock and re-run the query"
      onClick={() => {
        setBusy(true);
        void Promise.all([qc.invalidateQueries({ queryKey: ['clock'] }), qc.invalidateQueries({ queryKey: ['endpoint'] }), qc.invalidateQueries({ queryKey: ['sources'] })]).finally(() => setBusy(false));
      }}
    >
      {busy ? 'Refreshing…' : 'Refresh'}
    </button>
  );
}
