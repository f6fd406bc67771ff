/**
 * "Export current view": the page that is showing says what it shows (the rows of its table
 * or chart, as its own CSV/JSON buttons export them), and the desktop menu's
 * Export Current View → CSV / NDJSON / JSON saves that. Pages register with
 * `useExportCurrentView`; the last mounted one is the current view.
 */
import { useEffect, useRef } from 'react';
import { formatIsoMicros } from '../../../contract/instants.ts';
import type { ViewExportFormat } from '../../../electron/bridge.ts';
import { toCsv } from './csv.ts';
import { downloadText } from './download.ts';
import { formatInt } from './format.ts';
import { notices, type NoticeTone } from './notices.ts';

/** A result as a page exports it. */
export interface TableExport {
  /** The file name without its extension. */
  fileBase: string;
  /** The rows shown; undefined while they load or after an error. */
  rows: readonly unknown[] | undefined;
  /** The CSV's rows, when they differ from `rows` (flattened fields, chosen columns). */
  csvRows?: () => ReadonlyArray<Record<string, unknown>>;
}

/** A page's current view: its result and what to call it in a notice ("stored sources"). */
export interface ViewTable extends TableExport {
  what: string;
}

export interface ExportFile {
  fileName: string;
  text: string;
  type: string;
}

const FILE_TYPES: Readonly<Record<ViewExportFormat, string>> = {
  csv: 'text/csv;charset=utf-8',
  ndjson: 'application/x-ndjson',
  json: 'application/json',
};

/** The file of `table` in `format`: CSV of its CSV rows; JSON as the API answers (`{result: rows}`); NDJSON one row per line. */
export function exportFile(table: TableExport, format: ViewExportFormat): ExportFile {
  const rows = table.rows ?? [];
  const fileName = `${table.fileBase}.${format}`;
  const type = FILE_TYPES[format];
  switch (format) {
    case 'csv':
      return { fileName, type, text: toCsv(table.csvRows ? table.csvRows() : (rows as ReadonlyArray<Record<string, unknown>>)) };
    case 'json':
      return { fileName, type, text: `${JSON.stringify({ result: rows }, null, 2)}\n` };
    case 'ndjson':
      return { fileName, type, text: rows.map((r) => `${JSON.stringify(r)}\n`).join('') };
  }
}

/** The instant an export's file name ends with, `2026-03-14T160456` (UTC, to the second); '' while unknown. */
export function fileStamp(now: number | undefined): string {
  return now ? formatIsoMicros(now).slice(0, 19).replace(/:/g, '') : '';
}

export interface ViewExportRegistry {
  /** Makes `get` the current view until the returned function is called. */
  register(get: () => ViewTable): () => void;
  current(): ViewTable | undefined;
}

export function createViewExportRegistry(): ViewExportRegistry {
  // A stack, not one slot: if two views overlap (one mounts before the other unmounts), the
  // newer one is current, and removing it brings the older one back.
  const stack: Array<() => ViewTable> = [];
  return {
    register(get) {
      stack.push(get);
      return () => {
        const i = stack.lastIndexOf(get);
        if (i >= 0) stack.splice(i, 1);
      };
    },
    current: () => stack.at(-1)?.(),
  };
}

export type ExportOutcome =
  | { kind: 'saved'; fileName: string; rows: number; what: string }
  /** The page has a view, but it shows nothing (empty, loading or failed). */
  | { kind: 'empty'; what: string }
  /** No page registered a view. */
  | { kind: 'none' };

/** What the user is told after an export request: always something, never silence. */
export function exportMessage(outcome: ExportOutcome): { text: string; tone: NoticeTone } {
  switch (outcome.kind) {
    case 'saved':
      return { tone: 'ok', text: `Exported ${outcome.what} as ${outcome.fileName} (${formatInt(outcome.rows)} ${outcome.rows === 1 ? 'row' : 'rows'}).` };
    case 'empty':
      return { tone: 'warn', text: `Nothing to export: this page shows no ${outcome.what}.` };
    case 'none':
      return { tone: 'warn', text: 'Nothing to export: this page has no table or chart to export.' };
  }
}

export interface ExportDeps {
  registry: ViewExportRegistry;
  save: (file: ExportFile) => void;
  notify: (text: string, tone: NoticeTone) => void;
}

/** Saves the current view in `format` and says what happened. */
export function runViewExport(format: ViewExportFormat, deps: ExportDeps): ExportOutcome {
  const table = deps.registry.current();
  let outcome: ExportOutcome;
  if (!table) outcome = { kind: 'none' };
  else if (!table.rows || table.rows.length === 0) outcome = { kind: 'empty', what: table.what };
  else {
    const file = exportFile(table, format);
    deps.save(file);
    outcome = { kind: 'saved', fileName: file.fileName, rows: table.rows.length, what: table.what };
  }
  const message = exportMessage(outcome);
  deps.notify(message.text, message.tone);
  return outcome;
}

/** The app's registry: one page shows at a time. */
export const viewExports = createViewExportRegistry();

const appDeps: ExportDeps = {
  registry: viewExports,
  save: (f) => downloadText(f.fileName, f.text, f.type),
  notify: (text, tone) => void notices.show(text, tone),
};

/** The menu's Export Current View, for the app's current page. */
export function exportCurrentView(format: ViewExportFormat): void {
  runViewExport(format, appDeps);
}

/** Makes `table` the current view while the calling page is mounted; the export reads its latest rows. */
export function useExportCurrentView(table: ViewTable, registry: ViewExportRegistry = viewExports): void {
  const latest = useRef(table);
  latest.current = table;
  useEffect(() => registry.register(() => latest.current), [registry]);
}
