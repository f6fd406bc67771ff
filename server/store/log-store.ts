/**
 * The log store: sql.js hot tables + segment files in a data folder, saved atomically.
 * Imports write through an ImportWriter (batches inside transactions); endpoints read
 * through `db` and `readRecord`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SOURCES, type SourceInfo, type SourceName, sourceInfo } from '../sources.ts';
import { openDb, type Db } from './db.ts';
import { hotTable, idTable, migrate } from './schema.ts';
import { Segment } from './segments.ts';
import { FunctionRollupBatch, rebuildFunctionRollup, registerSketchFunctions } from './rollups.ts';

export const STORE_FILE = 'store.sqlite';
const NEWLINE = Buffer.from('\n');

/** One record ready to store: hot fields extracted, the full record serialized. */
export interface StoredRecord {
  id: string;
  ts: number;
  project: string;
  /** The full record as one JSON text (no newline), as it came: NDJSON bytes or serialized. */
  raw: Buffer | string;
  url?: string;
  families?: number;
  status?: number | null;
  functionId?: string | null;
  exec?: number | null;
}

export interface BatchResult {
  imported: number;
  duplicates: number;
}

export interface SourceSummary {
  source: SourceName;
  alias: string;
  count: number;
  /** Microseconds; null when the source is empty. */
  minTimestamp: number | null;
  maxTimestamp: number | null;
  projects: Array<{ ref: string; count: number }>;
  functionIds: Array<{ functionId: string; project: string; count: number }>;
}

/** Runs async work one piece at a time, in call order. */
class Queue {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/**
 * String -> id for a dictionary table. While the table is small enough, the whole mapping is
 * held in memory, so a miss means a new string and costs one insert, no lookup; past
 * `maxCached` entries it falls back to a bounded cache in front of the table's unique index.
 */
class Dictionary {
  private cache = new Map<string, number>();
  /** Loaded on first use: opening a store to read it should not pay for the import caches. */
  private loaded = false;
  private complete = false;
  private nextId = 1;
  constructor(
    private db: Db,
    private table: string,
    private column: string,
    private maxCached: number,
  ) {}

  /** The id of a string, adding it; must run inside the import transaction. */
  idOf(value: string): number {
    if (!this.loaded) this.reset();
    const hit = this.cache.get(value);
    if (hit !== undefined) return hit;
    const row = this.complete
      ? undefined
      : this.db.query<{ id: number }>(`SELECT id FROM ${this.table} WHERE ${this.column} = ?`, [value])[0];
    let id: number;
    if (row) id = row.id;
    else {
      id = this.nextId++;
      this.db.run(`INSERT INTO ${this.table} (id, ${this.column}) VALUES (?, ?)`, [id, value]);
    }
    if (this.cache.size >= this.maxCached) {
      // Past the bound, memory stays flat and lookups go to the table.
      this.cache.clear();
      this.complete = false;
    }
    this.cache.set(value, id);
    return id;
  }

  /** Reloads from the table (at open, and after a rollback may have removed rows). */
  reset(): void {
    this.loaded = true;
    this.cache.clear();
    const count = this.db.rows(`SELECT count(*) FROM ${this.table}`)[0]?.[0] as number;
    this.complete = count < this.maxCached;
    if (this.complete) for (const [id, v] of this.db.rows(`SELECT id, ${this.column} FROM ${this.table}`)) this.cache.set(v as string, id as number);
    this.nextId = ((this.db.rows(`SELECT max(id) FROM ${this.table}`)[0]?.[0] as number | null) ?? 0) + 1;
  }
}

export class LogStore {
  private readonly segments = new Map<SourceName, Segment>();
  private readonly writes = new Queue();
  private readonly saves = new Queue();
  private readonly listeners = new Set<() => void>();
  private readonly projects: Dictionary;
  private readonly urls: Dictionary;
  private readonly functions: Dictionary;
  /** Bumps whenever stored data changes; caches key on it. */
  dataVersion = 0;
  /** Bumps when dictionary ids may have been reused (a rolled-back import). */
  urlEpoch = 0;

