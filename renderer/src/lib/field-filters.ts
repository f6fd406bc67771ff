/**
 * The page's side of filters on fields inside the records: checking what a person types,
 * keeping the chips (add, remove, flip, label) and turning a value of the detail panel's JSON
 * into a chip. The written form, its limits and how a field's value is read are the shared
 * grammar (contract/fields.ts), as the server reads it. Pure: the chips, the picker and the
 * detail panel use it.
 */
import { fieldText, isFieldKey, isFieldPath, unsendable, type FieldFilter, type FieldOp } from '../../../contract/fields.ts';

export const FIELD_OP_LABELS: Record<FieldOp, string> = { is: 'is', not: 'is not', prefix: 'starts with', gte: '≥', lte: '≤' };

export type FieldFilterCheck = { ok: true; filter: FieldFilter } | { ok: false; reason: string };

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
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, step) || !isFieldKey(step)) return null;
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
