/**
 * The explorer's derived files of each partition and their memory: columns files
 * (scan-columns.ts, one per committed version, with the field index of field-columns.ts) and
 * block indexes (block-grams.ts, one per record file), read when asked for and kept under a
 * budget, least recently used first. A background builder makes the missing ones after each
 * commit and at open, in steps with turns for requests in between (docs/ARCHITECTURE.md,
 * "Damaged files" says how they are checked).
 */
import fs from 'node:fs';
import { spanOf, spanSince } from '../activity.ts';
import { readsAnswered } from '../turns.ts';
import { blockBits, encodeBlockGrams, gramsReachEnd, readBlockGrams, type BlockGrams } from './block-grams.ts';
import type { PartitionRow } from './catalog.ts';
import { Partition } from './partition.ts';
import { describePartition, type PartitionMap } from './partition-map.ts';
import { buildScanColumns, buildScanColumnsInSteps, columnsFileOf, columnsFileState, encodeScanColumns, readScanColumns, type ColumnName, type ColumnsIdentity, type PathIds, type ScanColumns } from './scan-columns.ts';
import { buildFieldIndexInSteps } from './field-columns.ts';
import { appendBlockTexts, cutBlockTexts, GROUP_TEXT_BYTES, packGroupOffThread, readBlockTexts, recordsOfBlock, recordTexts, textsDictionary, textsEntry, type BlockTexts, type RecordTexts } from './block-texts.ts';
import { writeSynced } from './durable.ts';
import { COLUMNS_WRITING_TMP } from './store-files.ts';
import type { TextDictionary } from './text-dictionary.ts';
import { appendRecordTokens, cutRecordTokens, deflateListOffThread, readRecordTokens, SEGMENT_RECORDS, TokenSegmentBuilder, type RecordTokens } from './record-tokens.ts';
import { crcOffThread } from './search-worker.ts';

/**
 * Bytes of partition columns (scan-columns.ts) kept in memory: a week of a 10M-record store
 * (about 40 MB) stays, older ones are read again from their files.
 */
const COLUMN_CACHE_BYTES = 64 * 1024 * 1024;
/** Columns handed out last that are measured again at each use of another (their users load more of them). */
const HANDED_OUT_MEASURED = 8;
/** Bytes of block indexes kept in memory (4 KiB per 256 KiB block: a week at 10M is about 280 MB, read again as needed). */
const GRAMS_CACHE_BYTES = 32 * 1024 * 1024;
/**
 * The share of their budgets the columns and block indexes keep while an import runs: the
 * import's partitions take the memory (at 10M records a scattered import loads 40 MB hours one
 * after another, up to the partitions' own budget), and a request during it reads the rest from
 * their files.
 */
export const IMPORT_CACHE_SHARE = 0.5;
/** Partitions whose record texts' group list is kept in memory (a few dozen bytes per group: a 10M store has under a thousand partitions). */
const TEXTS_CACHE_ENTRIES = 4096;
/** The background columns builder's least pause between steps while requests come, and how recent a request must be for it to pause (ms). */
const COLUMN_PAUSE_MS = 5;
/**
 * How long the builder works before a turn for requests (ms): a request that comes meanwhile
 * waits for the rest of it. At 10 ms, the endpoints timed while the builder indexed 20M records
 * just imported had p99s of 9-13 ms against p50s of 1-4.
 */
const BUILD_SLICE_MS = 3;
const COLUMN_IDLE_MS = 100;
/**
 * The longest the builder waits, between two steps, for the reads being answered to end. A search
 * over a week walks its partitions for seconds with turns between them: the builder took a step
 * in each (a fifth of the thread: 0.8 s of a 4.6 s cold search at 10M records, checking the files
 * of every partition after a start). Bounded so a steady stream of reads slows it, never stops it.
 */
const COLUMN_READ_WAIT_MS = 1000;

/** What the cache needs to know of a running import (import-transaction.ts). */
export interface ColumnsHooks {
  /** An import is running: the builder waits, so as not to push the import's partitions out of memory. */
  importing(): boolean;
  /** The partition's row as the last commit has it. */
  committedRow(p: Partition): PartitionRow | null;
}

const gramsBytes = (v: { g: BlockGrams | null }): number => v.g?.bytes ?? 0;

