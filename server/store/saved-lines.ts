/**
 * A dictionary file's line offsets kept across restarts (`urls.log.lines`, `paths.log.lines`:
 * derived data). Finding where 1.6M lines of urls.log start, each checked to be one JSON string,
 * took about a second at 10M edge records, paid by the first search or URL count after a start;
 * with this file the dictionary reads its bytes once to compute their CRC-32 (a few hundred ms of
 * reading, no per-line work) and takes the offsets as saved.
 *
 * The file names what it was made from: N lines ending at byte B, and the CRC-32 of bytes 0…B of
 * the dictionary. It is used only when the dictionary still holds B bytes or more and those bytes
 * have that CRC, so a dictionary changed anywhere (damaged, cut, another one in its place) is read
 * line by line, as without it, and its damage is found as before. Written through a temp file and
 * a rename, never fsynced: a crash may lose or cut it, and then it fails its own CRC and is
 * written again.
 *
 * Layout (little-endian): magic, format, N (f64), B (f64), the CRC of bytes 0…B, the N line
 * starts (f64 each), and last the CRC-32 of everything before it.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';

const MAGIC = 0x4e4c454c; // "LELN"
const FORMAT = 1;
const HEAD = 4 + 4 + 8 + 8 + 4;

/** Line starts of a dictionary's first `count` lines, which end at byte `bytes`; `crc` is bytes 0…bytes's. */
export interface SavedLines {
  count: number;
  bytes: number;
  crc: number;
  /** starts[i] = where line i + 1 starts. */
  starts: Float64Array;
}

/** The saved offsets of `dictionaryFile`, when the file is whole; not yet checked against the dictionary's bytes. */
export function readSavedLines(dictionaryFile: string): SavedLines | null {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(linesFileOf(dictionaryFile));
  } catch {
    return null;
  }
  return parseSavedLines(buf);
}

/** readSavedLines with the file read off this thread (at a start: 13 MB at 10M edge records, read before the server listened). */
export async function readSavedLinesAsync(dictionaryFile: string): Promise<SavedLines | null> {
  let buf: Buffer;
  try {
    buf = await fs.promises.readFile(linesFileOf(dictionaryFile));
  } catch {
    return null;
  }
  return parseSavedLines(buf);
}

function parseSavedLines(buf: Buffer): SavedLines | null {
  if (buf.length < HEAD + 4 || buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== FORMAT) return null;
  const count = buf.readDoubleLE(8);
  const bytes = buf.readDoubleLE(16);
  if (!Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(bytes) || buf.length !== HEAD + 8 * count + 4) return null;
  if (zlib.crc32(buf.subarray(0, buf.length - 4)) !== buf.readUInt32LE(buf.length - 4)) return null;
  // Copied out: the buffer's offset into its pool need not be 8-aligned.
  const starts = new Float64Array(count);
  Buffer.from(starts.buffer).set(buf.subarray(HEAD, HEAD + 8 * count));
  return { count, bytes, crc: buf.readUInt32LE(24), starts };
}

/** Saves the offsets of a dictionary's first `saved.count` lines (a failure to write is let be: they are found again). */
export function writeSavedLines(dictionaryFile: string, saved: SavedLines): void {
  const file = linesFileOf(dictionaryFile);
  const buf = Buffer.allocUnsafe(HEAD + 8 * saved.count + 4);
  buf.writeUInt32LE(MAGIC, 0);
  buf.writeUInt32LE(FORMAT, 4);
  buf.writeDoubleLE(saved.count, 8);
  buf.writeDoubleLE(saved.bytes, 16);
  buf.writeUInt32LE(saved.crc, 24);
  buf.set(new Uint8Array(saved.starts.buffer, saved.starts.byteOffset, 8 * saved.count), HEAD);
  buf.writeUInt32LE(zlib.crc32(buf.subarray(0, buf.length - 4)), buf.length - 4);
  const tmp = `${file}.tmp`;
  try {
    fs.writeFileSync(tmp, buf, { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}

/** The name of a dictionary's saved line offsets. */
export const linesFileOf = (dictionaryFile: string): string => `${dictionaryFile}.lines`;

/**
 * What is wrong with a dictionary's saved offsets for `npm run check` (read only): null when there
 * are none or they describe the dictionary's first `bytes` bytes (their CRC, and a line starting
 * at each offset).
 */
export function checkSavedLines(dictionaryFile: string, bytes: number): string | null {
  if (!fs.existsSync(linesFileOf(dictionaryFile))) return null;
  const saved = readSavedLines(dictionaryFile);
  const again = 'its lines are read one by one at the next start, and it is written again';
  if (!saved) return `not whole or not of this format: ${again}`;
  if (saved.bytes > bytes) return `it covers ${saved.bytes} bytes, more than the dictionary's ${bytes}: ${again}`;
  let text: Buffer;
  try {
    const fd = fs.openSync(dictionaryFile, 'r');
    try {
      text = Buffer.alloc(saved.bytes);
      if (fs.readSync(fd, text, 0, saved.bytes, 0) !== saved.bytes) return `the dictionary ends before byte ${saved.bytes}: ${again}`;
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    return `the dictionary cannot be read (${(err as Error).message})`;
  }
  if (zlib.crc32(text) !== saved.crc) return `made from other bytes than the dictionary holds: ${again}`;
  // Each offset just after a newline (the first at 0), and as many offsets as newlines.
  let newlines = 0;
  for (let i = 0; i < text.length; i++) if (text[i] === 0x0a) newlines++;
  const misplaced = saved.starts.findIndex((at, i) => (i === 0 ? at !== 0 : text[at - 1] !== 0x0a || at <= saved.starts[i - 1]!));
  if (misplaced >= 0 || newlines !== saved.count || text[text.length - 1] !== 0x0a) return `its offsets are not where the dictionary's lines start: ${again}`;
  return null;
}

