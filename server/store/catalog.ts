/**
 * The catalog: the small sql.js database that is always loaded. It lists every partition
 * (version on disk, rows, committed record bytes), what each holds per project, the project and
 * function dictionaries (URLs have their own file: text-dictionary.ts), the per-source summary
 * and the rollups that span partitions. Its atomic
 * rename is the commit point of the store (docs/ARCHITECTURE.md, "Commit protocol").
 */
import type { Db } from './db.ts';
import { FUNCTION_ROLLUP_DDL } from './rollups.ts';

export const CATALOG_FILE = 'catalog.sqlite';
/** Format of the catalog and the partition files; 1-3 were the single-file store. */
export const STORE_FORMAT = 4;

const DDL = `
  CREATE TABLE projects (id INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE);
  CREATE TABLE functions (id INTEGER PRIMARY KEY, function_id TEXT NOT NULL UNIQUE);
  CREATE TABLE partitions (
    source INTEGER NOT NULL, start INTEGER NOT NULL, width INTEGER NOT NULL,
    version INTEGER NOT NULL, rows INTEGER NOT NULL, next_rid INTEGER NOT NULL,
    record_bytes INTEGER NOT NULL, image_bytes INTEGER NOT NULL,
    min_ts INTEGER, max_ts INTEGER, db_crc INTEGER,
    PRIMARY KEY (source, start)) WITHOUT ROWID;
  CREATE TABLE partition_projects (
    source INTEGER NOT NULL, start INTEGER NOT NULL, project INTEGER NOT NULL,
    count INTEGER NOT NULL, min_ts INTEGER NOT NULL, max_ts INTEGER NOT NULL,
    PRIMARY KEY (source, project, start)) WITHOUT ROWID;
  CREATE TABLE source_summary (
    source INTEGER NOT NULL, project INTEGER NOT NULL, function INTEGER NOT NULL,
    count INTEGER NOT NULL, min_ts INTEGER NOT NULL, max_ts INTEGER NOT NULL,
    PRIMARY KEY (source, project, function)) WITHOUT ROWID;
  ${FUNCTION_ROLLUP_DDL};
  CREATE TABLE split_days (source INTEGER NOT NULL, day INTEGER NOT NULL, PRIMARY KEY (source, day)) WITHOUT ROWID;
  CREATE TABLE api_hours (hour INTEGER PRIMARY KEY, counts BLOB NOT NULL);
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** Creates the tables of a new catalog, or checks that an existing one is of this format. */
export function prepareCatalog(db: Db): void {
  const version = db.query<{ user_version: number }>('PRAGMA user_version')[0]?.user_version ?? 0;
  if (version === 0) {
    db.transaction(() => {
      db.exec(DDL);
      db.exec(`PRAGMA user_version = ${STORE_FORMAT}`);
    });
  } else if (version !== STORE_FORMAT) {
    throw new Error(`the catalog is of format ${version}; this app reads format ${STORE_FORMAT}`);
  } else if (!db.rows('PRAGMA table_info(partitions)').some((r) => r[1] === 'db_crc')) {
    // Catalogs written before versions carried a checksum: null until each partition is written again.
    db.exec('ALTER TABLE partitions ADD COLUMN db_crc INTEGER');
  }
}

/** A value of the catalog's meta table. */
export function metaValue(db: Db, key: string): string | undefined {
  return db.rows('SELECT value FROM meta WHERE key = ?', [key])[0]?.[0] as string | undefined;
}

export function setMeta(db: Db, key: string, value: string): void {
  db.run('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)', [key, value]);
}

/** The meta key of the URL dictionary's committed state. */
export const URLS_META = 'urls';

/** The URL dictionary's committed length and count, as the catalog records them. */
export function urlsState(catalog: Db): { bytes: number; count: number } {
  const v = metaValue(catalog, URLS_META);
  return v ? (JSON.parse(v) as { bytes: number; count: number }) : { bytes: 0, count: 0 };
}

export interface PartitionRow {
  source: number;
  start: number;
  /** µs: a day, or an hour for the partitions of a split day. */
  width: number;
  version: number;
  rows: number;
  next_rid: number;
  record_bytes: number;
  image_bytes: number;
  min_ts: number | null;
  max_ts: number | null;
  /**
   * CRC-32 of the committed version's database file, whose length is then `image_bytes`; null
   * for versions written before checksums were kept (their length is not checked either).
   */
  db_crc: number | null;
}

export function partitionRows(db: Db): PartitionRow[] {
  return db.query<PartitionRow & Record<string, number | null>>('SELECT * FROM partitions ORDER BY source, start');
}

/** Writes a partition's row (all fields). */
export function putPartitionRow(db: Db, p: PartitionRow): void {
  db.run(
    'INSERT OR REPLACE INTO partitions (source, start, width, version, rows, next_rid, record_bytes, image_bytes, min_ts, max_ts, db_crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [p.source, p.start, p.width, p.version, p.rows, p.next_rid, p.record_bytes, p.image_bytes, p.min_ts, p.max_ts, p.db_crc ?? null],
  );
}
