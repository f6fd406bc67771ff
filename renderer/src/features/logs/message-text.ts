/**
 * What a table's message cell shows. Auth (GoTrue) records log a whole JSON object as their
 * message; the cell showed it raw (`{"component":"api","duration":…`), its point cut off
 *. The cell shows its `msg` (or `message`), then an `error` that says more; the
 * detail panel keeps the record as it is.
 */
export function messageText(message: string): string {
  const t = message.trimStart();
  if (!t.startsWith('{')) return message;
  let o: unknown;
  try {
    o = JSON.parse(t);
  } catch {
    return message;
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return message;
  const r = o as Record<string, unknown>;
  const text = (k: string) => (typeof r[k] === 'string' && (r[k] as string).trim() ? (r[k] as string) : null);
  const msg = text('msg') ?? text('message');
  const error = text('error') ?? text('error_description');
  if (msg === null) return error ?? message;
  return error !== null && error !== msg ? `${msg} — ${error}` : msg;
}
