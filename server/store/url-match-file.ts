/**
 * The URL pattern matches kept across restarts (`urls.log.matches`, derived data): for each of the
 * patterns usage.api-counts was asked for last, which URL ids 1…N of urls.log it matches, as a
 * bitmap. A restart reads this small file instead of matching every distinct URL again (about a
 * fifth of the edge records have a URL of their own: 2M at 10M records).
 *
 * Each pattern's section names the part of urls.log it was made from: N texts ending at byte B,
 * and the CRC-32 of the 64 KiB before B (`TextDictionary.tailCrc`); the file ends with the CRC-32
 * of all it holds. A section is used only when the file is whole and urls.log's committed part
 * still ends its first N texts at B with those bytes; otherwise (damaged, cut back by a restore,
 * another folder's, a source deleted and imported again) it is dropped, the pattern is matched
 * again and the file is written anew. Only committed texts are covered: a rolled-back import never
 * reaches it. Written through a temp file and a rename, never fsynced: a crash may lose or cut
 * it, and then it fails its checks and is rebuilt.
 *
 * Layout (little-endian): magic, format, section count; per section the pattern's UTF-8 length and
 * bytes, N and B (f64), the tail CRC, the bitmap's length and the bitmap (bit i of byte i >> 3 set
 * when id i matches, ids 1…N); last, the CRC-32 of everything before it.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { TAIL_BYTES } from './text-dictionary.ts';

const MAGIC = 0x4d55454c; // "LEUM"
const FORMAT = 1;

/** What a pattern matches among the first `count` URL ids, which end at byte `bytes` of urls.log. */
export interface PersistedMatches {
  pattern: string;
  count: number;
  bytes: number;
  /** Bit `id & 7` of byte `id >> 3` set when URL `id` matches (bits past `count` are ignored). */
  bits: Uint8Array;
}

/** What the file is checked against: urls.log's committed part (the URL TextDictionary is one). */
export interface UrlsLog {
  readonly committedState: { bytes: number; count: number };
  /** CRC-32 of the TAIL_BYTES of the committed part ending at `end`; null past it. */
  tailCrc(end: number): number | null;
}

/**
 * The sections of the file that still describe urls.log, in the file's order; none when the file
 * is missing or fails a check. Reads the file and 64 KiB of urls.log per distinct end.
 */
export function readUrlMatches(file: string, urls: UrlsLog): PersistedMatches[] {
  return readSections(file, urls)?.usable ?? [];
}

/** What is wrong with the file for `npm run check`: null when it is missing or every section is usable. */
export function checkUrlMatches(file: string, urls: UrlsLog): string | null {
  if (!fs.existsSync(file)) return null;
  const r = readSections(file, urls);
  if (!r) return 'not whole or not of this format: matched again and written anew when next asked';
  const stale = r.sections - r.usable.length;
  return stale ? `${stale} of its ${r.sections} patterns were made from texts urls.log no longer holds: matched again when next asked` : null;
}

/** A read-only view of urls.log for `npm run check` (no cut of uncommitted bytes, unlike the dictionary). */
export function urlsLogAt(file: string, committed: { bytes: number; count: number }): UrlsLog {
  return {
    committedState: committed,
    tailCrc(end) {
      if (end > committed.bytes) return null;
      const start = Math.max(0, end - TAIL_BYTES);
      const bytes = Buffer.alloc(end - start);
      const fd = fs.openSync(file, 'r');
      try {
        if (fs.readSync(fd, bytes, 0, bytes.length, start) !== bytes.length) return null;
      } finally {
        fs.closeSync(fd);
      }
      return zlib.crc32(bytes);
    },
  };
}

function readSections(file: string, urls: UrlsLog): { sections: number; usable: PersistedMatches[] } | null {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return null;
  }
  if (buf.length < 16 || buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== FORMAT) return null;
  if (zlib.crc32(buf.subarray(0, buf.length - 4)) !== buf.readUInt32LE(buf.length - 4)) return null;
  const committed = urls.committedState;
  const tails = new Map<number, number | null>();
  const out: PersistedMatches[] = [];
  const sections = buf.readUInt32LE(8);
  try {
    let at = 12;
    for (let n = sections; n > 0; n--) {
      const len = buf.readUInt32LE(at);
      const pattern = buf.toString('utf8', at + 4, at + 4 + len);
      at += 4 + len;
      const count = buf.readDoubleLE(at);
      const bytes = buf.readDoubleLE(at + 8);
      const crc = buf.readUInt32LE(at + 16);
      const bitmapLen = buf.readUInt32LE(at + 20);
      const bitmap = buf.subarray(at + 24, at + 24 + bitmapLen);
      at += 24 + bitmapLen;
      // The committed part's end is known; an earlier end is trusted by its bytes alone.
      const fits = count <= committed.count && bytes <= committed.bytes && (count === committed.count) === (bytes === committed.bytes) && bitmapLen === (count >> 3) + 1;
      if (!fits) continue;
      if (!tails.has(bytes)) tails.set(bytes, tailCrcOrNull(urls, bytes));
      if (tails.get(bytes) !== crc) continue;
      // No id 0, none past `count`: written by writeUrlMatches, or not used.
      if ((bitmap[0]! & 1) !== 0 || (bitmap[bitmapLen - 1]! & ~((2 << (count & 7)) - 1) & 0xff) !== 0) continue;
      out.push({ pattern, count, bytes, bits: new Uint8Array(bitmap) });
    }
    if (at !== buf.length - 4) return null;
  } catch {
    // A length that runs past the end (the CRC passed: not this format after all).
    return null;
  }
  return { sections, usable: out };
}

/** The tail CRC, or null when urls.log cannot give those bytes (damaged: named by the requests that read it). */
function tailCrcOrNull(urls: UrlsLog, bytes: number): number | null {
  try {
    return urls.tailCrc(bytes);
  } catch {
    return null;
  }
}

/** Replaces the file with these sections (each covering committed texts only). */
export function writeUrlMatches(file: string, urls: UrlsLog, sections: readonly PersistedMatches[]): void {
  const parts: Buffer[] = [];
  const head = Buffer.alloc(12);
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt32LE(FORMAT, 4);
  let written = 0;
  parts.push(head);
  const tails = new Map<number, number | null>();
  for (const s of sections) {
    if (!tails.has(s.bytes)) tails.set(s.bytes, urls.tailCrc(s.bytes));
    const crc = tails.get(s.bytes);
    if (crc === null || crc === undefined) continue;
    const pattern = Buffer.from(s.pattern, 'utf8');
    const bitmap = Buffer.alloc((s.count >> 3) + 1);
    bitmap.set(s.bits.subarray(0, bitmap.length));
    bitmap[0] = bitmap[0]! & ~1;
    bitmap[bitmap.length - 1] = bitmap[bitmap.length - 1]! & ((2 << (s.count & 7)) - 1);
    const fixed = Buffer.alloc(24);
    fixed.writeDoubleLE(s.count, 0);
    fixed.writeDoubleLE(s.bytes, 8);
    fixed.writeUInt32LE(crc, 16);
    fixed.writeUInt32LE(bitmap.length, 20);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(pattern.length, 0);
    parts.push(len, pattern, fixed, bitmap);
    written++;
  }
  head.writeUInt32LE(written, 8);
  const body = Buffer.concat(parts);
  const crc = Buffer.alloc(4);
  crc.writeUInt32LE(zlib.crc32(body), 0);
  const tmp = `${file}.tmp`;
  try {
    fs.writeFileSync(tmp, Buffer.concat([body, crc]), { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
