/**
 * LEB128 varints for the catalog's and the partitions' small packed blobs (API hours, quantile
 * sketches): seven bits a byte, low bits first, the high bit set on every byte but the last.
 * Whole numbers up to 2^53; `zigzag` maps signed ones onto them (0, -1, 1, -2 … → 0, 1, 2, 3 …).
 */

export class VarintWriter {
  private buf: Uint8Array;
  private at = 0;

  constructor(capacity = 64) {
    this.buf = new Uint8Array(capacity);
  }

  /** Room for n more bytes. */
  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.at + n));
    grown.set(this.buf.subarray(0, this.at));
    this.buf = grown;
  }

  /** A whole number 0 … 2^53 − 1 (8 bytes at most). */
  put(v: number): this {
    this.room(8);
    while (v >= 0x80) {
      this.buf[this.at++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.at++] = v;
    return this;
  }

  /** Raw bytes (a header). */
  bytes(b: ArrayLike<number>): this {
    this.room(b.length);
    for (let i = 0; i < b.length; i++) this.buf[this.at++] = b[i]!;
    return this;
  }

  /** The bytes written, in an array of their own length. */
  done(): Uint8Array {
    return this.buf.slice(0, this.at);
  }
}

export class VarintReader {
  constructor(
    private readonly buf: Uint8Array,
    private at = 0,
  ) {}

  /** Whether bytes are left to take. */
  more(): boolean {
    return this.at < this.buf.length;
  }

  take(): number {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = this.buf[this.at++];
      if (b === undefined) throw new Error('a packed value ends in the middle of a number');
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 0x80;
    }
  }
}

export const zigzag = (v: number): number => (v < 0 ? -2 * v - 1 : 2 * v);
export const unzigzag = (z: number): number => (z % 2 ? -(z + 1) / 2 : z / 2);