export class ColumnsCache {
  /** Columns of clean partitions by the version they were read from, least recently used first, each with its bytes when last used (what trimColumnCache sums). */
  private readonly columnCache = new Map<Partition, { version: number; cols: ScanColumns; bytes: number }>();
  /** Committed versions whose columns file is to be built, and the task building them. */
  private readonly columnQueue = new Map<Partition, number>();
  /** Block indexes read (null: none usable), least recently used first. */
  private readonly gramsCache = new Map<Partition, { limit: number; g: BlockGrams | null }>();
  /** Partitions whose block index a reader found a gap in: the builder reads it whole (not just its end). */
  private readonly gramsGaps = new Set<Partition>();
  /** How long the builder works before a turn for requests (BUILD_SLICE_MS; tests set 0 to have a turn after every unit). */
  buildSliceMs = BUILD_SLICE_MS;
  /** Record texts' group lists read (null: none usable), least recently used first. */
  private readonly textsCache = new Map<Partition, { limit: number; t: BlockTexts | null }>();
  /** Record words' segment lists read (null: none usable), least recently used first. */
  private readonly tokensCache = new Map<Partition, { limit: number; t: RecordTokens | null }>();
  /** Partitions whose rows are not numbered as their records are stored: no record words for them (said once). */
  private readonly unnumbered = new Set<Partition>();
  /** Columns files this process wrote (their path ids are of this run's path dictionary). */
  private readonly columnsWritten = new Set<string>();
  /** Columns files whose field index failed a check when read: the background builder builds it again. */
  private readonly damagedFields = new Set<string>();
  /** The partitions whose columns were handed out last, most recent first (see trimColumnCache). */
  private handedOut: Partition[] = [];
  private columnPump: Promise<void> | null = null;
  /** Columns files requests built, being written off the thread (writeColumnsSoon). */
  private readonly soonWrites = new Set<Promise<void>>();
  /** Every columns file write under way (writeColumnsOffThread). */
  private readonly writing = new Set<Promise<void>>();
  private closing = false;
  /** Saved partitions' columns built on the answering thread for a request (no file yet): each holds every page up. */
  builtForRequests = 0;

  constructor(
    private readonly map: PartitionMap,
    private readonly paths: TextDictionary,
    /** The path ids columns are built with. */
    readonly pathIds: PathIds,
    private readonly hooks: ColumnsHooks,
    /** Bytes of columns kept in memory. */
    private readonly columnBudget = COLUMN_CACHE_BYTES,
  ) {}

  /**
   * The partition's hot columns, newest first, with the row arrays `needed` loaded. A clean
   * partition's come from its version's columns file (built from the database and written when
   * missing or not whole); a partition with unsaved rows is read from its database each time.
   */
  columns(p: Partition, needed: readonly ColumnName[] = []): ScanColumns {
    this.map.noteForeground();
    if (p.dirty) return buildScanColumns(this.map.use(p), p.source, this.pathIds);
    const version = p.fileVersion;
    let cols = this.savedColumns(p, version, needed);
    if (!cols) {
      this.forget(p);
      this.builtForRequests++;
      cols = spanOf('request: build columns', () => buildScanColumns(this.map.use(p), p.source, this.pathIds));
      if (p.dirty) return cols; // migrated as it loaded: its next save writes the file
      if (version > 0 && cols.complete) {
        this.writeColumnsSoon(p, version, cols);
        // Written without its field index: the background builder adds it.
        this.queue(p);
      }
      this.columnCache.set(p, { version, cols, bytes: 0 });
    }
    this.trimColumnCache(p);
    return cols;
  }

  /**
   * A clean partition's columns when they need no building (cached, or read from a whole columns
   * file), else null with the file queued for the background builder: for a request that has a
   * cheaper way than building them on the answering thread (a partition's columns take hundreds
   * of milliseconds to build at 10M records).
   */
  readyColumns(p: Partition, needed: readonly ColumnName[] = []): ScanColumns | null {
    if (p.dirty) return null;
    this.map.noteForeground();
    const cols = this.savedColumns(p, p.fileVersion, needed);
    if (cols) this.trimColumnCache(p);
    else this.queue(p);
    return cols;
  }

  /**
   * Asks the search worker for `needed` arrays of a clean partition's saved columns file
   * (ScanColumns.readAhead) for a walk that will come to it; nothing for one with unsaved rows or
   * without a whole file (the walk builds or reads its columns when it comes). Only the file's
   * head is read here.
   */
  readAhead(p: Partition, needed: readonly ColumnName[]): void {
    if (p.dirty) return;
    const hit = this.columnCache.get(p);
    // A cached one is not moved up the cache's order: the walk has not used it yet.
    const cols = hit?.version === p.fileVersion ? hit.cols : this.savedColumns(p, p.fileVersion, []);
    cols?.readAhead(needed);
  }

  /** Waits for the arrays readAhead asked of `p`'s columns (at once when the worker had not started on them). */
  async arrived(p: Partition): Promise<void> {
    await this.columnCache.get(p)?.cols.arrived();
  }

