/**
 * The stored sources (docs/ARCHITECTURE.md, "App API"): `GET /api/sources` lists each with its
 * records, time span, projects and function ids (from the catalog's summary);
 * `DELETE /api/sources/<name or alias>` deletes a source's data (and sets the connections that
 * sync it to read its history again, server/sync/manager.ts).
 */
import { Hono } from 'hono';
import type { SourceListing } from '../../contract/api-types.ts';
import { AppError } from '../errors.ts';
import { json } from '../http.ts';
import { findSourceExact } from '../sources.ts';
import { formatIsoMicros } from '../time.ts';
import type { AppDeps } from './context.ts';

export function sourceRoutes(deps: AppDeps): Hono {
  const app = new Hono();

  app.get('/api/sources', (c) => {
    const result: SourceListing[] = deps.store.summary().map((s) => ({
      ...s,
      minIso: s.minTimestamp === null ? null : formatIsoMicros(s.minTimestamp),
      maxIso: s.maxTimestamp === null ? null : formatIsoMicros(s.maxTimestamp),
    }));
    return json(c, { result });
  });

  app.delete('/api/sources/:name', async (c) => {
    // Exact name or alias only: a delete must not reach a source through a near-miss spelling.
    const source = findSourceExact(c.req.param('name'));
    if (!source) throw new AppError('not_found', `no source ${c.req.param('name')}`);
    // Through the syncs when there are any: connections syncing the source read it again.
    const deleted = deps.sync ? await deps.sync.deleteSource(source.name) : await deps.store.deleteSource(source.name);
    return json(c, { result: { source: source.name, deleted } });
  });

  return app;
}
