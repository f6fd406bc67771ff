/**
 * One import: stream -> format reader -> normalize -> batched inserts, with a report
 * (DESIGN.md §3). Bad records are skipped and reported; a failure before or while writing
 * leaves the store as it was; the report is returned only after the store is saved.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { LogStore, StoredRecord } from '../store/log-store.ts';
import { findSource, sourceFromFileName, SOURCE_NAMES, type SourceInfo, type SourceName } from '../sources.ts';
import { FormatError, openRecordStream, type ExportFormat, type RawItem } from './formats.ts';
import { normalizeRecord, sourceFromShape } from './normalize.ts';

export interface ImportOptions {
  /** Source name or alias; else recognized from the file name, else from the records. */
  source?: string;
  /** Project ref for records that carry none. */
  project?: string;
  fileName?: string;
  onProgress?: (progress: ImportProgress) => void;
}

export interface ImportProgress {
  bytes: number;
  records: number;
}

export interface ImportErrorEntry {
  /** 1-based line of NDJSON/CSV input. */
  line?: number;
  /** 0-based element of a JSON array or a `result` array. */
  index?: number;
  reason: string;
}

export interface ImportReport {
  file?: string;
  source: SourceName;
  format: ExportFormat;
  imported: number;
  duplicates: number;
  rejected: number;
  errors: ImportErrorEntry[];
  /** Rejections beyond the listed errors (the list is capped to keep memory bounded). */
  errorsOmitted: number;
  /**
   * CSV only, present when some lines were not valid UTF-8: they were read as Windows-1252
   * (Latin-1, what spreadsheet tools save) instead of being rejected.
   */
  recoded?: { encoding: 'windows-1252'; lines: number; firstLine: number };
}

/** An import that could not run at all; nothing was written. */
export class ImportFailure extends Error {}

export const MAX_LISTED_ERRORS = 1000;
const BATCH_RECORDS = 1000;
/**
 * A batch is also written once this much time went into reading it: inserting takes about as
 * long again, so no stretch of import work holds the event loop for much more than twice this.
 */
const BATCH_MS = 20;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

function resolveSource(opts: ImportOptions): SourceInfo | undefined {
  if (opts.source) {
    const s = findSource(opts.source);
    if (!s) throw new ImportFailure(`unknown source "${opts.source}"; expected one of ${SOURCE_NAMES.join(', ')} or their aliases`);
    return s;
  }
  return opts.fileName ? sourceFromFileName(opts.fileName) : undefined;
}

async function* countBytes(input: AsyncIterable<Buffer | string> | Iterable<Buffer>, progress: ImportProgress): AsyncGenerator<Buffer> {
  for await (const chunk of input) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    progress.bytes += buf.length;
    yield buf;
  }
}

/** Imports one export stream into the store. Throws ImportFailure when nothing could be imported. */
export async function importStream(store: LogStore, input: Readable | AsyncIterable<Buffer> | Iterable<Buffer>, opts: ImportOptions = {}): Promise<ImportReport> {
  let source = resolveSource(opts);
  const progress: ImportProgress = { bytes: 0, records: 0 };
  let stream;
  try {
    stream = await openRecordStream(countBytes(input, progress));
  } catch (err) {
    if (err instanceof FormatError) throw new ImportFailure(err.message);
    throw new ImportFailure(`cannot read the file: ${(err as Error).message}`);
  }
  const iterator = stream.items[Symbol.asyncIterator]();
  let first: IteratorResult<RawItem[]>;
  try {
    first = await iterator.next();
  } catch (err) {
    throw new ImportFailure(err instanceof FormatError ? err.message : `cannot read the file: ${(err as Error).message}`);
  }
  if (!source) {
    const sample = first.done ? undefined : first.value.find((i) => i.value !== undefined);
    source = sample ? sourceFromShape(sample.value, sample.fromCsv) : undefined;
    if (!source) {
      throw new ImportFailure(
        'cannot tell the source of this file from its name or its records; give it explicitly (source name or alias)',
      );
    }
  }
  const info = source;
  const report: ImportReport = {
    ...(opts.fileName ? { file: opts.fileName } : {}),
    source: info.name,
    format: stream.format,
    imported: 0,
    duplicates: 0,
    rejected: 0,
    errors: [],
    errorsOmitted: 0,
  };
  const reject = (where: RawItem, reason: string) => {
    report.rejected++;
    if (report.errors.length < MAX_LISTED_ERRORS) {
      report.errors.push({ ...(where.line !== undefined ? { line: where.line } : {}), ...(where.index !== undefined ? { index: where.index } : {}), reason });
    } else report.errorsOmitted++;
  };

  await store.withWriter(info.name, async (writer) => {
    let batch: StoredRecord[] = [];
    let batchStarted = performance.now();
    const flush = async () => {
      if (batch.length === 0) return;
      const r = writer.write(batch);
      report.imported += r.imported;
      report.duplicates += r.duplicates;
      batch = [];
      opts.onProgress?.({ ...progress });
      // Let endpoint requests run between batches.
      await yieldToEventLoop();
      batchStarted = performance.now();
    };
    const take = async (items: RawItem[]) => {
      for (const item of items) {
        if (item.error !== undefined) {
          reject(item, item.error);
          continue;
        }
        const n = normalizeRecord(item.value, info, opts.project, item.fromCsv, item.raw);
        if ('error' in n) {
          reject(item, n.error);
          continue;
        }
        progress.records++;
        batch.push(n.record);
        if (batch.length >= BATCH_RECORDS || performance.now() - batchStarted > BATCH_MS) await flush();
      }
    };
    try {
      if (!first.done) await take(first.value);
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        await take(next.value);
      }
      await flush();
    } catch (err) {
      if (err instanceof FormatError) throw new ImportFailure(err.message);
      throw err;
    }
    // Durable before the report is returned.
    await store.save();
  });
  opts.onProgress?.({ ...progress });
  if (stream.recoded && stream.recoded.lines > 0) report.recoded = { encoding: 'windows-1252', ...stream.recoded };
  return report;
}

/** Imports a file from disk; the file name also helps recognize the source. */
export async function importFile(store: LogStore, file: string, opts: Omit<ImportOptions, 'fileName'> = {}): Promise<ImportReport> {
  let input: fs.ReadStream;
  try {
    await fs.promises.access(file, fs.constants.R_OK);
    input = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  } catch (err) {
    throw new ImportFailure(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return await importStream(store, input, { ...opts, fileName: path.basename(file) });
  } finally {
    // An import that stops early (unknown format or source) leaves the stream paused with its fd open.
    input.destroy();
  }
}
