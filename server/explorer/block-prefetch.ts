/**
 * A text search's block tests, run ahead of the walk: the blocks the partition's window rows
 * live in, in the order the walk meets them, are decompressed a few at a time on the thread
 * pool (brotli is most of a search's cost, and the pool runs on every core) while the walk
 * tests the ones already done. Blocks land in the store's block cache, so reading the matching
 * records after does not decompress them again. A walk that stops early leaves at most AHEAD
 * blocks decompressed for nothing.
 */
import type { RecordBlocks } from '../store/record-blocks.ts';

/** Blocks in flight at once: enough to keep two pool threads busy, few to waste. */
const AHEAD = 4;

export class BlockPrefetch {
  /** The blocks in the order the walk meets them, and each one's place in it. */
  private readonly order: number[];
  private readonly place = new Map<number, number>();
  private next = 0;
  private readonly started = new Map<number, Promise<boolean>>();

  /**
   * @param blk the partition's block column; rows [from, to) that `pass` are walked
   * @param test whether a block (null: the one still being filled) may hold the text
   */
  constructor(
    private readonly blocks: RecordBlocks,
    blk: Float64Array,
    from: number,
    to: number,
    pass: (i: number) => boolean,
    private readonly test: (raw: Buffer | null) => boolean,
  ) {
    const seen = new Set<number>();
    for (let i = from; i < to; i++) if (pass(i)) seen.add(blk[i]!);
    this.order = [...seen];
    this.order.forEach((b, k) => this.place.set(b, k));
  }

  private start(blk: number): Promise<boolean> {
    let p = this.started.get(blk);
    if (!p) {
      p = this.blocks.rawBlockAsync(blk).then((raw) => this.test(raw));
      // Awaited when the walk gets there; one it never reaches must not fail unheard.
      p.catch(() => undefined);
      this.started.set(blk, p);
    }
    return p;
  }

  /** Whether `blk` may hold the text; keeps the next blocks in flight. */
  has(blk: number): Promise<boolean> {
    const p = this.start(blk);
    const k = this.place.get(blk) ?? -1;
    while (this.next < this.order.length && this.next <= k + AHEAD) this.start(this.order[this.next++]!);
    return p;
  }
}
