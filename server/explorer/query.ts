/**
 * The explorer's query over any source (docs/ARCHITECTURE.md, "Explorer"): parameters read and
 * checked once, then the rows of the partitions a window touches, filtered on the hot columns
 * (status, method, path, level, function), on the field index for indexed paths inside the
 * records (field-index.ts) and, for a text search or any other path, by the record itself.
 * Pages, histograms, facets, counts and exports all walk rows through `scanRows`.
 */
import type { RE2JS } from 're2js';
import { AppError, badParam } from '../errors.ts';
import { readParams, type ParamValues } from '../request.ts';
import { canonicalRow } from '../ingest/normalize.ts';
import { findSource, SOURCE_NAMES, type SourceInfo } from '../sources.ts';
import { NONE, ROW_COLUMNS, type ColumnName, type ScanColumns } from '../store/scan-columns.ts';
import { compareRecordIds, metadataOfRecord } from '../store/record.ts';
import { throughEscapes } from '../store/json-escapes.ts';
import { SOURCE_FIELDS } from '../store/hot-columns.ts';
import type { LogStore } from '../store/log-store.ts';
import type { Partition } from '../store/partition.ts';
import { INSTANT_RANGE, MICROS, readIsoMicros } from '../time.ts';
import { FILTER_FIELDS, parseFilterList, readStatus, type FilterField, type StatusSpec } from '../../contract/filters.ts';
import { compileRe2 } from '../endpoints/re2.ts';
import { functionSlugs } from '../functions/slugs.ts';
import { EXPLORER_MAX_LIMIT, MAX_PATTERN_LENGTH } from '../../contract/registry.ts';
import type { ExplorerFields, ExplorerRow } from '../../contract/api-types.ts';
import { MAX_TEXT_LENGTH } from '../endpoints/params.ts';
import { blockSearch } from '../store/block-search.ts';
import { isRawSafe, textHits, textTest, type TextHitTest } from './text-hits.ts';
import { URL_MATCH, URL_NO_MATCH, urlHits, type UrlHits } from './url-hits.ts';
import { wordPlan, wordSearch, type WordHits, type WordSearch } from './token-hits.ts';
import { MATCH, NO_MATCH, UNKNOWN } from '../store/record-tokens.ts';
import { recordTexts } from '../store/block-texts.ts';
import { requiredLiterals } from './regex-literals.ts';
import { conditionBlockBits, conditionLiterals, conditionValueNeeds, fieldMatcher, type ValueNeed, readFieldConditions, type FieldCondition } from './record-fields.ts';
import { bothTests, indexedConditions, indexedValue } from './field-index.ts';
import { trigramBits, type BlockGrams } from '../store/block-grams.ts';
import { pathFilterTable } from './path-filter.ts';
import { EVERY_ROW, filterColumns, rowFilter, windowRange } from './row-filter.ts';
import type { Cursor, ExplorerQuery } from './query-types.ts';

export type { Cursor, ExplorerQuery };

/** The explorer fields a source has: where SOURCE_FIELDS reads them, and function ids for the function sources. */
export function fieldsOf(source: SourceInfo): FilterField[] {
  const rules = SOURCE_FIELDS[source.name];
  return FILTER_FIELDS.filter((f) => (f === 'function_id' ? source.hot === 'function_edge' || source.hot === 'function_event' : rules[f] !== undefined));
}

/** What a histogram splits by: the status class where the source has a status, else the level. */
export function splitOf(source: SourceInfo): 'status' | 'level' {
  return SOURCE_FIELDS[source.name].status ? 'status' : 'level';
}

/**
 * Whether a query may read records (a text search or field conditions): its pages then stop
 * after their time budget. Whether its aggregates walk the records or count the columns is
 * decided with the field index (aggregate.ts, walksRecords).
 */
export const readsRecords = (q: ExplorerQuery): boolean => q.q !== null || q.fields.length > 0;

export const MAX_LIMIT = EXPLORER_MAX_LIMIT;
export const DEFAULT_LIMIT = 100;
/** The window when none is given: the day before the clock's now. */
export const DEFAULT_SPAN = MICROS.day;

type Params = (name: string) => string | undefined;

/**
 * The parameters every explorer route reads (readExplorerQuery): the source, the window, the
 * filters and the text search. A route accepts these and its own (a page's `limit`, a
 * histogram's `buckets`...), nothing else.
 */
export const QUERY_PARAMS: readonly string[] = ['source', 'project', 'start', 'end', 'q', 'regex', 'field', ...FILTER_FIELDS];

/** Parameters that may be given several times: each `field` is one condition (record-fields.ts). */
const REPEATABLE: readonly string[] = ['field'];

/** A route's parameters: one value each, and every value of a repeatable one. */
export type RouteParams = Params & { all(name: string): string[] };

/** The explorer's limit on a value's length: a text search's, a cursor's, any other text's. */
function withinLimit(name: string, v: string | undefined): string | undefined {
  if (v !== undefined && v.length > (name === 'q' ? MAX_PATTERN_LENGTH : name === 'cursor' ? 200 : MAX_TEXT_LENGTH)) {
    throw badParam(name, `${name} is longer than the limit`);
  }
  return v;
}

/** Reads one parameter given at most once (a repeat is a 400, as on the endpoints). */
export function singleParams(all: (name: string) => string[] | undefined): Params {
  return (name) => {
    const given = Object.create(null) as ParamValues;
    given[name] = all(name) ?? [];
    return withinLimit(name, readParams(given, 'the explorer', { takes: [name] })(name));
  };
}

