/**
 * Batch insert: each batch of an import is routed to the partitions of its records' instants
 * (deduplicated by id there), with the catalog's per-project rows, summary and rollups updated
 * in one transaction. A day that grows past SPLIT_ROWS is rewritten as hour partitions; a day
 * whose records are dense enough is stored as hours from the start.
 */
import { spanOf } from '../activity.ts';
import type { SourceInfo } from '../sources.ts';
import { addToApiBatch, type ApiHourBatch } from './api-hours.ts';
import { putPartitionRow } from './catalog.ts';
import type { CatalogState } from './catalog-state.ts';
import type { Db, SqlValue } from './db.ts';
import { HOT_COLUMNS } from './hot-columns.ts';
import type { ImportTransaction } from './import-transaction.ts';
import { DAY_MICROS, dayStart, hourStart, hotInsertSql, idKey, type Partition, SPLIT_ROWS } from './partition.ts';
import type { PartitionMap } from './partition-map.ts';
import type { StoredRecord } from './record.ts';
import { DAY_GRAIN, FunctionRollupBatch, HOUR_GRAIN, MINUTE_GRAIN } from './rollups.ts';

export interface BatchResult {
  imported: number;
  duplicates: number;
}

/** The longest a batch spends writing settled API hours to the catalog (ms). */
const API_HOURS_BUDGET_MS = 4;
/** The longest a batch spends writing settled hour and day rollups to the catalog (ms). */
const ROLLUPS_BUDGET_MS = 2;

/** Records of one day in one batch needed to judge the day's density. */
const DENSE_SAMPLE = 200;
/**
 * A day partition still this small whose records are already dense enough to pass SPLIT_ROWS
 * over a day is split now, while that costs little: batches too small to judge a day's density
 * on their own (a parser on a busy machine sends what it has every 20 ms) would otherwise fill
 * the day and split it at SPLIT_ROWS, a pause of seconds.
 */
const YOUNG_ROWS = 2000;

function youngAndDense(p: Partition): boolean {
  const { rows, min_ts: min, max_ts: max } = p.row;
  if (rows < DENSE_SAMPLE || rows > YOUNG_ROWS || min === null || max === null) return false;
  return (rows / Math.max(max - min, 1)) * DAY_MICROS > SPLIT_ROWS / 4;
}

type PerProject = Map<number, { count: number; min: number; max: number }>;

/** Where a hot row's block offset goes in its values (rid, project, ts, blk, ...). */
const BLK = 3;

/**
 * The hot rows of one partition, inserted in row order. A row whose record went into a block
 * after one being packed (record-blocks.ts) waits, with the rows after it, until `finish` has
 * the packed blocks written and knows its block's offset: meanwhile the worker packs while this
 * thread goes on with the next records (the rest of a batch, and the next slices of one run).
 */
class HotRows {
  private waiting: Array<{ values: SqlValue[]; block: number }> = [];

  constructor(
    private readonly p: Partition,
    readonly db: Db,
    private readonly sql: string,
  ) {}

  get pending(): boolean {
    return this.waiting.length > 0;
  }

  /** Inserts the row now, or once its block's offset is known. */
  put(values: SqlValue[], block: number): void {
    if ((values[BLK] as number) >= 0 && !this.waiting.length) this.db.run(this.sql, values);
    else this.waiting.push({ values, block });
  }

  /** Writes the packed blocks and inserts the rows that waited for them (in a transaction of the caller's). */
  finish(): void {
    if (!this.waiting.length) return;
    this.p.blocks.settle();
    for (const { values, block } of this.waiting) {
      values[BLK] = this.p.blocks.offsetOf(block);
      this.db.run(this.sql, values);
    }
    this.waiting = [];
  }
}

export class BatchInserter {
  /** Hot rows waiting for their record blocks, by partition (only ever within one synchronous run of inserts: see `insert`). */
  private readonly waiting = new Map<Partition, HotRows>();

  constructor(
    private readonly catalog: CatalogState,
    private readonly map: PartitionMap,
    private readonly txn: ImportTransaction,
    /** Stored data changed. */
    private readonly changed: () => void,
  ) {
    // A partition written out (staged) mid-run has its waiting rows in its image.
    txn.beforeImage = (p) => this.settle(p);
  }

