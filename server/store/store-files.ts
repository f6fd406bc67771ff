/**
 * The names of a data folder's files besides the catalog (docs/ARCHITECTURE.md, "Store
 * layout"), shared by the store and `npm run check`, and how files that no commit names go.
 */
import fs from 'node:fs';
import { columnsFileOf } from './scan-columns.ts';

export const PARTS_DIR = 'parts';
export const URLS_FILE = 'urls.log';
/** URL pattern matches kept across restarts (derived; see url-match-file.ts). */
export const URL_MATCHES_FILE = 'urls.log.matches';
/** The store-wide path dictionary (derived, like the columns files; see TextDictionary). */
export const PATHS_FILE = 'paths.log';
/** The catalog as a running import found it (see import-transaction.ts). */
export const ROLLBACK_FILE = 'catalog.sqlite.before-import';

/** The files derived from a record file, by the ending that replaces its `.records`: its block index, record texts and record words. */
export const RECORD_DERIVED: readonly string[] = ['.grams', '.texts', '.tokens'];

/** What a columns file is named while it is written off the answering thread. */
export const COLUMNS_WRITING_TMP = '.bg.tmp';

/** Whether a file under parts/ is derived (a columns file, one being written, or derived from a record file): rebuilt, never restored. */
export const isDerivedPartFile = (f: string): boolean => f.endsWith('.cols') || f.endsWith(`.cols${COLUMNS_WRITING_TMP}`) || RECORD_DERIVED.some((ext) => f.endsWith(ext));

/** Deletes a file; a version's database file goes with its columns file. */
export function removeVersionFiles(file: string): void {
  fs.rmSync(file, { force: true });
  if (file.endsWith('.sqlite')) fs.rmSync(columnsFileOf(file), { force: true });
  // A record file goes with its block index, its record texts and its record words.
  if (file.endsWith('.records')) for (const ext of RECORD_DERIVED) fs.rmSync(file.replace(/\.records$/, ext), { force: true });
}

/** A second name for a file (a copy where the file system has no hard links). */
export function linkOrCopy(from: string, to: string): void {
  try {
    fs.linkSync(from, to);
  } catch {
    fs.copyFileSync(from, to);
  }
}