/**
 * A route's parameters, checked whole before any is read (the HTTP edge's reader,
 * server/request.ts): each name it does not take is a 400 `unknown` (a misspelt filter such as
 * `stauts=500` must not widen the answer silently) and each name given more than once a 400
 * `duplicate` (never "the first one wins"), all named at once. Reading a name outside
 * `accepted` is the route's own bug, thrown as such.
 */
export function routeParams(given: ParamValues, accepted: readonly string[], route: string): RouteParams {
  const read = readParams(given, route, { takes: accepted, others: 'refused', repeatable: REPEATABLE });
  return Object.assign((name: string) => withinLimit(name, read(name)), { all: read.all });
}

/** What a route reads beyond QUERY_PARAMS into the query itself. */
export interface QueryReads {
  /** The page size: only pages have one. */
  limit: boolean;
  /** Where to go on from: pages and exports. */
  cursor: boolean;
}

function instant(get: Params, name: string): number | undefined {
  const text = get(name);
  if (text === undefined) return undefined;
  const read = readIsoMicros(text);
  if ('us' in read) return read.us;
  if (read.problem === 'out-of-range') throw badParam(name, `${name} must be within ${INSTANT_RANGE.text}`);
  throw badParam(name, `${name} is not an ISO 8601 timestamp: ${text.slice(0, 64)}`);
}

function list(get: Params, name: string): { include: string[]; exclude: string[] } {
  const out = { include: [] as string[], exclude: [] as string[] };
  for (const item of parseFilterList(get(name) ?? '')) (item.exclude ? out.exclude : out.include).push(item.value);
  return out;
}


function statusSpec(v: string): StatusSpec {
  const spec = readStatus(v);
  if (!spec) throw badParam('status', `status takes codes like 503, classes like 5xx or none, not ${v.slice(0, 20)}`);
  return spec;
}

/**
 * Reads and checks the explorer's parameters; every rejection names its parameter. `limit` and
 * `cursor` are read only where `reads` says the route uses them (elsewhere they are not parameters).
 */
export function readExplorerQuery(store: LogStore, get: Params & { all?: (name: string) => string[] }, now: number, reads: QueryReads = { limit: true, cursor: true }): ExplorerQuery {
  const sourceText = get('source');
  if (!sourceText) throw badParam('source', `source is required: one of ${SOURCE_NAMES.join(', ')} or their aliases`);
  const source = findSource(sourceText);
  if (!source) throw badParam('source', `source must be one of ${SOURCE_NAMES.join(', ')} or their aliases`);
  const projectRef = get('project') ?? null;
  const project = projectRef === null ? null : (store.projects.find(projectRef) ?? -1);
  const end = instant(get, 'end') ?? now;
  const start = instant(get, 'start') ?? end - DEFAULT_SPAN;
  if (start > end) throw badParam('start', 'start is after end');

  const has = new Set(fieldsOf(source));
  const checked = (name: FilterField) => {
    const l = list(get, name);
    if ((l.include.length || l.exclude.length) && !has.has(name)) {
      throw badParam(name, `${source.alias} records have no ${name}; its fields are ${[...has].join(', ') || 'none'}`);
    }
    return l;
  };
  const status = checked('status');
  const method = checked('method');
  const level = checked('level');
  const fn = checked('function_id');
  const functionIds = (ids: string[]) => ids.map((id) => store.functions.find(id) ?? -1);

  const regex = get('regex');
  if (regex !== undefined && regex !== '0' && regex !== '1') throw badParam('regex', 'regex must be 0 or 1');
  const qText = get('q');
  let q: ExplorerQuery['q'] = null;
  if (qText !== undefined) {
    let re: RE2JS | null = null;
    if (regex === '1') {
      try {
        re = compileRe2(`(?i)${qText}`);
      } catch (err) {
        throw badParam('q', `q is not a valid RE2 pattern: ${(err as Error).message}`);
      }
    }
    // The raw record can stand in for the message only when JSON writes the text as it is.
    const rawSafe = re === null && isRawSafe(qText);
    q = { text: qText, lower: qText.toLowerCase(), re, rawSafe };
  }

  const limitText = reads.limit ? get('limit') : undefined;
  const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw badParam('limit', `limit must be an integer from 1 to ${MAX_LIMIT}`);

  return {
    source,
    project,
    projectRef,
    start,
    end,
    q,
    status: { include: status.include.map(statusSpec), exclude: status.exclude.map(statusSpec) },
    method: { include: method.include.map((m) => m.toUpperCase()), exclude: method.exclude.map((m) => m.toUpperCase()) },
    path: checked('path'),
    level: { include: level.include.map((l) => l.toLowerCase()), exclude: level.exclude.map((l) => l.toLowerCase()) },
    function: { include: functionIds(fn.include), exclude: functionIds(fn.exclude) },
    limit,
    cursor: reads.cursor ? readCursor(get('cursor')) : null,
    fields: readFieldConditions(get.all?.('field') ?? []),
  };
}

export function writeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.ts, c.rid])).toString('base64url');
}

function readCursor(text: string | undefined): Cursor | null {
  if (text === undefined) return null;
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && v.every((x) => Number.isSafeInteger(x))) return { ts: v[0] as number, rid: v[1] as number };
  } catch {
    // Answered below.
  }
  throw badParam('cursor', 'cursor is not one this server handed out (use `next` from the previous page)');
}

