/**
 * `GET /api/functions?project=REF&interval=I`: every function of a project with its slug and its
 * invocations, errors, error rate and execution times over the whole invocation-stats window of
 * the interval (server/functions/stats.ts); `GET /api/functions/total` gives the same figures
 * for all of the project's functions together (the Functions page's headline).
 */
import { Hono, type Context } from 'hono';
import { findEndpoint } from '../../queries/registry.ts';
import { MAX_TEXT_LENGTH } from '../endpoints/params.ts';
import { DEFAULT_QUERY_TIMEOUT_MS } from '../endpoints/run.ts';
import { AppError, badParams, type ErrorDetail } from '../errors.ts';
import { functionStats, windowOf, type FunctionStats } from '../functions/stats.ts';
import type { FunctionListAnswer, FunctionTotal } from '../functions/types.ts';
import { QueryTimeout, withDeadline } from '../store/db.ts';
import { json } from '../http.ts';
import { queryParams, readParams } from '../request.ts';
import type { AppDeps } from './context.ts';

/** The intervals functions.invocation-stats declares; here an unknown one is a 400, not 1day. */
const INTERVALS: readonly string[] = findEndpoint('functions.invocation-stats')?.params.find((p) => p.name === 'interval')?.allowed ?? [];

/** project and interval, each given once; every problem is named in one 400. */
function functionParams(c: Context): { project: string; interval: string } {
  const problems: ErrorDetail[] = [];
  const get = readParams(queryParams(c), c.req.path, { takes: ['project', 'interval'] }, problems);
  const one = (name: string): string => {
    const v = get(name) ?? '';
    if (!v && !problems.some((p) => p.location === name)) problems.push({ reason: 'required', location: name, message: `${name} is required` });
    return v;
  };
  const project = one('project');
  const interval = one('interval');
  if (project.length > MAX_TEXT_LENGTH) problems.push({ reason: 'invalid', location: 'project', message: `project is longer than ${MAX_TEXT_LENGTH} characters` });
  if (interval && !problems.some((p) => p.location === 'interval') && !INTERVALS.includes(interval)) {
    problems.push({ reason: 'invalid', location: 'interval', message: `interval must be one of ${INTERVALS.join(', ')}` });
  }
  if (problems.length) throw badParams(problems);
  return { project, interval };
}

export function functionRoutes(deps: AppDeps): Hono {
  const app = new Hono();
  const compute = (c: Context): { stats: FunctionStats; interval: string; now: number } => {
    const { project, interval } = functionParams(c);
    const now = deps.clock.now();
    const timeoutMs = deps.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    try {
      const stats = withDeadline(performance.now() + timeoutMs, () => functionStats(deps.store, project, interval, now));
      // The instant the window was computed from, as on the endpoints.
      c.header('X-Log-Explorer-Now', String(now));
      return { stats, interval, now };
    } catch (err) {
      if (!(err instanceof QueryTimeout)) throw err;
      throw new AppError('unavailable', `the function table ran longer than the ${timeoutMs / 1000} s limit and was stopped; try a shorter interval`);
    }
  };

  app.get('/api/functions', (c) => {
    const { stats, interval, now } = compute(c);
    const body: FunctionListAnswer = { result: stats.rows, percentiles: stats.percentiles, window: windowOf(interval, now, stats), total: stats.total };
    return json(c, body);
  });

  app.get('/api/functions/total', (c) => {
    const { stats, interval, now } = compute(c);
    const result: FunctionTotal = { ...stats.total, window: windowOf(interval, now, stats) };
    return json(c, { result });
  });

  return app;
}
