/**
 * Some hot columns of a partition's rows, kept as arrays for the endpoints that read the newest
 * records again at every request: usage.api-counts' partial hours and invocation-stats' second
 * buckets (and one function's minute buckets). Stepping sql.js row by row costs about half a
 * microsecond a value; these read the rows once, then at each request only the rows added since
 * (by rid), and scan arrays. The partition's database need not stay loaded in between.
 */
import type { LogStore } from '../store/log-store.ts';
import type { Partition } from '../store/partition.ts';
import { MICROS } from '../time.ts';

/**
 * One partition's columns, in row order, each a Float64Array (SQL NULL is NaN: none of these
 * columns holds NaN, which SQLite stores as NULL anyway).
 */
export class RowColumns {
  /** The arrays, in the order of the names the cache was made with; only `length` are valid. */
  cols: Float64Array[];
  length = 0;
  private lastRid = 0;
  private epoch = -1;
  /**
   * Row indexes by the minute of their first column (a timestamp, µs): a window of a few minutes
   * visits only its minutes' rows, not the hour's (146k rows an hour at 10M function edge
   * records, 1.5 ms to scan). Rows come in any order (exports newest first, or shuffled).
   */
  private readonly minutes = new Map<number, number[]>();

  constructor(
    private readonly table: string,
    private readonly names: readonly string[],
  ) {
    this.cols = names.map(() => new Float64Array(0));
  }

  /**
   * Reads the rows added since the last call. A rollback, a reopen's replaced catalog or a
   * deleted source bumps the store's epoch (row ids and dictionary ids may be given again): the
   * rows are then read again from the first.
   */
  sync(store: LogStore, p: Partition): this {
    if (this.epoch !== store.urlEpoch) {
      this.length = 0;
      this.lastRid = 0;
      this.minutes.clear();
      this.epoch = store.urlEpoch;
    }
    if (this.length === p.row.rows) return this;
    const fresh = store.use(p).rows(`SELECT rid, ${this.names.join(', ')} FROM ${this.table} WHERE rid > ? ORDER BY rid`, [this.lastRid]);
    if (this.length + fresh.length > this.cols[0]!.length) {
      const cap = Math.max(this.length + fresh.length, this.cols[0]!.length * 2);
      this.cols = this.cols.map((old) => {
        const next = new Float64Array(cap);
        next.set(old.subarray(0, this.length));
        return next;
      });
    }
    const { cols } = this;
    for (const row of fresh) {
      for (let c = 0; c < cols.length; c++) {
        const v = row[c + 1];
        cols[c]![this.length] = typeof v === 'number' ? v : NaN;
      }
      const minute = Math.floor(cols[0]![this.length]! / MICROS.minute);
      let list = this.minutes.get(minute);
      if (!list) this.minutes.set(minute, (list = []));
      list.push(this.length);
      this.length++;
      this.lastRid = row[0] as number;
    }
    return this;
  }

  /**
   * The indexes of the rows whose timestamp (first column) is in a minute that [from, to)
   * overlaps, one list per minute: the caller still checks each row's timestamp.
   */
  *rowsOfMinutes(from: number, to: number): Generator<readonly number[]> {
    for (let m = Math.floor(from / MICROS.minute), last = Math.floor((to - 1) / MICROS.minute); m <= last; m++) {
      const list = this.minutes.get(m);
      if (list) yield list;
    }
  }
}

/**
 * RowColumns of one table for the partitions asked last, at most `max` (the least recently
 * asked dropped first): the endpoints read the newest hour or two, and a store that syncs for
 * days adds an hour partition every hour, whose arrays nobody needs once it is old.
 */
export class RowColumnsCache {
  private readonly byPartition = new Map<Partition, RowColumns>();

  constructor(
    private readonly table: string,
    private readonly names: readonly string[],
    private readonly max = 8,
  ) {}

  /** The partition's columns, up to date. */
  of(store: LogStore, p: Partition): RowColumns {
    let c = this.byPartition.get(p);
    if (c) this.byPartition.delete(p);
    else c = new RowColumns(this.table, this.names);
    this.byPartition.set(p, c);
    if (this.byPartition.size > this.max) this.byPartition.delete(this.byPartition.keys().next().value!);
    return c.sync(store, p);
  }

  /** How many partitions' columns are held. */
  get size(): number {
    return this.byPartition.size;
  }

  /** Bytes of the arrays held (a gauge of the activity log). */
  heldBytes(): number {
    let total = 0;
    for (const c of this.byPartition.values()) for (const a of c.cols) total += a.byteLength;
    return total;
  }
}
