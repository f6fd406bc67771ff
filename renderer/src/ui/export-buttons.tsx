import { downloadText } from '../lib/download.ts';
import { exportFile, type TableExport } from '../lib/view-export.ts';

/** Exports the current result as CSV or JSON; the file name says what and when. The menu's Export Current View writes the same files. */
export function ExportButtons(table: TableExport) {
  const disabled = !table.rows || table.rows.length === 0;
  const save = (format: 'csv' | 'json') => {
    const f = exportFile(table, format);
    downloadText(f.fileName, f.text, f.type);
  };
  return (
    <div className="btn-group" role="group" aria-label="Export">
      <button type="button" className="btn btn--small" disabled={disabled} title="Download the current result as CSV" onClick={() => save('csv')}>
        CSV
      </button>
      <button type="button" className="btn btn--small" disabled={disabled} title="Download the current result as JSON ({result: rows}, as the API returns it)" onClick={() => save('json')}>
        JSON
      </button>
    </div>
  );
}
