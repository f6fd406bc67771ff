/**
 * Counts per id for walks over columns (status codes, dictionary ids, the store's path ids), in
 * an array that grows with the ids met: a Map lookup per row was most of a search's time (9M
 * rows of a common word at 10M). The ids counted are listed, so that a sparse array of many
 * ids (a week's paths) is read and emptied without a pass over all of it.
 */
export class IdCounts {
  private dense: Float64Array;
  private touched: number[] = [];

  constructor(size = 1024) {
    this.dense = new Float64Array(Math.max(1, size));
  }

  /** The counts by id (zero for ids not met). */
  get counts(): Float64Array {
    return this.dense;
  }

  private grow(id: number): Float64Array {
    const a = new Float64Array(Math.max(id + 1, this.dense.length * 2));
    a.set(this.dense);
    return (this.dense = a);
  }

  /** Adds `n` to id `id` (not negative). */
  add(id: number, n = 1): void {
    const a = id < this.dense.length ? this.dense : this.grow(id);
    if (a[id] === 0) this.touched.push(id);
    a[id]! += n;
  }

  /** Adds `sign` for each row of [from, to) that `pass`es (null: every row), by its id in `ids` (`none`: not counted). */
  addRows(ids: Int32Array, from: number, to: number, pass: ((i: number) => boolean) | null, sign: number, none: number): void {
    let a = this.dense;
    for (let i = from; i < to; i++) {
      const v = ids[i]!;
      if (v === none || (pass !== null && !pass(i))) continue;
      if (v >= a.length) a = this.grow(v);
      if (a[v] === 0) this.touched.push(v);
      a[v]! += sign;
    }
  }

  /** Each id met with its count (not zero), then empties the counts for the next use. */
  drain(each: (id: number, n: number) => void): void {
    const a = this.dense;
    for (const id of this.touched) {
      const n = a[id]!;
      a[id] = 0;
      if (n !== 0) each(id, n);
    }
    this.touched = [];
  }
}
