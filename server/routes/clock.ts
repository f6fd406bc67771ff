/**
 * The "as of" clock (server/clock.ts): `GET /api/clock`; `PUT` (or `POST`) `/api/clock` with
 * `{"mode": "system"}`, `{"mode": "latest"}` or `{"mode": "fixed", "now": ISO}`. A change clears
 * the endpoints' results cache.
 */
import { Hono } from 'hono';
import type { AppClock } from '../clock.ts';
import { badParam } from '../errors.ts';
import { json } from '../http.ts';
import { readJsonBody } from '../request.ts';
import { formatIsoMicros, INSTANT_RANGE, readIsoMicros } from '../time.ts';
import type { AppDeps, AppShared } from './context.ts';

export function clockRoutes(deps: AppDeps, shared: AppShared): Hono {
  const app = new Hono();

  app.get('/api/clock', (c) => json(c, { result: clockView(deps.clock) }));

  app.on(['PUT', 'POST'], '/api/clock', async (c) => {
    const body = await readJsonBody(c, shared.bodyWindowMs, 'JSON like {"mode": "fixed", "now": "2026-01-01T00:00:00Z"}');
    const mode = body.mode;
    const now = body.now;
    if (mode === 'fixed') {
      const read = typeof now === 'string' ? readIsoMicros(now) : undefined;
      if (read && 'problem' in read && read.problem === 'out-of-range') throw badParam('now', `now must be within ${INSTANT_RANGE.text}`);
      if (!read || !('us' in read)) throw badParam('now', 'now must be an ISO 8601 timestamp');
      deps.clock.set('fixed', read.us);
    } else if (mode === 'system' || mode === 'latest') {
      deps.clock.set(mode);
    } else {
      throw badParam('mode', 'mode must be one of system, fixed, latest');
    }
    shared.cache.clear();
    return json(c, { result: clockView(deps.clock) });
  });

  return app;
}

function clockView(clock: AppClock) {
  const s = clock.state();
  return { ...s, iso: formatIsoMicros(s.now), ...(s.fixed !== undefined ? { fixedIso: formatIsoMicros(s.fixed) } : {}) };
}
