/**
 * Filters on fields inside the records: `field=<path>:<value>` on every `/api/logs*` route and
 * in the page's URL, read and written here for both the server and the page. A path is the
 * dotted path inside `metadata` (`request.headers.cf_ipcountry`); one-element arrays of the
 * query shape are looked through, so both metadata shapes answer alike.
 *
 * `path:value` is equal (as text: `200` matches the number 200), `path:!value` not equal,
 * `path:value*` starts with, `path:>=N` and `path:<=N` compare numbers. The form has no escapes,
 * so some values cannot be written with some tests (unsendable). How conditions combine is the
 * server's (explorer/record-fields.ts).
 */

/** Conditions one query may carry, and facets on fields inside the records one request may ask for. */
export const MAX_FIELD_FILTERS = 20;
export const MAX_FIELD_FACETS = 5;
/** Longest path and value a condition takes (longer ones are refused, not cut). */
export const MAX_FIELD_PATH = 200;
export const MAX_FIELD_VALUE = 1000;

const KEY = /^[A-Za-z0-9_@$-]+$/;
const PATH = /^[A-Za-z0-9_@$-]+(\.[A-Za-z0-9_@$-]+)*$/;

/** Whether a key can be a step of a path (letters, digits, `_ @ $ -`). */
export const isFieldKey = (key: string): boolean => KEY.test(key);

/** Whether a name is a dotted path inside the records (a condition's, a facet's or a column's). */
export const isFieldPath = (name: string): boolean => name.length <= MAX_FIELD_PATH && PATH.test(name);

/** How a condition tests its field: equal (as text), not equal, starts with, at least, at most. */
export const FIELD_OPS = ['is', 'not', 'prefix', 'gte', 'lte'] as const;
export type FieldOp = (typeof FIELD_OPS)[number];

export interface FieldFilter {
  path: string;
  op: FieldOp;
  /** As written, without the form's `!`, `*`, `>=` or `<=` (a number's text for gte and lte). */
  value: string;
}

export type FieldFilterReading = { ok: true; filter: FieldFilter } | { ok: false; reason: string };

/** Reads `path:value`; a refusal says why, in the API's words. */
export function readFieldFilter(text: string): FieldFilterReading {
  const colon = text.indexOf(':');
  if (colon <= 0) return { ok: false, reason: `field takes path:value (e.g. request.headers.cf_ipcountry:DE), not ${text.slice(0, 60)}` };
  const path = text.slice(0, colon);
  const rest = text.slice(colon + 1);
  if (!isFieldPath(path)) return { ok: false, reason: `field path ${path.slice(0, 60)} is not a dotted path of letters, digits and _ (e.g. parsed.user_name)` };
  if (rest.length > MAX_FIELD_VALUE) return { ok: false, reason: `field value is longer than ${MAX_FIELD_VALUE} characters` };
  for (const [sign, op] of [['>=', 'gte'], ['<=', 'lte']] as const) {
    if (!rest.startsWith(sign)) continue;
    const n = rest.slice(2);
    if (n === '' || !Number.isFinite(Number(n))) return { ok: false, reason: `field ${path}:${sign} takes a number, not ${n.slice(0, 38)}` };
    return { ok: true, filter: { path, op, value: n } };
  }
  if (rest.startsWith('!')) return { ok: true, filter: { path, op: 'not', value: rest.slice(1) } };
  if (rest.endsWith('*') && rest.length > 1) return { ok: true, filter: { path, op: 'prefix', value: rest.slice(0, -1) } };
  return { ok: true, filter: { path, op: 'is', value: rest } };
}

/** The form of a condition: `path:DE`, `path:!DE`, `path:DE*`, `path:>=100`, `path:<=100`. */
export function printFieldFilter(f: FieldFilter): string {
  switch (f.op) {
    case 'is':
      return `${f.path}:${f.value}`;
    case 'not':
      return `${f.path}:!${f.value}`;
    case 'prefix':
      return `${f.path}:${f.value}*`;
    case 'gte':
      return `${f.path}:>=${f.value}`;
    case 'lte':
      return `${f.path}:<=${f.value}`;
  }
}

/**
 * Why a value cannot be written with a test (null when it can): printed, it would be read back
 * as another test. An equal value that starts with `!`, `>=` or `<=` or ends with `*` is such a
 * value; exclusion carries any value.
 */
export function unsendable(op: FieldOp, value: string): string | null {
  if (value.length > MAX_FIELD_VALUE) return `A value is at most ${MAX_FIELD_VALUE} characters`;
  if (op === 'not') return null;
  if (op === 'gte' || op === 'lte') return value.trim() !== '' && Number.isFinite(Number(value)) ? null : 'Enter a number';
  if (value.startsWith('!')) return 'A value starting with ! can only be excluded';
  if (value.startsWith('>=') || value.startsWith('<=')) return 'A value starting with >= or <= cannot be matched exactly';
  if (op === 'prefix') return value === '' ? 'Enter the start of the value' : null;
  return value.endsWith('*') && value.length > 1 ? 'A value ending with * cannot be matched exactly; use “starts with”' : null;
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

/** The value at a dotted path of a record's metadata. */
export const valueAtPath = (metadata: unknown, path: string): unknown => valueAt(metadata, path.split('.'));

/** A field's value as conditions compare it and the page shows it: scalars as text, objects and arrays as JSON; null when absent. */
export function fieldText(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}
