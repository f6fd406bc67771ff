/**
 * One time partition of one source: a UTC day of its records, or an hour of a day split for
 * its size (see SPLIT_ROWS). Its hot rows, ids and minute rollups are one sql.js database file
 * (`parts/<alias>/<label>-v<version>.sqlite`, a new file per committed version, so the catalog
 * decides which one counts); its full records are a file of compressed blocks
 * (`parts/<alias>/<label>.records`). The database is loaded on demand and dropped under the
 * store's memory budget; see docs/ARCHITECTURE.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { SourceInfo } from '../sources.ts';
import { MICROS } from '../time.ts';
import { EngineTrapped, openDbSync, type Db } from './db.ts';
import { partFileName, StoreFileDamaged } from './damage.ts';
import { sourceFieldsOfStored, type ExplorerField } from './record.ts';
import { HOT_COLUMNS, HOT_LAYOUT } from './hot-columns.ts';
import type { PartitionRow } from './catalog.ts';
import { RecordBlocks } from './record-blocks.ts';
import { MINUTE_GRAIN, rollupDdl } from './rollups.ts';

/**
 * A partition covers a UTC day, or an hour once its day grows past SPLIT_ROWS: the day is then
 * split into hour partitions (rewritten by the import that makes it large; a bulk import whose
 * records are that dense stores the day as hours from the start). Sparse days cost
 * one small file; a busy hour (180k edge rows at 50 requests/s, ~20 MB) still exports within
 * the 250 ms pause budget, and a window of minutes touches one or two partitions.
 */
export const DAY_MICROS = MICROS.day;
export const HOUR_MICROS = MICROS.hour;
export const SPLIT_ROWS = 50_000;
/** Bytes of an image whose CRC-32 is computed in one go (about 2 ms) when it is written off the thread. */
const CRC_SLICE = 4 * 1024 * 1024;

export const dayStart = (ts: number): number => Math.floor(ts / DAY_MICROS) * DAY_MICROS;
export const hourStart = (ts: number): number => Math.floor(ts / HOUR_MICROS) * HOUR_MICROS;

/** `20261122` for a day partition, `20261122T10` for an hour partition: file names. */
export function partitionLabel(start: number, width: number): string {
  const iso = new Date(start / 1000).toISOString();
  const day = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}`;
  return width === DAY_MICROS ? day : `${day}T${iso.slice(11, 13)}`;
}

/**
 * A partition's tables. `newestFirst`: its rows will mostly come newest first (a platform's
 * export): its key orders instants descending, so that each row goes in at the key's end.
 * SQLite fills pages when keys come in order and leaves them half full when each new key goes
 * before the others (a 209k-row hour of function edge records took 39 MB newest first, 22 MB
 * rebuilt). Queries read both layouts alike; each partition keeps the one it was created with.
 */
export function partitionDdl(source: SourceInfo, newestFirst = false): string[] {
  const t = source.alias;
  const extra = HOT_COLUMNS[source.hot].map((c) => `, ${c.column} ${c.sqlType}${c.notNull ? ' NOT NULL' : ''}`).join('');
  const layout = HOT_LAYOUT[source.hot];
  const base = 'project INTEGER NOT NULL, ts INTEGER NOT NULL, blk INTEGER NOT NULL, boff INTEGER NOT NULL, len INTEGER NOT NULL';
  const keyed = (cols: readonly string[]) => cols.map((c) => (newestFirst && (c === 'ts' || c === 'rid') ? `${c} DESC` : c)).join(', ');
  const ddl = layout.clusteredBy
    ? [`CREATE TABLE ${t} (rid INTEGER NOT NULL, ${base}${extra}, PRIMARY KEY (${keyed(layout.clusteredBy)})) WITHOUT ROWID`]
    : [`CREATE TABLE ${t} (rid INTEGER PRIMARY KEY, ${base}${extra})`];
  if (layout.index) ddl.push(`CREATE INDEX ${t}_${layout.index.join('_')} ON ${t}(${keyed(layout.index)})`);
  // A UUID id is kept as its 16 bytes, any other id as text: exact, and half the size.
  ddl.push('CREATE TABLE ids (id PRIMARY KEY, rid INTEGER NOT NULL) WITHOUT ROWID');
  if (source.hot === 'function_edge') ddl.push(rollupDdl(MINUTE_GRAIN));
  return ddl;
}

/** The insert of one hot row: rid, project, ts, blk, boff, len, then HOT_COLUMNS in order. */
export function hotInsertSql(source: SourceInfo): string {
  const cols = ['rid', 'project', 'ts', 'blk', 'boff', 'len', ...HOT_COLUMNS[source.hot].map((c) => c.column)];
  return `INSERT INTO ${source.alias} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
}

