/**
 * The texts of the shell's native message boxes, as pure functions of what happened (the
 * main process only shows them). Shapes are Electron's MessageBoxOptions.
 */
import path from 'node:path';
import type { MessageBoxOptions } from 'electron';
import type { ImportReport } from '../server/api-types.ts';
import type { ImportFilesResult } from './bridge.ts';

/** What File → Import Logs… says afterwards: one line per file. */
export function importSummary(result: ImportFilesResult): MessageBoxOptions {
  const lines = result.files.map((f) =>
    f.ok
      ? `${path.basename(f.file)}: ${f.report.imported} imported, ${f.report.duplicates} duplicates, ${f.report.rejected} rejected (${f.report.source})`
      : `${path.basename(f.file)}: not imported: ${f.reason}`,
  );
  const failed = result.files.filter((f) => !f.ok).length;
  const n = result.files.length;
  return {
    type: failed ? 'warning' : 'info',
    message: failed ? `${failed} of ${n} files could not be imported` : `Imported ${n} file${n === 1 ? '' : 's'}`,
    detail: lines.join('\n'),
  };
}

export const DEMO_BUTTONS = { keep: 0, clear: 1 } as const;

/** The first-start notice: demo data was loaded, with a one-click way out. */
export function demoLoaded(appName: string, reports: readonly ImportReport[]): MessageBoxOptions {
  const records = reports.reduce((n, r) => n + r.imported, 0);
  return {
    type: 'info',
    message: 'Demo data loaded',
    detail: `Your log store was empty, so ${appName} loaded ${records.toLocaleString('en-US')} generated demo records (${reports.length} sources) to show what it does. They are not real logs.\n\nImport your own exports with File → Import Logs…`,
    buttons: ['Keep Demo Data', 'Clear Demo Data'],
    defaultId: DEMO_BUTTONS.keep,
    cancelId: DEMO_BUTTONS.keep,
  };
}

export interface AboutInput {
  appName: string;
  version: string;
  dataDir: string;
  server: string;
  versions: { electron?: string; chrome?: string; node?: string };
}

export function about(input: AboutInput): MessageBoxOptions {
  return {
    type: 'info',
    title: `About ${input.appName}`,
    message: `${input.appName} ${input.version}`,
    detail: [
      'Offline explorer for Supabase-style log exports: Logflare’s analytics endpoints over a local store.',
      '',
      `Data folder: ${input.dataDir}`,
      `Server: ${input.server}`,
      `Electron ${input.versions.electron ?? '?'}, Chromium ${input.versions.chrome ?? '?'}, Node ${input.versions.node ?? '?'}`,
    ].join('\n'),
  };
}
