/**
 * One import: stream -> format reader -> normalize -> batched inserts, with a report
 * (docs/ARCHITECTURE.md, "Import"). Bad records are skipped and reported; a failure before or
 * while writing leaves the store as it was; the report is returned only after the store is saved.
 *
 * Reading, splitting, parsing and normalizing run on a worker thread (parse-job.ts, started by
 * parse-host.ts); this thread, which owns the store, only inserts the batches the worker posts
 * and lets other work run between them.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { span } from '../activity.ts';
import { ImportWriter, type LogStore } from '../store/log-store.ts';
import { findSource, sourceFromFileName, sourceInfo, SOURCE_NAMES, type SourceInfo, type SourceName } from '../sources.ts';
import { ContentTooLarge, FormatError, type Recoded } from './formats.ts';
import { ImportCancelled, openParser, ParserFailure, type ImportInput, type ParserMode } from './parse-host.ts';
import type { ImportErrorEntry, ImportReport, ImportSourceCounts } from '../../contract/api-types.ts';
import { unpackBatch } from './parse-protocol.ts';
import { turnForRequests } from '../turns.ts';

export { MAX_LISTED_ERRORS } from './parse-job.ts';
export { ImportCancelled };
export type { ImportErrorEntry, ImportReport, ImportSourceCounts };

export interface ImportOptions {
  /**
   * Source name or alias; else recognized from the file name, else from the records. Rows of
   * ClickHouse's `logs` table go to the source their own `source` names (a file may mix
   * sources): given a source, rows naming another are rejected; a file name only stands for
   * rows that name none.
   */
  source?: string;
  /** Project ref for records that carry none. */
  project?: string;
  fileName?: string;
  onProgress?: (progress: ImportProgress) => void;
  /**
   * Where reading and parsing run: `worker` (a worker thread), `inline` (this thread), or `auto`
   * (the default: the worker, inline where worker threads cannot start). Reports are the same.
   * The environment variable LOG_EXPLORER_IMPORT_PARSER sets the default.
   */
  parser?: ParserMode | 'auto';
  /**
   * gzip input: the most bytes it may decompress to. Past it the import fails with
   * ImportTooLarge and, like any failed import, keeps nothing. No limit when left out.
   */
  maxContentBytes?: number;
  /** Cancels the import (its client went away): the parser stops at once, the import fails with ImportCancelled and keeps nothing. */
  signal?: AbortSignal;
}

export interface ImportProgress {
  bytes: number;
  records: number;
}

/** An import that could not run at all; nothing was written. */
export class ImportFailure extends Error {}

/** The decompressed content passed ImportOptions.maxContentBytes: the import failed, nothing was written. */
export class ImportTooLarge extends ImportFailure {
  constructor(readonly limit: number) {
    super(`the decompressed size of the file passed the limit of ${limit} bytes; the import failed and nothing from this file was kept (a failed import leaves the store as it was)`);
  }
}

/** Records inserted in one call, and the time after which the rest of a batch waits for a turn of requests. */
const INSERT_SLICE_RECORDS = 250;
const INSERT_SLICE_MS = 8;

function defaultParser(): ParserMode | 'auto' {
  const v = process.env.LOG_EXPLORER_IMPORT_PARSER;
  return v === 'worker' || v === 'inline' ? v : 'auto';
}

/** The `source` option, and the source the file name names (used only when no source is given). */
function resolveSources(opts: ImportOptions): { given?: SourceInfo; named?: SourceInfo } {
  if (opts.source) {
    const s = findSource(opts.source);
    if (!s) throw new ImportFailure(`unknown source "${opts.source}"; expected one of ${SOURCE_NAMES.join(', ')} or their aliases`);
    return { given: s };
  }
  const named = opts.fileName ? sourceFromFileName(opts.fileName) : undefined;
  return named ? { named } : {};
}

/** Imports one export stream into the store. Throws ImportFailure when nothing could be imported. */
export async function importStream(store: LogStore, input: Readable | AsyncIterable<Buffer> | Iterable<Buffer>, opts: ImportOptions = {}): Promise<ImportReport> {
  return run(store, input as ImportInput, undefined, opts);
}

