/**
 * Physical layout (DESIGN.md §2). Per source, a narrow hot table named by the source's
 * alias holds only what the endpoints read, with covering indexes led by (project, ts);
 * repeated strings are dictionary encoded; the full record lives in a segment file on disk,
 * addressed by (off, len). Ids live in their own table so dedupe never widens the hot pages.
 */
import { SOURCES, type HotKind, type SourceInfo } from '../sources.ts';
import type { Db } from './db.ts';
import { FUNCTION_ROLLUP_DDL, rebuildFunctionRollup } from './rollups.ts';

export const SCHEMA_VERSION = 3;

/** Bits of `edge_logs.families`: which API family strings the request path contains. */
export const FAMILY = { rest: 1, storage: 2, auth: 4, realtime: 8 } as const;

const EXTRA_COLUMNS: Record<HotKind, string> = {
  edge: 'url INTEGER NOT NULL, families INTEGER NOT NULL, status INTEGER',
  function_edge: 'function INTEGER, exec REAL, status INTEGER',
  function_event: 'function INTEGER',
  plain: '',
};

const EXTRA_INDEXES: Record<HotKind, (t: string) => string[]> = {
  // logs.all reads (project, ts) + rowid. usage.api-counts reads in-memory columns instead
  // (server/endpoints/edge-columns.ts), so a (ts, url, families) index would only cost inserts.
  edge: (t) => [`CREATE INDEX ${t}_project_ts ON ${t}(project, ts)`],
  // invocation-stats is answered from this index alone.
  function_edge: (t) => [`CREATE INDEX ${t}_project_ts ON ${t}(project, ts, function, exec, status)`],
  function_event: (t) => [`CREATE INDEX ${t}_project_ts ON ${t}(project, ts, function)`],
  plain: (t) => [`CREATE INDEX ${t}_project_ts ON ${t}(project, ts)`],
};

export function hotTable(source: SourceInfo): string {
  return source.alias;
}

export function idTable(source: SourceInfo): string {
  return `${source.alias}_ids`;
}

function sourceDdl(source: SourceInfo): string[] {
  const t = hotTable(source);
  const extra = EXTRA_COLUMNS[source.hot];
  return [
    `CREATE TABLE ${t} (rid INTEGER PRIMARY KEY, project INTEGER NOT NULL, ts INTEGER NOT NULL, ` +
      `off INTEGER NOT NULL, len INTEGER NOT NULL${extra ? `, ${extra}` : ''})`,
    ...EXTRA_INDEXES[source.hot](t),
    `CREATE TABLE ${idTable(source)} (id TEXT PRIMARY KEY, rid INTEGER NOT NULL) WITHOUT ROWID`,
  ];
}

const MIGRATIONS: Array<(db: Db) => void> = [
  // v1: dictionaries, per-source hot and id tables, per-(source, project, function) summary.
  (db) => {
    db.exec(`
      CREATE TABLE projects (id INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE);
      CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE);
      CREATE TABLE functions (id INTEGER PRIMARY KEY, function_id TEXT NOT NULL UNIQUE);
      CREATE TABLE source_summary (
        source INTEGER NOT NULL, project INTEGER NOT NULL, function INTEGER NOT NULL,
        count INTEGER NOT NULL, min_ts INTEGER NOT NULL, max_ts INTEGER NOT NULL,
        PRIMARY KEY (source, project, function)) WITHOUT ROWID;
    `);
    for (const s of SOURCES) for (const stmt of sourceDdl(s)) db.exec(stmt);
  },
  // v2: per-hour rollups of function edge logs, filled from what is already stored.
  (db) => {
    db.exec(FUNCTION_ROLLUP_DDL);
    rebuildFunctionRollup(db);
  },
  // v3: usage.api-counts moved to in-memory columns; its time index only slowed imports.
  (db) => db.exec('DROP INDEX IF EXISTS edge_logs_ts_url'),
];

/** Brings a database at any earlier version up to SCHEMA_VERSION. */
export function migrate(db: Db): void {
  const row = db.query<{ user_version: number }>('PRAGMA user_version')[0];
  const version = row?.user_version ?? 0;
  if (version > SCHEMA_VERSION) {
    throw new Error(`the store was written by a newer version (schema ${version}, this app knows ${SCHEMA_VERSION})`);
  }
  for (let v = version; v < SCHEMA_VERSION; v++) {
    db.transaction(() => {
      MIGRATIONS[v]!(db);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    });
  }
}
