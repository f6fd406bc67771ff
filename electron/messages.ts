/**
 * The texts of the shell's native message boxes, as pure functions of what happened (the
 * main process only shows them). Shapes are Electron's MessageBoxOptions.
 */
import path from 'node:path';
import type { MessageBoxOptions } from 'electron';
import type { ImportReport } from '../contract/api-types.ts';
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

export const EXTERNAL_BUTTONS = { cancel: 0, open: 1 } as const;

/** Asked before a link from the page opens in the system browser unencrypted or inside the local network (guards.externalLink). */
export function confirmExternalLink(url: string, reason: 'http' | 'local-network'): MessageBoxOptions {
  const why =
    reason === 'http'
      ? 'The link is not encrypted (http), so what you send and see there can be read or changed on the way.'
      : 'The link leads into your local network (a private address or a local name), where the page has no business unless you meant to go there.';
  return {
    type: 'question',
    message: 'Open this link in your browser?',
    detail: `${url}\n\n${why} Links in the page may come from imported logs.`,
    buttons: ['Cancel', 'Open in Browser'],
    defaultId: EXTERNAL_BUTTONS.cancel,
    cancelId: EXTERNAL_BUTTONS.cancel,
  };
}

/**
 * Every URL in a text reduced to its origin: the app's URL carries its key in the fragment
 * (`#key=`), and a data: URL is a whole page. For errors written to the console or a log.
 */
export function withOriginsOnly(text: string): string {
  return text.replace(/\b(https?:\/\/[^\s'"<>]*|data:[^\s'"<>]*)/gi, (url) => {
    if (/^data:/i.test(url)) return 'data:…';
    try {
      return new URL(url).origin;
    } catch {
      return '(a URL)';
    }
  });
}

/** The line logged when the window cannot load a page: the origin and the reason, never the URL's key. */
export function loadFailure(url: string, err: { message?: string; code?: unknown }): string {
  const what = withOriginsOnly(url);
  const why = typeof err.code === 'string' && err.code !== '' ? err.code : withOriginsOnly(err.message ?? String(err));
  return `cannot load ${what === 'data:…' ? "the shell's own page" : what}: ${why}`;
}

export const UNUSED_STORE_BUTTONS = { ok: 0, show: 1 } as const;

/** Told once per folder: an earlier location holds a store that is not used, since the data folder has data of its own. */
export function unusedStoresNotice(dataDir: string, others: readonly string[]): MessageBoxOptions {
  const list = others.map((o) => `  ${o}`).join('\n');
  return {
    type: 'info',
    message: others.length === 1 ? 'Another store of your logs was found' : `${others.length} other stores of your logs were found`,
    detail:
      `Log Explorer keeps its data in\n  ${dataDir}\nin every mode (the desktop app, npm start, npm run serve, npm run import). An earlier version of the desktop app kept it in\n${list}\n` +
      `That store was left where it is, not merged, since the data folder holds data of its own.\n\n` +
      `To open it, start with LOG_EXPLORER_DATA_DIR set to its folder (or \`npm start -- --data-dir FOLDER\`). To make it the one you use, quit Log Explorer and move its files (catalog.sqlite, urls.log, parts, views.json) into the data folder in place of the ones there.`,
    buttons: ['OK', others.length === 1 ? 'Show It' : 'Show the First'],
    defaultId: UNUSED_STORE_BUTTONS.ok,
    cancelId: UNUSED_STORE_BUTTONS.ok,
  };
}

/** Shown by the running app when it is started again for another data folder (one window per shell folder). */
export function alreadyOpen(appName: string, dataDir: string, requested: string): MessageBoxOptions {
  return {
    type: 'info',
    message: `${appName} is already open`,
    detail: `This window shows the data folder\n  ${dataDir}\nand was asked to open\n  ${requested}\nQuit ${appName} first to open the other folder.`,
  };
}
