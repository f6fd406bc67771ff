/**
 * Converts a data folder written by the single-file store (formats 1-3: `store.sqlite` with one
 * hot table and one id table per source, full records in `records/<alias>.ndjson` addressed by
 * (off, len)) into the partitioned store. Every record keeps its id, timestamp and bytes. The
 * conversion commits once, at the end; until then the old files are the store, so a crash
 * during it converts again at the next start. The old files are removed after the commit.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SOURCES, type SourceInfo } from '../sources.ts';
import { openDbSync, type Db } from './db.ts';
import { HOT_COLUMNS } from './hot-columns.ts';
import { sourceFieldsOfStored, type StoredRecord } from './record.ts';

export const LEGACY_STORE_FILE = 'store.sqlite';
/** Set in the catalog by the conversion's commit: the old files may go. */
export const CONVERTED_KEY = 'converted_from_single_file_store';
const LEGACY_RECORDS_DIR = 'records';
const CHUNK = 5000;

/** What the conversion needs of the store that opens the folder (log-store.ts's LogStore, which calls it). */
export interface ConversionTarget {
  readonly catalog: Db;
  bulkLoad(work: (insert: (info: SourceInfo, records: StoredRecord[]) => unknown) => Promise<void>): Promise<void>;
}

export async function convertLegacyStore(store: ConversionTarget, dataDir: string): Promise<void> {
  const file = path.join(dataDir, LEGACY_STORE_FILE);
  const old = openDbSync(new Uint8Array(fs.readFileSync(file)));
  const version = old.query<{ user_version: number }>('PRAGMA user_version')[0]?.user_version ?? 0;
  if (version < 1 || version > 3) throw new Error(`${LEGACY_STORE_FILE} is of format ${version}; only formats 1-3 can be converted`);
  try {
    await store.bulkLoad(async (insert) => {
      for (const info of SOURCES) {
        const segment = path.join(dataDir, LEGACY_RECORDS_DIR, `${info.alias}.ndjson`);
        if (!fs.existsSync(segment)) continue;
        const fd = fs.openSync(segment, 'r');
        try {
          const cols = new Set(HOT_COLUMNS[info.hot].map((c) => c.column));
          const select =
            `SELECT h.rid, h.ts, p.ref, h.off, h.len, i.id` +
            `${cols.has('url') ? ', u.url, h.families' : ', NULL, NULL'}${info.hot === 'edge' || info.hot === 'function_edge' ? ', h.status' : ', NULL'}` +
            `${cols.has('function') ? ', f.function_id' : ', NULL'}${cols.has('exec') ? ', h.exec' : ', NULL'}` +
            ` FROM ${info.alias} h JOIN projects p ON p.id = h.project JOIN ${info.alias}_ids i ON i.rid = h.rid` +
            `${cols.has('url') ? ' LEFT JOIN urls u ON u.id = h.url' : ''}${cols.has('function') ? ' LEFT JOIN functions f ON f.id = h.function' : ''}` +
            ' WHERE h.rid > ? ORDER BY h.rid LIMIT ?';
          for (let after = 0; ; ) {
            const rows = old.rows(select, [after, CHUNK]);
            if (!rows.length) break;
            const batch: StoredRecord[] = rows.map(([rid, ts, ref, off, len, id, url, families, status, fn, exec]) => {
              after = rid as number;
              const raw = Buffer.allocUnsafe(len as number);
              let got = 0;
              while (got < raw.length) {
                const n = fs.readSync(fd, raw, got, raw.length - got, (off as number) + got);
                if (n === 0) throw new Error(`${info.alias}.ndjson ends before byte ${(off as number) + (len as number)}`);
                got += n;
              }
              // The old format kept no explorer fields: they are read from the record.
              const fields = sourceFieldsOfStored(raw.toString('utf8'), info);
              return {
                id: id as string,
                ts: ts as number,
                project: ref as string,
                raw,
                url: (url as string | null) ?? undefined,
                families: (families as number | null) ?? undefined,
                status: cols.has('status') && info.hot !== 'plain' ? (status as number | null) : (fields.status as number | null),
                functionId: fn as string | null,
                exec: exec as number | null,
                method: fields.method as string | null,
                path: fields.path as string | null,
                level: fields.level as string | null,
              };
            });
            insert(info, batch);
            // Let requests through between chunks.
            await new Promise<void>((resolve) => setImmediate(resolve));
          }
        } finally {
          fs.closeSync(fd);
        }
      }
      // Committed with the records: a crash before the old files are gone removes them next time.
      store.catalog.run('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)', [CONVERTED_KEY, new Date().toISOString()]);
    });
  } finally {
    old.close();
  }
  removeLegacyFiles(dataDir);
}

/** Removes the single-file store's files, once a committed catalog holds their records. */
export function removeLegacyFiles(dataDir: string): void {
  fs.rmSync(path.join(dataDir, LEGACY_RECORDS_DIR), { recursive: true, force: true });
  const file = path.join(dataDir, LEGACY_STORE_FILE);
  fs.rmSync(file, { force: true });
  fs.rmSync(`${file}.tmp`, { force: true });
}
