/** Small answer helpers shared by the app and its route modules, and the one 405 rule. */
import type { Context, Hono } from 'hono';
import { methodNotAllowed } from './errors.ts';

/**
 * A JSON answer (the API's one content type), sent as UTF-8 bytes: a string body would be
 * measured and then encoded by the server, two passes over a large answer instead of one.
 */
export function json(c: Context, body: unknown, status = 200, headers: Readonly<Record<string, string>> = {}): Response {
  return c.body(Buffer.from(JSON.stringify(body), 'utf8'), status as 200, { ...headers, 'Content-Type': 'application/json; charset=utf-8' });
}

/** RFC 4180: quote a cell that holds a comma, a quote or a line break; double inner quotes. */
export function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The order methods are named in an Allow header. */
const METHOD_ORDER = ['GET', 'HEAD', 'PUT', 'POST', 'PATCH', 'DELETE'];

/**
 * Mounts a route module (a Hono sub-app) on the app. Each path it answers answers every other
 * method with a 405 naming the methods it takes in `Allow` (HEAD comes with GET): the one 405
 * rule of the API, so no route lists its methods twice. `notAllowed` words the 405's message
 * for the paths of a module that says it its own way (undefined: the usual wording).
 */
export function mountRoutes(app: Hono, routes: Hono, notAllowed?: (method: string, path: string) => string | undefined): void {
  const methods = new Map<string, Set<string>>();
  for (const r of routes.routes) {
    if (r.method === 'ALL') continue;
    const taken = methods.get(r.path) ?? new Set<string>();
    taken.add(r.method);
    if (r.method === 'GET') taken.add('HEAD');
    methods.set(r.path, taken);
  }
  for (const [path, taken] of methods) {
    const allowed = [...METHOD_ORDER.filter((m) => taken.has(m)), ...[...taken].filter((m) => !METHOD_ORDER.includes(m))];
    routes.all(path, (c) => {
      throw methodNotAllowed(c.req.method, allowed, notAllowed?.(c.req.method, path));
    });
  }
  app.route('/', routes);
}