  /**
   * Stores one batch, routed to the partitions of its instants. With `settle` false, rows whose
   * record blocks are still being packed may wait until `settle`, which the caller must call
   * before anything else runs (before it yields): the worker packs meanwhile. A failure drops
   * the waiting rows (the import rolls back).
   */
  insert(info: SourceInfo, records: StoredRecord[], settle = true): BatchResult {
    let result: BatchResult;
    try {
      result = this.insertNow(info, records);
      if (settle) this.settle();
    } catch (err) {
      this.waiting.clear();
      throw err;
    }
    return result;
  }

  /**
   * Where a slice of `records` starting at `from` should end (at most `max` records, at least
   * one) so that writing it loads at most one partition from disk: records scattered over a
   * month (one or two an hour) need a partition for nearly every record, and each load took
   * 30-60 ms at 10M records, so a slice of 250 of them held requests for a third of a second.
   */
  sliceEnd(info: SourceInfo, records: readonly StoredRecord[], from: number, max: number): number {
    const end = Math.min(records.length, from + max);
    let toLoad: Partition | undefined;
    let last: Partition | undefined;
    for (let i = from; i < end; i++) {
      const ts = records[i]!.ts;
      if (last && ts >= last.start && ts < last.end) continue;
      const p = this.map.existingFor(info, ts);
      // A partition not made yet is created empty, without a read.
      if (p && !p.db && p.fileVersion > 0 && p !== toLoad) {
        if (toLoad) return i;
        toLoad = p;
      }
      last = p;
    }
    return end;
  }

  /** Writes the record blocks being packed and inserts the rows waiting for them (of one partition, or all). */
  settle(only?: Partition): void {
    try {
      for (const [p, rows] of this.waiting) {
        if (only && p !== only) continue;
        rows.db.transaction(() => rows.finish());
        this.waiting.delete(p);
      }
    } catch (err) {
      this.waiting.clear();
      throw err;
    }
  }

  /** The rows of partition `p` (whose database is `db`): those still waiting, or new. */
  private rowsOf(p: Partition, db: Db, sql: string): HotRows {
    const w = this.waiting.get(p);
    if (w) return w;
    return new HotRows(p, db, sql);
  }

  /** Keeps `rows` for `settle` when some wait. */
  private keep(p: Partition, rows: HotRows): void {
    if (rows.pending) this.waiting.set(p, rows);
  }

