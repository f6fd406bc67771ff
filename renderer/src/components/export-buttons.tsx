import { toCsv } from '../lib/csv.ts';
import { downloadText } from '../lib/download.ts';

/** Exports the current result as CSV or JSON; the file name says what and when. */
export function ExportButtons({ fileBase, rows, csvRows }: { fileBase: string; rows: readonly unknown[] | undefined; csvRows?: () => ReadonlyArray<Record<string, unknown>> }) {
  const disabled = !rows || rows.length === 0;
  return (
    <div className="btn-group" role="group" aria-label="Export">
      <button
        type="button"
        className="btn btn--small"
        disabled={disabled}
        title="Download the current result as CSV"
        onClick={() => rows && downloadText(`${fileBase}.csv`, toCsv(csvRows ? csvRows() : (rows as ReadonlyArray<Record<string, unknown>>)), 'text/csv;charset=utf-8')}
      >
        CSV
      </button>
      <button
        type="button"
        className="btn btn--small"
        disabled={disabled}
        title="Download the current result as JSON ({result: rows}, as the API returns it)"
        onClick={() => rows && downloadText(`${fileBase}.json`, `${JSON.stringify({ result: rows }, null, 2)}\n`, 'application/json')}
      >
        JSON
      </button>
    </div>
  );
}
