/** Rows as the endpoints answer them, and their JSON text, kept for rows answered repeatedly. */

export type ResultRow = Record<string, unknown>;

/** JSON text of rows that are answered again and again (logs.all's newest records). */
const rowJson = new WeakMap<ResultRow, string>();

/** Marks a row whose JSON text is kept, so answers reuse it instead of serializing again. */
export function keepRowJson(row: ResultRow): ResultRow {
  if (!rowJson.has(row)) rowJson.set(row, JSON.stringify(row));
  return row;
}

/** `{"result": rows}` as JSON text; the same as JSON.stringify, with kept rows reused. */
export function serializeResult(rows: readonly ResultRow[]): string {
  let out = '{"result":[';
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    out += (i ? ',' : '') + (rowJson.get(r) ?? JSON.stringify(r));
  }
  return `${out}]}`;
}