  /** Takes back what readAhead asked of `p`'s columns if the worker has not started on it. */
  dropAhead(p: Partition): void {
    this.columnCache.get(p)?.cols.dropAhead();
  }

  /** The columns of a partition's saved version from the cache or its file, `needed` loaded; null when they must be built. */
  private savedColumns(p: Partition, version: number, needed: readonly ColumnName[]): ScanColumns | null {
    const hit = this.columnCache.get(p);
    let cols: ScanColumns | null = null;
    if (hit && hit.version === version) {
      this.columnCache.delete(p);
      this.columnCache.set(p, hit);
      cols = hit.cols;
    } else {
      this.forget(p);
      cols = version > 0 ? readScanColumns(columnsFileOf(p.dbFile(version)), this.columnsIdentity(p, version)) : null;
      if (cols) {
        this.columnCache.set(p, { version, cols, bytes: 0 });
        // Its field index failing a check: answered from the records meanwhile, built again in the background.
        cols.onFieldsDamaged = () => {
          this.damagedFields.add(columnsFileOf(p.dbFile(version)));
          this.queue(p);
        };
      }
    }
    try {
      cols?.load(needed);
    } catch {
      // Not whole after all (cut short, say): built again.
      this.forget(p);
      cols = null;
    }
    return cols;
  }

  /**
   * A partition's columns as a committed row of it has them, apart from its database (which
   * holds a running import's rows): read from that version's columns file, or built from that
   * version's database file when missing; null when the row holds no rows.
   */
  versionColumns(p: Partition, row: PartitionRow | null, needed: readonly ColumnName[] = []): ScanColumns | null {
    if (row === null || row.version === 0 || row.rows === 0) return null;
    const file = columnsFileOf(p.dbFile(row.version));
    const id = { ...this.columnsIdentity(p, row.version), rows: row.rows };
    let cols = readScanColumns(file, id);
    try {
      cols?.load(needed);
    } catch {
      cols = null;
    }
    if (cols) return cols;
    // Built from the committed file, apart from the partition's database (which holds the import's rows).
    const committed = new Partition(p.source, p.dir, row);
    try {
      cols = buildScanColumns(committed.load(), p.source, this.pathIds);
    } finally {
      committed.close();
    }
    if (cols.complete) this.writeColumnsSoon(p, row.version, cols);
    return cols;
  }

  /** Resolves once the columns files queued so far are built (tests; shutdown does not wait for them). */
  async settled(): Promise<void> {
    while (this.columnPump || this.soonWrites.size) {
      await this.columnPump;
      await Promise.all(this.soonWrites);
    }
  }

  /** Has a committed version's columns file built soon (in the background), unless it exists. */
  queue(p: Partition): void {
    if (p.row.version === 0 || p.row.rows === 0) return;
    this.columnQueue.set(p, p.row.version);
    this.columnPump ??= this.buildQueuedColumns().finally(() => (this.columnPump = null));
  }

  /** Stops the background builder (the store is closing) once its current step ends. */
  async stop(): Promise<void> {
    this.closing = true;
    await this.columnPump;
    await Promise.all(this.soonWrites);
  }