  private insertNow(info: SourceInfo, records: StoredRecord[]): BatchResult {
    const columns = HOT_COLUMNS[info.hot];
    const insertSql = hotInsertSql(info);
    const summary = new Map<string, { project: number; fn: number; count: number; min: number; max: number }>();
    const hours = info.hot === 'function_edge' ? new FunctionRollupBatch(HOUR_GRAIN) : undefined;
    const days = info.hot === 'function_edge' ? new FunctionRollupBatch(DAY_GRAIN) : undefined;
    const api: ApiHourBatch | undefined = info.hot === 'edge' ? new Map() : undefined;
    let imported = 0;
    let duplicates = 0;
    const catalog = this.catalog.db;
    this.txn.noteBatch();
    catalog.transaction(() => {
      this.markDenseDays(info, records);
      const groups = new Map<Partition, StoredRecord[]>();
      let last: Partition | undefined;
      for (const r of records) {
        // Records mostly come in time order: the previous record's partition usually fits.
        const p = last && r.ts >= last.start && r.ts < last.end ? last : (last = this.partitionFor(info, r.ts));
        let g = groups.get(p);
        if (!g) groups.set(p, (g = []));
        g.push(r);
      }
      // A bulk export's batch runs newest first throughout: a partition it creates is keyed so.
      const newestFirst = records.length > 1 && records[0]!.ts > records[records.length - 1]!.ts;
      for (const [p, group] of groups) {
        if (!p.db && p.fileVersion === 0) p.newestFirst = newestFirst;
        const db = this.map.use(p);
        // Per-minute rollups count all functions only: one function's minutes are read raw.
        const minutes = info.hot === 'function_edge' ? new FunctionRollupBatch(MINUTE_GRAIN, false) : undefined;
        const perProject: PerProject = new Map();
        const before = imported;
        const rows = this.rowsOf(p, db, insertSql);
        db.transaction(() => {
          for (const r of group) {
            const rid = p.row.next_rid;
            // The id row goes first: when it already exists the record is a duplicate.
            if (db.run('INSERT OR IGNORE INTO ids (id, rid) VALUES (?, ?)', [idKey(r.id), rid]) === 0) {
              duplicates++;
              continue;
            }
            const addr = p.blocks.append(typeof r.raw === 'string' ? Buffer.from(r.raw, 'utf8') : r.raw);
            const project = this.catalog.projects.idOf(r.project);
            const fn = r.functionId ? this.catalog.functions.idOf(r.functionId) : null;
            const values: SqlValue[] = [rid, project, r.ts, addr.blk, addr.boff, addr.len];
            let url = 0;
            for (const c of columns) {
              if (c.field === 'url') values.push((url = this.catalog.urlIdOf(r.url ?? '')));
              else if (c.field === 'functionId') values.push(fn ?? (c.notNull ? 0 : null));
              else if (c.field === 'families') values.push(r.families ?? 0);
              else values.push(r[c.field] ?? null);
            }
            rows.put(values, addr.block);
            this.count(p, project, r.ts, perProject);
            minutes?.add(project, fn, r.ts, r.exec, r.status);
            hours?.add(project, fn, r.ts, r.exec, r.status);
            days?.add(project, fn, r.ts, r.exec, r.status);
            if (api) addToApiBatch(api, hourStart(r.ts), url, r.families ?? 0);
            const key = `${project}:${fn ?? 0}`;
            const s = summary.get(key);
            if (s) {
              s.count++;
              s.min = Math.min(s.min, r.ts);
              s.max = Math.max(s.max, r.ts);
            } else summary.set(key, { project, fn: fn ?? 0, count: 1, min: r.ts, max: r.ts });
            imported++;
          }
          minutes?.flush(db);
        });
        this.keep(p, rows);
        if (imported === before) continue;
        this.finishPartition(p, perProject);
        if (p.row.width === DAY_MICROS && (p.row.rows > SPLIT_ROWS || youngAndDense(p))) this.splitDay(p);
      }
      for (const s of summary.values()) {
        catalog.run(
          `INSERT INTO source_summary (source, project, function, count, min_ts, max_ts) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (source, project, function) DO UPDATE SET count = count + excluded.count,
             min_ts = min(min_ts, excluded.min_ts), max_ts = max(max_ts, excluded.max_ts)`,
          [info.code, s.project, s.fn, s.count, s.min, s.max],
        );
      }
      if (hours && days) this.catalog.rollups.merge(hours, days);
      if (api?.size) this.catalog.apiHours.merge(api);
    });
    // Hours the import has left behind go to the catalog now, a few ms a batch, not all at the save.
    this.catalog.apiHours.flushSettled(API_HOURS_BUDGET_MS);
    this.catalog.rollups.flushSettled(ROLLUPS_BUDGET_MS);
    this.txn.stageIdle();
    if (imported > 0) {
      this.catalog.dirty = true;
      this.changed();
    }
    return { imported, duplicates };
  }

  /**
   * A day with no partition yet whose records in this batch are dense enough to exceed
   * SPLIT_ROWS over a whole day is stored as hours from the start: a bulk import never has to
   * move rows out of a day partition (a pause of a second or more at 100k rows). An import
   * that inserts a batch in slices asks first for the whole batch (a slice is too few to judge).
   */
  markDenseDays(info: SourceInfo, records: StoredRecord[]): void {
    const days = new Map<number, { n: number; min: number; max: number }>();
    for (const r of records) {
      const day = dayStart(r.ts);
      const d = days.get(day);
      if (d) {
        d.n++;
        if (r.ts < d.min) d.min = r.ts;
        if (r.ts > d.max) d.max = r.ts;
      } else days.set(day, { n: 1, min: r.ts, max: r.ts });
    }
    for (const [day, d] of days) {
      if (d.n < DENSE_SAMPLE || this.map.isSplitDay(info.code, day) || this.map.has(info.code, day)) continue;
      // A margin: density varies within a day, and a split that happens after all moves rows.
      if ((d.n / Math.max(d.max - d.min, 1)) * DAY_MICROS <= SPLIT_ROWS / 4) continue;
      this.map.addSplitDay(info.code, day);
      this.catalog.db.run('INSERT OR IGNORE INTO split_days (source, day) VALUES (?, ?)', [info.code, day]);
    }
  }

  /** The partition's counters, for one hot row added (HotRows inserts it). */
  private count(p: Partition, project: number, ts: number, perProject: PerProject): void {
    p.row.next_rid++;
    p.row.rows++;
    if (p.row.min_ts === null || ts < p.row.min_ts) p.row.min_ts = ts;
    if (p.row.max_ts === null || ts > p.row.max_ts) p.row.max_ts = ts;
    const pp = perProject.get(project);
    if (pp) {
      pp.count++;
      pp.min = Math.min(pp.min, ts);
      pp.max = Math.max(pp.max, ts);
    } else perProject.set(project, { count: 1, min: ts, max: ts });
  }

