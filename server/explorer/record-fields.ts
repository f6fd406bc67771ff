/**
 * Fields inside records: the explorer's `field=<path>:<value>` filters, facets on any field,
 * and the field list a source's records carry. A path is the dotted path inside `metadata`, as
 * the ClickHouse-era `log_attributes` keys name it (`request.headers.cf_ipcountry`,
 * `parsed.user_name`); one-element arrays of the query shape are looked through, so both
 * metadata shapes answer alike. A path the source indexes (store/field-columns.ts) is read from
 * its partition's field index where one is built (field-index.ts); any other path, and any
 * partition without it, is read from the record itself, walking records like a text search.
 *
 * A condition is written `path:value`, `path:!value`, `path:value*`, `path:>=N` or `path:<=N`
 * (read by contract/fields.ts, as the page writes it). A record without the field passes a
 * not-equal and fails a number bound. Conditions on different paths, and exclusions and bounds,
 * must all hold; several equal / starts-with values of one path are alternatives (country DE or FR).
 */
import { fieldText, MAX_FIELD_FILTERS, readFieldFilter, valueAt, type FieldFilter } from '../../contract/fields.ts';
import type { FieldPath } from '../../contract/api-types.ts';
import { badParam } from '../errors.ts';
import { trigramBits } from '../store/block-grams.ts';
import { valueNeed } from '../store/value-bits.ts';

/** A condition as the records are tested by it: the written form read (contract/fields.ts), numbers as numbers. */
export type FieldTest = { op: 'is' | 'prefix' | 'not'; value: string } | { op: 'gte' | 'lte'; value: number };

export interface FieldCondition {
  path: string;
  /** The segments of `path`. */
  keys: string[];
  test: FieldTest;
}

const testOf = (f: FieldFilter): FieldTest => (f.op === 'gte' || f.op === 'lte' ? { op: f.op, value: Number(f.value) } : { op: f.op, value: f.value });

/** Reads the `field` parameters; every rejection names `field` and the condition. */
export function readFieldConditions(values: readonly string[]): FieldCondition[] {
  if (values.length > MAX_FIELD_FILTERS) throw badParam('field', `field is given ${values.length} times; at most ${MAX_FIELD_FILTERS} conditions`);
  return values.map((text) => {
    const read = readFieldFilter(text);
    if (!read.ok) throw badParam('field', read.reason);
    return { path: read.filter.path, keys: read.filter.path.split('.'), test: testOf(read.filter) };
  });
}

/** The conditions on one path, and the test of its value (as fieldText writes it; null when absent). */
export interface PathConditions {
  path: string;
  keys: string[];
  conditions: FieldCondition[];
  test: (text: string | null) => boolean;
}

/**
 * The conditions grouped by path, each group with the test of a value: the record walk applies
 * it to the value read from each record, the field index once per dictionary text
 * (field-index.ts), so both decide alike.
 */
export function conditionsByPath(conditions: readonly FieldCondition[]): PathConditions[] {
  const byPath = new Map<string, FieldCondition[]>();
  for (const c of conditions) byPath.set(c.path, [...(byPath.get(c.path) ?? []), c]);
  return [...byPath.values()].map((cs) => {
    const any = cs.filter((c) => c.test.op === 'is' || c.test.op === 'prefix').map((c) => c.test);
    const all = cs.filter((c) => c.test.op !== 'is' && c.test.op !== 'prefix').map((c) => c.test);
    const test = (text: string | null): boolean => {
      if (any.length && !any.some((t) => text !== null && (t.op === 'is' ? text === t.value : text.startsWith(t.value as string)))) return false;
      for (const t of all) {
        if (t.op === 'not') {
          if (text === t.value) return false;
        } else {
          const n = text === null ? NaN : Number(text);
          if (!Number.isFinite(n) || (t.op === 'gte' ? n < (t.value as number) : n > (t.value as number))) return false;
        }
      }
      return true;
    };
    return { path: cs[0]!.path, keys: cs[0]!.keys, conditions: cs, test };
  });
}

/** The test of a record's metadata by every condition (see the header), or null when there are none. */
export function fieldMatcher(conditions: readonly FieldCondition[]): ((metadata: unknown) => boolean) | null {
  if (!conditions.length) return null;
  const groups = conditionsByPath(conditions);
  return (metadata) => groups.every((g) => g.test(fieldText(valueAt(metadata, g.keys))));
}