  /**
   * Builds the queued columns files one partition at a time, each in steps with a turn for
   * requests in between, newest partitions first (the explorer asks for recent hours most).
   * A partition that changed meanwhile is skipped: its next commit queues it again.
   */
  private async buildQueuedColumns(): Promise<void> {
    // Every columns file is checked against paths.log: its lines are read first, a chunk per turn
    // (at once, they held the first requests after a start for as long as they took).
    await this.paths.loadInSteps(undefined, crcOffThread);
    // Background work: a step of a few thousand rows (scan-columns.ts), then a pause.
    const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
    let stepStarted = performance.now();
    const pause = async () => {
      spanSince('background: columns step', stepStarted);
      // All the time when no request came lately: a turn of the event loop between steps, so
      // a request that comes is answered after the step in progress (a sleep of a quarter of
      // the step, as before, left a third of the thread idle: at 1M edge records the builder
      // was done 67.6 s after the import for 40.2 s of work). A fifth of it while requests are
      // being answered, after waiting for the reads in flight; never starved (a steady stream of
      // requests must not keep a week of columns unbuilt).
      if (!this.closing) await readsAnswered(COLUMN_READ_WAIT_MS);
      const busy = performance.now() - this.map.lastForeground < COLUMN_IDLE_MS;
      if (busy) await sleep(Math.max(COLUMN_PAUSE_MS, 4 * (performance.now() - stepStarted)));
      else await new Promise<void>((resolve) => setImmediate(resolve));
      // Not during an import: loading partitions would push the import's own out of memory.
      while (this.hooks.importing() && !this.closing) await sleep(50);
      stepStarted = performance.now();
    };
    // Work handed to libuv's threads is awaited outside the step: the step's span (and the
    // pause after it, which grows with the step) counts only this thread's time.
    const offThread = async <T>(work: Promise<T>): Promise<T> => {
      spanSince('background: columns step', stepStarted);
      try {
        return await work;
      } finally {
        stepStarted = performance.now();
      }
    };
    while (this.columnQueue.size && !this.closing) {
      // Files found whole cost a header read (and a block index read) each, and a store opens
      // with every partition queued (thousands at 10M): a pause every few ms of them, as between
      // build steps. A turn every hundred files held the first requests after a start ~1 s.
      if (performance.now() - stepStarted > this.buildSliceMs) await pause();
      let next: [Partition, number] | null = null;
      for (const entry of this.columnQueue) if (!next || entry[0].start > next[0].start) next = entry;
      // The queue may have been emptied meanwhile (the engine reopened).
      if (!next) break;
      const [p, version] = next;
      this.columnQueue.delete(p);
      const unchanged = () => !this.closing && p.row.version === version && p.staged === null && !p.dirty && this.map.holds(p);
      const file = columnsFileOf(p.dbFile(version));
      if (!unchanged()) continue;
      const id = this.columnsIdentity(p, version);
      const state = columnsFileState(file, id);
      if (state === 'unusable' || state === 'no-fields' || this.damagedFields.has(file)) {
        await pause();
        if (!unchanged()) continue;
        let cols: ScanColumns | null = state === 'unusable' ? null : readScanColumns(file, id);
        // A build looks paths up: the dictionary is hashed first, in slices of its own with turns.
        if (!cols) await offThread(this.paths.indexInSteps());
        if (!unchanged()) continue;
        try {
          cols ??= await buildScanColumnsInSteps(() => this.map.useInBackground(p), p.source, this.pathIds, async () => {
            await pause();
            return unchanged();
          });
          if (!cols || !unchanged() || !cols.complete) continue;
        } catch (err) {
          // Built again when next asked for (columns()); an engine trap is handled there too.
          if (!this.closing) console.error(`cannot build the columns of ${describePartition(p)}: ${(err as Error).message}`);
          continue;
        }
        let withFields = false;
        try {
          withFields = await this.buildFields(p, cols, pause, unchanged);
        } catch (err) {
          // A damaged record block: the fields are read from the records until the next commit.
          if (!this.closing) console.error(`cannot index the fields of ${describePartition(p)}: ${(err as Error).message}`);
        }
        if (!unchanged()) continue;
        // Written, not kept: memory is for what requests read. (A file whose field index was
        // added is read again by the next request, with it.)
        if (withFields || state === 'unusable') {
          await offThread(this.writeColumnsOffThread(p, version, cols, unchanged));
          if (!unchanged()) continue;
          this.damagedFields.delete(file);
          this.columnCache.delete(p);
        }
      }
      try {
        await this.buildGrams(p, pause, unchanged);
        await this.buildTexts(p, pause, unchanged, offThread);
        await this.buildTokens(p, pause, unchanged, offThread);
      } catch (err) {
        // A damaged record file is named by the requests that read it; its index waits for the next commit.
        if (!this.closing) console.error(`cannot index the records of ${describePartition(p)}: ${(err as Error).message}`);
      }
    }
  }

  /**
   * Builds a partition version's field index (field-columns.ts) from its records, in steps, and
   * attaches it to `cols`; false when the partition changed.
   */
  private async buildFields(p: Partition, cols: ScanColumns, pause: () => Promise<void>, unchanged: () => boolean): Promise<boolean> {
    const fx = await buildFieldIndexInSteps(cols.load(['blk', 'boff', 'len', 'project']), (blk) => p.blocks.rawBlock(blk), async () => {
      await pause();
      return unchanged();
    });
    if (!fx || !unchanged()) return false;
    cols.attachFields(fx);
    return true;
  }

  /**
   * A build phase's turns for requests: the function resolves true at once while the phase has
   * worked less than buildSliceMs since its last turn; else it runs `before` (what must be written
   * before a pause), pauses, and resolves whether `still` holds (the partition is the one being built).
   */
  private sliceTurns(pause: () => Promise<void>, still: () => boolean, before?: () => void): () => Promise<boolean> {
    let since = performance.now();
    return async () => {
      if (performance.now() - since <= this.buildSliceMs) return true;
      before?.();
      await pause();
      if (!still()) return false;
      since = performance.now();
      return true;
    };
  }

