/** Small answer helpers shared by the app and its route modules. */
import type { Context } from 'hono';

/** A JSON answer (the API's one content type). */
export function json(c: Context, body: unknown, status = 200, headers: Readonly<Record<string, string>> = {}): Response {
  return c.body(JSON.stringify(body), status as 200, { ...headers, 'Content-Type': 'application/json; charset=utf-8' });
}

/** RFC 4180: quote a cell that holds a comma, a quote or a line break; double inner quotes. */
export function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