/** The partitions of the window as the last commit has them (store.committedPartitions), newest first. */
export function partitionsOf(store: LogStore, q: ExplorerQuery): Partition[] {
  if (q.project === -1) return [];
  // The catalog's per-project index already counts a running import's records: not used meanwhile.
  if (q.project !== null && !store.importing) return store.partitionsWithProject(q.source.name, q.project, q.start + 1, q.end);
  return store
    .committedPartitions(q.source.name)
    .filter((p) => (store.committedRow(p)?.rows ?? 0) > 0 && p.start <= q.end && p.end > q.start)
    .reverse();
}

/**
 * Fails a read whose source was deleted while it ran (its partitions are gone): a 409 that says
 * so, rather than an answer from part of the data or a missing file. Call it after every wait.
 */
export function sourceWatch(store: LogStore, q: ExplorerQuery): () => void {
  const at = store.deletions(q.source.name);
  return () => {
    const now = store.deletions(q.source.name);
    if (now !== null && now === at) return;
    const message = `the records of ${q.source.name} were deleted while this request read them; ask again`;
    throw new AppError('aborted', message, [{ reason: 'deleted', location: 'source', message }]);
  };
}

/** One candidate row: where its record is, and its hot fields (those the source has). */
export interface ScanRow {
  p: Partition;
  rid: number;
  ts: number;
  project: number;
  blk: number;
  boff: number;
  len: number;
  status: number | null;
  method: string | null;
  /** The store's path id (store.paths), or NONE. */
  path: number;
  level: string | null;
  function: number | null;
  url: number | null;
}

export interface ScanLimits {
  /** Stop once this many rows passed every filter. */
  matches?: number;
  /** Stop a text search after this long (ms), returning where it got to. */
  budgetMs?: number;
  /** Past this instant (performance.now()) the scan fails with a 503. */
  deadline?: number;
  /** The client went away (or a newer request of its view replaced it): the scan stops. */
  signal?: AbortSignal;
  /** A watch on the source begun before this scan (an export's first page): deletions since then stop it too. */
  watch?: () => void;
  /** The walk only counts: rows of one instant may come in any order (no record is read to order them). */
  tiesInAnyOrder?: boolean;
  /**
   * For a walk that only counts (tiesInAnyOrder): a partition whose rows the record words decide
   * (a search of word characters), or the words and then the record texts, with no condition
   * read from the records, is handed over whole: the first `count` of `rows` are the rows that
   * pass every filter and the search, ascending (a list, not a test per row, as 9M rows of a
   * week are counted), to be counted from its columns instead of visited row by row. `rows` is
   * the walk's own: read it before returning.
   */
  columns?: (c: ScanColumns, rows: Int32Array, count: number) => void;
  /** The row arrays `columns` reads (loaded before the walk decides, with those of the filters and the search). */
  columnsRead?: readonly ColumnName[];
  /** Called as the walk moves on (at each partition and every few thousand rows) with where it got to. */
  onProgress?: (last: Cursor) => void;
}

export interface ScanProgress {
  /** The last row looked at (the cursor to go on from), if any. */
  last: Cursor | null;
  /** Every row of the window was looked at. */
  complete: boolean;
}

/** Rows walked between checks of the clock (the time budget, the deadline, a turn for others). */
const CHECK_EVERY = 8192;

/**
 * A row's value of a field inside its record as the partition's field index has it (text, or
 * null when absent), or undefined when the index does not hold the path: then read the record.
 */
export type IndexedValue = (path: string) => string | null | undefined;

/**
 * Walks the rows of the window newest first (rows of one instant in id order), from the
 * cursor if any, calling `visit` for each row that passes every filter, the text search
 * included. Reads each partition's columns (store/scan-columns.ts), not its database; field
 * conditions on paths a partition's field index holds are decided by it, the others by the
 * record. Yields to the event loop between partitions and every CHECK_EVERY rows.
 */
export async function scanRows(store: LogStore, q: ExplorerQuery, visit: (row: ScanRow, record: () => Buffer, indexed: IndexedValue) => void, limits: ScanLimits = {}): Promise<ScanProgress> {
  // The record words of a search of words, read on the search worker for the next partitions while this one is counted.
  const plan = q.q ? wordPlan(q.q) : null;
  const words = plan ? wordSearch(store, plan) : null;
  // A walk that counts reads every partition of its window: their columns are read on the search worker ahead of it.
  const columnsAsked: Partition[] | null = limits.columns && limits.tiesInAnyOrder ? [] : null;
  try {
    return await walk(store, q, visit, limits, words, columnsAsked);
  } finally {
    // Partitions asked ahead of a walk that stopped (its page full, its client gone): not read for nothing.
    words?.close();
    for (const p of columnsAsked ?? []) store.dropColumnsAhead(p);
  }
}

/** Partitions ahead of a counting walk whose columns the search worker reads while the walk counts the current one. */
const COLUMNS_AHEAD = 8;

