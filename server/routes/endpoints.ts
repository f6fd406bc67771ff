/**
 * The three endpoints (docs/ARCHITECTURE.md, "Endpoint rules and where they live"):
 *
 * - `GET /api/endpoints` lists every registry entry with its parameters and rules.
 * - `GET|POST /api/endpoints/<name>`, `/api/endpoints/query/<uuid>`, `/api/endpoints/query/<name>`
 *   run one: parameters in the query string or a JSON body (a name in both is given twice),
 *   answered from the results cache where the entry allows it.
 */
import { Hono, type Context } from 'hono';
import { ENDPOINTS, findEndpoint } from '../../queries/registry.ts';
import type { EndpointListing } from '../../contract/api-types.ts';
import { validateParams } from '../endpoints/params.ts';
import { DEFAULT_QUERY_TIMEOUT_MS, runEndpointWithin, serializeResult } from '../endpoints/run.ts';
import { AppError } from '../errors.ts';
import { json } from '../http.ts';
import { firstValues, paramProblems, queryParams, readJsonBody, withBody } from '../request.ts';
import type { AppDeps, AppShared } from './context.ts';

/** The 405 of the routes that run an endpoint, which take GET (HEAD with it) and POST; the listing's is the usual one. */
export const endpointNotAllowed = (method: string, path: string): string | undefined =>
  path === '/api/endpoints' ? undefined : `${method} is not allowed on endpoints; use GET or POST`;

export function endpointRoutes(deps: AppDeps, shared: AppShared): Hono {
  const app = new Hono();
  const registry = deps.registry ?? ENDPOINTS;
  const { cache } = shared;
  const serialized = new WeakMap<object, Buffer<ArrayBuffer>>();

  app.get('/api/endpoints', (c) => {
    const result: EndpointListing[] = registry.map((e) => ({
      name: e.name,
      id: e.id,
      description: e.description,
      parameters: e.params.map((p) => ({
        name: p.name,
        required: p.required,
        kind: p.kind,
        description: p.description,
        ...(p.allowed ? { allowed: [...p.allowed] } : {}),
        ...(p.default !== undefined ? { default: p.default } : {}),
      })),
      maxRows: e.maxRows,
      cacheSeconds: e.cacheSeconds,
      warmSeconds: e.warmSeconds,
      sandboxable: e.sandboxable,
      // The entry's rules, copied: the renderer reads windows, tiers and cuts from here.
      ...(e.intervals
        ? {
            intervals: Object.fromEntries(Object.entries(e.intervals.windows).map(([k, w]) => [k, { spanUs: w.spanUs, unitUs: w.unitUs }])),
            intervalParam: e.intervals.param,
            ...(e.intervals.fallback !== undefined ? { fallbackInterval: e.intervals.fallback } : {}),
          }
        : {}),
      ...(e.tiers
        ? {
            tiers: Object.fromEntries(Object.entries(e.tiers.tiers).map(([k, t]) => [k, { retentionUs: t.retentionUs }])),
            tierParam: e.tiers.param,
            fallbackTier: e.tiers.fallback,
          }
        : {}),
      ...(e.rows !== undefined ? { rows: e.rows } : {}),
      ...(e.errorRule ? { errorRule: { statusAtLeast: e.errorRule.statusAtLeast } } : {}),
    }));
    return json(c, { result });
  });

  // HEAD is answered as GET (Hono drops the body).
  const run = async (c: Context, key: string) => {
    const def = findEndpoint(key, registry);
    if (!def) throw new AppError('not_found', `no endpoint named or identified ${key}`);
    let given = queryParams(c);
    if (c.req.method === 'POST') given = withBody(given, await readJsonBody(c, shared.bodyWindowMs, 'a JSON object of parameters', { emptyIsNone: true }));
    // Undeclared parameters are ignored; a declared one given twice is named with the others at fault.
    const problems = paramProblems(given, c.req.path, { takes: def.params.map((p) => p.name) });
    const params = validateParams(def, firstValues(given), problems);
    // Setting the clock clears the cache, so the key needs only the declared values.
    const result = await cache.get(def, params.key, async () => {
      const now = deps.clock.now();
      return { rows: await runEndpointWithin(deps.store, def, params, now, deps.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS), now };
    });
    // The instant the windows were computed from: a cached result can be older than the clock.
    c.header('X-Log-Explorer-Now', String(result.now));
    c.header(
      'Cache-Status',
      def.cacheSeconds <= 0 ? 'LogExplorer; fwd=bypass' : result.hit ? `LogExplorer; hit${result.ttl !== undefined ? `; ttl=${result.ttl}` : ''}` : 'LogExplorer; fwd=miss; stored',
    );
    // A cache hit hands back the same rows array: serialize it once, not on every hit.
    let body = serialized.get(result.rows);
    if (body === undefined) serialized.set(result.rows, (body = serializeResult(result.rows)));
    return c.body(body, 200, { 'Content-Type': 'application/json; charset=utf-8' });
  };
  app.on(['GET', 'POST'], '/api/endpoints/query/:key', (c) => run(c, c.req.param('key')));
  app.on(['GET', 'POST'], '/api/endpoints/:name', (c) => run(c, c.req.param('name')));
  return app;
}
