/**
 * The three columns usage.api-counts reads (timestamp, URL id, family bits) of every edge
 * request, as typed arrays in memory (13 bytes a record). Scanning them answers a 7-day count
 * over a million records in milliseconds, where any SQL scan of the same rows in sql.js takes
 * hundreds; usage.api-counts.sql stays the definition, and tests hold both to one reference.
 * Kept in step with the store: appended rows are read incrementally, anything else rebuilds.
 */
import type { LogStore } from '../store/log-store.ts';
import { formatDatetime } from '../time.ts';
import type { ResultRow } from './run.ts';

export class EdgeColumns {
  private ts = new Float64Array(1024);
  private url = new Int32Array(1024);
  private fam = new Uint8Array(1024);
  private length = 0;
  private lastRid = 0;
  private version = -1;

  constructor(private store: LogStore) {}

  private grow(min: number): void {
    let cap = this.ts.length;
    while (cap < min) cap *= 2;
    if (cap === this.ts.length) return;
    const ts = new Float64Array(cap);
    ts.set(this.ts.subarray(0, this.length));
    const url = new Int32Array(cap);
    url.set(this.url.subarray(0, this.length));
    const fam = new Uint8Array(cap);
    fam.set(this.fam.subarray(0, this.length));
    this.ts = ts;
    this.url = url;
    this.fam = fam;
  }

  /** Brings the columns up to the store's data. */
  sync(): void {
    if (this.version === this.store.dataVersion) return;
    const db = this.store.db;
    const fresh = db.rows('SELECT rid, ts, url, families FROM edge_logs WHERE rid > ? ORDER BY rid', [this.lastRid]);
    this.grow(this.length + fresh.length);
    for (const [rid, ts, url, fam] of fresh) {
      this.ts[this.length] = ts as number;
      this.url[this.length] = url as number;
      this.fam[this.length] = fam as number;
      this.length++;
      this.lastRid = rid as number;
    }
    const count = (db.rows('SELECT count(*) FROM edge_logs')[0]?.[0] as number) ?? 0;
    if (count !== this.length) {
      // Rows went away (a delete or a rolled-back import): start again.
      this.length = 0;
      this.lastRid = 0;
      this.version = -1;
      if (count > 0 || fresh.length > 0) return this.sync();
    }
    this.version = this.store.dataVersion;
  }

  /**
   * usage.api-counts over the columns: records at or after `start` whose URL id is marked in
   * `matches`, grouped by trunc(ts, unit), families counted per bit, buckets ascending.
   */
  apiCounts(matches: Uint8Array, start: number, unit: number): ResultRow[] {
    this.sync();
    const buckets = new Map<number, [number, number, number, number]>();
    const { ts, url, fam } = this;
    for (let i = 0; i < this.length; i++) {
      const t = ts[i]!;
      if (t < start) continue;
      const u = url[i]!;
      if (u >= matches.length || matches[u] === 0) continue;
      const b = t - (t % unit);
      let c = buckets.get(b);
      if (!c) buckets.set(b, (c = [0, 0, 0, 0]));
      const f = fam[i]!;
      if (f & 1) c[0]++;
      if (f & 2) c[1]++;
      if (f & 4) c[2]++;
      if (f & 8) c[3]++;
    }
    return [...buckets.keys()]
      .sort((a, b) => a - b)
      .map((b) => {
        const c = buckets.get(b)!;
        return {
          timestamp: formatDatetime(b),
          total_rest_requests: c[0],
          total_storage_requests: c[1],
          total_auth_requests: c[2],
          total_realtime_requests: c[3],
        };
      });
  }
}
