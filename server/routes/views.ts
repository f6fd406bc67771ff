/**
 * Saved views and recent searches, kept by the server in the data folder
 * (server/store/view-store.ts) so they survive a restart and a new port:
 *
 * - `GET /api/views` newest first; `POST /api/views {"name", "page", "state"}` saves one (201);
 *   `PATCH /api/views/:id {"name"}` renames; `DELETE /api/views/:id`. A name already taken
 *   (compared case-insensitively) is a 409 naming `name`; past MAX_SAVED_VIEWS a 400.
 * - `GET /api/searches` the last MAX_RECENT_SEARCHES, newest first; `POST /api/searches
 *   {"page", "state", "label"}` records one (the same page and state again moves it to the top);
 *   `DELETE /api/searches` clears them.
 *
 * Bodies are read as own keys only and unknown keys are refused; every rejection names its
 * parameter. A change the disk refuses is a 507 and changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { Hono, type Context } from 'hono';
import * as z from 'zod';
import { AppError, type ErrorDetail } from '../errors.ts';
import { isDiskFull } from '../store/log-store.ts';
import {
  MAX_RECENT_SEARCHES,
  MAX_SAVED_VIEWS,
  sameViewName,
  searchLabelSchema,
  viewNameSchema,
  viewPageSchema,
  viewStateSchema,
  ViewStore,
  type RecentSearch,
  type SavedView,
  type ViewsData,
} from '../store/view-store.ts';
import { json } from '../http.ts';
import { readJsonBody } from '../request.ts';
import type { AppDeps, AppShared } from './context.ts';

const DISK_FULL_MESSAGE = 'the disk is full: the saved views and searches were not changed; free some space and try again';

const newViewBody = z.strictObject({ name: viewNameSchema, page: viewPageSchema, state: viewStateSchema });
const renameBody = z.strictObject({ name: viewNameSchema });
const searchBody = z.strictObject({ page: viewPageSchema, state: viewStateSchema, label: searchLabelSchema.optional() });

/** Validates with `schema`; a 400 naming each parameter at fault (an unknown key names itself). */
function validate<T>(schema: z.ZodType<T>, body: Record<string, unknown>, takes: string): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const details: ErrorDetail[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) details.push({ reason: 'unknown', location: key, message: `${key} is not a parameter here; the body takes ${takes}` });
    } else {
      const location = String(issue.path[0] ?? 'body');
      // Required means not sent (or a rule says so: an empty name); anything sent and refused is invalid.
      const said = (issue as { params?: { reason?: unknown } }).params?.reason;
      const reason = !Object.hasOwn(body, location) ? 'required' : typeof said === 'string' ? said : 'invalid';
      // One message per parameter: the first problem found.
      if (!details.some((d) => d.location === location)) details.push({ reason, location, message: issue.message });
    }
  }
  throw new AppError('bad_request', details.map((d) => d.message).join('; '), details);
}

function notFound(id: string): AppError {
  const message = `no saved view with id ${id}`;
  return new AppError('not_found', message, [{ reason: 'not_found', location: 'id', message }]);
}

function nameTaken(name: string): AppError {
  const message = `a view named "${name}" exists already; choose another name or rename that one`;
  return new AppError('conflict', message, [{ reason: 'duplicate', location: 'name', message }]);
}

/** The body as a JSON object of its own keys (`__proto__` is just a key, and refused as unknown). */
const readBody = (c: Context, windowMs: number, example: string) => readJsonBody(c, windowMs, `a JSON object like ${example}`);

export function viewRoutes(deps: AppDeps, shared: AppShared): Hono {
  const app = new Hono();
  const store = ViewStore.open(deps.store.dataDir);
  const windowMs = shared.bodyWindowMs;

  /** A change to the file; a full disk is a 507 here (with this store's own message). */
  const change = async <T>(fn: (current: ViewsData) => { next: ViewsData; result: T }): Promise<T> => {
    try {
      return await store.change(fn);
    } catch (err) {
      if (!isDiskFull(err)) throw err;
      console.error(err);
      throw new AppError('insufficient_storage', DISK_FULL_MESSAGE);
    }
  };

  app.get('/api/views', (c) => json(c, { result: store.data.views }));

  app.post('/api/views', async (c) => {
    const input = validate(newViewBody, await readBody(c, windowMs, '{"name": "Errors today", "page": "logs", "state": "project=REF&range=24h"}'), 'name, page and state');
    const view = await change((cur) => {
      if (cur.views.some((v) => sameViewName(v.name, input.name))) throw nameTaken(input.name);
      if (cur.views.length >= MAX_SAVED_VIEWS) {
        const message = `at most ${MAX_SAVED_VIEWS} views can be saved; delete one first`;
        throw new AppError('bad_request', message, [{ reason: 'limit', location: 'body', message }]);
      }
      const created: SavedView = { id: randomUUID(), name: input.name, page: input.page, state: input.state, createdAt: new Date().toISOString() };
      return { next: { ...cur, views: [created, ...cur.views] }, result: created };
    });
    return json(c, { result: view }, 201);
  });

  app.patch('/api/views/:id', async (c) => {
    const id = c.req.param('id');
    // Unknown id first: a rename of nothing is a 404 whatever its body.
    if (!store.data.views.some((v) => v.id === id)) throw notFound(id);
    const { name } = validate(renameBody, await readBody(c, windowMs, '{"name": "Errors today"}'), 'name');
    const view = await change((cur) => {
      const old = cur.views.find((v) => v.id === id);
      if (!old) throw notFound(id);
      if (cur.views.some((v) => v.id !== id && sameViewName(v.name, name))) throw nameTaken(name);
      const renamed: SavedView = { ...old, name };
      return { next: { ...cur, views: cur.views.map((v) => (v.id === id ? renamed : v)) }, result: renamed };
    });
    return json(c, { result: view });
  });

  app.delete('/api/views/:id', async (c) => {
    const id = c.req.param('id');
    await change((cur) => {
      if (!cur.views.some((v) => v.id === id)) throw notFound(id);
      return { next: { ...cur, views: cur.views.filter((v) => v.id !== id) }, result: undefined };
    });
    return json(c, { result: { id, deleted: true } });
  });

  app.get('/api/searches', (c) => json(c, { result: store.data.searches }));

  app.post('/api/searches', async (c) => {
    const input = validate(searchBody, await readBody(c, windowMs, '{"page": "logs", "state": "project=REF&range=1h", "label": "status:500"}'), 'page, state and label');
    const search = await change((cur) => {
      // The same page and state again is the same search: it moves to the top, with the newest label.
      const earlier = cur.searches.find((s) => s.page === input.page && s.state === input.state);
      const entry: RecentSearch = { id: earlier?.id ?? randomUUID(), page: input.page, state: input.state, label: input.label ?? '', at: new Date().toISOString() };
      const rest = cur.searches.filter((s) => s !== earlier);
      return { next: { ...cur, searches: [entry, ...rest].slice(0, MAX_RECENT_SEARCHES) }, result: entry };
    });
    return json(c, { result: search }, 201);
  });

  app.delete('/api/searches', async (c) => {
    const cleared = await change((cur) => ({ next: { ...cur, searches: [] }, result: cur.searches.length }));
    return json(c, { result: { cleared } });
  });

  return app;
}
