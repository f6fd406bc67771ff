/**
 * Filters on fields inside the records (issue 21): `field=<path>:<value>` on every `/api/logs*`
 * route and in the page's URL. The path is the dotted path inside `metadata`
 * (`request.headers.cf_ipcountry`), one-element arrays looked through, as the server reads it
 * (server/explorer/record-fields.ts). Pure: the chips, the picker and the detail panel use it.
 */

/** How a chip tests its field: equal (as text), not equal, starts with, at least, at most. */
export const FIELD_OPS = ['is', 'not', 'prefix', 'gte', 'lte'] as const;
export type FieldOp = (typeof FIELD_OPS)[number];

export interface FieldFilter {
  path: string;
  op: FieldOp;
  /** As typed, without the wire's `!`, `*`, `>=` or `<=`. */
  value: string;
}

export const FIELD_OP_LABELS: Record<FieldOp, string> = { is: 'is', not: 'is not', prefix: 'starts with', gte: '≥', lte: '≤' };

/** The server's limits: conditions per query, facets on record fields per request, lengths. */
export const MAX_FIELD_FILTERS = 20;
export const MAX_FIELD_FACETS = 5;
const MAX_PATH = 200;
const MAX_VALUE = 1000;

const KEY = /^[A-Za-z0-9_@$-]+$/;
const PATH = /^[A-Za-z0-9_@$-]+(\.[A-Za-z0-9_@$-]+)*$/;

/** Whether the server takes `path` as a field path (letters, digits, `_ @ $ -`, dot-separated). */
export function isFieldPath(path: string): boolean {
  return path.length <= MAX_PATH && PATH.test(path);
}

