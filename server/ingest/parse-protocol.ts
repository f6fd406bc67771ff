/**
 * What an import's parser (parse-job.ts, on a worker thread or inline) and the thread that owns
 * the store say to each other, and the packed form a batch of StoredRecords travels in.
 *
 * A batch is packed by field into columns so that posting it is cheap: strings as plain string
 * arrays, numbers in typed arrays, and every record's raw text in ONE transferred ArrayBuffer
 * that the receiver slices into Buffers without copying. Packing is generic over the fields a
 * record has, so StoredRecord fields added later travel too (at worst as an `other` column,
 * cloned as they are).
 */
import type { ImportErrorEntry } from '../../contract/api-types.ts';
import type { SourceName } from '../sources.ts';
import type { StoredRecord } from '../store/record.ts';
import type { ExportFormat, Recoded } from './formats.ts';

export type { ImportErrorEntry };

export interface ParseJob {
  /** A file the parser opens and reads itself; without it, the input arrives as `chunk` messages. */
  file?: string;
  /** The import's `source` option: every record goes there (a row of the `logs` table naming another is refused). */
  source?: SourceName;
  /**
   * The source the file name names: that of BigQuery-era records when no `source` is given, and
   * of `logs` rows that name none (rows that name one go there). Without either, the parser
   * tells the source from the first records.
   */
  named?: SourceName;
  project?: string;
  /** gzip input: the most bytes it may decompress to (ContentTooLarge past it). */
  maxContentBytes?: number;
}

/** Host -> parser, on the job's port. */
export type ToParser =
  /** The first `length` bytes of `data` (transferred) are the next input bytes. */
  | { type: 'chunk'; data: ArrayBuffer; length: number }
  | { type: 'end' }
  /** Reading the input failed; the host keeps the error itself and rethrows it. */
  | { type: 'input-error'; message: string }
  /** One batch was written; the parser may send another. */
  | { type: 'ack' };

export interface Rejects {
  rejected: number;
  /** Listed errors (the parser applies the import's cap). */
  errors: ImportErrorEntry[];
  /** Rejections beyond the cap. */
  omitted: number;
  /**
   * The rejections split by the source each counts under (route-record.ts: the source its record
   * names, else the import's); absent: all under the import's source.
   */
  bySource?: Partial<Record<SourceName, number>>;
}

export interface BatchMessage {
  type: 'batch';
  batch?: PackedBatch;
  /** The source of the batch's records, when not the import's (`start`) source: a file of the `logs` table may mix sources. */
  source?: SourceName;
  /** Rejections since the previous message, in input order. */
  rejects: Rejects;
  /** Input bytes read and records normalized so far. */
  bytes: number;
  records: number;
  /** Set on the last message of a job. */
  done?: { recoded?: Recoded };
}

export interface StartMessage {
  type: 'start';
  format: ExportFormat;
  /** The import's source: given, named by the file, or told from the first records (route-record.ts, importSources). */
  source: SourceName;
}

/** Parser -> host. */
export type FromParser =
  | StartMessage
  /**
   * Nothing can be imported (unreadable, unknown format or source); sent instead of `start`.
   * `tooLarge`: the decompressed content passed the job's maxContentBytes.
   */
  | { type: 'fail'; message: string; tooLarge?: number }
  | BatchMessage
  /** The job stopped after `start`: a format error, the input's own error, the decompressed size cap (`tooLarge`), or a bug. */
  | { type: 'error'; kind: 'format' | 'input' | 'internal' | 'too-large'; message: string; stack?: string; code?: string; tooLarge?: number }
  /** Stream input: this many more bytes were taken from the queue (flow control). */
  | { type: 'credit'; bytes: number };

type Column =
  | { key: string; kind: 'string'; values: Array<string | null | undefined> }
  /** tags: 0 absent, 1 null, 2 a number; left out when every record has a number. */
  | { key: string; kind: 'number'; values: Float64Array; tags?: Uint8Array }
  /** Buffer or string values as UTF-8, end to end; record i is bytes [ends[i - 1] ?? 0, ends[i]). */
  | { key: string; kind: 'bytes'; data: ArrayBuffer; ends: Float64Array; absent?: Uint8Array }
  | { key: string; kind: 'other'; values: unknown[] };

export interface PackedBatch {
  count: number;
  columns: Column[];
}

/** Fields that hold text or null; any other null-first field starts as a number column. */
const TEXT_FIELDS = new Set(['id', 'project', 'url', 'functionId', 'method', 'path', 'level']);