  /** After rows went into a partition: its catalog rows (runs in the catalog transaction). */
  private finishPartition(p: Partition, perProject: PerProject): void {
    p.dirty = true;
    for (const [project, s] of perProject) {
      this.catalog.db.run(
        `INSERT INTO partition_projects (source, start, project, count, min_ts, max_ts) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (source, project, start) DO UPDATE SET count = count + excluded.count,
           min_ts = min(min_ts, excluded.min_ts), max_ts = max(max_ts, excluded.max_ts)`,
        [p.source.code, p.start, project, s.count, s.min, s.max],
      );
    }
    putPartitionRow(this.catalog.db, p.row);
  }

  /**
   * Rewrites a day partition that grew past SPLIT_ROWS as hour partitions: rows, ids, record
   * bytes and minute rollups move as they are; catalog-wide rollups and the summary stay.
   */
  private splitDay(day: Partition): void {
    spanOf('import: split day', () => this.splitDayNow(day));
  }

  private splitDayNow(day: Partition): void {
    // Its rows waiting for their blocks go in first: they move with the others.
    this.settle(day);
    const info = day.source;
    const db = day.db!;
    this.map.addSplitDay(info.code, day.start);
    this.catalog.db.run('INSERT OR IGNORE INTO split_days (source, day) VALUES (?, ?)', [info.code, day.start]);
    this.catalog.db.run('DELETE FROM partitions WHERE source = ? AND start = ?', [info.code, day.start]);
    this.catalog.db.run('DELETE FROM partition_projects WHERE source = ? AND start = ?', [info.code, day.start]);
    this.map.detach(day);
    const cols = HOT_COLUMNS[info.hot].map((c) => c.column);
    const ids = new Map(db.rows('SELECT rid, id FROM ids').map(([rid, id]) => [rid as number, id]));
    const byHour = new Map<number, SqlValue[][]>();
    for (const row of db.rows(`SELECT rid, project, ts, blk, boff, len${cols.map((c) => `, ${c}`).join('')} FROM ${info.alias} ORDER BY rid`)) {
      const h = hourStart(row[2] as number);
      let list = byHour.get(h);
      if (!list) byHour.set(h, (list = []));
      list.push(row);
    }
    const minutes = info.hot === 'function_edge' ? db.rows(`SELECT * FROM ${MINUTE_GRAIN.table}`) : [];
    const insertSql = hotInsertSql(info);
    for (const [h, rows] of byHour) {
      const p = this.partitionFor(info, h);
      // In the order the day's rows went in: the hour is keyed as they came.
      if (!p.db && p.fileVersion === 0) p.newestFirst = rows.length > 1 && (rows[0]![2] as number) > (rows[rows.length - 1]![2] as number);
      const hdb = this.map.use(p);
      const perProject: PerProject = new Map();
      const hot = this.rowsOf(p, hdb, insertSql);
      hdb.transaction(() => {
        for (const [oldRid, project, ts, blk, boff, len, ...fields] of rows) {
          const rid = p.row.next_rid;
          hdb.run('INSERT INTO ids (id, rid) VALUES (?, ?)', [ids.get(oldRid as number)!, rid]);
          const addr = p.blocks.append(day.blocks.read({ blk: blk as number, boff: boff as number, len: len as number }));
          hot.put([rid, project!, ts!, addr.blk, addr.boff, addr.len, ...fields], addr.block);
          this.count(p, project as number, ts as number, perProject);
        }
        for (const m of minutes) if (hourStart(m[1] as number) === h) hdb.run(`INSERT INTO ${MINUTE_GRAIN.table} VALUES (${m.map(() => '?').join(', ')})`, m);
      });
      this.keep(p, hot);
      this.finishPartition(p, perProject);
    }
    day.db?.close();
    day.db = null;
    day.dirty = false;
    day.blocks.dropPending();
    this.txn.noteSplit(day);
  }

  /** The partition a record of this instant belongs to (created when missing), noted by the running import. */
  private partitionFor(info: SourceInfo, ts: number): Partition {
    const p = this.map.partitionFor(info, ts);
    this.txn.touch(p);
    return p;
  }
}