  private constructor(
    readonly dataDir: string,
    readonly db: Db,
  ) {
    this.projects = new Dictionary(db, 'projects', 'ref', 10_000);
    this.urls = new Dictionary(db, 'urls', 'url', 1_000_000);
    this.functions = new Dictionary(db, 'functions', 'function_id', 10_000);
  }

  /** Opens (or creates) the store in a data folder, repairing what a crash could leave. */
  static async open(dataDir: string): Promise<LogStore> {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = path.join(dataDir, STORE_FILE);
    fs.rmSync(`${file}.tmp`, { force: true });
    const image = fs.existsSync(file) ? new Uint8Array(fs.readFileSync(file)) : undefined;
    const db = await openDb(image);
    migrate(db);
    registerSketchFunctions(db);
    const store = new LogStore(dataDir, db);
    for (const s of SOURCES) {
      const seg = new Segment(path.join(dataDir, 'records', `${s.alias}.ndjson`));
      // Each record is followed by its newline, which `len` does not count.
      const end = db.query<{ e: number | null }>(`SELECT max(off + len + 1) AS e FROM ${hotTable(s)}`)[0]?.e ?? 0;
      if (seg.size < end) {
        throw new Error(`records/${s.alias}.ndjson holds ${seg.size} bytes but the store points to byte ${end}`);
      }
      // Bytes past the last committed record come from an import that never finished.
      if (seg.size > end) seg.truncate(end);
      store.segments.set(s.name, seg);
    }
    if (!image) await store.save();
    return store;
  }

  /** Called after every change of stored data. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.dataVersion++;
    for (const l of this.listeners) l();
  }

  private segment(source: SourceName): Segment {
    const seg = this.segments.get(source);
    if (!seg) throw new Error(`no segment for ${source}`);
    return seg;
  }

  /**
   * Runs one import exclusively (imports and deletes never interleave), handing it a writer.
   * If `work` throws, every row it added is removed again and the error is rethrown.
   */
  withWriter<T>(source: SourceName, work: (writer: ImportWriter) => Promise<T>): Promise<T> {
    return this.writes.run(async () => {
      const info = sourceInfo(source);
      const seg = this.segment(source);
      const startRid = this.db.query<{ m: number | null }>(`SELECT max(rid) AS m FROM ${hotTable(info)}`)[0]?.m ?? 0;
      const startSize = seg.size;
      const writer = new ImportWriter(this, info, seg, startRid + 1);
      try {
        return await work(writer);
      } catch (err) {
        this.rollbackTo(info, startRid);
        // A save may have run meanwhile (shutdown) and put rows of this import on disk: the
        // segment may be cut only once a saved image no longer points past the cut, or a crash
        // in between would leave a store that cannot be opened. If that save fails (disk full),
        // the bytes stay, unreferenced, and the import's own error is the one to report.
        try {
          await this.save();
          seg.truncate(startSize);
        } catch {
          // Reported through `err`.
        }
        throw err;
      }
    });
  }

  private rollbackTo(info: SourceInfo, startRid: number): void {
    this.db.transaction(() => {
      this.db.run(`DELETE FROM ${hotTable(info)} WHERE rid > @r`, { r: startRid });
      this.db.run(`DELETE FROM ${idTable(info)} WHERE rid > @r`, { r: startRid });
      this.rebuildSummary(info);
      if (info.hot === 'function_edge') rebuildFunctionRollup(this.db);
    });
    this.urls.reset();
    this.urlEpoch++;
    this.projects.reset();
    this.functions.reset();
    this.changed();
  }

  private rebuildSummary(info: SourceInfo): void {
    const hasFunction = info.hot === 'function_edge' || info.hot === 'function_event';
    this.db.run('DELETE FROM source_summary WHERE source = @s', { s: info.code });
    this.db.run(
      `INSERT INTO source_summary (source, project, function, count, min_ts, max_ts)
       SELECT @s, project, ${hasFunction ? 'coalesce(function, 0)' : '0'}, count(*), min(ts), max(ts)
       FROM ${hotTable(info)} GROUP BY 2, 3`,
      { s: info.code },
    );
  }

