/** How the explorer groups status codes: by class (`2xx`…`5xx`), `none` for records without one or out of range. */

/** Status class keys by index (0: none), as statusClassIndex numbers them. */
export const CLASS_KEYS = ['none', '1xx', '2xx', '3xx', '4xx', '5xx'];

export const statusClassIndex = (s: number): number => (s >= 100 && s <= 599 ? Math.floor(s / 100) : 0);

/** The key a row counts under in the histogram's `by`. */
export function statusClass(status: number | null): string {
  return status !== null ? CLASS_KEYS[statusClassIndex(status)]! : 'none';
}
