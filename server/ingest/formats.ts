/**
 * Streams raw items out of an export file, whatever its format (docs/ARCHITECTURE.md, "Import"):
 * NDJSON, a JSON array, a `{"result": [...]}` endpoint response, or CSV with a header row, each
 * possibly gzip-compressed. The format is told from the content (gzip's magic bytes, then the
 * first non-blank bytes), not the extension. Memory stays bounded: chunks go through as they
 * arrive, items come out in small arrays, and a record over the per-record limit is skipped
 * without being held whole, in every format.
 */
import { isUtf8 } from 'node:buffer';
import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';
import { parse as csvParse } from 'csv-parse';
import { chain } from 'stream-chain';
import { none } from 'stream-chain/core';
import Assembler from 'stream-json/assembler.js';
import jsonParser from 'stream-json/parser.js';
import { pick } from 'stream-json/filters/pick.js';
import type { ExportFormat } from '../../contract/api-types.ts';

export type { ExportFormat };

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
  /** Where a damaged gzip archive broke (at a line for NDJSON and CSV, else the file as a whole): listed even past the error cap. */
  whole?: boolean;
}

export class FormatError extends Error {}

/**
 * The per-record limit, in every format: a longer NDJSON line, CSV row (its bytes, quoted line
 * breaks included) or JSON array element (its compact JSON text) is skipped with a reason that
 * names the limit, without being held whole.
 */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024;
/** NDJSON's name for the per-record limit. */
export const MAX_LINE_BYTES = MAX_RECORD_BYTES;

export interface OpenOptions {
  /** The per-record limit in bytes (MAX_RECORD_BYTES; smaller in tests). */
  maxRecordBytes?: number;
  /** gzip input: the most bytes it may decompress to; past it, reading throws ContentTooLarge. */
  maxContentBytes?: number;
  /** gzip input: once aborted, decompression stops and reading throws the signal's reason. */
  signal?: AbortSignal;
}

