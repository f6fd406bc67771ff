/**
 * Streams raw items out of an export file, whatever its format (docs/ARCHITECTURE.md, "Import"):
 * NDJSON, a JSON array, a `{"result": [...]}` endpoint response, or CSV with a header row. The
 * format is told from the content (first non-blank bytes), not the extension. Memory stays
 * bounded: chunks go through as they arrive and items come out in small arrays.
 */
import { isUtf8 } from 'node:buffer';
import { Readable } from 'node:stream';
import { parse as csvParse } from 'csv-parse';
import { chain } from 'stream-chain';
import jsonParser from 'stream-json/parser.js';
import { pick } from 'stream-json/filters/pick.js';
import { streamArray } from 'stream-json/streamers/stream-array.js';

export type ExportFormat = 'ndjson' | 'json-array' | 'result' | 'csv';

/** One record or one rejected piece of input, located by line (text formats) or array index. */
export interface RawItem {
  line?: number;
  index?: number;
  value?: unknown;
  error?: string;
  /** NDJSON: the line's bytes (no BOM, no CR), stored as they came. */
  raw?: Buffer;
  /** CSV rows: every value is a string, nested values are JSON text. */
  fromCsv?: boolean;
}

export class FormatError extends Error {}

/** Lines longer than this are skipped with a reason instead of being buffered. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export interface RecordStream {
  format: ExportFormat;
  items: AsyncGenerator<RawItem[]>;
  /** CSV: lines that were not UTF-8 and were read as Windows-1252; filled while items are read. */
  recoded?: Recoded;
}

export interface Recoded {
  lines: number;
  /** 1-based; 0 while no line was recoded. */
  firstLine: number;
}