  /**
   * Completes a partition's block index (block-grams.ts) up to its committed record bytes.
   * Blocks get their entry as they are written; this indexes the ones that lack it (a store
   * written before the index, an append that failed): their blocks are decompressed, a few
   * between pauses, and the file is written again whole.
   */
  private async buildGrams(p: Partition, pause: () => Promise<void>, unchanged: () => boolean): Promise<void> {
    const size = p.row.record_bytes;
    if (size === 0 || (!this.gramsGaps.has(p) && gramsReachEnd(p.blocks.gramsFile, p.blocks.nameSeed, size))) return;
    this.gramsGaps.delete(p);
    const have = this.blockGrams(p);
    if ((have?.covered ?? 0) >= size) return;
    const entries: Array<{ blk: number; end: number; bits: Int32Array }> = [];
    const turn = this.sliceTurns(pause, () => unchanged() && p.row.record_bytes === size);
    for (let blk = 0; blk < size; ) {
      if (!(await turn())) return;
      const end = p.blocks.nextBlock(blk);
      entries.push({ blk, end, bits: have?.bitsOf(blk) ?? blockBits(p.blocks.rawBlock(blk)!) });
      blk = end;
    }
    // Blocks written meanwhile (an import) appended entries this rewrite would lose.
    if (p.blocks.size !== size) return;
    const file = p.blocks.gramsFile;
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, encodeBlockGrams(p.blocks.nameSeed, entries), { mode: 0o600 });
    fs.renameSync(tmp, file);
    p.blocks.gramsRewritten();
    this.gramsCache.delete(p);
  }

  /**
   * Adds the record texts (block-texts.ts) of the committed blocks that lack them: whole blocks
   * in order, a group of about GROUP_TEXT_BYTES of text at a time, each record parsed once, with
   * pauses between a few milliseconds of work. Groups are appended as they close; the last,
   * shorter one too (a later commit's blocks start a new group). A search finds a record's
   * texts by its number in the record file, its row less one: each group is first checked
   * against the partition's rows (its first and last record), or none is written.
   */
  private async buildTexts(p: Partition, pause: () => Promise<void>, unchanged: () => boolean, offThread: <T>(work: Promise<T>) => Promise<T>): Promise<void> {
    const size = p.row.record_bytes;
    const have = this.blockTexts(p);
    const from = have?.covered ?? 0;
    if (from >= size || this.unnumbered.has(p)) return;
    const numbered = this.rowNumbering(p);
    if (!numbered) return;
    let fileEnd = have?.fileEnd ?? 0;
    let first = have?.records ?? 0;
    // A new file's dictionary is taken from its first group.
    let dictionary = have?.dictionary ?? null;
    const withUrl = p.source.hot === 'edge' || p.source.hot === 'function_edge';
    const file = p.blocks.textsFile;
    let records: Array<{ blk: number; boff: number; texts: RecordTexts }> = [];
    let textBytes = 0;
    let groupStart = from;
    const entries: Buffer[] = [];
    const flush = async (end: number): Promise<boolean> => {
      if (!records.length) return true;
      const a = records[0]!;
      const b = records[records.length - 1]!;
      if (!numbered(first + 1, a.blk, a.boff) || !numbered(first + records.length, b.blk, b.boff)) {
        this.unnumbered.add(p);
        console.error(`the rows of ${describePartition(p)} are not numbered as its records are stored: its searches read the records`);
        return false;
      }
      dictionary ??= textsDictionary(records);
      entries.push(textsEntry(p.blocks.nameSeed, groupStart, end, first, records.length, await offThread(packGroupOffThread(records, dictionary))));
      first += records.length;
      records = [];
      textBytes = 0;
      groupStart = end;
      return true;
    };
    const turn = this.sliceTurns(
      pause,
      () => unchanged() && p.row.record_bytes === size,
      // Written before the pause: a partition that changes meanwhile keeps the groups done.
      () => {
        if (!entries.length) return;
        fileEnd = appendBlockTexts(file, p.blocks.nameSeed, fileEnd, dictionary!, entries);
        entries.length = 0;
        this.textsCache.delete(p);
      },
    );
    for (let blk = from; blk < size; ) {
      if (!(await turn())) return;
      const raw = p.blocks.rawBlock(blk);
      if (!raw) return;
      const end = p.blocks.nextBlock(blk);
      // A block's records may take more than a slice (256 KiB of edge records parsed for their
      // texts took up to 24-34 ms): the turns come between records too. The block's bytes stay
      // with this loop (a decompressed block is never reused), and groups still end with blocks.
      for (const r of recordsOfBlock(raw)) {
        if (!(await turn())) return;
        const texts = recordTexts(r.bytes.toString('utf8'), withUrl);
        records.push({ blk, boff: r.boff, texts });
        textBytes += texts.message.length + (texts.url?.length ?? 0);
      }
      blk = end;
      if (textBytes >= GROUP_TEXT_BYTES || blk >= size) {
        if (!(await flush(blk))) return;
        if (!unchanged() || p.row.record_bytes !== size) return;
      }
    }
    if (entries.length) appendBlockTexts(file, p.blocks.nameSeed, fileEnd, dictionary!, entries);
    this.textsCache.delete(p);
  }

  /**
   * A test of whether row `rid` of a partition's committed version is the record at (blk, boff):
   * rows are numbered as their records are appended, which the record texts and words rely on.
   * Null when the partition has no committed rows.
   */
  private rowNumbering(p: Partition): ((rid: number, blk: number, boff: number) => boolean) | null {
    const cols = this.versionColumns(p, this.hooks.committedRow(p), ['rid', 'blk', 'boff']);
    if (!cols) return null;
    const rowOf = new Int32Array(cols.n + 2).fill(-1);
    for (let k = 0; k < cols.n; k++) if (cols.rid[k]! <= cols.n) rowOf[cols.rid[k]!] = k;
    return (rid, blk, boff) => rid < rowOf.length && rowOf[rid]! >= 0 && cols.blk[rowOf[rid]!] === blk && cols.boff[rowOf[rid]!] === boff;
  }

  /**
   * Adds the record words (record-tokens.ts) of the blocks whose record texts are built: segments
   * of whole text groups, SEGMENT_RECORDS records or more, a few ms of chunks between pauses (a
   * segment encoded in slices too, its lists deflated off the thread); a shorter
   * last segment is built again with the groups after it (records numbered as the texts number them).
   */
  private async buildTokens(p: Partition, pause: () => Promise<void>, unchanged: () => boolean, offThread: <T>(work: Promise<T>) => Promise<T>): Promise<void> {
    const texts = this.blockTexts(p);
    if (!texts?.size || this.unnumbered.has(p)) return;
    const have = this.recordTokens(p);
    // Segments kept: all but a short last one, when there is more to add.
    let keep = have?.size ?? 0;
    if (keep > 0 && have!.recordsOf(keep - 1) < SEGMENT_RECORDS && have!.covered < texts.covered) keep--;
    let from = keep ? have!.endOf(keep - 1) : 0;
    if (from >= texts.covered) return;
    let g = texts.groupOf(from);
    let first = keep ? have!.firstOf(keep - 1) + have!.recordsOf(keep - 1) : 0;
    if (g < 0 || texts.startOf(g) !== from || texts.firstOf(g) !== first) {
      // Texts grouped otherwise since (built again after damage): the words again from the start.
      keep = 0;
      from = 0;
      first = 0;
      g = 0;
    }
    let fileEnd = have ? have.fileEndAfter(keep - 1) : 0;
    let seg = new TokenSegmentBuilder();
    let segFrom = from;
    // False when the partition changed while the segment was encoded (in steps, with pauses).
    const flush = async (end: number): Promise<boolean> => {
      if (seg.n === 0) return true;
      const between = async () => (await pause(), unchanged());
      const entry = await seg.entryInSteps(p.blocks.nameSeed, segFrom, end, first, this.buildSliceMs, between, (list) => offThread(deflateListOffThread(list)));
      if (!entry || !unchanged()) return false;
      fileEnd = appendRecordTokens(p.blocks.tokensFile, p.blocks.nameSeed, fileEnd, [entry]);
      this.tokensCache.delete(p);
      first += seg.n;
      seg = new TokenSegmentBuilder();
      segFrom = end;
      return true;
    };
    const turn = this.sliceTurns(pause, unchanged);
    for (; g < texts.size; g++) {
      const group = texts.group(g);
      if (!group) {
        this.textsDamaged(p, texts.startOf(g));
        break;
      }
      // A chunk at a time (a group's 256 KiB of text took about 10 ms to split into words).
      group.prefetchAll();
      for (let k = 0; k < group.chunks; k++) {
        if (!(await turn())) return;
        seg.addChunk(group, k);
      }
      if (seg.n >= SEGMENT_RECORDS && !(await flush(texts.endOf(g)))) return;
    }
    await flush(g > 0 ? texts.endOf(g - 1) : 0);
  }

  /** A partition's record words as far as they cover its committed record bytes, or null (searches then read the texts). */
  recordTokens(p: Partition): RecordTokens | null {
    return this.listed(this.tokensCache, p, (limit) => readRecordTokens(p.blocks.tokensFile, p.blocks.nameSeed, limit));
  }

  /**
   * A derived file's listing (record texts, record words) within the partition's committed
   * record bytes, from `cache` when listed at that length, else read; the listings are kept,
   * least recently used first, for TEXTS_CACHE_ENTRIES partitions.
   */
  private listed<T>(cache: Map<Partition, { limit: number; t: T | null }>, p: Partition, read: (limit: number) => T | null): T | null {
    const row = this.hooks.committedRow(p);
    const limit = row ? Math.min(row.record_bytes, p.blocks.size) : 0;
    const hit = cache.get(p);
    if (hit !== undefined && hit.limit === limit) {
      cache.delete(p);
      cache.set(p, hit);
      return hit.t;
    }
    const t = row ? read(limit) : null;
    cache.set(p, { limit, t });
    while (cache.size > TEXTS_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    return t;
  }

  /** A segment of a partition's record words failed its check: the file is cut before it and built again in the background. */
  tokensDamaged(p: Partition, blk: number): void {
    try {
      cutRecordTokens(p.blocks.tokensFile, p.blocks.nameSeed, blk);
    } catch {
      fs.rmSync(p.blocks.tokensFile, { force: true });
    }
    this.tokensCache.delete(p);
    this.queue(p);
  }

  /**
   * A partition's record texts as far as they cover its committed record bytes, or null (its
   * records are then searched). The group lists are kept in memory, least recently used first.
   */
  blockTexts(p: Partition): BlockTexts | null {
    return this.listed(this.textsCache, p, (limit) => readBlockTexts(p.blocks.textsFile, p.blocks.nameSeed, limit));
  }

  /** A group of a partition's record texts failed its check: the file is cut before it and built again in the background. */
  textsDamaged(p: Partition, blk: number): void {
    try {
      cutBlockTexts(p.blocks.textsFile, p.blocks.nameSeed, blk);
    } catch {
      // The group keeps failing its check: its blocks' records are searched meanwhile.
    }
    this.textsCache.delete(p);
    this.queue(p);
  }

  /**
   * A partition's block index as far as it covers its committed record bytes, or null (then
   * every block is searched). Kept in memory under GRAMS_CACHE_BYTES, least recently used first.
   */
  blockGrams(p: Partition): BlockGrams | null {
    const row = this.hooks.committedRow(p);
    const limit = row ? Math.min(row.record_bytes, p.blocks.size) : 0;
    const hit = this.gramsCache.get(p);
    // Read again after a commit: the blocks it added have entries now.
    if (hit !== undefined && hit.limit === limit) {
      this.gramsCache.delete(p);
      this.gramsCache.set(p, hit);
      return hit.g;
    }
    const g = row ? readBlockGrams(p.blocks.gramsFile, p.blocks.nameSeed, limit) : null;
    this.gramsCache.set(p, { limit, g });
    // A gap (an entry that fails its check, say) that the builder's quick look at the file's end missed: built again.
    if (g && g.covered < limit && !this.gramsGaps.has(p)) {
      this.gramsGaps.add(p);
      this.queue(p);
    }
    this.dropPast(this.gramsCache, gramsBytes, GRAMS_CACHE_BYTES * this.share, p);
    return g;
  }

  /**
   * What a version's columns file must say of itself to be used: its partition and version, the
   * path dictionary it was built against, and the rows the catalog records for the version.
   */
  private columnsIdentity(p: Partition, version: number): ColumnsIdentity {
    const file = columnsFileOf(p.dbFile(version));
    return {
      source: p.source.code,
      start: p.start,
      version,
      epoch: this.paths.epoch,
      rows: version === p.row.version && !p.dirty ? p.row.rows : undefined,
      // A file of an earlier run that may use path bytes past what paths.log held when this run
      // opened it was built before paths.log was cut: some of its path ids name nothing.
      pathsOk: (bytes, count) => (bytes <= this.paths.bytesAtOpen || this.columnsWritten.has(file)) && this.paths.endOf(count) === bytes,
    };
  }

  /** A columns file a request built, written off the thread (its answer does not wait for the disk); kept only while its version's database is. */
  private writeColumnsSoon(p: Partition, version: number, cols: ScanColumns): void {
    const write = this.writeColumnsOffThread(p, version, cols, () => !this.closing && fs.existsSync(p.dbFile(version))).finally(() => this.soonWrites.delete(write));
    this.soonWrites.add(write);
  }

  /**
   * Writes a version's columns file, off this thread (a synced write of a busy hour's columns
   * held requests 10-30 ms, and up to 250 ms while the disk was busy): the path ids it holds are
   * made durable first, then the file is written and synced under a temp name of its own and
   * renamed, so that no reader, and no start after a crash, sees part of one (a file of the
   * right length but unwritten pages would pass the length check). It is put in place only if
   * `still()` holds once it is synced (the version may have been replaced meanwhile). Without the
   * rename's directory being synced, a crash may lose the file: it is built again when next
   * needed. A failure is ignored when `bestEffort` (the columns are rebuilt when next needed),
   * else thrown.
   */
  async writeColumnsOffThread(p: Partition, version: number, cols: ScanColumns, still: () => boolean, bestEffort = true): Promise<void> {
    const write = this.writeColumns(p, version, cols, still, bestEffort);
    this.writing.add(write);
    try {
      await write;
    } finally {
      this.writing.delete(write);
    }
  }

  /**
   * Resolves once every columns file being written now is in place or dropped, its temp file
   * gone: a source deleted meanwhile leaves no file of a write that was under way.
   */
  async writesDone(): Promise<void> {
    await Promise.allSettled([...this.writing]);
  }

  private async writeColumns(p: Partition, version: number, cols: ScanColumns, still: () => boolean, bestEffort: boolean): Promise<void> {
    const file = columnsFileOf(p.dbFile(version));
    const tmp = `${file}${COLUMNS_WRITING_TMP}`;
    try {
      const paths = await this.paths.syncOffThread();
      const bytes = encodeScanColumns(cols, { source: p.source.code, start: p.start, version, pathBytes: paths.bytes, pathCount: paths.count });
      await writeSynced(tmp, bytes);
      if (!still()) {
        fs.rmSync(tmp, { force: true });
        return;
      }
      fs.renameSync(tmp, file);
      this.columnsWritten.add(file);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      if (!bestEffort) throw err;
    }
  }

  /** The share of the columns' and block indexes' budgets in force: IMPORT_CACHE_SHARE while an import runs. */
  private get share(): number {
    return this.hooks.importing() ? IMPORT_CACHE_SHARE : 1;
  }

  /** An import has begun: the least recently used columns and block indexes past its share of their budgets go now. */
  importStarted(): void {
    for (const e of this.columnCache.values()) e.bytes = e.cols.bytes;
    this.dropPast(this.columnCache, (e) => e.bytes, this.columnBudget * this.share, null);
    this.dropPast(this.gramsCache, gramsBytes, GRAMS_CACHE_BYTES * this.share, null);
  }

  /** Drops entries, least recently used first, until the rest hold at most `budget` bytes (never `keep`'s). */
  private dropPast<V>(cache: Map<Partition, V>, bytes: (v: V) => number, budget: number, keep: Partition | null, kept: (v: V) => boolean = () => false): void {
    let total = 0;
    for (const v of cache.values()) total += bytes(v);
    for (const [q, v] of cache) {
      if (total <= budget) break;
      if (q === keep || kept(v)) continue;
      total -= bytes(v);
      cache.delete(q);
    }
  }

  /** Drops the least recently used columns past the budget (never `keep`'s). */
  private trimColumnCache(keep: Partition): void {
    // Measuring every cached partition at every use was most of a warm answer: only the one just
    // used is measured, and the few handed out before it, which their users load more of (a
    // column, path counts, the field index) after this: measured only at their own next use, a
    // 10M-record run's explorer cases held 126 MiB under a 64 MiB budget.
    this.handedOut = [keep, ...this.handedOut.filter((q) => q !== keep)].slice(0, HANDED_OUT_MEASURED);
    for (const q of this.handedOut) {
      const e = this.columnCache.get(q);
      if (e) e.bytes = e.cols.bytes;
    }
    // Columns whose arrays the search worker reads for a walk are kept: they sit first in the
    // order (asked before the walk used the ones it passed), and were dropped before the walk came
    // to them, their arrays read twice.
    this.dropPast(this.columnCache, (e) => e.bytes, this.columnBudget * this.share, keep, (e) => e.cols.readingAhead);
  }

  /** Bytes of the columns and block indexes held (gauges of the activity log). */
  heldBytes(): { columns: number; grams: number } {
    let columns = 0;
    let grams = 0;
    for (const { cols } of this.columnCache.values()) columns += cols.bytes;
    for (const v of this.gramsCache.values()) grams += gramsBytes(v);
    return { columns, grams };
  }

  /** Forgets a partition's columns, block index and record texts. */
  forget(p: Partition): void {
    this.columnCache.delete(p);
    this.forgetGrams(p);
  }

  /** Forgets a partition's block index, record texts and words (its record file was cut back). */
  forgetGrams(p: Partition): void {
    this.gramsCache.delete(p);
    this.textsCache.delete(p);
    this.tokensCache.delete(p);
  }

  /** Forgets the cached columns, block indexes and the queue (the engine is being replaced). */
  clear(): void {
    this.columnCache.clear();
    this.gramsCache.clear();
    this.textsCache.clear();
    this.tokensCache.clear();
    this.columnQueue.clear();
  }
}