/** Value of each lowercase hexadecimal digit by its character code, -1 for any other. */
const HEX = new Int8Array(128).fill(-1);
for (let c = 0; c < 16; c++) HEX['0123456789abcdef'.charCodeAt(c)] = c;

/**
 * How an id is keyed in `ids`: a lowercase UUID as 16 bytes, anything else as its text. Read
 * character by character (a regular expression, a copy without dashes and a hex decode were
 * 270 ms of an import of 300k records on the inserting thread).
 */
export function idKey(id: string): string | Uint8Array {
  if (id.length !== 36) return id;
  const out = new Uint8Array(16);
  let k = 0;
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return id;
      continue;
    }
    const v = c < 128 ? HEX[c]! : -1;
    if (v < 0) return id;
    if (k & 1) out[k >> 1]! |= v;
    else out[k >> 1] = v << 4;
    k++;
  }
  return out;
}

export class Partition {
  db: Db | null = null;
  readonly blocks: RecordBlocks;
  private unsaved = false;
  /** Times rows were written to it (each marks it dirty): an image taken earlier is older when this moved. */
  changes = 0;
  /** The in-memory database has rows no file on disk holds. */
  get dirty(): boolean {
    return this.unsaved;
  }
  set dirty(value: boolean) {
    if (value) this.changes++;
    this.unsaved = value;
  }
  /** A version written while evicted mid-import, not yet committed by the catalog. */
  staged: number | null = null;
  lastUsed = 0;
  /** The highest version number ever written for it (staged or committed). */
  maxVersion = 0;
  /** The import batch that last wrote it. */
  lastBatch = 0;
  /** Bytes of the loaded database, as last measured, and when (performance.now()). */
  loadedBytes = 0;
  measuredAt = -Infinity;
  /** Columns were added at load (addMissingColumns): the store should save it. */
  migrated = false;
  /** A new partition's rows will mostly come newest first (partitionDdl): set before its first rows. */
  newestFirst = false;
  /** Length and CRC-32 of the staged version's file, for the catalog when it commits. */
  stagedCheck: { bytes: number; crc: number } | null = null;
  /**
   * A staged version's file being written off the thread (writeVersionOffThread): until it
   * settles the partition is not dropped from memory, and a commit waits for it.
   */
  imageWrite: Promise<void> | null = null;
  /** Work that needs the database in memory until it ends (an import's columns build for its newest partitions): the budget skips it while > 0. */
  pins = 0;

  constructor(
    readonly source: SourceInfo,
    readonly dir: string,
    /** The committed state, as the catalog row says. */
    public row: PartitionRow,
  ) {
    // Named once: a start names every partition's files several times (its load, the deletion
    // of files no commit names, the check of the committed ones).
    this.label = partitionLabel(row.start, row.width);
    this.blocks = new RecordBlocks(path.join(dir, `${this.label}.records`), row.record_bytes);
    this.maxVersion = row.version;
  }

  /** The partition's name in its files' names (its start and width never change). */
  readonly label: string;

  get start(): number {
    return this.row.start;
  }

  get end(): number {
    return this.row.start + this.row.width;
  }