  /** @internal used by ImportWriter */
  insertBatch(info: SourceInfo, seg: Segment, records: StoredRecord[], nextRid: number): BatchResult & { nextRid: number } {
    const table = hotTable(info);
    const ids = idTable(info);
    let rid = nextRid;
    let duplicates = 0;
    const chunks: Buffer[] = [];
    let pending = 0;
    const summary = new Map<string, { project: number; fn: number; count: number; min: number; max: number }>();
    const sizeBefore = seg.size;
    const rollup = info.hot === 'function_edge' ? new FunctionRollupBatch() : undefined;
    const result = this.inBatchTransaction(() => {
      for (const r of records) {
        // The id row goes first: when it already exists the record is a duplicate.
        if (this.db.run(`INSERT OR IGNORE INTO ${ids} (id, rid) VALUES (?, ?)`, [r.id, rid]) === 0) {
          duplicates++;
          continue;
        }
        const bytes = typeof r.raw === 'string' ? Buffer.from(r.raw, 'utf8') : r.raw;
        const off = seg.size + pending;
        const len = bytes.length;
        chunks.push(bytes, NEWLINE);
        pending += len + 1;
        const project = this.projects.idOf(r.project);
        const fn = r.functionId ? this.functions.idOf(r.functionId) : null;
        // Positional binding: sql.js resolves named parameters by name on every bind.
        switch (info.hot) {
          case 'edge':
            this.db.run(`INSERT INTO ${table} (rid, project, ts, off, len, url, families, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
              rid, project, r.ts, off, len, this.urls.idOf(r.url ?? ''), r.families ?? 0, r.status ?? null,
            ]);
            break;
          case 'function_edge':
            this.db.run(`INSERT INTO ${table} (rid, project, ts, off, len, function, exec, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
              rid, project, r.ts, off, len, fn, r.exec ?? null, r.status ?? null,
            ]);
            rollup?.add(project, fn, r.ts, r.exec, r.status);
            break;
          case 'function_event':
            this.db.run(`INSERT INTO ${table} (rid, project, ts, off, len, function) VALUES (?, ?, ?, ?, ?, ?)`, [rid, project, r.ts, off, len, fn]);
            break;
          default:
            this.db.run(`INSERT INTO ${table} (rid, project, ts, off, len) VALUES (?, ?, ?, ?, ?)`, [rid, project, r.ts, off, len]);
        }
        const key = `${project}:${fn ?? 0}`;
        const s = summary.get(key);
        if (s) {
          s.count++;
          if (r.ts < s.min) s.min = r.ts;
          if (r.ts > s.max) s.max = r.ts;
        } else summary.set(key, { project, fn: fn ?? 0, count: 1, min: r.ts, max: r.ts });
        rid++;
      }
      for (const s of summary.values()) {
        this.db.run(
          `INSERT INTO source_summary (source, project, function, count, min_ts, max_ts) VALUES (@src, @p, @f, @c, @mn, @mx)
           ON CONFLICT (source, project, function) DO UPDATE SET count = count + excluded.count,
             min_ts = min(min_ts, excluded.min_ts), max_ts = max(max_ts, excluded.max_ts)`,
          { src: info.code, p: s.project, f: s.fn, c: s.count, mn: s.min, mx: s.max },
        );
      }
      rollup?.flush(this.db);
      // Records reach their segment before the rows that point at them commit.
      if (pending > 0) {
        try {
          seg.append(Buffer.concat(chunks, pending));
        } catch (err) {
          seg.truncate(sizeBefore);
          throw err;
        }
      }
      return { imported: rid - nextRid, duplicates, nextRid: rid };
    });
    if (result.imported > 0) this.changed();
    return result;
  }