/** Peeks at the start of the input, decides the format and returns the item stream. */
export async function openRecordStream(input: AsyncIterable<Buffer>): Promise<RecordStream> {
  const iterator = input[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let first = -1;
  let firstLine = '';
  let sawNewline = false;
  let headBytes = 0;
  // Read until the first non-blank byte and its whole line (or 64 KiB) are seen.
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    head.push(chunk);
    headBytes += chunk.length;
    const all = Buffer.concat(head);
    const start = all.subarray(0, 3).equals(BOM) ? 3 : 0;
    first = all.findIndex((b, i) => i >= start && b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
    if (first >= 0) {
      const nl = all.indexOf(0x0a, first);
      sawNewline = nl >= 0;
      if (sawNewline || headBytes > 65536) {
        firstLine = all.toString('utf8', first, nl >= 0 ? nl : Math.min(all.length, first + 65536));
        break;
      }
    }
  }
  const rest: AsyncIterable<Buffer> = {
    [Symbol.asyncIterator]: () => iterator as AsyncIterator<Buffer>,
  };
  const all = Buffer.concat(head);
  // The loop only stops without a non-blank byte when the input ended.
  if (first < 0) throw new FormatError('the file is empty');
  if (!firstLine) firstLine = all.toString('utf8', first, Math.min(all.length, first + 65536));
  const source = prepend(all, rest);
  const c = all[first];
  if (c === 0x5b /* [ */) return { format: 'json-array', items: jsonArrayItems(source, false) };
  if (c === 0x7b /* { */) {
    if (sawNewline || firstLine.trim().endsWith('}')) {
      try {
        const obj: unknown = JSON.parse(firstLine.trim());
        if (isResultWrapper(obj)) return { format: 'result', items: jsonArrayItems(source, true) };
        return { format: 'ndjson', items: ndjsonItems(source) };
      } catch {
        // Decided below.
      }
    }
    // A first line that is not a whole object (too long to hold, pretty-printed, or broken):
    // only an endpoint response opens with `{` alone or with its "result" key; anything else
    // is NDJSON whose first line is long or bad, reported like any other line.
    if (/^\{\s*("result"\s*:[\s\S]*)?$/.test(firstLine.trim())) return { format: 'result', items: jsonArrayItems(source, true) };
    return { format: 'ndjson', items: ndjsonItems(source) };
  }
  if (looksLikeCsvHeader(firstLine)) {
    const recoded: Recoded = { lines: 0, firstLine: 0 };
    return { format: 'csv', items: csvItems(recodeToUtf8(source, recoded)), recoded };
  }
  throw new FormatError(
    'unknown format: expected NDJSON, a JSON array, a {"result": [...]} object or CSV with a header row',
  );
}

function isResultWrapper(obj: unknown): boolean {
  return typeof obj === 'object' && obj !== null && Array.isArray((obj as { result?: unknown }).result);
}

function looksLikeCsvHeader(line: string): boolean {
  const cells = line.replace(/^\uFEFF/, '').split(',').map((c) => c.trim().replace(/^"|"$/g, '').toLowerCase());
  return cells.length >= 2 && cells.includes('timestamp');
}

async function* prepend(head: Buffer, rest: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  if (head.length) yield head;
  for await (const chunk of rest) yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
}

/** NDJSON by hand: exact line numbers, per-line errors and bounded lines need our own split. */
async function* ndjsonItems(source: AsyncIterable<Buffer>): AsyncGenerator<RawItem[]> {
  let line = 0;
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let skipping = false;
  const parseLine = (buf: Buffer, out: RawItem[]) => {
    line++;
    let end = buf.length;
    if (end > 0 && buf[end - 1] === 0x0d) end--;
    let start = 0;
    if (line === 1 && buf.subarray(0, 3).equals(BOM)) start = 3;
    if (end <= start) return;
    const bytes = buf.subarray(start, end);
    if (isBlank(bytes)) return;
    if (!isUtf8(bytes)) {
      out.push({ line, error: 'invalid UTF-8' });
      return;
    }
    const text = bytes.toString('utf8');
    if (text.includes('\u0000')) {
      out.push({ line, error: 'contains a NUL byte' });
      return;
    }
    try {
      out.push({ line, value: JSON.parse(text), raw: bytes });
    } catch (err) {
      out.push({ line, error: `invalid JSON: ${(err as Error).message}` });
    }
  };
  for await (const chunk of source) {
    const out: RawItem[] = [];
    let pos = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, pos);
      if (nl < 0) break;
      if (skipping) {
        line++;
        out.push({ line, error: `line longer than ${MAX_LINE_BYTES} bytes` });
        skipping = false;
      } else if (carryBytes > 0) {
        carry.push(chunk.subarray(pos, nl));
        parseLine(Buffer.concat(carry), out);
        carry = [];
        carryBytes = 0;
      } else {
        parseLine(chunk.subarray(pos, nl), out);
      }
      pos = nl + 1;
    }
    if (pos < chunk.length && !skipping) {
      const tail = chunk.subarray(pos);
      carryBytes += tail.length;
      if (carryBytes > MAX_LINE_BYTES) {
        carry = [];
        carryBytes = 0;
        skipping = true;
      } else carry.push(Buffer.from(tail));
    }
    if (out.length) yield out;
  }
  const out: RawItem[] = [];
  if (skipping) {
    line++;
    out.push({ line, error: `line longer than ${MAX_LINE_BYTES} bytes` });
  } else if (carryBytes > 0) parseLine(Buffer.concat(carry), out);
  if (out.length) yield out;
}

function isBlank(b: Buffer): boolean {
  for (const c of b) if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  return true;
}

const BATCH = 500;

async function* jsonArrayItems(source: AsyncIterable<Buffer>, wrapped: boolean): AsyncGenerator<RawItem[]> {
  // Notes whether `result` was there at all: `{"result": []}` is an empty export, not a wrong object.
  let sawResult = false;
  const seen = (token: unknown) => {
    sawResult = true;
    return token;
  };
  const stages = wrapped ? [jsonParser(), pick({ filter: 'result' }), seen, streamArray()] : [jsonParser(), streamArray()];
  // A failure to read the input is not a syntax error: it must fail the import, not end it.
  let readError: { err: unknown } | undefined;
  const guarded = async function* () {
    try {
      yield* source;
    } catch (err) {
      readError = { err };
      throw err;
    }
  };
  const pipeline = chain([Readable.from(guarded()), ...stages]);
  let out: RawItem[] = [];
  let next = 0;
  try {
    for await (const item of pipeline as AsyncIterable<{ key: number; value: unknown }>) {
      next = item.key + 1;
      out.push({ index: item.key, value: item.value });
      if (out.length >= BATCH) {
        yield out;
        out = [];
      }
    }
  } catch (err) {
    if (readError) throw readError.err;
    // A JSON document cannot be resynchronized after a syntax error: keep what came before.
    out.push({ index: next, error: `invalid JSON after element ${next}; the rest of the file was not read (${(err as Error).message})` });
  }
  if (wrapped && !sawResult && out.length === 0) {
    throw new FormatError('a JSON object without a "result" array of records');
  }
  if (out.length) yield out;
}