async function walk(store: LogStore, q: ExplorerQuery, visit: (row: ScanRow, record: () => Buffer, indexed: IndexedValue) => void, limits: ScanLimits, words: WordSearch | null, columnsAsked: Partition[] | null): Promise<ScanProgress> {
  const started = performance.now();
  // The record's test of the conditions a partition's field index leaves to it (the text search, and those paths).
  const matchers = new Map<string, TextMatcher | null>();
  const matcherOf = (rest: readonly FieldCondition[]) => {
    const key = rest.map((c) => q.fields.indexOf(c)).join(',');
    let m = matchers.get(key);
    if (m === undefined) matchers.set(key, (m = recordMatcher(store, q, rest)));
    return m;
  };
  // After a start, paths.log's saved offsets may be being checked on the search worker: not again here.
  await store.pathsChecked();
  const reads = readsRecords(q);
  let matches = 0;
  // Where the walk is: the last row looked at (matched or not), so a page cut short by its
  // budget always moves on.
  let last: Cursor | null = q.cursor;
  const overBudget = (now: number) => {
    checkStop(limits.deadline, limits.signal);
    return reads && limits.budgetMs !== undefined && now - started > limits.budgetMs && last !== null;
  };
  let sinceCheck = 0;
  const paths = pathFilterTable(store, q);
  const stillThere = limits.watch ?? sourceWatch(store, q);
  const walked = partitionsOf(store, q);
  // walked[pi + 1] up to this one (excluded) had their columns asked of the search worker.
  let askedTo = 0;
  // Every row array is asked ahead once a partition's rows were walked for a reason the next
  // ones share (a filter rather than a text search the words may decide): at 10M, a week of
  // arrays read and checked here was a third of this thread's time for a field the index leaves out.
  let wholeAhead = false;
  for (let pi = 0; pi < walked.length; pi++) {
    const p = walked[pi]!;
    if (last && p.start > last.ts) continue;
    stillThere();
    // A walk that may count partitions from their columns reads the arrays it counts first (a
    // week at 10M is 9M rows: the record places are a third of the bytes), the rest if it walks.
    const names = limits.columns && !wholeAhead ? tallyColumnsOf(q, limits.columnsRead) : ROW_COLUMNS;
    if (columnsAsked) {
      for (askedTo = Math.max(askedTo, pi + 1); askedTo < Math.min(walked.length, pi + 1 + COLUMNS_AHEAD); askedTo++) {
        store.readColumnsAhead(walked[askedTo]!, names);
        columnsAsked.push(walked[askedTo]!);
      }
      await store.columnsArrived(p);
      stillThere();
    }
    let c = store.committedColumns(p, names);
    if (!c) continue;
    let pass = rowFilter(q, c, paths);
    let rest: readonly FieldCondition[] = q.fields;
    if (pass && q.fields.length) {
      const indexed = indexedConditions(q.fields, c);
      pass = indexed.test && bothTests(pass, indexed.test);
      rest = indexed.rest;
    }
    const matcher = matcherOf(rest);
    // The blocks that may hold the values the conditions need (the field index's value bits):
    // the rows of the others are passed over without a look, and a partition without one is skipped.
    const mayHold = pass && matcher?.values.length ? (c.fieldIndex()?.blocksMayHold(matcher.values) ?? null) : null;
    if (mayHold?.size === 0) pass = null;
    const [from, to] = pass ? windowRange(c, q.start, q.end, last) : [0, 0];
    // The worker is still on this partition's words (it is behind: words are most of a search
    // for digits): the columns asked of it and not started are read here instead, as the walk comes to them.
    if (columnsAsked && words?.busy(p)) for (let k = pi + 1; k < askedTo; k++) store.dropColumnsAhead(walked[k]!);
    const wordHit = pass && to > from && words ? await words.hits(p, walked, pi + 1) : null;
    stillThere();
    // A walk that counts, of a text search alone: the words, or the words and texts, may decide every row of the partition.
    const countable = pass && matcher && limits.columns && limits.tiesInAnyOrder && !rest.length;
    const exactWords = countable && wordHit?.exact && wordHit.whole && c.n <= wordHit.records;
    const check = () => {
      checkStop(limits.deadline, limits.signal);
      stillThere();
    };
    // The row filter of a partition the search decides row by row (null: none).
    const searched = pass && to > from && !exactWords && matcher?.texts ? pass : null;
    // Every URL of the partition tested already (past a week's first partition, whose URL search
    // read all of urls.log): the verdicts, and the matches listed, in one pass.
    const known = searched && matcher?.urls ? knownUrlVerdicts(c, searched, from, to, wordHit, matcher.urls.tested()) : null;
    const verdicts = known ?? (searched ? await searchVerdicts(c, searched, from, to, wordHit, matcher!.urls, check, countable ? walked.length - pi - 1 : 0) : null);
    // The texts file is not even opened when the words and URLs decided every record.
    const textHit = verdicts?.byText ? (matcher?.texts?.(p, verdicts.of) ?? null) : null;
    const decided = exactWords && pass
      ? wordsDecided(wordHit.of, c, pass, from, to)
      : countable && verdicts && (textHit || !verdicts.byText)
        ? known && !known.byText
          ? { count: known.listed }
          : rowsDecided(verdicts.of, c, from, to, textHit)
        : null;
    if (decided) {
      // Every row is decided by the words and texts: counted from the columns (see ScanLimits.columns).
      limits.columns!(c, decidedRows, decided.count);
      last = { ts: Math.min(p.start, q.end), rid: 0 };
      limits.onProgress?.(last);
      if (overBudget(performance.now())) return { last, complete: false };
      sinceCheck = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
      continue;
    }
    // A partition none of whose rows is looked at (none in the window, or none that can pass) reads nothing more.
    if (to > from) {
      c = wholeColumns(store, p, c);
      if (!c) continue;
      if (columnsAsked && !wholeAhead && (!q.q || rest.length)) {
        wholeAhead = true;
        for (let k = pi + 1; k < askedTo; k++) store.readColumnsAhead(walked[k]!, ROW_COLUMNS);
      }
    }
    // The block index, read when a block without record texts is first met (most have them);
    // not where the value bits chose the blocks already (they rule out more, and read less).
    let grams: BlockGrams | null | undefined = matcher?.grams.length && !mayHold ? undefined : null;
    const blockHas = matcher?.block || grams === undefined || mayHold ? new Map<number, boolean>() : null;
    /** Looks at row k, which passed the row filter; true when the page is full. */
    const consider = (k: number): boolean => {
      // The record words rule records out (or in, for a word search) where they are built; then
      // the record texts decide; else the records themselves.
      let hit: boolean | undefined;
      const rid = c.rid[k]!;
      if (verdicts) {
        const v = verdicts.of[rid - 1];
        if (v === RULED_OUT) return false;
        if (v === MATCHES) hit = true;
      }
      if (hit === undefined && textHit) hit = textHit.test(rid - 1);
      if (hit === false) return false;
      // A block that does not hold the text anywhere rules out all its records at once.
      if (hit === undefined && blockHas) {
        const blk = c.blk[k]!;
        let has = blockHas.get(blk);
        if (has === undefined) {
          // The index rules most blocks out without reading them; the others are read and tested whole.
          if (grams === undefined) grams = store.blockGrams(p);
          const index = grams;
          // (A row of a block the value bits rule out reaches here with others of its instant.)
          has = (!mayHold || mayHold.has(blk)) && (!index || matcher!.grams.every((need) => index.mayHold(blk, need)));
          if (has && matcher!.block) has = matcher!.block(p.blocks.rawBlock(blk));
          blockHas.set(blk, has);
        }
        if (!has) return false;
      }
      const row = rowAt(p, c, k);
      let raw: Buffer | undefined;
      const record = () => (raw ??= store.readRecord(p, row));
      if (matcher && !(hit ? !matcher.rest || matcher.rest(row, record) : matcher.row(row, record))) return false;
      visit(row, record, (path) => indexedValue(c, path, k));
      if (limits.matches !== undefined && ++matches >= limits.matches) {
        last = { ts: row.ts, rid: row.rid };
        return true;
      }
      return false;
    };
    // Locals of the hot loop that no closure captures (a captured one is read from the heap).
    const times = c.ts;
    const passes = pass ?? (() => false);
    // Rows of the blocks the value bits rule out are passed over a run at a time (rows of one
    // block mostly come together): none of them can pass, whatever instant they share.
    const blocks = mayHold && to > from ? c.blk : null;
    // The walk starts at the cursor's instant (windowRange): its rows after the cursor's remain.
    const cursor = last;
    for (let i = from; i < to; ) {
      if (blocks && !mayHold!.has(blocks[i]!)) {
        const b = blocks[i]!;
        for (i++; i < to && blocks[i] === b; i++);
        continue;
      }
      if (++sinceCheck >= CHECK_EVERY) {
        sinceCheck = 0;
        // Where i starts an instant, every row of the one before is done (after a run of
        // ruled-out rows, i may be within one).
        if (i > from && times[i - 1] !== times[i]) last = { ts: times[i - 1]!, rid: 0 };
        if (last) limits.onProgress?.(last);
        if (overBudget(performance.now())) return { last: last!, complete: false };
        await new Promise<void>((resolve) => setImmediate(resolve));
        stillThere();
      }
      const ts = times[i]!;
      const atCursor = cursor !== null && ts === cursor.ts;
      // Most instants hold one row (the row at `to` is older than the window, never equal).
      if (times[i + 1] !== ts && !atCursor) {
        if (passes(i) && consider(i)) return { last: last!, complete: false };
        i++;
        continue;
      }
      let end = i + 1;
      while (end < to && times[end] === ts) end++;
      if (!atCursor || cursor.rid !== 0) {
        const rows: number[] = [];
        for (let k = i; k < end; k++) if (passes(k)) rows.push(k);
        for (const k of instantInIdOrder(store, p, c, rows, atCursor ? cursor.rid : 0, limits.tiesInAnyOrder === true)) {
          if (consider(k)) return { last: last!, complete: false };
        }
      }
      i = end;
    }
    // The whole partition (within the window) was looked at: the walk goes on below its start.
    if (to > from || !pass) last = { ts: Math.min(p.start, q.end), rid: 0 };
    if (last) limits.onProgress?.(last);
    if (overBudget(performance.now())) return { last: last!, complete: false };
    if (to > from) {
      sinceCheck = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return { last, complete: true };
}

/** What decides a record of the window for a text search: ruled out (or not in the window), its text, or a match. */
const RULED_OUT = 0;
const BY_TEXT = 1;
const MATCHES = 2;

/**
 * Per record of a partition (by its number in the record file), for the rows of [from, to) that
 * pass the row filter: what decides it. The record words rule records out (or in, for a word
 * search), then an edge record's URL may rule it in (url-hits.ts); the rest are left to their
 * text (or, without record texts, their record). Only those records' text chunks are read.
 */
async function searchVerdicts(c: ScanColumns, pass: (i: number) => boolean, from: number, to: number, words: WordHits | null, urls: UrlHits | null, check: () => void, partitionsLeft: number): Promise<{ of: Uint8Array; byText: number }> {
  const { of, byText } = verdictPass(c, pass, from, to, words, urls, null)!;
  if (!urls) return { of, byText };
  await urls.decide(check, partitionsLeft);
  return { of, byText: urls.settle(c.url, c.rid, from, to, of, BY_TEXT, MATCHES) };
}

/**
 * searchVerdicts in one pass when the URL of every row that needs one is tested already
 * (`tested`: UrlHits.tested), with the rows the words and URLs match listed in decidedRows in
 * row order (as rowsDecided lists them when no row is left to its text): about a third of a
 * week's counting of a common phrase was the note of each row's URL, the settling pass and the
 * listing pass. Null at the first row whose URL is not tested (searchVerdicts then).
 */
function knownUrlVerdicts(c: ScanColumns, pass: (i: number) => boolean, from: number, to: number, words: WordHits | null, tested: Uint8Array | null): { of: Uint8Array; byText: number; listed: number } | null {
  if (!tested) return null;
  const out = verdictPass(c, pass, from, to, words, null, tested);
  if (out) byKnownUrls++;
  return out;
}

/** Partitions whose verdicts knownUrlVerdicts gave, by this process (tests). */
let byKnownUrls = 0;
export const partitionsByKnownUrls = (): number => byKnownUrls;

/**
 * The pass over the rows both give verdicts by: with `tested`, the URLs' verdicts are read and
 * the matches listed (null at an untested URL); without, each URL a row leaves to its text is
 * noted for `urls` to decide.
 */
function verdictPass(c: ScanColumns, pass: (i: number) => boolean, from: number, to: number, words: WordHits | null, urls: UrlHits | null, tested: Uint8Array | null): { of: Uint8Array; byText: number; listed: number } | null {
  const { rid } = c;
  const url = urls || tested ? c.url : null;
  let top = 0;
  for (let i = from; i < to; i++) if (rid[i]! > top) top = rid[i]!;
  const out = new Uint8Array(top);
  const rows = tested ? rowsFor(to - from) : null;
  // Locals, not property reads, in the loop that every row of a week passes through (9M at 10M records).
  const wordOf = words ? words.of : null;
  const covered = words ? words.records : 0;
  const exact = words !== null && words.exact;
  const everyRow = pass === EVERY_ROW;
  const untested = tested ? tested.length : 0;
  let listed = 0;
  let byText = 0;
  for (let i = from; i < to; i++) {
    if (!everyRow && !pass(i)) continue;
    const r = rid[i]! - 1;
    const v = r < covered ? wordOf![r] : UNKNOWN;
    if (v === NO_MATCH) continue;
    if (v === MATCH && exact) {
      out[r] = MATCHES;
      if (rows) rows[listed++] = i;
      continue;
    }
    const u = url === null ? 0 : url[i]!;
    if (u !== 0) {
      if (tested) {
        const t = u < untested ? tested[u] : 0;
        if (t === URL_MATCH) {
          out[r] = MATCHES;
          rows![listed++] = i;
          continue;
        }
        if (t !== URL_NO_MATCH) return null;
      } else urls!.want(u);
    }
    out[r] = BY_TEXT;
    byText++;
  }
  return { of: out, byText, listed };
}

/**
 * The rows of [from, to) that match the text search and the row filter, listed in decidedRows,
 * as `verdicts` (searchVerdicts: a row the filter refuses is ruled out) and then the record texts
 * tell (none needed when the verdicts leave nothing to them); null when the texts leave a row to
 * its record (no usable group holds it). The groups read stay with `texts` for the walk that
 * then reads those records.
 */
function rowsDecided(verdicts: Uint8Array, c: ScanColumns, from: number, to: number, texts: TextHitTest | null): { count: number } | null {
  const rows = rowsFor(to - from);
  const { rid } = c;
  let count = 0;
  for (let i = from; i < to; i++) {
    const v = verdicts[rid[i]! - 1];
    if (v === RULED_OUT) continue;
    if (v === MATCHES) {
      rows[count++] = i;
      continue;
    }
    const hit = texts?.test(rid[i]! - 1);
    if (hit === undefined) return null;
    if (hit) rows[count++] = i;
  }
  return { count };
}

/** The rows of [from, to) that pass the row filter and the exact record words match, listed in decidedRows. */
function wordsDecided(words: Uint8Array, c: ScanColumns, pass: (i: number) => boolean, from: number, to: number): { count: number } {
  const rows = rowsFor(to - from);
  const { rid } = c;
  let count = 0;
  for (let i = from; i < to; i++) if (words[rid[i]! - 1] === MATCH && pass(i)) rows[count++] = i;
  return { count };
}

/** The rows a partition's words and texts decided, handed to ScanLimits.columns: one array for every walk, read before the walk's next turn. */
let decidedRows = new Int32Array(0);
const rowsFor = (n: number): Int32Array => (decidedRows.length >= n ? decidedRows : (decidedRows = new Int32Array(n)));

/**
 * The arrays a walk that may count partitions from their columns reads first: the instants, the
 * row numbers (the words and texts find records by them), the filters' and what `columnsRead`
 * says the count reads (all but the record places when it does not say). A week at 10M is 9M
 * rows: each array left out is 36 MB not read.
 */
function tallyColumnsOf(q: ExplorerQuery, read: readonly ColumnName[] | undefined): ColumnName[] {
  // The URLs when they may decide a search (url-hits.ts).
  const urls: ColumnName[] = q.q && q.source.hot === 'edge' ? ['url'] : [];
  if (!read) return ROW_COLUMNS.filter((n) => n !== 'blk' && n !== 'boff' && (n !== 'url' || urls.length));
  return [...new Set<ColumnName>(['ts', 'rid', ...filterColumns(q), ...read, ...urls])];
}

/** A partition's columns with every row array loaded (`c` itself when it can load them, else as the store reads them again). */
function wholeColumns(store: LogStore, p: Partition, c: ScanColumns): ScanColumns | null {
  try {
    return c.load(ROW_COLUMNS);
  } catch {
    return store.committedColumns(p, ROW_COLUMNS);
  }
}

/**
 * Rows of one instant in the order of their ids, as logs.all orders them (row number breaks a
 * tie of ids), after row `after` in that order when it is one of them (0: all of them). Ids are
 * read from the records: instants shared by several records are rare. With `anyOrder` (a walk
 * that only counts) no record is read: row order, after `after` in it.
 */
function instantInIdOrder(store: LogStore, p: Partition, c: ScanColumns, rows: number[], after: number, anyOrder: boolean): number[] {
  if (anyOrder) return after ? rows.filter((k) => c.rid[k]! < after) : rows;
  if (rows.length > 1) {
    const ref = projectRefs(store);
    const idOf = new Map<number, string>();
    for (const k of rows) {
      const raw = store.readRecord(p, { blk: c.blk[k]!, boff: c.boff[k]!, len: c.len[k]! });
      idOf.set(k, canonicalRow(raw.toString('utf8'), p.source, ref(c.project[k]!), c.ts[k]).id);
    }
    rows.sort((a, b) => compareRecordIds(idOf.get(a)!, idOf.get(b)!) || c.rid[a]! - c.rid[b]!);
  }
  const at = after ? rows.findIndex((k) => c.rid[k] === after) : -1;
  // A cursor row that is not there (the store was rebuilt since): the whole instant again,
  // rather than rows lost; the page drops rows it already has.
  return at < 0 ? rows : rows.slice(at + 1);
}

/**
 * Stops a request its client abandoned (nobody reads the answer) or that passed its deadline
 * (a 503, as the endpoints answer at their limit).
 */
export function checkStop(deadline: number | undefined, signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AppError('unavailable', 'the request was cancelled by its client');
  if (deadline !== undefined && performance.now() > deadline) {
    throw new AppError('unavailable', 'the request ran longer than its time limit and was stopped; narrow the range or the filters');
  }
}

/** Row i of a partition's columns as a ScanRow. */
function rowAt(p: Partition, c: ScanColumns, i: number): ScanRow {
  const text = (v: number, dict: readonly string[]) => (v === NONE ? null : dict[v]!);
  const status = c.status[i]!;
  return {
    p,
    rid: c.rid[i]!,
    ts: c.ts[i]!,
    project: c.project[i]!,
    blk: c.blk[i]!,
    boff: c.boff[i]!,
    len: c.len[i]!,
    status: status === NONE ? null : status,
    method: text(c.method[i]!, c.dicts.method),
    path: c.path[i]!,
    level: text(c.level[i]!, c.dicts.level),
    function: c.fn[i] || null,
    url: c.url[i] || null,
  };
}

/**
 * The text search: a test of one row, and for a plain text search also a test of a whole
 * block of records (raw bytes; null while the block is still being filled), which needs the
 * text somewhere in it. Null without a search.
 */
interface TextMatcher {
  row: (row: ScanRow, record: () => Buffer) => boolean;
  /** The text search by a partition's record texts (store/block-texts.ts), when it has them, for the records `verdicts` leaves to them (searchVerdicts): see textHits. */
  texts: ((p: Partition, verdicts: Uint8Array) => TextHitTest | null) | null;
  /** The text search by an edge record's URL (url-hits.ts). */
  urls: UrlHits | null;
  /** What the record must pass besides the text search (field conditions), once the record texts passed it. */
  rest: ((row: ScanRow, record: () => Buffer) => boolean) | null;
  block: ((raw: Buffer | null) => boolean) | null;
  /** Trigram bits every block holding a match has (store/block-grams.ts), when the text or the pattern's literals allow. */
  grams: Int32Array[];
  /** Value bits every block holding a match has (a field index's, store/value-bits.ts), for the conditions left to the records. */
  values: ValueNeed[];
}

/** Texts a search's matches hold as they are written in the records' bytes (for the block index). */
export function searchLiterals(search: NonNullable<ExplorerQuery['q']>): string[] {
  if (search.re) return requiredLiterals(search.text).filter(isRawSafe);
  return search.rawSafe ? [search.lower] : [];
}

/**
 * What decides a row by its record: the text search and the field `conditions` (those the
 * partition's field index does not answer), both of which must hold. Their literal texts feed
 * the block index and the whole-block test, so blocks that cannot hold a match are not read.
 */
function recordMatcher(store: LogStore, q: ExplorerQuery, conditions: readonly FieldCondition[]): TextMatcher | null {
  const text = textMatcher(store, q);
  const fields = fieldMatcher(conditions);
  if (!fields) return text;
  const literals = conditionLiterals(conditions);
  const blockTests = literals.map((l) => throughEscapes(blockSearch(l.toLowerCase())));
  const grams = conditionBlockBits(conditions);
  const textBlock = text?.block ?? null;
  const rest = (raw: Buffer) => {
    if (blockTests.length && !blockTests.every((t) => t(raw))) return false;
    const { readable, metadata } = metadataOfRecord(raw.toString('utf8'));
    return readable && fields(metadata);
  };
  return {
    texts: text?.texts ?? null,
    urls: text?.urls ?? null,
    rest: (_, record) => rest(record()),
    grams: [...(text?.grams ?? []), ...grams],
    values: conditionValueNeeds(conditions),
    block:
      textBlock || blockTests.length
        ? (raw) => raw === null || ((!textBlock || textBlock(raw)) && blockTests.every((t) => t(raw)))
        : null,
    row: (row, record) => {
      const raw = record();
      if (blockTests.length && !blockTests.every((t) => t(raw))) return false;
      if (text && !text.row(row, record)) return false;
      return rest(raw);
    },
  };
}

function textMatcher(store: LogStore, q: ExplorerQuery): TextMatcher | null {
  const search = q.q;
  if (!search) return null;
  // The one rule of what matches (text-hits.ts), for the records searched one by one too.
  const test = textTest(search);
  const withUrl = q.source.hot === 'edge' || q.source.hot === 'function_edge';
  // Only ASCII letters fold (rawSafe texts are printable ASCII). JSON may have escaped some of
  // the text's characters in the record (`\/`): those are looked at as the text they stand for.
  const inBlock = search.rawSafe ? throughEscapes(blockSearch(search.lower)) : null;
  const urlSeen = new Map<number, boolean>();
  const grams = searchLiterals(search)
    .map((t) => trigramBits(Buffer.from(t, 'latin1')))
    .filter((b): b is Int32Array => b !== null);
  return {
    texts: (p, verdicts) => {
      const t = store.blockTexts(p);
      // Only the chunks of text holding records the words and URLs leave to them are read.
      return t ? textHits(t, search, (blk) => store.textsDamaged(p, blk), (r) => verdicts[r] === BY_TEXT) : null;
    },
    // (Every record matches an empty text: nothing to decide.)
    urls: q.source.hot === 'edge' && (search.re !== null || search.lower !== '') ? urlHits(store, search) : null,
    rest: null,
    grams,
    values: [],
    block: inBlock ? (raw) => raw === null || inBlock(raw) : null,
    row: (row, record) => {
      const raw = record();
      // Most records do not hold the text anywhere (their URL included): skip them without
      // parsing or a dictionary read.
      if (inBlock && !inBlock(raw)) return false;
      if (row.url !== null) {
        // Once per distinct URL of the search, not once per record.
        let hit = urlSeen.get(row.url);
        if (hit === undefined) urlSeen.set(row.url, (hit = test(store.urls.get(row.url))));
        if (hit) return true;
      }
      // The message read straight from the record's bytes when JSON wrote it plainly (no
      // escapes): most records, without parsing the whole record.
      const plain = withUrl && row.url === null ? null : messageRange(raw);
      if (plain) return inBlock ? inBlock(raw.subarray(plain[0], plain[1])) : test(raw.toString('utf8', plain[0], plain[1]));
      const { message, url } = recordTexts(raw.toString('utf8'), withUrl && row.url === null);
      return test(message) || (url !== null && test(url));
    },
  };
}

const MESSAGE_KEY = Buffer.from('"event_message"');
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * Where a record's `event_message` text lies in its JSON bytes, when that can be told without
 * parsing: the key appears once, its value is a string, and the string holds no escape (its
 * bytes are then its text, in UTF-8). Null otherwise: the caller parses the record.
 */
export function messageRange(raw: Buffer): [number, number] | null {
  const k = raw.indexOf(MESSAGE_KEY);
  if (k < 0 || raw.indexOf(MESSAGE_KEY, k + 1) >= 0) return null;
  let i = k + MESSAGE_KEY.length;
  while (isSpace(raw[i])) i++;
  if (raw[i++] !== 0x3a) return null;
  while (isSpace(raw[i])) i++;
  if (raw[i++] !== 0x22) return null;
  const end = raw.indexOf(0x22, i);
  if (end < 0) return null;
  const slash = raw.indexOf(0x5c, i);
  return slash >= 0 && slash < end ? null : [i, end];
}

/** Project refs by catalog id, for records (their project is the ref resolved at import). */
export function projectRefs(store: LogStore): (id: number) => string {
  const refs = new Map<number, string>();
  return (id) => {
    let ref = refs.get(id);
    if (ref === undefined) {
      ref = (store.catalog.rows('SELECT ref FROM projects WHERE id = ?', [id])[0]?.[0] as string | undefined) ?? '';
      refs.set(id, ref);
    }
    return ref;
  };
}

/** Function ids (text) by dictionary id. */
export function functionTexts(store: LogStore): (id: number | null) => string | null {
  const texts = new Map<number, string | null>();
  return (id) => {
    if (id === null || id === 0) return null;
    let t = texts.get(id);
    if (t === undefined) {
      t = (store.catalog.rows('SELECT function_id FROM functions WHERE id = ?', [id])[0]?.[0] as string | undefined) ?? null;
      texts.set(id, t);
    }
    return t;
  };
}

/** A row's explorer fields as the API shows them (only those its source has). */
export function rowFields(store: LogStore, q: ExplorerQuery, row: ScanRow, fnText: (id: number | null) => string | null): ExplorerFields {
  const out: ExplorerFields = {};
  for (const f of fieldsOf(q.source)) {
    if (f === 'function_id') {
      out.function_id = fnText(row.function);
      // The slug its records name (`/functions/v1/<slug>`), shown beside the id.
      if (row.function) out.function_slug = functionSlugs(store, row.project, [row.function]).get(row.function) ?? null;
    } else if (f === 'path') out.path = row.path === NONE ? null : store.paths.get(row.path);
    else if (f === 'status') out.status = row.status;
    else out[f] = row[f];
  }
  return out;
}

/** The record as logs.all returns it, plus the explorer's fields. */
export function recordOf(q: ExplorerQuery, row: ScanRow, raw: Buffer, projectRef: string): Omit<ExplorerRow, 'fields'> {
  // The canonical form always has these (an id derived where the record gave none, metadata as a list).
  const rec = canonicalRow(raw.toString('utf8'), q.source, projectRef, row.ts);
  return { id: rec.id, timestamp: row.ts, event_message: rec.event_message, metadata: rec.metadata as unknown[] };
}