  private inBatchTransaction<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn);
    } catch (err) {
      // Rolled-back dictionary rows may sit in the caches; forget them.
      this.urls.reset();
      this.urlEpoch++;
      this.projects.reset();
      this.functions.reset();
      throw err;
    }
  }

  /** Changes whenever a source's record offsets may have been reused (caches key on it). */
  recordGeneration(source: SourceName): number {
    return this.segment(source).generation;
  }

  /** Reads one full record back from its segment. */
  readRecord(source: SourceName, off: number, len: number): string {
    return this.segment(source).read(off, len);
  }

  /**
   * Writes the whole store atomically: segments are synced first, then the database image
   * goes to a temp file that is synced and renamed over the old one. Saves never overlap.
   */
  save(): Promise<void> {
    return this.saves.run(async () => {
      const image = this.db.exportImage();
      // Every row in the image points at bytes appended before it was taken: make those durable
      // first (off the event loop; flushing a large import can take hundreds of ms).
      await Promise.all([...this.segments.values()].map((seg) => seg.sync()));
      const file = path.join(this.dataDir, STORE_FILE);
      const tmp = `${file}.tmp`;
      try {
        const handle = await fs.promises.open(tmp, 'w', 0o600);
        try {
          await handle.writeFile(image);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await fs.promises.rename(tmp, file);
      } catch (err) {
        // A partial temp file would hold on to the very space the next save needs.
        await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
        throw isDiskFull(err)
          ? Object.assign(new Error(`cannot save the store: the disk is full (${(err as NodeJS.ErrnoException).code}); the last saved store is intact`, { cause: err }), {
              code: (err as NodeJS.ErrnoException).code,
            })
          : err;
      }
      await syncDir(this.dataDir);
    });
  }

  /** Deletes every record of a source; returns how many there were. Saved before it returns. */
  deleteSource(source: SourceName): Promise<number> {
    return this.writes.run(async () => {
      const info = sourceInfo(source);
      const count = this.db.query<{ c: number }>(`SELECT count(*) AS c FROM ${hotTable(info)}`)[0]?.c ?? 0;
      this.db.transaction(() => {
        this.db.run(`DELETE FROM ${hotTable(info)}`);
        this.db.run(`DELETE FROM ${idTable(info)}`);
        this.db.run('DELETE FROM source_summary WHERE source = @s', { s: info.code });
        if (info.hot === 'function_edge') this.db.run('DELETE FROM function_edge_hours');
      });
      this.changed();
      await this.save();
      // Only once no saved row points into it may the segment be emptied.
      this.segment(source).truncate(0);
      return count;
    });
  }

  /** Counts, time span, projects and function ids per source, from the summary table. */
  summary(): SourceSummary[] {
    const rows = this.db.query<{ source: number; ref: string; function_id: string | null; count: number; min_ts: number; max_ts: number }>(
      `SELECT s.source, p.ref, f.function_id, s.count, s.min_ts, s.max_ts FROM source_summary s
       JOIN projects p ON p.id = s.project LEFT JOIN functions f ON f.id = s.function
       ORDER BY s.source, s.count DESC`,
    );
    return SOURCES.map((info) => {
      const mine = rows.filter((r) => r.source === info.code);
      const projects = new Map<string, number>();
      const functionIds: SourceSummary['functionIds'] = [];
      let count = 0;
      let min: number | null = null;
      let max: number | null = null;
      for (const r of mine) {
        count += r.count;
        projects.set(r.ref, (projects.get(r.ref) ?? 0) + r.count);
        if (r.function_id) functionIds.push({ functionId: r.function_id, project: r.ref, count: r.count });
        min = min === null ? r.min_ts : Math.min(min, r.min_ts);
        max = max === null ? r.max_ts : Math.max(max, r.max_ts);
      }
      return {
        source: info.name,
        alias: info.alias,
        count,
        minTimestamp: min,
        maxTimestamp: max,
        projects: [...projects].map(([ref, c]) => ({ ref, count: c })).sort((a, b) => b.count - a.count),
        functionIds,
      };
    });
  }

  async close(): Promise<void> {
    await this.writes.run(async () => undefined);
    await this.saves.run(async () => undefined);
    for (const seg of this.segments.values()) seg.close();
    this.db.close();
  }
}

/** True for the errors of a full disk or an exhausted quota. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

async function syncDir(dir: string): Promise<void> {
  // Directory fsync makes the rename durable; Windows cannot open directories, and needs none.
  if (process.platform === 'win32') return;
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Hands batches of one import to the store; rids continue from the last stored row. */
export class ImportWriter {
  constructor(
    private store: LogStore,
    readonly source: SourceInfo,
    private seg: Segment,
    private nextRid: number,
  ) {}

  write(records: StoredRecord[]): BatchResult {
    const r = this.store.insertBatch(this.source, this.seg, records, this.nextRid);
    this.nextRid = r.nextRid;
    return { imported: r.imported, duplicates: r.duplicates };
  }
}