/** The conditions a record must pass by holding one value: each path's equal or starts-with value, where it has one only. */
function requiredValues(conditions: readonly FieldCondition[]): Array<FieldCondition & { test: { op: 'is' | 'prefix'; value: string } }> {
  const byPath = new Map<string, FieldCondition[]>();
  for (const c of conditions) if (c.test.op === 'is' || c.test.op === 'prefix') byPath.set(c.path, [...(byPath.get(c.path) ?? []), c]);
  return [...byPath.values()].filter((cs) => cs.length === 1).map((cs) => cs[0] as FieldCondition & { test: { op: 'is' | 'prefix'; value: string } });
}

/**
 * Whether a number's text (fieldText: `String(n)`) may equal the value, or start with it: such
 * a record's bytes may spell the number otherwise (`1e3` for 1000), so they tell nothing of it.
 */
function numberMayMatch(value: string, prefix: boolean): boolean {
  return prefix ? /^[0-9.e+-]*$/.test(value) : value.trim() !== '' && String(Number(value)) === value;
}

/** The required values (requiredValues) every record passing holds in its bytes as written: no number may match them. */
const valuesInBytes = (conditions: readonly FieldCondition[]) => requiredValues(conditions).filter((c) => !numberMayMatch(c.test.value, c.test.op === 'prefix'));

/**
 * Texts every record passing the conditions holds in its bytes (for the block index and the
 * block test): the values of a path with a single equal or starts-with value, but those a
 * number may match and those JSON would escape.
 */
export function conditionLiterals(conditions: readonly FieldCondition[]): string[] {
  return valuesInBytes(conditions)
    .map((c) => c.test.value)
    .filter((v) => /^[\x20-\x7e]+$/.test(v) && !/["\\]/.test(v));
}

/** The block index's trigram bits (store/block-grams.ts) every block holding a record that passes the conditions has: those of their literal texts. */
export function conditionBlockBits(conditions: readonly FieldCondition[]): Int32Array[] {
  return conditionLiterals(conditions)
    .map((l) => trigramBits(Buffer.from(l, 'latin1')))
    .filter((b): b is Int32Array => b !== null);
}

/** A path's value bits (store/value-bits.ts) that every block holding a record that passes has. */
export interface ValueNeed {
  path: string;
  need: Int32Array;
}

/**
 * The value bits every block holding a record that passes the conditions has: one per path
 * with a single equal or starts-with value, where the bits can tell (a field index's value bits
 * compare the text as conditions do: numbers too).
 */
export function conditionValueNeeds(conditions: readonly FieldCondition[]): ValueNeed[] {
  const out: ValueNeed[] = [];
  for (const c of requiredValues(conditions)) {
    const need = valueNeed(c.path, c.test.value, c.test.op === 'prefix');
    if (need) out.push({ path: c.path, need });
  }
  return out;
}


/**
 * The fields records carry, from a sample of their metadata: every dotted path to a scalar
 * (one-element arrays looked through; longer arrays are one field of type array), most common
 * first, those among `indexed` marked so. Like Studio's field reference, but read from the data.
 */
export function discoverFields(metadatas: Iterable<unknown>, maxFields = 500, indexed: readonly string[] = []): FieldPath[] {
  const seen = new Map<string, { types: Map<string, number>; count: number; examples: Set<string> }>();
  const add = (path: string, v: unknown) => {
    let f = seen.get(path);
    if (!f) {
      if (seen.size >= maxFields * 4) return;
      seen.set(path, (f = { types: new Map(), count: 0, examples: new Set() }));
    }
    const type = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
    f.types.set(type, (f.types.get(type) ?? 0) + 1);
    f.count++;
    const text = fieldText(v);
    if (text !== null && type !== 'array' && f.examples.size < 5 && text.length <= 80) f.examples.add(text);
  };
  for (const m of metadatas) {
    const work: Array<[string, unknown, number]> = [['', m, 0]];
    for (let item = work.pop(); item; item = work.pop()) {
      let [prefix, v, depth] = item;
      while (Array.isArray(v) && v.length === 1) v = v[0];
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && depth < 16) {
        for (const [k, child] of Object.entries(v)) work.push([prefix ? `${prefix}.${k}` : k, child, depth + 1]);
      } else if (prefix) add(prefix, v);
    }
  }
  return [...seen]
    .map(([path, f]): FieldPath => ({ path, ...(indexed.includes(path) ? { indexed: true as const } : {}), types: [...f.types].sort((a, b) => b[1] - a[1]).map(([t]) => t), count: f.count, examples: [...f.examples] }))
    .sort((a, b) => b.count - a.count || (a.path < b.path ? -1 : 1))
    .slice(0, maxFields);
}