  dbFile(version: number): string {
    return path.join(this.dir, this.dbFileName(version));
  }

  /** dbFile's name alone (in the partition's folder). */
  dbFileName(version: number): string {
    return `${this.label}-v${version}.sqlite`;
  }

  /** A new version number for a file of this partition: above every one written, staged or committed. */
  nextVersion(): number {
    this.maxVersion = Math.max(this.maxVersion, this.row.version, this.staged ?? 0) + 1;
    return this.maxVersion;
  }

  /** The version whose file holds this partition's current rows, if not in memory only. */
  get fileVersion(): number {
    return this.staged ?? this.row.version;
  }

  /** Opens the database: from its file, or empty for a new partition. */
  load(): Db {
    if (this.db) return this.db;
    const v = this.fileVersion;
    const image = v > 0 ? this.readImage(v) : undefined;
    const db = openDbSync(image, { cacheKiB: 256, handOver: true });
    if (!image) for (const stmt of partitionDdl(this.source, this.newestFirst)) db.exec(stmt);
    else {
      try {
        // sql.js reads the header only when first asked: a file that is not a database fails here.
        db.rows(`SELECT count(*) FROM ${this.source.alias} WHERE 0`);
      } catch (err) {
        db.close();
        if (err instanceof EngineTrapped) throw err;
        throw new StoreFileDamaged(partFileName(this.dbFile(v)), `not a readable partition database: ${(err as Error).message}`);
      }
    }
    this.db = db;
    if (image && this.addMissingColumns(db)) this.dirty = this.migrated = true;
    return db;
  }

  /**
   * A version's file, checked against the length and CRC-32 recorded when it was written (the
   * catalog's for the committed version, the staging's for a staged one).
   */
  private readImage(v: number): Uint8Array {
    const file = this.dbFile(v);
    let image: Uint8Array;
    try {
      image = fs.readFileSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new StoreFileDamaged(partFileName(file), 'the file is missing');
      throw err;
    }
    const expected = v === this.staged ? this.stagedCheck : this.row.db_crc === null || this.row.db_crc === undefined ? null : { bytes: this.row.image_bytes, crc: this.row.db_crc };
    if (expected) {
      if (image.length !== expected.bytes) throw new StoreFileDamaged(partFileName(file), `it holds ${image.length} bytes where ${expected.bytes} were written`);
      if (zlib.crc32(image) !== expected.crc) throw new StoreFileDamaged(partFileName(file), 'its checksum does not match the one recorded when it was written');
    }
    return image;
  }

  /**
   * What can be checked without reading the files (start-up): the committed version's database
   * is there with its recorded length, and the record file holds its committed bytes.
   */
  quickCheck(): Array<{ file: string; problem: string }> {
    const found: Array<{ file: string; problem: string }> = [];
    const size = (file: string) => {
      try {
        return fs.statSync(file).size;
      } catch {
        return -1;
      }
    };
    if (this.row.version > 0) {
      const file = this.dbFile(this.row.version);
      const n = size(file);
      if (n < 0) found.push({ file: partFileName(file), problem: 'the file is missing' });
      else if (this.row.db_crc !== null && this.row.db_crc !== undefined && n !== this.row.image_bytes) found.push({ file: partFileName(file), problem: `it holds ${n} bytes where ${this.row.image_bytes} were written` });
    }
    if (this.row.record_bytes > 0) {
      const n = size(this.blocks.file);
      if (n < 0) found.push({ file: partFileName(this.blocks.file), problem: 'the file is missing' });
      else if (n < this.row.record_bytes) found.push({ file: partFileName(this.blocks.file), problem: `it holds ${n} bytes but the catalog counts ${this.row.record_bytes}` });
    }
    return found;
  }

