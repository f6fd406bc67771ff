/**
 * `npm run check -- --data-dir DIR`: reads every byte of a data folder and reports what is
 * damaged, without changing anything (no lock, no clean-up, no rebuild). Committed files that
 * fail (the catalog, a partition's database or record file, urls.log) are what a user must
 * restore; derived ones (columns files, paths.log) are rebuilt by the app on its own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SOURCES } from '../sources.ts';
import { CATALOG_FILE, partitionRows, prepareCatalog, urlsState } from './catalog.ts';
import { partFileName, StoreFileDamaged } from './damage.ts';
import { EngineTrapped, loadEngine, openDbSync, type Db } from './db.ts';
import { Partition } from './partition.ts';
import { verifyRecordFile } from './record-blocks.ts';
import { readBlockTexts, textsDictionaryFails } from './block-texts.ts';
import { readRecordTokens } from './record-tokens.ts';
import { columnsFileOf, readScanColumns, ROW_COLUMNS, type ScanColumns } from './scan-columns.ts';
import { PARTS_DIR, PATHS_FILE, URL_MATCHES_FILE, URLS_FILE } from './store-files.ts';
import { checkSavedLines, linesFileOf } from './saved-lines.ts';
import { readDerivedEpoch, verifyTextFile } from './text-dictionary.ts';
import { checkUrlMatches, urlsLogAt } from './url-match-file.ts';

export interface CheckFinding {
  /** Relative to the data folder. */
  file: string;
  /** committed: restore it; derived: rebuilt by the app; leftover: not in the catalog, removed at the next start. */
  kind: 'committed' | 'derived' | 'leftover';
  problem: string;
}

export interface CheckReport {
  dataDir: string;
  partitions: number;
  records: number;
  /** Files read, and their bytes. */
  files: number;
  bytes: number;
  findings: CheckFinding[];
  /** No committed file is damaged. */
  ok: boolean;
}

const sizeOf = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);

/** Checks a whole data folder (see the header); never writes to it. */
export async function checkStore(dataDir: string): Promise<CheckReport> {
  await loadEngine();
  const report: CheckReport = { dataDir, partitions: 0, records: 0, files: 0, bytes: 0, findings: [], ok: true };
  const find = (file: string, kind: CheckFinding['kind'], problem: string) => {
    report.findings.push({ file, kind, problem });
    if (kind === 'committed') report.ok = false;
  };
  const read = (file: string) => {
    report.files++;
    report.bytes += sizeOf(file);
  };
  const catalogFile = path.join(dataDir, CATALOG_FILE);
  if (!fs.existsSync(catalogFile)) {
    const parts = path.join(dataDir, PARTS_DIR);
    if (fs.existsSync(parts) && fs.readdirSync(parts, { recursive: true }).length) find(CATALOG_FILE, 'committed', 'the file is missing while partition files are there');
    return report;
  }
  let catalog: Db;
  try {
    read(catalogFile);
    catalog = openDbSync(fs.readFileSync(catalogFile), { handOver: true });
    prepareCatalog(catalog);
  } catch (err) {
    if (err instanceof EngineTrapped) throw err;
    find(CATALOG_FILE, 'committed', `not a readable catalog: ${(err as Error).message}`);
    return report;
  }
  try {
    const pathsFile = path.join(dataDir, PATHS_FILE);
    const epoch = readDerivedEpoch(pathsFile);
    if (fs.existsSync(pathsFile) && epoch === null) find(PATHS_FILE, 'derived', 'its first line is not its token: it starts again (and every columns file is rebuilt)');
    const named = new Map<string, Set<string>>();
    for (const row of partitionRows(catalog)) {
      const source = SOURCES.find((s) => s.code === row.source);
      if (!source) {
        find(CATALOG_FILE, 'committed', `it names an unknown source code ${row.source}`);
        continue;
      }
      report.partitions++;
      report.records += row.rows;
      const dir = path.join(dataDir, PARTS_DIR, source.alias);
      const p = new Partition(source, dir, row);
      const keep = named.get(dir) ?? new Set<string>();
      named.set(dir, keep);
      for (const f of p.blocks.fileNames) keep.add(f);
      if (row.version > 0) {
        const dbFile = p.dbFile(row.version);
        keep.add(path.basename(dbFile)).add(path.basename(columnsFileOf(dbFile)));
        read(dbFile);
        try {
          const rows = p.load().rows(`SELECT count(*) FROM ${source.alias}`)[0]![0] as number;
          if (rows !== row.rows) find(partFileName(dbFile), 'committed', `it holds ${rows} rows where the catalog counts ${row.rows}`);
        } catch (err) {
          if (err instanceof StoreFileDamaged) find(err.file, 'committed', err.problem);
          else if (err instanceof EngineTrapped) throw err;
          else find(partFileName(dbFile), 'committed', `not a readable partition database: ${(err as Error).message}`);
        } finally {
          p.db?.close();
          p.db = null;
        }
        const colsFile = columnsFileOf(dbFile);
        if (fs.existsSync(colsFile)) {
          read(colsFile);
          const pathsBytes = sizeOf(pathsFile);
          let ok = false;
          let fieldsOk = true;
          try {
            const c = readScanColumns(colsFile, { source: row.source, start: row.start, version: row.version, epoch: epoch ?? '', rows: row.rows, pathsOk: (b) => b <= pathsBytes });
            ok = c !== null && c.load(ROW_COLUMNS).pathCounts.k >= 0;
            if (c && ok) fieldsOk = fieldIndexWhole(c);
          } catch {
            ok = false;
          }
          if (!ok) find(partFileName(colsFile), 'derived', 'not whole, not this version’s, or built against another paths.log: rebuilt when next needed');
          else if (!fieldsOk) find(partFileName(colsFile), 'derived', 'its field index fails a check: fields are read from the records until it is rebuilt in the background');
        }
      }
      read(p.blocks.file);
      const records = verifyRecordFile(p.blocks.file, row.record_bytes);
      if (records) find(partFileName(p.blocks.file), 'committed', records);
      if (!textsWhole(p, row.record_bytes, read)) find(partFileName(p.blocks.textsFile), 'derived', 'a group of its record texts fails its check: those records are searched themselves until the background builder writes the group again');
      if (!tokensWhole(p, row.record_bytes, read)) find(partFileName(p.blocks.tokensFile), 'derived', 'a segment of its record words fails its check: searches read those records’ texts until the background builder writes the segment again');
    }
    for (const [dir, keep] of named) {
      for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
        if (!keep.has(f)) find(partFileName(path.join(dir, f)), 'leftover', 'no committed catalog names it (left by a save or import that never committed); removed at the next start');
      }
    }
    const urlsFile = path.join(dataDir, URLS_FILE);
    read(urlsFile);
    const urls = verifyTextFile(urlsFile, urlsState(catalog));
    if (urls) find(URLS_FILE, 'committed', urls);
    else {
      const matchesFile = path.join(dataDir, URL_MATCHES_FILE);
      if (fs.existsSync(matchesFile)) read(matchesFile);
      const matches = checkUrlMatches(matchesFile, urlsLogAt(urlsFile, urlsState(catalog)));
      if (matches) find(URL_MATCHES_FILE, 'derived', matches);
    }
    // The saved line offsets of both dictionaries (derived: checked by their CRC at every load).
    for (const [name, bytes] of [[URLS_FILE, urlsState(catalog).bytes], [PATHS_FILE, sizeOf(pathsFile)]] as const) {
      const lines = linesFileOf(path.join(dataDir, name));
      if (fs.existsSync(lines)) read(lines);
      const problem = checkSavedLines(path.join(dataDir, name), bytes);
      if (problem) find(path.basename(lines), 'derived', problem);
    }
  } finally {
    catalog.close();
  }
  return report;
}