async function* csvItems(source: AsyncIterable<Buffer>): AsyncGenerator<RawItem[]> {
  const skipped: RawItem[] = [];
  const parser = csvParse({
    bom: true,
    columns: true,
    info: true,
    skip_empty_lines: true,
    relax_quotes: false,
    skip_records_with_error: true,
    on_skip: (err) => {
      skipped.push({ line: Number(err?.['lines'] ?? 0) || undefined, error: `invalid CSV: ${err?.message ?? 'unreadable row'}` });
      return undefined;
    },
  });
  // pipe() does not forward errors: without this a read error would leave the parser waiting forever.
  const input = Readable.from(source);
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let out: RawItem[] = [];
  for await (const row of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    // The parser runs ahead of this loop: report only the skipped rows above this one, in line order.
    while (skipped.length && (skipped[0]?.line ?? 0) < row.info.lines) out.push(skipped.shift()!);
    out.push({ line: row.info.lines, value: row.record, fromCsv: true });
    if (out.length >= BATCH) {
      yield out;
      out = [];
    }
  }
  if (skipped.length) out.push(...skipped.splice(0));
  if (out.length) yield out;
}

/** Windows-1252 code points of bytes 0x80-0x9F; from 0xA0 on it is Latin-1 (the byte is the code point). */
// Spelled out: Node 20's TextDecoder('windows-1252') decodes 0x80-0x9F as Latin-1 C1 controls.
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];
/** UTF-8 of the character each byte 0x80-0xFF stands for in Windows-1252 (WHATWG's "latin1"). */
const CP1252_UTF8 = Array.from({ length: 128 }, (_, i) => Buffer.from(String.fromCodePoint(CP1252_HIGH[i] ?? 0x80 + i), 'utf8'));

/** Bytes a UTF-8 sequence takes, from its lead byte (0 for a byte that cannot lead one). */
function sequenceLength(b: number): number {
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return 2;
  if (b >= 0xe0 && b <= 0xef) return 3;
  if (b >= 0xf0 && b <= 0xf4) return 4;
  return 0;
}

/**
 * CSV saved by spreadsheet tools is often Windows-1252 (Latin-1), not UTF-8. Valid UTF-8 passes
 * through untouched; each byte of an invalid sequence becomes the Windows-1252 character it
 * stands for, and the lines where that happened are counted (text in Latin-1 is almost never
 * valid UTF-8, so a UTF-8 file is never misread). A sequence split across chunks is held back.
 */
async function* recodeToUtf8(source: AsyncIterable<Buffer>, recoded: Recoded): AsyncGenerator<Buffer> {
  let carry: Buffer = Buffer.alloc(0);
  let line = 1;
  let lastRecodedLine = 0;
  const convert = (buf: Buffer, final: boolean): Buffer => {
    // Hold back an incomplete sequence at the end, unless the input is over.
    let end = buf.length;
    if (!final) {
      for (let i = Math.max(0, buf.length - 3); i < buf.length; i++) {
        const n = sequenceLength(buf[i]!);
        if (n > 1 && i + n > buf.length) {
          end = i;
          break;
        }
      }
    }
    carry = Buffer.from(buf.subarray(end));
    const body = buf.subarray(0, end);
    if (isUtf8(body)) {
      for (let nl = body.indexOf(0x0a); nl >= 0; nl = body.indexOf(0x0a, nl + 1)) line++;
      return body;
    }
    const out: Buffer[] = [];
    let from = 0;
    for (let i = 0; i < body.length; ) {
      const b = body[i]!;
      if (b === 0x0a) line++;
      if (b < 0x80) {
        i++;
        continue;
      }
      const n = sequenceLength(b);
      if (n > 1 && i + n <= body.length && isUtf8(body.subarray(i, i + n))) {
        i += n;
        continue;
      }
      out.push(body.subarray(from, i), CP1252_UTF8[b - 0x80]!);
      if (line !== lastRecodedLine) {
        lastRecodedLine = line;
        recoded.lines++;
        if (recoded.firstLine === 0) recoded.firstLine = line;
      }
      from = ++i;
    }
    out.push(body.subarray(from));
    return Buffer.concat(out);
  };
  for await (const chunk of source) {
    const buf = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    const out = convert(buf, false);
    if (out.length) yield out;
  }
  if (carry.length) yield convert(carry, true);
}
