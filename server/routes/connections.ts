/**
 * Connections to remote projects and their syncs (server/sync/):
 *
 * - `GET /api/connections` every connection with each source's sync state; `GET /api/connections/:id` one.
 * - `POST /api/connections {"kind", "ref", "url", "token", "dialect", "sources", "start", "follow"}` adds
 *   one and starts syncing it (201).
 * - `PATCH /api/connections/:id {"paused", "follow", "sources", "start", "token"}` changes one.
 * - `DELETE /api/connections/:id?data=keep|delete` removes one, keeping or deleting its sources' records.
 * - `POST /api/connections/test` with the body of a POST (or `{"id"}` of a saved connection): one
 *   call to the remote, and what it answered.
 *
 * Every rejection names its parameter, in the app's error envelope. No answer carries a token:
 * only its last four characters.
 */
import { Hono, type Context } from 'hono';
import { AppError, badParam } from '../errors.ts';
import { json } from '../http.ts';
import { queryParams, readJsonBody, readParams } from '../request.ts';
import { InputProblems, readConnectionInput, readConnectionPatch } from '../sync/connections.ts';
import type { SyncManager } from '../sync/manager.ts';

const readJson = (c: Context, windowMs: number, example: string) => readJsonBody(c, windowMs, `a JSON object like ${example}`);

/** Runs a body check; its problems become one 400 naming each parameter. */
function checked<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof InputProblems) throw new AppError('bad_request', err.message, err.details);
    throw err;
  }
}

const CREATE_EXAMPLE = '{"kind": "supabase", "ref": "abcdefghijklmnopqrst", "token": "sbp_...", "sources": ["edge_logs"]}';

export function connectionRoutes(sync: SyncManager, windowMs: number): Hono {
  const app = new Hono();
  const clock = sync.clock;
  app.get('/api/connections', (c) => json(c, { result: sync.list() }));

  app.post('/api/connections/test', async (c) => {
    const body = await readJson(c, windowMs, CREATE_EXAMPLE);
    const own = typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.keys(body) : [];
    if (own.length === 1 && own[0] === 'id') {
      const id = (body as { id: unknown }).id;
      if (typeof id !== 'string' || id === '') throw badParam('id', 'id must be the id of a saved connection');
      return json(c, { result: await sync.test({ id }) });
    }
    const input = checked(() => readConnectionInput(body, clock.now()));
    return json(c, { result: await sync.test(input) });
  });

  app.post('/api/connections', async (c) => {
    const body = await readJson(c, windowMs, CREATE_EXAMPLE);
    const input = checked(() => readConnectionInput(body, clock.now()));
    return json(c, { result: await sync.create(input) }, 201);
  });

  app.get('/api/connections/:id', (c) => json(c, { result: sync.view(c.req.param('id')) }));

  app.patch('/api/connections/:id', async (c) => {
    const id = c.req.param('id');
    // Unknown id first: a change of nothing is a 404 whatever its body.
    const kind = sync.view(id).kind;
    const body = await readJson(c, windowMs, '{"paused": true}');
    const patch = checked(() => readConnectionPatch(body, kind, clock.now()));
    return json(c, { result: await sync.update(id, patch) });
  });

  app.delete('/api/connections/:id', async (c) => {
    const id = c.req.param('id');
    sync.view(id);
    const data = readParams(queryParams(c), c.req.path, { takes: ['data'] })('data');
    if (data !== 'keep' && data !== 'delete') {
      throw badParam('data', data === undefined || data === '' ? 'data is required: keep (the synced records stay) or delete (they are deleted)' : 'data must be keep or delete', data ? 'invalid' : 'required');
    }
    return json(c, { result: await sync.remove(id, data) });
  });

  return app;
}
