/**
 * Opening a data folder, and what a crash or a partial restore can leave in it
 * (docs/ARCHITECTURE.md, "Commit protocol" and "Damaged files"): the folder's lock, the refusal
 * of partition files without their catalog, the committed catalog, the deletion of files no
 * commit names, and the start-up check of committed files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SOURCES } from '../sources.ts';
import { CATALOG_FILE, prepareCatalog, urlsState } from './catalog.ts';
import { StoreFileDamaged, StoreRefused, type DamageRegistry } from './damage.ts';
import { acquireDataLock, type DataLock, type DataLockKind } from './data-lock.ts';
import { makeFolderOwnerOnly, walkFiles } from './data-dir.ts';
import { EngineTrapped, loadEngine, openDbSync, type Db } from './db.ts';
import { LEGACY_STORE_FILE } from './legacy-store.ts';
import type { PartitionMap } from './partition-map.ts';
import { columnsFileOf } from './scan-columns.ts';
import { PARTS_DIR, ROLLBACK_FILE, URLS_FILE } from './store-files.ts';

/**
 * Takes a data folder (created when missing): its lock, its own owner-only mode, the engine, and its
 * committed catalog (a new one when it has none), then hands them to `open`. A folder with
 * partition files but no catalog is refused untouched; the lock is released if anything fails.
 * @param exists the folder had a catalog
 */
export async function openFolder<T>(dataDir: string, lockKind: DataLockKind | false | undefined, open: (catalog: Db, exists: boolean, lock: DataLock | undefined) => Promise<T>): Promise<T> {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lock = lockKind === false ? undefined : acquireDataLock(dataDir, { kind: lockKind ?? 'store' });
  try {
    // The folder at once; its entries once the store is open (LogStore.open: makeOwnerOnly).
    if (makeFolderOwnerOnly(dataDir).length) console.warn(`cannot make ${dataDir} owner-only (not owned by this user)`);
    await loadEngine();
    const file = path.join(dataDir, CATALOG_FILE);
    const exists = fs.existsSync(file);
    // Without its catalog a folder's files are unreadable and would be deleted as leftovers: refused, untouched.
    if (!exists && !fs.existsSync(path.join(dataDir, LEGACY_STORE_FILE))) refuseOrphanedFiles(dataDir);
    fs.rmSync(`${file}.tmp`, { force: true });
    const catalog = openCatalog(file, exists);
    return await open(catalog, exists, lock);
  } catch (err) {
    lock?.release();
    throw err;
  }
}

/**
 * Refuses a folder whose catalog is gone but whose partitions or URL dictionary are there (a
 * partial restore, a file deleted by hand): opening it would start an empty store and delete
 * those files as leftovers of an unfinished save.
 */
function refuseOrphanedFiles(dataDir: string): void {
  let files = 0;
  let bytes = 0;
  walkFiles(path.join(dataDir, PARTS_DIR), (file) => {
    files++;
    bytes += fs.statSync(file).size;
  });
  const urls = path.join(dataDir, URLS_FILE);
  const urlBytes = fs.existsSync(urls) ? fs.statSync(urls).size : 0;
  if (files === 0 && urlBytes === 0) return;
  const held = [files ? `${files} partition files (${bytes} bytes) under ${PARTS_DIR}/` : '', urlBytes ? `${URLS_FILE} (${urlBytes} bytes)` : ''].filter(Boolean).join(' and ');
  throw new StoreRefused(
    `the data folder ${dataDir} holds ${held} but no ${CATALOG_FILE}, which says what they hold; nothing was changed. ` +
      `Restore ${CATALOG_FILE} from the backup these files came from, or move the folder aside (or choose another with --data-dir) to start an empty store.`,
  );
}

/** Opens the committed catalog; a file that is not a catalog is refused, not replaced. */
function openCatalog(file: string, exists: boolean): Db {
  let catalog: Db | undefined;
  try {
    catalog = openDbSync(exists ? fs.readFileSync(file) : undefined, { handOver: true });
    prepareCatalog(catalog);
  } catch (err) {
    catalog?.close();
    if (err instanceof EngineTrapped) throw err;
    throw new StoreRefused(
      `${file} cannot be read as this store's catalog (${(err as Error).message}); nothing was changed. Restore it from a backup, or move the folder aside to start an empty store.`,
    );
  }
  return catalog;
}

/** What loading the committed state needs. */
export interface CommittedState {
  dataDir: string;
  catalog: Db;
  map: PartitionMap;
  damage: DamageRegistry;
  /** An import is running (its catalog snapshot is kept). */
  importing: boolean;
}

/** The partitions the catalog names, split days, and no file the catalog does not name. */
export function loadCommitted(state: CommittedState): void {
  state.map.load(state.catalog);
  collectGarbage(state);
  checkFiles(state);
}

/** Deletes partition files that no committed catalog row refers to, and an import's catalog snapshot (left by a crash). */
function collectGarbage({ dataDir, map, importing }: CommittedState): void {
  if (!importing) fs.rmSync(path.join(dataDir, ROLLBACK_FILE), { force: true });
  for (const s of SOURCES) {
    const dir = map.partsDir(s.code);
    if (!fs.existsSync(dir)) continue;
    const keep = new Set<string>();
    for (const p of map.ofSource(s.code)) {
      if (p.row.version > 0) {
        const name = p.dbFileName(p.row.version);
        keep.add(name).add(columnsFileOf(name));
      }
      for (const f of p.blocks.fileNames) keep.add(f);
    }
    for (const f of fs.readdirSync(dir)) if (!keep.has(f)) fs.rmSync(path.join(dir, f), { force: true });
  }
}

/**
 * What start-up can check without reading the files: every committed database is there with
 * its recorded length, every record file and urls.log hold their committed bytes. Each damaged
 * file is named now (stderr) and in the 503 of every request that needs it; nothing is deleted.
 * (`checkStore` reads every byte.)
 */
function checkFiles({ dataDir, catalog, map, damage }: CommittedState): void {
  damage.clear();
  for (const p of map.all()) for (const d of p.quickCheck()) damage.note(new StoreFileDamaged(d.file, d.problem));
  const committed = urlsState(catalog);
  if (committed.bytes > 0) {
    const file = path.join(dataDir, URLS_FILE);
    const size = fs.existsSync(file) ? fs.statSync(file).size : -1;
    if (size < 0) damage.note(new StoreFileDamaged(URLS_FILE, 'the file is missing'));
    else if (size < committed.bytes) damage.note(new StoreFileDamaged(URLS_FILE, `it holds ${size} bytes but the catalog counts ${committed.bytes}`));
  }
}
