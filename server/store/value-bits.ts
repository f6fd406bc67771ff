/**
 * A field index's value bits (field-columns.ts): per record block of a partition, a Bloom filter
 * of "path, and the first VALUE_CHARS characters of the value's text" for every value its
 * records hold, the text as conditions compare it (fieldText: numbers and booleans as their
 * text, arrays and objects as JSON), marked when it ends within those characters. A condition
 * that a record passes only by holding one value (`path:v`, `path:v*`) then rules out the blocks
 * without its gram, capped paths included (rays, request ids), which the index cannot answer by
 * ids. About 950 distinct grams a block of edge records: three bits each in 2 KiB make a false
 * positive about 0.4%.
 *
 * Built while the field index reads the records (each record is parsed there anyway), not at
 * import: a block the bits do not list (a partition without its field index yet) may hold anything.
 */
/** Characters of a value a gram holds. */
export const VALUE_CHARS = 4;
export const VALUE_BYTES = 2048;
const VALUE_BITS = VALUE_BYTES * 8;
const WORDS = VALUE_BYTES / 4;
const PROBES = 3;
const FNV_START = 0x811c9dc5;
const fnv = (h: number, unit: number) => Math.imul(h ^ unit, 0x01000193);
/** After a path's characters, and after a text that ends within VALUE_CHARS: outside a UTF-16 unit's range. */
const PATH_END = 0x10000;
const SHORT = 0x10001;

function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** The hash a path's grams start from. */
export function pathHash(path: string): number {
  let h = FNV_START;
  for (let i = 0; i < path.length; i++) h = fnv(h, path.charCodeAt(i));
  return fnv(h, PATH_END);
}

/** Calls `set` with each bit (of VALUE_BITS) of the gram of `text` at the path whose hash is `path`. */
function eachBit(path: number, text: string, set: (bit: number) => void): void {
  let h = path;
  const n = Math.min(text.length, VALUE_CHARS);
  for (let i = 0; i < n; i++) h = fnv(h, text.charCodeAt(i));
  if (text.length < VALUE_CHARS) h = fnv(h, SHORT);
  let x = mix(h);
  for (let k = 0; k < PROBES; k++) {
    set(x & (VALUE_BITS - 1));
    x = mix((x + 0x9e3779b9) | 0);
  }
}

/**
 * The bits a block holding a record whose value at `path` equals `value` (or starts with it:
 * `prefix`) has, or null when the bits cannot tell: a prefix under VALUE_CHARS characters, or an
 * object's JSON (`{`: a path met only as an object before it was met as a value has no grams).
 */
export function valueNeed(path: string, value: string, prefix: boolean): Int32Array | null {
  if ((prefix && value.length < VALUE_CHARS) || value.startsWith('{')) return null;
  const out: number[] = [];
  eachBit(pathHash(path), value, (bit) => out.push(bit));
  return Int32Array.from(new Set(out));
}

/** The value bits of a partition's blocks, as built or read. */
export class ValueBits {
  constructor(
    /** Each block's offset in the record file, ascending. */
    readonly blocks: Float64Array,
    /** WORDS words of bits per block, in the same order. */
    readonly bits: Int32Array,
  ) {}

  /** The blocks (offsets) whose bits hold every one of `needs` (valueNeed's). */
  blocksHolding(needs: readonly Int32Array[]): Set<number> {
    const out = new Set<number>();
    for (let k = 0, w = 0; k < this.blocks.length; k++, w += WORDS) {
      if (needs.every((need) => need.every((bit) => (this.bits[w + (bit >>> 5)]! & (1 << (bit & 31))) !== 0))) out.add(this.blocks[k]!);
    }
    return out;
  }

  get byteLength(): number {
    return this.blocks.byteLength + this.bits.byteLength;
  }

  /**
   * The part's bytes: offsets, then bits. Not deflated: bits a sixth set pack to about 70%, and
   * inflating a week's parts at 10M took 0.8 s of a search that reads them all.
   */
  encode(): Buffer {
    return Buffer.concat([Buffer.from(this.blocks.buffer, this.blocks.byteOffset, this.blocks.byteLength), Buffer.from(this.bits.buffer, this.bits.byteOffset, this.bits.byteLength)]);
  }

  /** Reads a part of `count` blocks (throws when it is not one). */
  static decode(part: Buffer, count: number): ValueBits {
    if (part.length !== count * (8 + VALUE_BYTES)) throw new Error('value bits of another block count');
    const own = new Uint8Array(part).buffer;
    const blocks = new Float64Array(own, 0, count);
    for (let k = 1; k < count; k++) if (!(blocks[k]! > blocks[k - 1]!)) throw new Error('value bits out of block order');
    return new ValueBits(blocks, new Int32Array(own, count * 8, count * WORDS));
  }
}

/** Builds a partition's value bits block by block, in ascending block order. */
export class ValueBitsBuilder {
  private readonly blocks: number[] = [];
  private bits = new Int32Array(WORDS * 16);
  private base = -WORDS;
  private readonly set = (bit: number) => {
    this.bits[this.base + (bit >>> 5)]! |= 1 << (bit & 31);
  };

  /** Starts the block at `blk`: the grams added next are its own. */
  startBlock(blk: number): void {
    this.blocks.push(blk);
    this.base += WORDS;
    if (this.base + WORDS > this.bits.length) {
      const more = new Int32Array(this.bits.length * 2);
      more.set(this.bits);
      this.bits = more;
    }
  }

  /** Adds the gram of a value's text at the path whose hash is `path` (pathHash) to the current block. */
  add(path: number, text: string): void {
    eachBit(path, text, this.set);
  }

  finish(): ValueBits {
    return new ValueBits(Float64Array.from(this.blocks), this.bits.slice(0, this.blocks.length * WORDS));
  }
}