/** The report as lines for a terminal. */
export function formatCheckReport(r: CheckReport): string[] {
  const lines = [`${r.dataDir}: ${r.partitions} partitions, ${r.records} records; read ${r.files} files (${r.bytes} bytes)`];
  for (const f of r.findings) lines.push(`  ${f.kind.padEnd(9)} ${f.file}: ${f.problem}`);
  lines.push(
    r.ok
      ? r.findings.length
        ? 'OK: no committed file is damaged (the app rebuilds or removes the files listed)'
        : 'OK: every file is whole'
      : 'DAMAGED: restore the committed files listed from a backup (or the whole folder), or delete their sources and import them again',
  );
  return lines;
}

/** Reads every group of a record file's texts (when it has them) and checks it: false when one fails. */
function textsWhole(p: Partition, recordBytes: number, read: (file: string) => void): boolean {
  const texts = readBlockTexts(p.blocks.textsFile, p.blocks.nameSeed, recordBytes);
  if (!texts) return !textsDictionaryFails(p.blocks.textsFile, p.blocks.nameSeed);
  read(p.blocks.textsFile);
  for (let j = 0; j < texts.size; j++) {
    const g = texts.group(j);
    if (!g) return false;
    try {
      g.prefetchAll();
      for (let k = 0; k < g.chunks; k++) g.chunk(k);
    } catch {
      return false;
    }
  }
  return true;
}

/** Reads every segment of a record file's words (when it has them) and checks it: false when one fails. */
function tokensWhole(p: Partition, recordBytes: number, read: (file: string) => void): boolean {
  const tokens = readRecordTokens(p.blocks.tokensFile, p.blocks.nameSeed, recordBytes);
  if (!tokens) return true;
  read(p.blocks.tokensFile);
  for (let j = 0; j < tokens.size; j++) if (!tokens.segment(j)?.postingsWhole()) return false;
  return true;
}

/** Reads every part of a columns file's field index (when it has one) and checks it: false when one fails. */
function fieldIndexWhole(c: ScanColumns): boolean {
  let whole = true;
  c.onFieldsDamaged = () => (whole = false);
  const fx = c.fieldIndex();
  for (const p of fx?.paths ?? []) if (!fx!.capped(p)) void (fx!.texts(p), fx!.ids(p), fx!.counts(p));
  return whole;
}