/** Packs records for postMessage; `transfer` lists the buffers to hand over rather than copy. */
export function packBatch(records: readonly StoredRecord[]): { batch: PackedBatch; transfer: ArrayBuffer[] } {
  const count = records.length;
  const columns = new Map<string, Column>();
  /** The `raw` values, copied into one buffer at the end. */
  let rawParts: Array<Buffer | string | undefined> = [];
  const toOther = (col: Column, i: number): Column => {
    // A value the column's kind cannot hold: keep the field exactly, as cloned values.
    const values: unknown[] = new Array(count);
    for (let j = 0; j < i; j++) {
      if (col.kind === 'string') values[j] = col.values[j];
      else if (col.kind === 'number') {
        const tag = col.tags![j];
        values[j] = tag === 2 ? col.values[j] : tag === 1 ? null : undefined;
      }
    }
    const other: Column = { key: col.key, kind: 'other', values };
    columns.set(col.key, other);
    return other;
  };
  for (let i = 0; i < count; i++) {
    const rec = records[i] as unknown as Record<string, unknown>;
    for (const key in rec) {
      const v = rec[key];
      if (v === undefined) continue;
      let col = columns.get(key);
      if (!col) {
        if (key === 'raw' && (Buffer.isBuffer(v) || typeof v === 'string')) {
          col = { key, kind: 'bytes', data: new ArrayBuffer(0), ends: new Float64Array(0) };
          rawParts = new Array(count);
        } else if (typeof v === 'string' || (v === null && TEXT_FIELDS.has(key))) col = { key, kind: 'string', values: new Array(count) };
        else if (typeof v === 'number' || v === null) col = { key, kind: 'number', values: new Float64Array(count), tags: new Uint8Array(count) };
        else col = { key, kind: 'other', values: new Array(count) };
        columns.set(key, col);
      }
      if (col.kind === 'bytes') {
        if (Buffer.isBuffer(v) || typeof v === 'string') {
          rawParts[i] = v;
          continue;
        }
        // Not bytes after all: move what was gathered into an `other` column.
        const other: Column = { key, kind: 'other', values: rawParts.slice() };
        columns.set(key, other);
        col = other;
      }
      if (col.kind === 'string') {
        if (typeof v === 'string' || v === null) {
          col.values[i] = v;
          continue;
        }
        col = toOther(col, i);
      } else if (col.kind === 'number') {
        if (typeof v === 'number') {
          col.values[i] = v;
          col.tags![i] = 2;
          continue;
        }
        if (v === null) {
          col.tags![i] = 1;
          continue;
        }
        col = toOther(col, i);
      }
      (col as { values: unknown[] }).values[i] = v;
    }
  }
  const transfer: ArrayBuffer[] = [];
  for (const col of columns.values()) {
    if (col.kind === 'number') {
      if (col.tags!.every((t) => t === 2)) delete col.tags;
    } else if (col.kind === 'bytes') {
      const parts = rawParts;
      let total = 0;
      for (const p of parts) if (p !== undefined) total += typeof p === 'string' ? Buffer.byteLength(p) : p.length;
      // Not from Buffer's pool: the whole ArrayBuffer is this batch's, so it can be transferred.
      const out = Buffer.allocUnsafeSlow(total);
      const ends = new Float64Array(count);
      let absent: Uint8Array | undefined;
      let at = 0;
      for (let i = 0; i < count; i++) {
        const p = parts[i];
        if (p === undefined) (absent ??= new Uint8Array(count))[i] = 1;
        else if (typeof p === 'string') at += out.write(p, at);
        else at += p.copy(out, at);
        ends[i] = at;
      }
      col.data = out.buffer;
      col.ends = ends;
      if (absent) col.absent = absent;
      transfer.push(out.buffer);
    }
  }
  return { batch: { count, columns: [...columns.values()] }, transfer };
}

/** The records of a packed batch; `bytes` fields are Buffers over the transferred data (no copy). */
export function unpackBatch(batch: PackedBatch): StoredRecord[] {
  const out: Array<Record<string, unknown>> = new Array(batch.count);
  for (let i = 0; i < batch.count; i++) out[i] = {};
  for (const col of batch.columns) {
    const key = col.key;
    switch (col.kind) {
      case 'string':
      case 'other':
        for (let i = 0; i < batch.count; i++) {
          const v = col.values[i];
          if (v !== undefined) out[i]![key] = v;
        }
        break;
      case 'number': {
        const { values, tags } = col;
        for (let i = 0; i < batch.count; i++) {
          const tag = tags ? tags[i] : 2;
          if (tag === 2) out[i]![key] = values[i];
          else if (tag === 1) out[i]![key] = null;
        }
        break;
      }
      case 'bytes': {
        let start = 0;
        for (let i = 0; i < batch.count; i++) {
          const end = col.ends[i]!;
          if (!col.absent?.[i]) out[i]![key] = Buffer.from(col.data, start, end - start);
          start = end;
        }
        break;
      }
    }
  }
  return out as unknown as StoredRecord[];
}
