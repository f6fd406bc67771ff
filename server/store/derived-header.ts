import fs from 'node:fs';
/**
 * The 16-byte header of a file derived from one record file (its block index, its record
 * texts): magic, format, and the record file's seed (its name), so that a file of another
 * format or put under another record file's name is not used.
 */
export const DERIVED_HEAD = 16;

/** The header of a derived file of kind `magic` and `format` for the record file whose seed is `seed`. */
export function derivedHeader(magic: number, format: number, seed: number): Buffer {
  const out = Buffer.alloc(DERIVED_HEAD);
  out.writeUInt32LE(magic, 0);
  out.writeUInt32LE(format, 4);
  out.writeUInt32LE(seed, 8);
  return out;
}

/** Whether `head` starts a derived file of this kind, format and record file. */
export function derivedHeaderOk(head: Buffer, magic: number, format: number, seed: number): boolean {
  return head.length >= DERIVED_HEAD && head.readUInt32LE(0) === magic && head.readUInt32LE(4) === format && head.readUInt32LE(8) === seed;
}

/**
 * Opens a derived file, checks its header (kind, format, record file) and gives `read` the open
 * file and its size; `otherwise` when the file cannot be opened or its header is another's.
 */
export function readDerived<T>(file: string, magic: number, format: number, seed: number, otherwise: T, read: (fd: number, size: number) => T): T {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return otherwise;
  }
  try {
    const head = Buffer.alloc(DERIVED_HEAD);
    if (fs.readSync(fd, head, 0, DERIVED_HEAD, 0) !== DERIVED_HEAD || !derivedHeaderOk(head, magic, format, seed)) return otherwise;
    return read(fd, fs.fstatSync(fd).size);
  } finally {
    fs.closeSync(fd);
  }
}

/** A derived file's entries as listed from it: how many, where each one's blocks end, and where in the file each one ends. */
export interface DerivedListing {
  readonly size: number;
  endOf(j: number): number;
  fileEndAfter(j: number): number;
}

/**
 * Makes a derived file end with its last entry within the first `size` record bytes (the record
 * file was cut there, or an entry from there on failed): later entries are cut off, and a file
 * that could not be listed (another format or record file: `listing` null) is removed. A missing
 * file stays missing.
 */
export function cutDerived(file: string, listing: DerivedListing | null, size: number): void {
  if (!listing) {
    fs.rmSync(file, { force: true });
    return;
  }
  let j = listing.size;
  while (j > 0 && listing.endOf(j - 1) > size) j--;
  const keep = listing.fileEndAfter(j - 1);
  if (fs.statSync(file).size !== keep) fs.truncateSync(file, keep);
}

/**
 * Appends entries to a derived file whose entries end at `fileEnd` (DERIVED_HEAD or less: a new
 * file, written with `header`); bytes past `fileEnd` (a torn or replaced entry) are cut first.
 * The file's new end.
 */
export function appendDerived(file: string, header: Buffer, fileEnd: number, entries: readonly Buffer[]): number {
  const bytes = Buffer.concat(entries);
  if (fileEnd <= DERIVED_HEAD) {
    fs.writeFileSync(file, Buffer.concat([header, bytes]), { mode: 0o600 });
    // The header may be longer than DERIVED_HEAD (the record texts' dictionary follows it).
    return header.length + bytes.length;
  }
  if (fs.statSync(file).size !== fileEnd) fs.truncateSync(file, fileEnd);
  fs.appendFileSync(file, bytes, { mode: 0o600 });
  return fileEnd + bytes.length;
}
