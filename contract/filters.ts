/**
 * The explorer's filters on the fields every row carries (status, method, path, level, function
 * id), as `/api/logs*` and the page's URL write them: one parameter per field, its values
 * comma-separated, `!` before a value to exclude it (`status=5xx,!504`). Read and written here
 * for both the server and the page; what a filter matches is the server's (explorer/row-filter.ts).
 */

export const FILTER_FIELDS = ['status', 'method', 'path', 'level', 'function_id'] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

export function isFilterField(name: string): name is FilterField {
  return (FILTER_FIELDS as readonly string[]).includes(name);
}

/** One value of a field's parameter: `404`, or with `exclude` its "not" (`!404`). */
export interface FilterItem {
  value: string;
  exclude: boolean;
}

/** A parameter's values in order; blank ones (and a lone `!`) are skipped, spaces around each trimmed. */
export function parseFilterList(text: string): FilterItem[] {
  const out: FilterItem[] = [];
  for (const part of text.split(',')) {
    const v = part.trim();
    if (!v || v === '!') continue;
    out.push(v.startsWith('!') ? { value: v.slice(1), exclude: true } : { value: v, exclude: false });
  }
  return out;
}

/** The parameter holding these values, in order (each value as checkFilterValue keeps it). */
export function printFilterList(items: readonly FilterItem[]): string {
  return items.map((i) => `${i.exclude ? '!' : ''}${i.value}`).join(',');
}

/** The word for records without the field: `status=none`, `level=none`. */
export const NO_VALUE = 'none';

/**
 * A `status` value: a three-digit code, a class `1xx`–`5xx`, or `none` (records without a
 * status, such as auth records that answered nothing). Any three digits are a code, 600 too:
 * records keep the status their source wrote, and a facet can list it.
 */
export type StatusSpec = { code: number } | { cls: number } | { none: true };

export function readStatus(text: string): StatusSpec | undefined {
  const v = text.trim().toLowerCase();
  if (/^[1-5]xx$/.test(v)) return { cls: Number(v[0]) };
  if (/^\d{3}$/.test(v)) return { code: Number(v) };
  if (v === NO_VALUE) return { none: true };
  return undefined;
}

export function printStatus(s: StatusSpec): string {
  if ('code' in s) return String(s.code).padStart(3, '0');
  if ('cls' in s) return `${s.cls}xx`;
  return NO_VALUE;
}

export type FilterValueCheck = { ok: true; value: string } | { ok: false; reason: string };

/**
 * Checks a value for a field and writes it as the API reads it: a status as printStatus writes
 * it, a method upper-case (methods are stored so), the others as given, trimmed. A value holding
 * a comma or starting with `!` cannot be written in the list and is refused.
 */
export function checkFilterValue(field: FilterField, raw: string): FilterValueCheck {
  const value = raw.trim();
  if (!value) return { ok: false, reason: 'Enter a value' };
  if (value.includes(',')) return { ok: false, reason: 'A value cannot contain a comma' };
  if (value.startsWith('!')) return { ok: false, reason: 'Use “exclude” instead of a leading !' };
  switch (field) {
    case 'status': {
      const s = readStatus(value);
      return s ? { ok: true, value: printStatus(s) } : { ok: false, reason: 'A status is a code (503), a class (5xx) or none' };
    }
    case 'method':
      return { ok: true, value: value.toUpperCase() };
    default:
      return { ok: true, value };
  }
}
