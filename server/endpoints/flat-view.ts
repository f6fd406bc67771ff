/**
 * The whole store as one sql.js database in the shape the endpoint SQL is written for (one hot
 * table per source, the dictionaries, the rollups), built on demand. The .sql files are the
 * definitions of the endpoints; requests are answered by the speed paths, and tests run the
 * SQL here to hold both to one reference. Built from every partition: for tests and small
 * stores only.
 */
import { canonicalRecord } from '../ingest/normalize.ts';
import { openDb, type Db, type SqlValue } from '../store/db.ts';
import type { LogStore } from '../store/log-store.ts';
import { registerSketchFunctions } from '../store/rollups.ts';
import { re2Tester } from './re2.ts';
import { registerNearestRank } from './sql-functions.ts';

const DDL = `
  CREATE TABLE projects (id INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE);
  CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE);
  CREATE TABLE functions (id INTEGER PRIMARY KEY, function_id TEXT NOT NULL UNIQUE);
  CREATE TABLE edge_logs (rid INTEGER PRIMARY KEY, project INTEGER, ts INTEGER, url INTEGER, families INTEGER, status INTEGER);
  CREATE TABLE function_edge_logs (rid INTEGER PRIMARY KEY, project INTEGER, ts INTEGER, function INTEGER, exec REAL, status INTEGER);
  CREATE TABLE function_edge_minutes (project INTEGER, minute INTEGER, function INTEGER, count INTEGER, errors INTEGER,
    exec_n INTEGER, exec_sum REAL, exec_min REAL, exec_max REAL, sketch BLOB);
  CREATE TABLE function_edge_days (project INTEGER, day INTEGER, function INTEGER, count INTEGER, errors INTEGER,
    exec_n INTEGER, exec_sum REAL, exec_min REAL, exec_max REAL, sketch BLOB);
  CREATE TABLE function_edge_hours (project INTEGER, hour INTEGER, function INTEGER, count INTEGER, errors INTEGER,
    exec_n INTEGER, exec_sum REAL, exec_min REAL, exec_max REAL, sketch BLOB);
`;

function copy(from: Db, to: Db, select: string, table: string): void {
  for (const row of from.rows(select)) to.run(`INSERT INTO ${table} VALUES (${row.map(() => '?').join(', ')})`, row);
}

/** Builds the flat database of a store, runs `fn` on it, and closes it. */
export async function withFlatView<T>(store: LogStore, fn: (db: Db) => T): Promise<T> {
  const db = await openDb();
  try {
    db.exec(DDL);
    const records: string[] = [];
    // An import's open rollup cells are written first: the copy reads the tables whole.
    store.rollups.flush();
    db.transaction(() => {
      for (const t of ['projects', 'functions', 'function_edge_hours', 'function_edge_days']) copy(store.catalog, db, `SELECT * FROM ${t}`, t);
      for (const { id, text } of store.urls.slice(0, Number.MAX_SAFE_INTEGER)) db.run('INSERT INTO urls VALUES (?, ?)', [id, text]);
      for (const p of store.partitions('deno-relay-logs')) {
        if (p.row.rows === 0) continue;
        const part = store.use(p);
        copy(part, db, 'SELECT project, ts, function, exec, status FROM function_edge_logs', 'function_edge_logs (project, ts, function, exec, status)');
        copy(part, db, 'SELECT * FROM function_edge_minutes', 'function_edge_minutes');
      }
      for (const p of store.partitions('cloudflare.logs.prod')) {
        if (p.row.rows === 0) continue;
        const part = store.use(p);
        for (const [project, ts, url, families, status, blk, boff, len, ref] of part.rows('SELECT project, ts, url, families, status, blk, boff, len, project FROM edge_logs')) {
          const refText = store.catalog.rows('SELECT ref FROM projects WHERE id = ?', [ref as number])[0]![0] as string;
          records.push(canonicalRecord(store.readRecord(p, { blk: blk as number, boff: boff as number, len: len as number }).toString('utf8'), p.source, refText, ts as number));
          db.run('INSERT INTO edge_logs VALUES (?, ?, ?, ?, ?, ?)', [records.length, project, ts, url, families, status] as SqlValue[]);
        }
      }
    });
    registerNearestRank(db);
    registerSketchFunctions(db);
    db.defineFunction('re2_url_ids', (pattern: SqlValue) => {
      if (typeof pattern !== 'string') return '[]';
      const test = re2Tester(pattern);
      return JSON.stringify(db.rows('SELECT id, url FROM urls').filter(([, url]) => test(url as string)).map(([id]) => id));
    });
    // log_record(table, rid, project): the canonical record of a flat row (sql.js takes the
    // SQL arity from the function's length, so every argument is named).
    db.defineFunction('log_record', (_table: SqlValue, rid: SqlValue, _project: SqlValue) => (typeof rid === 'number' ? (records[rid - 1] ?? null) : null));
    return fn(db);
  } finally {
    db.close();
  }
}
