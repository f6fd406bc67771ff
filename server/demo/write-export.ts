/**
 * Writes demo records as a log export file in any form the importer accepts (docs/ARCHITECTURE.md, "Import"):
 * NDJSON, a JSON array, a `{"result": [...]}` endpoint response or Studio-style CSV; metadata
 * in the ingest or the query shape; timestamps as µs, ms, seconds, or ISO 8601 strings.
 *
 * Streams: records are encoded into 2 MiB buffers; one is written while the next is filled,
 * so memory stays flat whatever the record count.
 *
 * Precision per timestamp form: `micros`, `seconds` (6 fraction digits), `iso`, `iso-nanos`
 * and `iso-offset` carry the exact microsecond; `millis` cannot, and truncates (floors) to the
 * millisecond. `iso-nanos` appends three made-up nanosecond digits that a reader must drop.
 */
import { open } from 'node:fs/promises';
import { toQueryShape } from '../store/shape.ts';
import { sourceInfo, type SourceName } from '../sources.ts';
import { formatIsoMicros, MICROS } from '../time.ts';
import { PreSerializedRecord, type DemoRecord } from './common.ts';
import { csvCell } from '../http.ts';

export const EXPORT_FORMATS = ['ndjson', 'json-array', 'result', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_SHAPES = ['ingest', 'query'] as const;
export type ExportShape = (typeof EXPORT_SHAPES)[number];

export const TIMESTAMP_FORMS = ['micros', 'millis', 'seconds', 'iso', 'iso-nanos', 'iso-offset'] as const;
export type TimestampForm = (typeof TIMESTAMP_FORMS)[number];

export interface ExportOptions {
  /** Decides whether CSV gets a `project` column (sources whose project is on the record). */
  source: SourceName;
  format: ExportFormat;
  /** Default `ingest`. */
  shape?: ExportShape;
  /** Default `micros`. */
  timestamp?: TimestampForm;
  /** Start the file with a UTF-8 byte order mark. */
  bom?: boolean;
  /** End lines (rows, array elements) with CRLF instead of LF. */
  crlf?: boolean;
  /** Leave out `id`, so the importer must derive ids from content. */
  omitIds?: boolean;
}

export interface ExportResult {
  path: string;
  records: number;
  bytes: number;
}

/** File name suffix for a format: `.ndjson`, `.json`, `.result.json`, `.csv`. */
export function exportExtension(format: ExportFormat): string {
  return format === 'ndjson' ? 'ndjson' : format === 'json-array' ? 'json' : format === 'result' ? 'result.json' : 'csv';
}

// Offsets used by `iso-offset`, in minutes east of UTC, rotated per record: half-hour,
// 45-minute and negative offsets, and +00:00 written as an offset rather than `Z`.
const OFFSETS = [330, -480, 345, -210, 0, 60] as const;

function offsetSuffix(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  const h = Math.floor(abs / 60);
  const m = abs % 60;
  return `${sign}${h < 10 ? '0' : ''}${h}:${m < 10 ? '0' : ''}${m}`;
}

/**
 * The timestamp as written in the file (the raw token: digits, or the ISO text without quotes).
 * `index` only picks the offset for `iso-offset`.
 */
export function formatTimestamp(us: number, form: TimestampForm, index = 0): string {
  switch (form) {
    case 'micros':
      return microsText(us);
    case 'millis':
      return String(Math.floor(us / 1000));
    case 'seconds': {
      const s = Math.floor(us / 1_000_000);
      return `${s}.${String(us - s * 1_000_000).padStart(6, '0')}`;
    }
    case 'iso':
      return formatIsoMicros(us);
    case 'iso-nanos':
      // Three extra digits that are not zero, so a reader that rounds instead of truncating shows.
      return `${formatIsoMicros(us).slice(0, -1)}${String(us % 997).padStart(3, '0')}Z`;
    case 'iso-offset': {
      const minutes = OFFSETS[index % OFFSETS.length]!;
      return formatIsoMicros(us + minutes * MICROS.minute).slice(0, -1) + offsetSuffix(minutes);
    }
  }
}

/**
 * String(us) for 16-digit integers, ~3x faster: numbers past 2^31 take V8's slow double
 * printing, while two halves below 1e8 are small integers with a fast path.
 */
function microsText(us: number): string {
  if (us < 1e8 || !Number.isSafeInteger(us)) return String(us);
  const hi = Math.floor(us / 1e8);
  return String(hi) + String(1e8 + (us - hi * 1e8)).slice(1);
}

const isNumericForm = (form: TimestampForm) => form === 'micros' || form === 'millis' || form === 'seconds';

/**
 * One record as an NDJSON line (ingest shape, µs timestamps, ids, no line break): for
 * generated records the same text as JSON.stringify(record), but it reuses the JSON text
 * that edge records carry, so it is several times faster for them.
 */
export function toNdjsonLine(record: DemoRecord): string {
  return defaultLine(record, 0);
}

type Serializer = (r: DemoRecord, index: number) => string;

/** Ids are nearly always UUIDs: those need no escaping, and skipping JSON.stringify saves time. */
const PLAIN_ID = /^[\w-]{1,64}$/;

function jsonSerializer(opts: Required<Pick<ExportOptions, 'shape' | 'timestamp' | 'omitIds'>>): Serializer {
  const { shape, timestamp, omitIds } = opts;
  const quoteTs = !isNumericForm(timestamp);
  const metadataJson =
    shape === 'query'
      ? (r: DemoRecord) => JSON.stringify(toQueryShape(r.metadata))
      : (r: DemoRecord) => PreSerializedRecord.metadataJsonOf(r) ?? JSON.stringify(r.metadata);
  // Few distinct projects: quote each once.
  const projects = new Map<string, string>();
  const projectField = (p: string) => {
    let text = projects.get(p);
    if (text === undefined) {
      text = `"project":${JSON.stringify(p)},`;
      if (projects.size < 1000) projects.set(p, text);
    }
    return text;
  };
  return (r, i) => {
    const ts = formatTimestamp(r.timestamp, timestamp, i);
    return (
      (omitIds ? '{' : `{"id":${PLAIN_ID.test(r.id) ? `"${r.id}"` : JSON.stringify(r.id)},`) +
      `"timestamp":${quoteTs ? `"${ts}"` : ts},"event_message":${PreSerializedRecord.eventMessageJsonOf(r) ?? JSON.stringify(r.event_message)},` +
      (r.project === undefined ? '' : projectField(r.project)) +
      `"metadata":${metadataJson(r)}}`
    );
  };
}

function csvSerializer(opts: Required<Pick<ExportOptions, 'shape' | 'timestamp' | 'omitIds'>>, projectColumn: boolean): Serializer {
  const { shape, timestamp, omitIds } = opts;
  return (r, i) => {
    const metadata = shape === 'query' ? JSON.stringify(toQueryShape(r.metadata)) : (PreSerializedRecord.metadataJsonOf(r) ?? JSON.stringify(r.metadata));
    let row = omitIds ? '' : `${csvCell(r.id)},`;
    row += `${csvCell(formatTimestamp(r.timestamp, timestamp, i))},${csvCell(r.event_message)},${csvCell(metadata)}`;
    if (projectColumn) row += `,${csvCell(r.project ?? '')}`;
    return row;
  };
}

/** Bytes per write; a line is encoded straight into the current chunk buffer. */
const CHUNK_BYTES = 2 * 1024 * 1024;

const defaultLine = jsonSerializer({ shape: 'ingest', timestamp: 'micros', omitIds: false });

/**
 * Writes `records` to `path` (created or truncated) in the given export form and returns how
 * many records and bytes were written. Accepts sync or async iterables; never holds more than
 * two 2 MiB buffers of the file in memory.
 */
export async function writeExport(
  path: string,
  records: Iterable<DemoRecord> | AsyncIterable<DemoRecord>,
  options: ExportOptions,
): Promise<ExportResult> {
  const opts = {
    shape: options.shape ?? 'ingest',
    timestamp: options.timestamp ?? 'micros',
    omitIds: options.omitIds ?? false,
  } as const;
  const nl = options.crlf ? '\r\n' : '\n';
  const format = options.format;
  const projectColumn = sourceInfo(options.source).project.in === 'record';
  const serialize = format === 'csv' ? csvSerializer(opts, projectColumn) : jsonSerializer(opts);
  // What goes before the first record, before each later one, and after the last one.
  let head: string;
  let first: string;
  let separator: string;
  let tail: string;
  if (format === 'csv') {
    head = (opts.omitIds ? '' : 'id,') + 'timestamp,event_message,metadata' + (projectColumn ? ',project' : '');
    first = nl;
    separator = nl;
    tail = nl;
  } else if (format === 'ndjson') {
    head = '';
    first = '';
    separator = nl;
    tail = nl;
  } else {
    head = format === 'result' ? '{"result":[' : '[';
    first = nl;
    separator = `,${nl}`;
    tail = format === 'result' ? `${nl}]}${nl}` : `${nl}]${nl}`;
  }
  if (options.bom) head = '\uFEFF' + head;

  // Each line is UTF-8 encoded straight into a 2 MiB buffer (no big string built per chunk,
  // which would keep every line alive and cost more in GC than the encoding itself). Two
  // buffers alternate: one is being written to disk while the next is filled.
  const file = await open(path, 'w');
  let bytes = 0;
  let current = Buffer.allocUnsafe(CHUNK_BYTES);
  let spare = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  let pending: Promise<void> | undefined;
  const writeAll = async (buf: Buffer) => {
    let offset = 0;
    while (offset < buf.length) offset += (await file.write(buf, offset, buf.length - offset)).bytesWritten;
  };
  const startWrite = async (buf: Buffer) => {
    if (pending) await pending;
    bytes += buf.length;
    pending = writeAll(buf);
    pending.catch(() => undefined); // awaited before the next write; not an unhandled rejection
  };
  const flush = async () => {
    if (used === 0) return;
    await startWrite(current.subarray(0, used));
    [current, spare] = [spare, current]; // `spare` was the buffer of the write just awaited
    used = 0;
  };
  /** Queues text; returns a promise only when a flush is needed first (rare), else undefined. */
  const put = (text: string): Promise<void> | undefined => {
    // A UTF-16 code unit never takes more than 3 UTF-8 bytes.
    if (used + text.length * 3 <= CHUNK_BYTES) {
      used += current.write(text, used);
      return undefined;
    }
    return (async () => {
      await flush();
      if (text.length * 3 <= CHUNK_BYTES) used += current.write(text, used);
      else await startWrite(Buffer.from(text, 'utf8'));
    })();
  };

  let count = 0;
  try {
    await put(head);
    // Sync input gets a plain loop: `for await` would cost a microtask turn per record.
    if (Symbol.iterator in records) {
      for (const r of records) {
        const wait = put((count === 0 ? first : separator) + serialize(r, count));
        count++;
        if (wait) await wait;
      }
    } else {
      for await (const r of records) {
        const wait = put((count === 0 ? first : separator) + serialize(r, count));
        count++;
        if (wait) await wait;
      }
    }
    // An empty NDJSON file stays empty; the other forms still close their header or brackets.
    if (count > 0 || format !== 'ndjson') await put(tail);
    await flush();
    if (pending) await pending;
  } finally {
    await file.close();
  }
  return { path, records: count, bytes };
}