/** The wire form: `path:DE`, `path:!DE`, `path:DE*`, `path:>=100`, `path:<=100`. */
export function fieldFilterParam(f: FieldFilter): string {
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

/** Reads the wire form back as the server does; null for what the server would refuse. */
export function parseFieldFilter(text: string): FieldFilter | null {
  const colon = text.indexOf(':');
  if (colon <= 0) return null;
  const path = text.slice(0, colon);
  const rest = text.slice(colon + 1);
  if (!isFieldPath(path) || rest.length > MAX_VALUE) return null;
  for (const [sign, op] of [['>=', 'gte'], ['<=', 'lte']] as const) {
    if (!rest.startsWith(sign)) continue;
    const n = rest.slice(2);
    return n !== '' && Number.isFinite(Number(n)) ? { path, op, value: n } : null;
  }
  if (rest.startsWith('!')) return { path, op: 'not', value: rest.slice(1) };
  if (rest.endsWith('*') && rest.length > 1) return { path, op: 'prefix', value: rest.slice(0, -1) };
  return { path, op: 'is', value: rest };
}

export type FieldFilterCheck = { ok: true; filter: FieldFilter } | { ok: false; reason: string };

/**
 * Why a value cannot be sent with an operator, or null when it can. The wire form has no
 * escapes: an equal value that starts with `!`, `>=` or `<=` or ends with `*` would be read as
 * another test, so it is refused (exclusion carries any value).
 */
export function unsendable(op: FieldOp, value: string): string | null {
  if (value.length > MAX_VALUE) return `A value is at most ${MAX_VALUE} characters`;
  if (op === 'not') return null;
  if (op === 'gte' || op === 'lte') return value.trim() !== '' && Number.isFinite(Number(value)) ? null : 'Enter a number';
  if (value.startsWith('!')) return 'A value starting with ! can only be excluded';
  if (value.startsWith('>=') || value.startsWith('<=')) return 'A value starting with >= or <= cannot be matched exactly';
  if (op === 'prefix') return value === '' ? 'Enter the start of the value' : null;
  return value.endsWith('*') && value.length > 1 ? 'A value ending with * cannot be matched exactly; use “starts with”' : null;
}

/** A typed filter, checked: the path as the server takes it, numbers for ≥ and ≤. */
export function checkFieldFilter(path: string, op: FieldOp, raw: string): FieldFilterCheck {
  const p = path.trim();
  if (!isFieldPath(p)) return { ok: false, reason: 'A field is a dotted path of letters, digits and _ (e.g. parsed.user_name)' };
  // Numbers lose their spaces; texts are compared exactly, so they keep theirs.
  const value = op === 'gte' || op === 'lte' ? raw.trim() : raw;
  if (value === '' && op !== 'not') return { ok: false, reason: op === 'gte' || op === 'lte' ? 'Enter a number' : 'Enter a value' };
  const why = unsendable(op, value);
  return why ? { ok: false, reason: why } : { ok: true, filter: { path: p, op, value } };
}

const sameFilter = (a: FieldFilter, b: FieldFilter) => a.path === b.path && a.op === b.op && a.value === b.value;

/**
 * Adds a chip. Including a value that was excluded (or the other way round) flips its chip
 * rather than adding a contradicting one; a second ≥ (or ≤) on a path replaces the first.
 */
export function addFieldFilter(list: readonly FieldFilter[], f: FieldFilter): FieldFilter[] {
  const pair = (g: FieldFilter) => g.path === f.path && (((g.op === 'is' || g.op === 'not') && (f.op === 'is' || f.op === 'not') && g.value === f.value) || ((f.op === 'gte' || f.op === 'lte') && g.op === f.op));
  const i = list.findIndex(pair);
  if (i >= 0) return list.map((g, k) => (k === i ? { ...f } : g));
  if (list.some((g) => sameFilter(g, f))) return [...list];
  return [...list, { ...f }];
}

export function removeFieldFilter(list: readonly FieldFilter[], f: FieldFilter): FieldFilter[] {
  return list.filter((g) => !sameFilter(g, f));
}

/** `is` ↔ `is not`; the other tests have no opposite the server takes (null). */
export function flippedOp(op: FieldOp): FieldOp | null {
  return op === 'is' ? 'not' : op === 'not' ? 'is' : null;
}

/** `request.headers.cf_ipcountry is DE`, `response.origin_time ≥ 100`. */
export function fieldFilterLabel(f: FieldFilter): string {
  return `${f.path} ${FIELD_OP_LABELS[f.op]} ${f.op === 'prefix' ? `${f.value}…` : f.value}`;
}

/** The value at a dotted path of a record's metadata, one-element arrays looked through (the server's valueAt). */
export function valueAtPath(metadata: unknown, path: string): unknown {
  let v = metadata;
  for (const k of path.split('.')) {
    while (Array.isArray(v)) v = v.length === 1 ? v[0] : undefined;
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  while (Array.isArray(v) && v.length === 1) v = v[0];
  return v;
}

/** A field's value as the server compares it: scalars as text, objects and arrays as JSON; null when absent. */
export function fieldText(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** A step from a JSON value to one inside it: an object's key or an array's index. */
export type JsonStep = string | number;

/**
 * The field path the server reads for the value at `steps` inside `root` (a record's
 * metadata): indexes into one-element arrays are looked through; an index into a longer
 * array, a key the path syntax cannot name (a dot, a space) or the root itself has none (null).
 */
export function fieldPathAt(root: unknown, steps: readonly JsonStep[]): string | null {
  const keys: string[] = [];
  let v = root;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(v) || v.length !== 1 || step !== 0) return null;
      v = v[0];
      continue;
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, step) || !KEY.test(step)) return null;
    keys.push(step);
    v = (v as Record<string, unknown>)[step];
  }
  const path = keys.join('.');
  return keys.length && isFieldPath(path) ? path : null;
}

/**
 * The chip "filter for this value" (or, with `exclude`, "exclude it") of a scalar in the
 * detail panel's JSON; null when it cannot be one (no path, a null, an unsendable value).
 */
export function fieldFilterFor(root: unknown, steps: readonly JsonStep[], value: unknown, exclude: boolean): FieldFilter | null {
  if (value === null || (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')) return null;
  const path = fieldPathAt(root, steps);
  if (path === null) return null;
  const text = fieldText(value)!;
  const op: FieldOp = exclude ? 'not' : 'is';
  return unsendable(op, text) ? null : { path, op, value: text };
}
