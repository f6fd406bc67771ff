/**
 * Field conditions and facets from a partition's field index (store/field-columns.ts) instead of
 * its records: a condition is decided once per dictionary text, by the same test the record
 * walk applies to each record's value (record-fields.ts, conditionsByPath), and then per row by
 * its id; a facet counts ids and reads the texts of those counted. A path the index does not
 * hold for a partition (not indexed, not built yet, capped, damaged) is read from that
 * partition's records, so an answer never depends on what is indexed, only its speed does.
 */
import { metadataOfRecord } from '../store/record.ts';
import { ABSENT, FIRST_TEXT, UNREADABLE } from '../store/field-columns.ts';
import type { LogStore } from '../store/log-store.ts';
import type { Partition } from '../store/partition.ts';
import type { ScanColumns } from '../store/scan-columns.ts';
import { fieldText, valueAt } from '../../contract/fields.ts';
import { conditionBlockBits, conditionsByPath, conditionValueNeeds, fieldMatcher, type FieldCondition } from './record-fields.ts';
import { EVERY_ROW } from './row-filter.ts';

type Test = (i: number) => boolean;

/**
 * The paths the field index holds for the first of `partitions` (newest first) that has one
 * (every path its records carry with few enough values), in path order; none before one is built.
 */
export function indexedPathsOf(store: LogStore, partitions: readonly Partition[]): string[] {
  for (const p of partitions) {
    const fx = store.committedColumns(p)?.fieldIndex();
    if (fx) return fx.kept;
  }
  return [];
}

/** Both tests (EVERY_ROW stays out of the way). */
export function bothTests(a: Test, b: Test): Test {
  if (a === EVERY_ROW) return b;
  if (b === EVERY_ROW) return a;
  return (i) => a(i) && b(i);
}

/**
 * The conditions a partition's field index answers, as one test of a row by its ids, and the
 * conditions left to its records (`rest`). `test` is null when no row of the partition can
 * pass (some path has no passing value): the partition is skipped, whatever the rest says.
 */
export function indexedConditions(conditions: readonly FieldCondition[], c: ScanColumns): { test: Test | null; rest: FieldCondition[] } {
  if (!conditions.length) return { test: EVERY_ROW, rest: [] };
  const fx = c.fieldIndex();
  const rest: FieldCondition[] = [];
  let test: Test = EVERY_ROW;
  for (const g of conditionsByPath(conditions)) {
    const ids = fx?.has(g.path) ? fx.ids(g.path) : null;
    const texts = ids ? fx!.texts(g.path) : null;
    if (!ids || !texts) {
      rest.push(...g.conditions);
      continue;
    }
    // Decided once per text: a row is then one table look-up. A record that is not JSON passes no condition, as in the walk.
    const pass = new Uint8Array(FIRST_TEXT + texts.length);
    pass[ABSENT] = g.test(null) ? 1 : 0;
    pass[UNREADABLE] = 0;
    let any = pass[ABSENT] === 1;
    for (let k = 0; k < texts.length; k++) if ((pass[FIRST_TEXT + k] = g.test(texts[k]!) ? 1 : 0)) any = true;
    if (!any) return { test: null, rest: [] };
    test = bothTests(test, (i) => pass[ids[i]!] === 1);
  }
  return { test, rest };
}


/** Reads row i's record of a partition's columns (its address loaded on first use). */
function recordReader(store: LogStore, p: Partition, c: ScanColumns): (i: number) => Buffer {
  c.load(['blk', 'boff', 'len']);
  return (i) => store.readRecord(p, { blk: c.blk[i]!, boff: c.boff[i]!, len: c.len[i]! });
}

/**
 * The test of a partition's rows by the field conditions, with `pass` (its other filters)
 * first: the indexed ones by ids, the rest by parsing the record (as the walk does). Null when
 * no row can pass.
 */
export function fieldRowTest(store: LogStore, p: Partition, c: ScanColumns, conditions: readonly FieldCondition[], pass: Test): Test | null {
  const { test, rest } = indexedConditions(conditions, c);
  if (!test) return null;
  let out = bothTests(pass, test);
  if (rest.length) {
    const match = fieldMatcher(rest)!;
    const record = recordReader(store, p, c);
    const mayHold = blockMayHold(store, p, c, rest);
    out = bothTests(out, (i) => {
      if (!mayHold(i)) return false;
      const m = metadataOfRecord(record(i).toString('utf8'));
      return m.readable && match(m.metadata);
    });
  }
  return out;
}

