/**
 * Fields inside records: the explorer's `field=<path>:<value>` filters, facets on any field,
 * and the field list a source's records carry. A path is the dotted path inside `metadata`, as
 * the ClickHouse-era `log_attributes` keys name it (`request.headers.cf_ipcountry`,
 * `parsed.user_name`); one-element arrays of the query shape are looked through, so both
 * metadata shapes answer alike. These read the record itself (none is a hot column), so a
 * query with them walks records like a text search does.
 *
 * A condition is `path:value` (equal, as text: `200` matches the number 200), `path:!value`
 * (not equal; records without the field pass), `path:value*` (starts with), `path:>=N` and
 * `path:<=N` (numbers; records without a number there fail). Conditions on different paths,
 * and exclusions and bounds, must all hold; several equal / starts-with values of one path are
 * alternatives (country DE or FR).
 */
import { badParam } from '../errors.ts';

export type FieldTest = { kind: 'eq'; value: string } | { kind: 'prefix'; value: string } | { kind: 'ne'; value: string } | { kind: 'gte' | 'lte'; value: number };

export interface FieldCondition {
  path: string;
  /** The segments of `path`. */
  keys: string[];
  test: FieldTest;
}

/** Longest path and value a condition takes (longer ones are refused, not cut). */
const MAX_PATH = 200;
const MAX_VALUE = 1000;
/** Conditions a query may carry. */
export const MAX_FIELD_CONDITIONS = 20;
const PATH = /^[A-Za-z0-9_@$-]+(\.[A-Za-z0-9_@$-]+)*$/;
/** Facets on fields inside the records one request may ask for. */
export const MAX_RECORD_FACETS = 5;

/** Whether a name is a dotted path inside the records (a field condition's or a facet's). */
export const isFieldPath = (name: string): boolean => name.length <= MAX_PATH && PATH.test(name);

/** Reads the `field` parameters; every rejection names `field` and the condition. */
export function readFieldConditions(values: readonly string[]): FieldCondition[] {
  if (values.length > MAX_FIELD_CONDITIONS) throw badParam('field', `field is given ${values.length} times; at most ${MAX_FIELD_CONDITIONS} conditions`);
  return values.map((text) => {
    const colon = text.indexOf(':');
    if (colon <= 0) throw badParam('field', `field takes path:value (e.g. request.headers.cf_ipcountry:DE), not ${text.slice(0, 60)}`);
    const path = text.slice(0, colon);
    const rest = text.slice(colon + 1);
    if (path.length > MAX_PATH || !PATH.test(path)) throw badParam('field', `field path ${path.slice(0, 60)} is not a dotted path of letters, digits and _ (e.g. parsed.user_name)`);
    if (rest.length > MAX_VALUE) throw badParam('field', `field value is longer than ${MAX_VALUE} characters`);
    return { path, keys: path.split('.'), test: readTest(rest, path) };
  });
}

function readTest(rest: string, path: string): FieldTest {
  for (const [op, kind] of [['>=', 'gte'], ['<=', 'lte']] as const) {
    if (!rest.startsWith(op)) continue;
    const n = Number(rest.slice(2));
    if (rest.length === 2 || !Number.isFinite(n)) throw badParam('field', `field ${path}:${op} takes a number, not ${rest.slice(2, 40)}`);
    return { kind, value: n };
  }
  if (rest.startsWith('!')) return { kind: 'ne', value: rest.slice(1) };
  if (rest.endsWith('*') && rest.length > 1) return { kind: 'prefix', value: rest.slice(0, -1) };
  return { kind: 'eq', value: rest };
}

/** The value at `keys` in a record's metadata (one-element arrays looked through), or undefined. */
export function valueAt(metadata: unknown, keys: readonly string[]): unknown {
  let v = metadata;
  for (const k of keys) {
    while (Array.isArray(v)) v = v.length === 1 ? v[0] : undefined;
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  while (Array.isArray(v) && v.length === 1) v = v[0];
  return v;
}

/** A field's value as the explorer shows and compares it: scalars as text; objects and arrays as JSON. */
export function fieldText(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** The test of a record's metadata by every condition (see the header), or null when there are none. */
export function fieldMatcher(conditions: readonly FieldCondition[]): ((metadata: unknown) => boolean) | null {
  if (!conditions.length) return null;
  const byPath = new Map<string, FieldCondition[]>();
  for (const c of conditions) byPath.set(c.path, [...(byPath.get(c.path) ?? []), c]);
  const groups = [...byPath.values()].map((cs) => ({
    keys: cs[0]!.keys,
    any: cs.filter((c) => c.test.kind === 'eq' || c.test.kind === 'prefix').map((c) => c.test),
    all: cs.filter((c) => c.test.kind !== 'eq' && c.test.kind !== 'prefix').map((c) => c.test),
  }));
  return (metadata) => {
    for (const g of groups) {
      const text = fieldText(valueAt(metadata, g.keys));
      if (g.any.length && !g.any.some((t) => text !== null && (t.kind === 'eq' ? text === t.value : text.startsWith(t.value as string)))) return false;
      for (const t of g.all) {
        if (t.kind === 'ne') {
          if (text === t.value) return false;
        } else {
          const n = text === null ? NaN : Number(text);
          if (!Number.isFinite(n) || (t.kind === 'gte' ? n < (t.value as number) : n > (t.value as number))) return false;
        }
      }
    }
    return true;
  };
}

/**
 * Texts every record passing the conditions holds in its bytes (for the block index and the
 * block test): the values of a path with a single equal or starts-with value. Numbers are
 * left out (JSON may write them otherwise), as are values JSON would escape.
 */
export function conditionLiterals(conditions: readonly FieldCondition[]): string[] {
  const byPath = new Map<string, FieldCondition[]>();
  for (const c of conditions) if (c.test.kind === 'eq' || c.test.kind === 'prefix') byPath.set(c.path, [...(byPath.get(c.path) ?? []), c]);
  const out: string[] = [];
  for (const cs of byPath.values()) {
    if (cs.length !== 1) continue;
    const v = cs[0]!.test.value as string;
    if (/^[\x20-\x7e]+$/.test(v) && !/["\\]/.test(v) && !/^-?\d/.test(v)) out.push(v);
  }
  return out;
}

export interface DiscoveredField {
  path: string;
  /** The JSON types seen there, most common first. */
  types: string[];
  /** Records of the sample holding it. */
  count: number;
  /** A few distinct values seen (scalars, as text). */
  examples: string[];
}

/**
 * The fields records carry, from a sample of their metadata: every dotted path to a scalar
 * (one-element arrays looked through; longer arrays are one field of type array), most common
 * first. Like Studio's field reference, but read from the data.
 */
export function discoverFields(metadatas: Iterable<unknown>, maxFields = 500): DiscoveredField[] {
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
    .map(([path, f]) => ({ path, types: [...f.types].sort((a, b) => b[1] - a[1]).map(([t]) => t), count: f.count, examples: [...f.examples] }))
    .sort((a, b) => b.count - a.count || (a.path < b.path ? -1 : 1))
    .slice(0, maxFields);
}