/** The decompressed content passed OpenOptions.maxContentBytes (a decompression bomb, say). */
export class ContentTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the decompressed content passed the limit of ${limit} bytes`);
  }
}

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

/** Peeks at the start of the input, decides the format (and gzip) and returns the item stream. */
export async function openRecordStream(input: AsyncIterable<Buffer>, options: OpenOptions = {}): Promise<RecordStream> {
  const cap = options.maxRecordBytes ?? MAX_RECORD_BYTES;
  const iterator = input[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headBytes = 0;
  while (headBytes < 2) {
    const next = await iterator.next();
    if (next.done) break;
    const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    head.push(chunk);
    headBytes += chunk.length;
  }
  const start = Buffer.concat(head);
  const source = prepend(start, { [Symbol.asyncIterator]: () => iterator as AsyncIterator<Buffer> });
  // gzip by its magic bytes (1f 8b), whatever the file is called.
  if (start[0] !== 0x1f || start[1] !== 0x8b) return detect(source, cap);
  const gz: Gunzipped = { fed: 0, content: 0 };
  try {
    return await detect(gunzip(source, gz, options), cap, gz);
  } catch (err) {
    if (err instanceof FormatError && gz.damage) {
      throw new FormatError(`the gzip archive is damaged after ${gz.damage.at} bytes, before any content could be read (zlib: ${gz.damage.reason})`);
    }
    throw err;
  }
}

/** What gunzip() read, and why it stopped early if it did. */
interface Gunzipped {
  /** Compressed bytes read from the input. */
  fed: number;
  /** Decompressed bytes that came out. */
  content: number;
  /** Where decompression broke (compressed bytes) and why, in zlib's words. */
  damage?: { at: number; reason: string };
}

/** The damage entry of a gzip input that broke, if it did. `atLine`: the line the damage cut (NDJSON, CSV). */
function damageItem(gz: Gunzipped | undefined, atLine?: number): RawItem | undefined {
  const d = gz?.damage;
  if (!d) return undefined;
  const head = `the gzip archive is damaged after ${d.at} bytes of compressed input (${gz.content} bytes decompressed)`;
  if (atLine === undefined) return { error: `${head}: the rest of the file was not read (zlib: ${d.reason})`, whole: true };
  // The partial line is not parsed: what came out of the damaged data ends inside it.
  return { line: atLine, error: `${head}: the compressed data is damaged at this line, so it and the rest of the file were not read (zlib: ${d.reason})`, whole: true };
}

/** gzip header flags (RFC 1952, 2.3.1). */
const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;
/** A member header longer than this (a name without its end, say) is taken for damage. */
const MAX_GZIP_HEADER_BYTES = 64 * 1024;
/**
 * Compressed bytes handed to zlib at a time. Deflate inflates at most ~1032:1, so one piece
 * comes out as at most ~16 MiB however the archive was made (a bomb included): that bounds
 * what is held, and the cap and a cancellation are checked at least that often.
 */
const INFLATE_PIECE = 16 * 1024;

/** The length of the gzip member header `b` starts with: 0 while more bytes are needed, -1 when it is none. */
function gzipHeaderLength(b: Buffer): number {
  const magic = [0x1f, 0x8b, 0x08]; // ID1, ID2, CM = deflate
  for (let i = 0; i < magic.length; i++) {
    if (b.length <= i) return 0;
    if (b[i] !== magic[i]) return -1;
  }
  if (b.length < 10) return 0;
  const flags = b[3]!;
  if (flags & 0xe0) return -1; // reserved bits
  let at = 10;
  if (flags & FEXTRA) {
    if (b.length < at + 2) return 0;
    at += 2 + b.readUInt16LE(at);
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    const end = b.indexOf(0, at);
    if (end < 0) return 0;
    at = end + 1;
  }
  if (flags & FHCRC) {
    if (b.length < at + 2) return 0;
    if ((zlib.crc32(b.subarray(0, at)) & 0xffff) !== b.readUInt16LE(at)) return -1;
    at += 2;
  }
  return b.length < at ? 0 : at;
}

/**
 * Decompresses gzip, member by member (several one after the other, as `cat a.gz b.gz` makes,
 * read as one file). Each member's deflate data goes through its own raw inflater and its
 * trailer (CRC-32, length) is checked here: zlib's own gunzip runs on into the next member within
 * one call, so damage there would also lose the end of the good member before it. Zero bytes
 * after the last member are padding. Damage (a bad header, bad data, a wrong check, a cut)
 * ends the content where it broke and is noted in `gz`; a failure to read the input is thrown,
 * as are ContentTooLarge and the signal's reason.
 */
async function* gunzip(input: AsyncIterable<Buffer>, gz: Gunzipped, options: OpenOptions): AsyncGenerator<Buffer> {
  const { maxContentBytes: max, signal } = options;
  const source = input[Symbol.asyncIterator]();
  /** Compressed bytes read and not used yet; `offset` is where they start in the file. */
  let buf: Buffer = Buffer.alloc(0);
  let offset = 0;
  const read = async (): Promise<boolean> => {
    const next = await source.next();
    if (next.done) return false;
    const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    gz.fed += chunk.length;
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    return true;
  };
  const consume = (n: number) => {
    buf = buf.subarray(n);
    offset += n;
  };
  const damaged = (at: number, reason: string) => {
    gz.damage = { at, reason };
  };
  try {
    for (let member = 0; ; member++) {
      let header = gzipHeaderLength(buf);
      while (header === 0 && buf.length <= MAX_GZIP_HEADER_BYTES && (await read())) header = gzipHeaderLength(buf);
      if (member > 0 && buf.length === 0) return;
      if (header <= 0) {
        if (member > 0 && header < 0) {
          // Zero bytes after the last member are padding (tape blocks, say); anything else is damage.
          while (buf.every((b) => b === 0)) {
            buf = Buffer.alloc(0);
            if (!(await read())) return;
          }
        }
        damaged(offset, header === 0 && buf.length <= MAX_GZIP_HEADER_BYTES ? 'unexpected end of file' : 'incorrect header check');
        return;
      }
      consume(header);
      const memberStart = offset;
      const inflater = zlib.createInflateRaw();
      /** Output in flowing mode: everything zlib gave out before an error is delivered. */
      const out: Buffer[] = [];
      let failed: Error | undefined;
      let ended = false;
      let wake: (() => void) | undefined;
      inflater.on('data', (b: Buffer) => out.push(b));
      inflater.on('end', () => {
        ended = true;
        wake?.();
      });
      // A failed write never calls back: the error wakes the wait instead.
      inflater.on('error', (err) => {
        failed = err;
        wake?.();
      });
      let crc = 0;
      let size = 0;
      try {
        for (;;) {
          signal?.throwIfAborted();
          let piece: Buffer | undefined;
          if (buf.length > 0 || (await read())) {
            piece = buf.subarray(0, INFLATE_PIECE);
            const before = inflater.bytesWritten;
            await new Promise<void>((resolve) => {
              wake = resolve;
              inflater.write(piece, () => resolve());
            });
            // Past the end of the deflate data zlib takes nothing more: the rest is the trailer.
            const used = inflater.bytesWritten - before;
            consume(used);
            if (used < piece.length) ended = true;
          } else {
            // The input ended: either right after complete deflate data (the trailer is missing) or inside it.
            await new Promise<void>((resolve) => {
              wake = resolve;
              inflater.end();
            });
          }
          for (const chunk of out.splice(0)) {
            signal?.throwIfAborted();
            if (max !== undefined && gz.content + chunk.length > max) throw new ContentTooLarge(max);
            gz.content += chunk.length;
            size += chunk.length;
            crc = zlib.crc32(chunk, crc);
            yield chunk;
          }
          if (failed) {
            const e = failed as NodeJS.ErrnoException;
            // Cut short (the input ended), all of it was read; otherwise zlib knows how far it got.
            damaged(e.code === 'Z_BUF_ERROR' ? gz.fed : memberStart + inflater.bytesWritten, e.message);
            return;
          }
          if (ended || !piece) break;
        }
      } finally {
        inflater.destroy();
      }
      while (buf.length < 8 && (await read()));
      if (buf.length < 8) {
        damaged(gz.fed, 'unexpected end of file');
        return;
      }
      if (buf.readUInt32LE(0) !== crc >>> 0) {
        damaged(offset, 'incorrect data check');
        return;
      }
      if (buf.readUInt32LE(4) !== size % 2 ** 32) {
        damaged(offset, 'incorrect length check');
        return;
      }
      consume(8);
    }
  } finally {
    // Stopped early (by the reader, a cap or a cancellation): the input is not read on.
    await source.return?.();
  }
}

async function detect(input: AsyncIterable<Buffer>, cap: number, gz?: Gunzipped): Promise<RecordStream> {
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
  if (c === 0x5b /* [ */) return { format: 'json-array', items: jsonArrayItems(source, false, cap, gz) };
  if (c === 0x7b /* { */) {
    if (sawNewline || firstLine.trim().endsWith('}')) {
      try {
        const obj: unknown = JSON.parse(firstLine.trim());
        if (isResultWrapper(obj)) return { format: 'result', items: jsonArrayItems(source, true, cap, gz) };
        return { format: 'ndjson', items: ndjsonItems(source, cap, gz) };
      } catch {
        // Decided below.
      }
    }
    // A first line that is not a whole object (too long to hold, pretty-printed, or broken):
    // only an endpoint response opens with `{` alone or with its "result" key; anything else
    // is NDJSON whose first line is long or bad, reported like any other line.
    if (/^\{\s*("result"\s*:[\s\S]*)?$/.test(firstLine.trim())) return { format: 'result', items: jsonArrayItems(source, true, cap, gz) };
    return { format: 'ndjson', items: ndjsonItems(source, cap, gz) };
  }
  if (looksLikeCsvHeader(firstLine)) {
    const recoded: Recoded = { lines: 0, firstLine: 0 };
    return { format: 'csv', items: csvItems(recodeToUtf8(source, recoded), cap, gz), recoded };
  }
  throw new FormatError(
    'unknown format: expected NDJSON, a JSON array, a {"result": [...]} object or CSV with a header row (any of them may be gzip-compressed)',
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
async function* ndjsonItems(source: AsyncIterable<Buffer>, cap: number, gz?: Gunzipped): AsyncGenerator<RawItem[]> {
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
      // A long line inside one large chunk is over the limit as much as one spread over several.
      if (skipping || carryBytes + nl - pos > cap) {
        line++;
        out.push({ line, error: `line longer than ${cap} bytes` });
        skipping = false;
        carry = [];
        carryBytes = 0;
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
      if (carryBytes > cap) {
        carry = [];
        carryBytes = 0;
        skipping = true;
      } else carry.push(Buffer.from(tail));
    }
    if (out.length) yield out;
  }
  const out: RawItem[] = [];
  // Damaged gzip: every line up to the last line break is whole; the one after it is where it broke.
  const damage = damageItem(gz, line + 1);
  if (damage) out.push(damage);
  else if (skipping) {
    line++;
    out.push({ line, error: `line longer than ${cap} bytes` });
  } else if (carryBytes > 0) parseLine(Buffer.concat(carry), out);
  if (out.length) yield out;
}

function isBlank(b: Buffer): boolean {
  for (const c of b) if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  return true;
}

const BATCH = 500;

/** A parser token, or one of the packed ones boundValues() makes (its value may be TOO_LONG). */
interface JsonToken {
  name: string;
  value?: unknown;
}

/** Stands for a key, string or number longer than the per-record limit, whose text was dropped. */
const TOO_LONG = Object.freeze({ tooLong: true });

/**
 * Packs streamed keys, strings and numbers into keyValue/stringValue/numberValue tokens, as the
 * parser's own packing would, but stops gathering one past `cap` characters (each is at least a
 * byte): the parser would gather a 2 GB string whole before anything downstream could count it.
 */
function boundValues(cap: number) {
  let text = '';
  let length = 0;
  return (token: JsonToken): JsonToken | typeof none => {
    switch (token.name) {
      case 'startKey':
      case 'startString':
      case 'startNumber':
        text = '';
        length = 0;
        return none;
      case 'stringChunk':
      case 'numberChunk': {
        const chunk = token.value as string;
        length += chunk.length;
        text = length > cap ? '' : text + chunk;
        return none;
      }
      case 'endKey':
        return { name: 'keyValue', value: length > cap ? TOO_LONG : text };
      case 'endString':
        return { name: 'stringValue', value: length > cap ? TOO_LONG : text };
      case 'endNumber':
        return { name: 'numberValue', value: length > cap ? TOO_LONG : text };
      default:
        return token;
    }
  };
}

/** Bytes of a packed token's own text in compact JSON (strings counted unescaped); separators are counted apart. */
function tokenBytes(token: JsonToken): number {
  switch (token.name) {
    case 'keyValue':
      return token.value === TOO_LONG ? Infinity : Buffer.byteLength(token.value as string) + 3; // quotes and colon
    case 'stringValue':
      return token.value === TOO_LONG ? Infinity : Buffer.byteLength(token.value as string) + 2;
    case 'numberValue':
      return token.value === TOO_LONG ? Infinity : (token.value as string).length;
    case 'falseValue':
      return 5;
    case 'nullValue':
    case 'trueValue':
      return 4;
    default:
      return 1; // a bracket or brace
  }
}

type ArrayItem = { key: number; value: unknown } | { key: number; error: string };

/**
 * The elements of a top-level array, each assembled by stream-json's Assembler while its size
 * stays within `cap`; past it, what was assembled is dropped, the element's remaining tokens are
 * passed over and one error item stands for it. (streamArray cannot skip an element part-way and
 * keep the indexes of the ones after it.)
 */
function arrayElements(cap: number) {
  const asm = new Assembler();
  let depth = 0;
  let ended = false;
  let index = 0;
  let bytes = 0;
  /** Right after an opening bracket or a key: the next key or value needs no comma before it. */
  let first = true;
  let skipping = false;
  return (token: JsonToken): ArrayItem | typeof none => {
    if (ended) return none;
    if (depth === 0) {
      if (token.name !== 'startArray') throw new Error('the records are not in an array');
      depth = 1;
      return none;
    }
    const { name } = token;
    if (depth === 1) {
      if (name === 'endArray') {
        ended = true;
        return none;
      }
      bytes = 0;
      first = true;
      skipping = false;
    }
    const opens = name === 'startObject' || name === 'startArray';
    const closes = name === 'endObject' || name === 'endArray';
    if (opens) depth++;
    else if (closes) depth--;
    if (!skipping) {
      bytes += tokenBytes(token) + (first || closes ? 0 : 1);
      first = opens || name === 'keyValue';
      if (bytes > cap) {
        skipping = true;
        asm.dropToLevel(0);
      } else asm.consume(token as Parameters<Assembler['consume']>[0]);
    }
    if (depth > 1) return none;
    const key = index++;
    return skipping ? { key, error: `element longer than ${cap} bytes` } : { key, value: asm.current };
  };
}

async function* jsonArrayItems(source: AsyncIterable<Buffer>, wrapped: boolean, cap: number, gz?: Gunzipped): AsyncGenerator<RawItem[]> {
  // Notes whether `result` was there at all: `{"result": []}` is an empty export, not a wrong object.
  let sawResult = false;
  const seen = (token: JsonToken) => {
    sawResult = true;
    return token;
  };
  // The parser only streams values (its packing would gather one whole, however long): boundValues packs them.
  const head = [jsonParser({ packValues: false }), boundValues(cap)];
  const stages = wrapped ? [...head, pick({ filter: 'result' }), seen, arrayElements(cap)] : [...head, arrayElements(cap)];
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
    for await (const item of pipeline as AsyncIterable<ArrayItem>) {
      next = item.key + 1;
      out.push('error' in item ? { index: item.key, error: item.error } : { index: item.key, value: item.value });
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
  const damage = damageItem(gz);
  if (damage) out.push(damage);
  if (out.length) yield out;
}

/** A CSV row over the per-record limit, dropped by boundCsvRows(): where it started and ended. */
interface SkippedRow {
  line: number;
  endLine: number;
  /** The gzip input broke inside this row (or before it began): nothing after its start was read. */
  damaged?: boolean;
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

/**
 * Passes CSV bytes on whole rows at a time and drops any row longer than `cap` bytes, quoted line
 * breaks included, putting a SkippedRow in its place. Rows end at a line break outside quotes,
 * quotes read as csv-parse reads them (opening only at the start of a cell; `""` inside quotes is
 * one quote; closing before a comma or line end). This exists because csv-parse's own
 * max_record_size stops the parse at the first long row, even with skip_records_with_error.
 */
async function* boundCsvRows(source: AsyncIterable<Buffer>, cap: number, gz?: Gunzipped): AsyncGenerator<Buffer | SkippedRow> {
  let quoted = false;
  /** Inside quotes, a quote was just seen: the next byte tells an escaped quote from the closing one. */
  let closing = false;
  let cellStart = true;
  let line = 1;
  let rowLine = 1;
  /** The current row's bytes from earlier chunks, not yet passed on. */
  let held: Buffer[] = [];
  let heldBytes = 0;
  /** The current row is over the limit: its bytes are dropped until it ends. */
  let skipping = false;
  let offset = 0;
  for await (const chunk of source) {
    /** Bytes of this chunk before `flushed` were passed on or dropped; the current row starts at `start`. */
    let flushed = 0;
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      // A BOM leaves the first cell at its start.
      if (offset + i < 3 && b === BOM[offset + i]) continue;
      if (quoted) {
        if (!closing) {
          if (b === QUOTE) closing = true;
          else if (b === LF) line++;
          continue;
        }
        closing = false;
        if (b === QUOTE) continue;
        // csv-parse stays in quotes after a quote followed by anything else (an invalid closing quote).
        if (b !== COMMA && b !== LF && b !== CR) continue;
        quoted = false;
      }
      if (b === QUOTE) {
        if (cellStart) quoted = true;
        cellStart = false;
      } else if (b === COMMA) cellStart = true;
      else if (b === LF) {
        const size = heldBytes + i - start;
        if (skipping || size > cap) {
          // Pass on the whole rows before this one, then drop it.
          if (!skipping && start > flushed) yield chunk.subarray(flushed, start);
          yield { line: rowLine, endLine: line };
          flushed = i + 1;
          skipping = false;
        } else if (held.length) yield* held;
        held = [];
        heldBytes = 0;
        line++;
        rowLine = line;
        start = i + 1;
        cellStart = true;
      } else cellStart = false;
    }
    offset += chunk.length;
    if (skipping) continue;
    if (start > flushed) yield chunk.subarray(flushed, start);
    const tail = chunk.subarray(start);
    heldBytes += tail.length;
    if (heldBytes > cap) {
      held = [];
      heldBytes = 0;
      skipping = true;
    } else if (tail.length) held.push(tail);
  }
  // Damaged gzip: the rows passed on are whole; the one held is where the content broke.
  if (gz?.damage) yield { line: rowLine, endLine: line, damaged: true };
  else if (skipping) yield { line: rowLine, endLine: line };
  else yield* held;
}

/**
 * CSV rows by csv-parse. A row over the limit splits the input: the parser before it ends at the
 * row's start, and a new one, given the header's columns and counting lines from the row's end,
 * reads on after it.
 */
async function* csvItems(source: AsyncIterable<Buffer>, cap: number, gz?: Gunzipped): AsyncGenerator<RawItem[]> {
  const pieces = boundCsvRows(source, cap, gz)[Symbol.asyncIterator]();
  let columns: string[] | undefined;
  let lineOffset = 0;
  for (;;) {
    let skipped: SkippedRow | undefined;
    const segment = async function* () {
      for (;;) {
        const next = await pieces.next();
        if (next.done) return;
        if (!Buffer.isBuffer(next.value)) {
          skipped = next.value;
          return;
        }
        yield next.value;
      }
    };
    const header = columns ?? ((names: string[]) => (columns = names));
    for await (const items of csvSegment(segment(), header, lineOffset)) yield items;
    if (!skipped) return;
    if (skipped.damaged) {
      yield [damageItem(gz, skipped.line)!];
      return;
    }
    if (!columns) throw new FormatError(`the CSV header row is longer than ${cap} bytes`);
    yield [{ line: skipped.line, error: `row longer than ${cap} bytes` }];
    lineOffset = skipped.endLine;
  }
}

/** One csv-parse run; `header` takes the column names from the first row, or gives them. */
async function* csvSegment(source: AsyncIterable<Buffer>, header: string[] | ((names: string[]) => string[]), lineOffset: number): AsyncGenerator<RawItem[]> {
  const skipped: RawItem[] = [];
  const parser = csvParse({
    bom: true,
    columns: header,
    info: true,
    skip_empty_lines: true,
    relax_quotes: false,
    skip_records_with_error: true,
    on_skip: (err) => {
      const line = Number(err?.['lines'] ?? 0);
      // csv-parse counts lines from where this run started; the file's lines are further on.
      const message = err?.message.replace(/\bline (\d+)/g, (_, n: string) => `line ${Number(n) + lineOffset}`);
      skipped.push({ line: line ? line + lineOffset : undefined, error: `invalid CSV: ${message ?? 'unreadable row'}` });
      return undefined;
    },
  });
  // pipe() does not forward errors: without this a read error would leave the parser waiting forever.
  const input = Readable.from(source);
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let out: RawItem[] = [];
  for await (const row of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    const line = row.info.lines + lineOffset;
    // The parser runs ahead of this loop: report only the skipped rows above this one, in line order.
    while (skipped.length && (skipped[0]?.line ?? 0) < line) out.push(skipped.shift()!);
    out.push({ line, value: row.record, fromCsv: true });
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