  /**
   * A partition written before some hot columns existed (the explorer's fields) gets them, filled
   * from its records; the store saves it soon after. Returns whether anything changed.
   */
  private addMissingColumns(db: Db): boolean {
    const t = this.source.alias;
    const have = new Set(db.rows(`PRAGMA table_info(${t})`).map((r) => r[1] as string));
    const missing = HOT_COLUMNS[this.source.hot].filter((c) => !have.has(c.column));
    if (!missing.length) return false;
    db.transaction(() => {
      for (const c of missing) db.exec(`ALTER TABLE ${t} ADD COLUMN ${c.column} ${c.sqlType}`);
      const fromRecords = missing.filter((c) => c.read === 'source');
      if (!fromRecords.length) return;
      const set = `UPDATE ${t} SET ${fromRecords.map((c) => `${c.column} = ?`).join(', ')} WHERE rid = ?`;
      for (const [rid, blk, boff, len] of db.rows(`SELECT rid, blk, boff, len FROM ${t}`)) {
        const fields = sourceFieldsOfStored(this.blocks.read({ blk: blk as number, boff: boff as number, len: len as number }).toString('utf8'), this.source);
        db.run(set, [...fromRecords.map((c) => fields[c.field as ExplorerField]), rid as number]);
      }
    });
    return true;
  }

  /** Bytes the loaded database occupies. */
  imageBytes(): number {
    if (!this.db) return 0;
    const [count, size] = [this.db.rows('PRAGMA page_count')[0]?.[0], this.db.rows('PRAGMA page_size')[0]?.[0]];
    return (count as number) * (size as number);
  }

  /**
   * Writes the in-memory database to a new version file (not yet committed); the commit
   * fsyncs it before the catalog names it.
   */
  writeVersion(version: number): { version: number; bytes: number; crc: number } {
    const { image, file } = this.imageFor(version);
    const fd = fs.openSync(file, 'w', 0o600);
    try {
      let written = 0;
      while (written < image.length) written += fs.writeSync(fd, image, written, image.length - written);
    } finally {
      fs.closeSync(fd);
    }
    return { version, bytes: image.length, crc: zlib.crc32(image) };
  }

  /**
   * writeVersion with only the image taken on this thread: the file is written on libuv's
   * threads and its CRC-32 computed in slices with `turn` between them (at 10M records an hour
   * is a 39 MB database: taking the image is 40-90 ms, writing it 20-110 ms more, its CRC 18).
   * Whoever calls it keeps the partition in memory (imageWrite) until the file is whole.
   */
  writeVersionOffThread(version: number, turn: () => Promise<void>): Promise<{ version: number; bytes: number; crc: number }> {
    const { image, file } = this.imageFor(version);
    const written = fs.promises.writeFile(file, image, { mode: 0o600 });
    // Awaited below; meanwhile its failure must not count as an unhandled rejection.
    written.catch(() => undefined);
    return (async () => {
      let crc = 0;
      try {
        for (let at = 0; at < image.length; at += CRC_SLICE) {
          crc = zlib.crc32(image.subarray(at, at + CRC_SLICE), crc);
          await turn();
        }
      } finally {
        await written;
      }
      return { version, bytes: image.length, crc };
    })();
  }

  /** The loaded database's image, and the file of `version` to write it to (its folder made). */
  private imageFor(version: number): { image: Uint8Array; file: string } {
    if (!this.db) throw new Error('partition not loaded');
    const image = this.db.exportImage();
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return { image, file: this.dbFile(version) };
  }

  /** Drops the database from memory (its rows are in a file: committed or staged). */
  unload(): void {
    if (this.dirty) throw new Error('unloading a partition with unsaved rows');
    this.db?.close();
    this.db = null;
    this.loadedBytes = 0;
    this.measuredAt = -Infinity;
    // Its record file stays as it is: descriptors and decompressed blocks are bounded across
    // all partitions (record-blocks.ts), and the explorer reads records of partitions it never loads.
  }

  /** Closes everything; rows not saved are dropped (the partition is being removed or closed). */
  close(): void {
    this.db?.close();
    this.db = null;
    this.blocks.dropPending();
    this.blocks.close();
  }
}
