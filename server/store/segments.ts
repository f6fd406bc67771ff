/**
 * Append-only segment files holding full records, one JSON line each (so a segment is itself
 * a valid NDJSON export). The hot tables address a record by (off, len); only the rows that
 * logs.all returns are ever read back.
 */
import fs from 'node:fs';
import path from 'node:path';

export class Segment {
  private fd: number;
  /** Bytes that belong to committed or pending records; writes go here. */
  size: number;
  /** Bumps when the file is cut back: offsets past the cut may later hold other records. */
  generation = 0;

  constructor(readonly file: string) {
    // Owner-only, like the data folder: the records are the user's logs.
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.fd = fs.openSync(file, fs.existsSync(file) ? 'r+' : 'w+', 0o600);
    this.size = fs.fstatSync(this.fd).size;
  }

  /** Writes bytes at the end; the caller records the offsets it computed from `size`. */
  append(bytes: Buffer): void {
    let written = 0;
    while (written < bytes.length) {
      written += fs.writeSync(this.fd, bytes, written, bytes.length - written, this.size + written);
    }
    this.size += bytes.length;
  }

  read(off: number, len: number): string {
    const buf = Buffer.allocUnsafe(len);
    let got = 0;
    while (got < len) {
      const n = fs.readSync(this.fd, buf, got, len - got, off + got);
      if (n === 0) throw new Error(`segment ${path.basename(this.file)} ends before byte ${off + len}`);
      got += n;
    }
    return buf.toString('utf8');
  }

  /** Cuts the file back, dropping bytes no committed row points at (after a crash or abort). */
  truncate(size: number): void {
    fs.ftruncateSync(this.fd, size);
    this.size = size;
    this.generation++;
  }

  /** Flushes the file to disk on the thread pool: an fsync of a large append can take a while. */
  sync(): Promise<void> {
    return new Promise((resolve, reject) => fs.fsync(this.fd, (err) => (err ? reject(err) : resolve())));
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}