/** Imports a file from disk; the file name also helps recognize the source. */
export async function importFile(store: LogStore, file: string, opts: Omit<ImportOptions, 'fileName'> = {}): Promise<ImportReport> {
  try {
    await fs.promises.access(file, fs.constants.R_OK);
  } catch (err) {
    throw new ImportFailure(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  // The parser opens and reads the file itself: no file bytes pass through this thread.
  return run(store, undefined, file, { ...opts, fileName: path.basename(file) });
}

async function run(store: LogStore, input: ImportInput | undefined, file: string | undefined, opts: ImportOptions): Promise<ImportReport> {
  const { given, named } = resolveSources(opts);
  const session = await openParser(
    {
      ...(file !== undefined ? { file } : {}),
      ...(given ? { source: given.name } : {}),
      ...(named ? { named: named.name } : {}),
      ...(opts.project !== undefined ? { project: opts.project } : {}),
      ...(opts.maxContentBytes !== undefined ? { maxContentBytes: opts.maxContentBytes } : {}),
    },
    input,
    opts.parser ?? defaultParser(),
    opts.signal,
  );
  try {
    let start;
    try {
      start = await session.started;
    } catch (err) {
      if (err instanceof ContentTooLarge) throw new ImportTooLarge(err.limit);
      throw err instanceof ParserFailure ? new ImportFailure(err.message) : err;
    }
    const info = sourceInfo(start.source);
    const report: ImportReport = {
      ...(opts.fileName ? { file: opts.fileName } : {}),
      source: info.name,
      format: start.format,
      imported: 0,
      duplicates: 0,
      rejected: 0,
      sources: { [info.name]: { imported: 0, duplicates: 0, rejected: 0 } },
      errors: [],
      errorsOmitted: 0,
    };
    const countsOf = (name: SourceName): ImportSourceCounts => (report.sources![name] ??= { imported: 0, duplicates: 0, rejected: 0 });
    const progress: ImportProgress = { bytes: 0, records: 0 };
    let recoded: Recoded | undefined;
    await store.withWriter(info.name, async (writer) => {
      // Records of other sources (rows of the `logs` table name their own) go in through writers
      // of this same import: committed together when it returns, rolled back together if it
      // throws. (bulkLoad would also take several sources, but it skips withWriter's saving of
      // changes left unsaved before, which a rollback would then undo.)
      const writers = new Map<SourceName, Pick<ImportWriter, 'write' | 'markDenseDays' | 'settle' | 'sliceEnd'>>([[info.name, writer]]);
      const writerOf = (name: SourceName) => {
        let w = writers.get(name);
        if (!w) writers.set(name, (w = new ImportWriter(store, sourceInfo(name))));
        return w;
      };
      try {
        for (;;) {
          const m = await session.next();
          report.rejected += m.rejects.rejected;
          const bySource = m.rejects.bySource ?? { [info.name]: m.rejects.rejected };
          for (const name of Object.keys(bySource) as SourceName[]) countsOf(name).rejected += bySource[name] ?? 0;
          for (const e of m.rejects.errors) report.errors.push(e);
          report.errorsOmitted += m.rejects.omitted;
          progress.bytes = m.bytes;
          progress.records = m.records;
          if (m.batch) {
            const source = m.source ?? info.name;
            const records = unpackBatch(m.batch);
            const counts = countsOf(source);
            writerOf(source).markDenseDays(records);
            // A batch goes in slice by slice, with a turn for requests whenever one slice
            // took its time: a request never waits for more than about one slice. Within a
            // run of slices, rows wait for their record blocks, packed on a worker meanwhile;
            // they go in before the turn.
            for (let at = 0; at < records.length; ) {
              const end = span('import: insert');
              const started = performance.now();
              let r = { imported: 0, duplicates: 0 };
              while (at < records.length && performance.now() - started < INSERT_SLICE_MS) {
                // At most one partition read from disk per write: its load alone can take the slice's time.
                const end = writerOf(source).sliceEnd(records, at, INSERT_SLICE_RECORDS);
                const part = writerOf(source).write(records.slice(at, end), false);
                at = end;
                r = { imported: r.imported + part.imported, duplicates: r.duplicates + part.duplicates };
              }
              writerOf(source).settle();
              end();
              report.imported += r.imported;
              report.duplicates += r.duplicates;
              counts.imported += r.imported;
              counts.duplicates += r.duplicates;
              if (at < records.length) await turnForRequests();
            }
            opts.onProgress?.({ ...progress });
          }
          if (m.done) {
            recoded = m.done.recoded;
            break;
          }
          session.ack();
          // Let endpoint requests run between batches.
          await turnForRequests();
        }
      } catch (err) {
        if (err instanceof FormatError) throw new ImportFailure(err.message);
        // Thrown out of withWriter, which rolls the import back first.
        if (err instanceof ContentTooLarge) throw new ImportTooLarge(err.limit);
        throw err;
      }
    });
    // withWriter has committed the import (saved and synced) before it returns: the report
    // below is only ever given for data that is on disk.
    opts.onProgress?.({ ...progress });
    if (recoded && recoded.lines > 0) report.recoded = { encoding: 'windows-1252', lines: recoded.lines, firstLine: recoded.firstLine };
    // Every item the reader gives is imported, a duplicate or rejected: none of them means none at all.
    if (report.imported + report.duplicates + report.rejected === 0) report.note = 'the file held no records';
    return report;
  } finally {
    session.close();
  }
}
