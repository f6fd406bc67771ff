/**
 * String -> id for a catalog dictionary (projects, function ids). While the table is small
 * enough the whole mapping is held in memory, so a miss means a new string and costs one
 * insert, no lookup; past `maxCached` entries it falls back to a bounded cache in front of the
 * table's unique index.
 */
import type { Db } from './db.ts';

export class Dictionary {
  private cache = new Map<string, number>();
  private loaded = false;
  private complete = false;
  private nextId = 1;
  constructor(
    private db: () => Db,
    private table: string,
    private column: string,
    private maxCached: number,
  ) {}

  /** The id of a string, adding it; runs inside the catalog transaction. */
  idOf(value: string): number {
    if (!this.loaded) this.reload();
    const hit = this.cache.get(value);
    if (hit !== undefined) return hit;
    const row = this.complete ? undefined : this.db().query<{ id: number }>(`SELECT id FROM ${this.table} WHERE ${this.column} = ?`, [value])[0];
    let id: number;
    if (row) id = row.id;
    else {
      id = this.nextId++;
      this.db().run(`INSERT INTO ${this.table} (id, ${this.column}) VALUES (?, ?)`, [id, value]);
    }
    if (this.cache.size >= this.maxCached) {
      this.cache.clear();
      this.complete = false;
    }
    this.cache.set(value, id);
    return id;
  }

  /** The id of a string if known, without adding it. */
  find(value: string): number | undefined {
    if (!this.loaded) this.reload();
    const hit = this.cache.get(value);
    if (hit !== undefined || this.complete) return hit;
    return this.db().query<{ id: number }>(`SELECT id FROM ${this.table} WHERE ${this.column} = ?`, [value])[0]?.id;
  }

  /** Forgets the cache; the next use reloads from the table. */
  reset(): void {
    this.loaded = false;
    this.cache.clear();
  }

  private reload(): void {
    this.loaded = true;
    this.cache.clear();
    const count = this.db().rows(`SELECT count(*) FROM ${this.table}`)[0]?.[0] as number;
    this.complete = count < this.maxCached;
    if (this.complete) for (const [id, v] of this.db().rows(`SELECT id, ${this.column} FROM ${this.table}`)) this.cache.set(v as string, id as number);
    this.nextId = ((this.db().rows(`SELECT max(id) FROM ${this.table}`)[0]?.[0] as number | null) ?? 0) + 1;
  }
}
