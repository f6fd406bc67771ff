/**
 * The commit (docs/ARCHITECTURE.md, "Commit protocol"): each changed partition to a new
 * version file (synced), the record blocks and urls.log synced, then the catalog to a temp
 * file, synced and renamed over the old one: the commit point. A failure leaves the store as
 * it was, its changes unsaved in memory; files of replaced versions are deleted afterwards.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { span, spanOf } from '../activity.ts';
import { CATALOG_FILE, putPartitionRow, setMeta, URLS_META, type PartitionRow } from './catalog.ts';
import type { CatalogState } from './catalog-state.ts';
import type { ColumnsCache } from './columns-cache.ts';
import { syncDir, syncFile, writeSynced } from './durable.ts';
import type { ImportTransaction } from './import-transaction.ts';
import type { Partition } from './partition.ts';
import type { PartitionMap } from './partition-map.ts';
import { columnsFileOf } from './scan-columns.ts';

/** The parts of the store a commit reads and updates. */
export interface CommitParts {
  dataDir: string;
  catalog: CatalogState;
  map: PartitionMap;
  txn: ImportTransaction;
  cols: ColumnsCache;
}

/** Commits what changed; the caller keeps commits from overlapping (the store's queue of saves). */
export async function commit({ dataDir, catalog, map, txn, cols }: CommitParts): Promise<void> {
  // A staging image still being written (import-transaction.ts) settles first, so that what
  // follows sees its partition either staged in a whole file or still dirty.
  for (const p of map.loaded) if (p.imageWrite) await p.imageWrite;
  const changed = [...map.all()].filter((p) => p.dirty || p.staged !== null);
  const imaged = span('commit: images');
  const stagedFiles: string[] = [];
  if (!changed.length && !catalog.dirty) return;
  // One synchronous step takes every image, so the catalog matches the partitions even if
  // an import batch runs while the files are written.
  const undo: Array<{ p: Partition; row: PartitionRow; staged: number | null; dirty: boolean }> = [];
  const images: Array<{ file: string; image: Uint8Array }> = [];
  const replaced: string[] = [];
  for (const p of changed) {
    undo.push({ p, row: { ...p.row }, staged: p.staged, dirty: p.dirty });
    spanOf('commit: flush record blocks', () => p.blocks.flush());
    let version: number;
    if (p.dirty) {
      version = p.nextVersion();
      const image = spanOf('commit: image of a partition', () => p.db!.exportImage());
      images.push({ file: p.dbFile(version), image });
      fs.rmSync(columnsFileOf(p.dbFile(version)), { force: true });
      p.row.image_bytes = image.length;
      p.row.db_crc = zlib.crc32(image);
      if (p.staged !== null) replaced.push(p.dbFile(p.staged));
    } else {
      version = p.staged!;
      stagedFiles.push(p.dbFile(version));
      p.row.image_bytes = p.stagedCheck?.bytes ?? p.row.image_bytes;
      p.row.db_crc = p.stagedCheck?.crc ?? null;
    }
    if (p.row.version > 0) replaced.push(p.dbFile(p.row.version));
    p.row.version = version;
    p.row.record_bytes = p.blocks.size;
    p.staged = null;
    p.dirty = false;
    putPartitionRow(catalog.db, p.row);
  }
  spanOf('commit: flush api hours', () => catalog.apiHours.flush());
  spanOf('commit: flush rollups', () => catalog.rollups.flush());
  // New URLs are written now and synced with the record files; the catalog counts them.
  spanOf('commit: flush urls', () => catalog.urls.flush());
  const urls = catalog.urls.state();
  setMeta(catalog.db, URLS_META, JSON.stringify(urls));
  const catalogImage = spanOf('commit: image of the catalog', () => catalog.db.exportImage());
  catalog.dirty = false;
  const file = path.join(dataDir, CATALOG_FILE);
  const tmp = `${file}.tmp`;
  imaged();
  map.saving = new Set(changed);
  try {
    const dirs = new Set(changed.map((p) => p.dir));
    for (const d of dirs) await fs.promises.mkdir(d, { recursive: true, mode: 0o700 });
    for (const { file: f, image } of images) await writeSynced(f, image);
    for (const f of stagedFiles) await syncFile(f);
    await Promise.all([...changed.map((p) => p.blocks.sync()), catalog.urls.fsync()]);
    // New partition files must be durable before the catalog that names them.
    for (const d of dirs) await syncDir(d);
    await writeSynced(tmp, catalogImage);
    // The catalog the running import started from is kept (a link, not a copy) for its rollback.
    txn.keepCatalogBefore(file);
    await fs.promises.rename(tmp, file);
    txn.noteCommitted();
    catalog.urls.committedAt(urls);
    await syncDir(dataDir);
  } catch (err) {
    // Nothing was committed: the partitions keep their rows in memory, unsaved.
    await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
    for (const { file: f } of images) await fs.promises.rm(f, { force: true }).catch(() => undefined);
    for (const u of undo) {
      u.p.row = { ...u.p.row, version: u.row.version, record_bytes: u.row.record_bytes, image_bytes: u.row.image_bytes, db_crc: u.row.db_crc };
      if (u.p.staged === null) {
        u.p.staged = u.staged;
        u.p.dirty = u.p.dirty || u.dirty || u.p.db !== null;
      } else if (u.staged !== null && u.staged !== u.p.staged) {
        // An import batch staged it again while this save ran: that newer version holds
        // all its rows; the one staged before is superseded.
        catalog.obsolete.push(u.p.dbFile(u.staged));
      }
      putPartitionRow(catalog.db, u.p.row);
    }
    catalog.dirty = true;
    throw isDiskFull(err)
      ? Object.assign(new Error(`cannot save the store: the disk is full (${(err as NodeJS.ErrnoException).code}); the last saved store is intact`, { cause: err }), {
          code: (err as NodeJS.ErrnoException).code,
        })
      : err;
  } finally {
    map.saving.clear();
  }
  catalog.obsolete.push(...replaced);
  if (!txn.importing) catalog.deleteObsolete();
  // Their columns files are built after the commit, in steps (scan-columns.ts).
  for (const p of changed) cols.queue(p);
}

/** True for the errors of a full disk or an exhausted quota. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}