/**
 * Whether row i's block may hold a record passing `conditions`, by the partition's block index
 * and its field index's value bits (decided once per block), so the records of the blocks they
 * rule out are not read; always true when neither can tell.
 */
function blockMayHold(store: LogStore, p: Partition, c: ScanColumns, conditions: readonly FieldCondition[]): (i: number) => boolean {
  const test = blockTest(store, p, c, conditions);
  if (!test) return () => true;
  const blk = c.blk;
  const decided = new Map<number, boolean>();
  return (i) => {
    const b = blk[i]!;
    let has = decided.get(b);
    if (has === undefined) decided.set(b, (has = test(b)));
    return has;
  };
}

/** The test of a block of the partition by the conditions' trigrams (the block index) and value bits (the field index), or null when neither can tell. */
function blockTest(store: LogStore, p: Partition, c: ScanColumns, conditions: readonly FieldCondition[]): ((blk: number) => boolean) | null {
  const needs = conditionBlockBits(conditions);
  const values = conditionValueNeeds(conditions);
  const grams = needs.length ? store.blockGrams(p) : null;
  const blocks = values.length ? (c.fieldIndex()?.blocksMayHold(values) ?? null) : null;
  if (!grams && !blocks) return null;
  return (b) => (!blocks || blocks.has(b)) && (!grams || needs.every((need) => grams.mayHold(b, need)));
}

/** Row i's value of `path` from the partition's field index: its text, null when absent, undefined when the index does not hold the path. */
export function indexedValue(c: ScanColumns, path: string, i: number): string | null | undefined {
  const fx = c.fieldIndex();
  if (!fx?.has(path)) return undefined;
  const ids = fx.ids(path);
  const texts = ids ? fx.texts(path) : null;
  if (!ids || !texts) return undefined;
  const id = ids[i]!;
  return id >= FIRST_TEXT ? texts[id - FIRST_TEXT]! : null;
}

/**
 * Adds the values of each path in the rows [from, to) that pass to `into` (value text -> rows):
 * by id from the field index (texts read once per partition), else from the records.
 */
export function countFieldRows(store: LogStore, p: Partition, c: ScanColumns, paths: readonly string[], from: number, to: number, pass: Test, into: ReadonlyMap<string, Map<string | number, number>>): void {
  const every = pass === EVERY_ROW;
  const fx = c.fieldIndex();
  const unindexed: string[] = [];
  for (const path of paths) {
    const ids = fx?.has(path) ? fx.ids(path) : null;
    const texts = ids ? fx!.texts(path) : null;
    if (!ids || !texts) {
      unindexed.push(path);
      continue;
    }
    const per = new Float64Array(FIRST_TEXT + texts.length);
    for (let i = from; i < to; i++) if (every || pass(i)) per[ids[i]!]! += 1;
    const m = into.get(path)!;
    for (let k = 0; k < texts.length; k++) {
      const n = per[FIRST_TEXT + k]!;
      if (n) m.set(texts[k]!, (m.get(texts[k]!) ?? 0) + n);
    }
  }
  if (!unindexed.length) return;
  // Not in this partition's index: its records are read, as the walk reads them.
  const record = recordReader(store, p, c);
  const keys = unindexed.map((path) => [into.get(path)!, path.split('.')] as const);
  for (let i = from; i < to; i++) {
    if (!every && !pass(i)) continue;
    const { metadata } = metadataOfRecord(record(i).toString('utf8'));
    for (const [m, k] of keys) {
      const v = fieldText(valueAt(metadata, k));
      if (v !== null) m.set(v, (m.get(v) ?? 0) + 1);
    }
  }
}

/**
 * Adds the whole partition's values of each path from its counts per (project, value), when
 * its field index holds every path (else false, and nothing is added). `project` null: all.
 */
export function countFieldWhole(c: ScanColumns, paths: readonly string[], project: number | null, into: ReadonlyMap<string, Map<string | number, number>>): boolean {
  const fx = c.fieldIndex();
  if (!fx) return false;
  const parts = paths.map((path) => {
    const counts = fx.has(path) ? fx.counts(path) : null;
    return { path, counts, texts: counts ? fx.texts(path) : null };
  });
  if (parts.some((x) => !x.counts || !x.texts)) return false;
  for (const { path, counts, texts } of parts) {
    const m = into.get(path)!;
    for (let j = 0; j < counts!.k; j++) {
      if (project !== null && counts!.project[j] !== project) continue;
      const text = texts![counts!.id[j]! - FIRST_TEXT]!;
      m.set(text, (m.get(text) ?? 0) + counts!.count[j]!);
    }
  }
  return true;
}
