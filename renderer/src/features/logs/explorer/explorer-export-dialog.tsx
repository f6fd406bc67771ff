import { useEffect, useState } from 'react';
import { downloadExport, useLogsCount, type ExportFormat, type LogsParams } from '../../../api/logs.ts';
import { formatBytes, formatInt } from '../../../lib/format.ts';
import { searchProgress } from '../../../lib/search-progress.ts';
import { parseIsoMicros } from '../../../../../contract/instants.ts';
import { ConfirmDialog } from '../../../ui/confirm-dialog.tsx';
import { ErrorPanel } from '../../../ui/error-panel.tsx';

/**
 * "Export all matching": says how many records and about how many bytes first (from
 * `/api/logs/count`), then downloads `/api/logs/export` in the chosen format.
 */
export function ExplorerExportDialog({ open, params, fileBase, summary, onClose }: { open: boolean; params: LogsParams | null; fileBase: string; summary: string; onClose: () => void }) {
  const count = useLogsCount(open ? params : null);
  const [format, setFormat] = useState<ExportFormat>('csv');
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);

  useEffect(() => {
    if (!open) {
      setProgress(null);
      setError(null);
      setDone(null);
    }
  }, [open]);

  const busy = progress !== null;
  // A search still counting gives a lower bound; "nothing to export" only once it is whole.
  const counting = count.data?.scanned !== undefined && !searchProgress(count.data.scanned, { start: typeof params?.start === 'string' ? parseIsoMicros(params.start) : undefined }).complete;
  const empty = count.data?.count === 0 && !counting;

  return (
    <ConfirmDialog
      open={open}
      title="Export all matching records"
      confirmLabel={done ? 'Close' : count.data ? `Download ${format === 'csv' ? 'CSV' : 'NDJSON'}` : 'Download'}
      busy={busy || count.isPending}
      onCancel={onClose}
      onConfirm={() => {
        if (done || empty) {
          onClose();
          return;
        }
        if (!params) return;
        setError(null);
        setProgress(0);
        downloadExport(params, format, fileBase, setProgress)
          .then((r) => setDone(`Saved ${r.fileName} (${formatBytes(r.bytes)}).`))
          .catch((err: unknown) => setError(err))
          .finally(() => setProgress(null));
      }}
    >
      <div className="ex-export" data-testid="export-dialog">
        <p className="muted small ex-export__what">{summary}</p>
        {count.isError ? (
          <ErrorPanel error={count.error} title="Cannot count the matching records" />
        ) : count.data ? (
          <p data-testid="export-count">
            {counting && 'At least '}
            <strong>{formatInt(count.data.count)}</strong> {count.data.count === 1 ? 'record' : 'records'} · about <strong>{formatBytes(count.data.bytes)}</strong>
            {counting ? ' so far; still counting…' : ''}
            {empty && <span className="muted"> — nothing to export</span>}
          </p>
        ) : (
          <p className="muted">Counting…</p>
        )}
        <div className="ex-export__formats" role="radiogroup" aria-label="Format">
          {(['csv', 'ndjson'] as const).map((f) => (
            <label key={f} className="radio">
              <input type="radio" name="export-format" value={f} checked={format === f} disabled={busy} onChange={() => setFormat(f)} data-testid={`export-format-${f}`} />
              {f === 'csv' ? 'CSV (one row per record, metadata as JSON)' : 'NDJSON (one JSON record per line)'}
            </label>
          ))}
        </div>
        {busy && (
          <p className="muted" data-testid="export-progress">
            Downloading… {formatBytes(progress)}
          </p>
        )}
        {done && (
          <p className="notice notice--ok" data-testid="export-done">
            {done}
          </p>
        )}
        {error !== null && <ErrorPanel error={error} title="The export failed" />}
      </div>
    </ConfirmDialog>
  );
}
