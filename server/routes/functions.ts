/**
 * `GET /api/functions?project=REF&interval=I`: every function of a project with its slug and its
 * invocations, errors, error rate and execution times over the whole invocation-stats window of
 * the interval (server/functions/stats.ts); `GET /api/functions/total` gives the same figures
 * for all of the project's functions together (the Functions page's headline).
 * `GET /api/functions/buckets?project=REF&start=ISO&end=ISO&width=hour`: invocation-stats' rows
 * for an explicit window (the Functions page's compared period; the endpoint only answers
 * windows ending now), read by the endpoint's own speed path.
 */
import { Hono, type Context } from 'hono';
import { findEndpoint } from '../../queries/registry.ts';
import type { FunctionBucketsAnswer, FunctionListAnswer, FunctionTotal } from '../../contract/api-types.ts';
import { MAX_TEXT_LENGTH } from '../endpoints/params.ts';
import { DEFAULT_QUERY_TIMEOUT_MS } from '../endpoints/run.ts';
import { invocationBuckets } from '../endpoints/speed-paths.ts';
import { STATS_INTERVALS } from '../endpoints/windows.ts';
import { AppError, badParams, type ErrorDetail } from '../errors.ts';
import { functionStats, windowOf, type FunctionStats } from '../functions/stats.ts';
import { QueryTimeout, withDeadline } from '../store/db.ts';
import { json } from '../http.ts';
import { queryParams, readParams, type Params } from '../request.ts';
import { formatIsoMicros, INSTANT_RANGE, MICROS, readIsoMicros } from '../time.ts';
import type { AppDeps } from './context.ts';

const STATS = findEndpoint('functions.invocation-stats');
/** The intervals functions.invocation-stats declares; here an unknown one is a 400, not 1day. */
const INTERVALS: readonly string[] = STATS?.params.find((p) => p.name === 'interval')?.allowed ?? [];
/** The bucket widths the endpoint's intervals use, by name (second, minute, hour, day): the only ones its rollups answer as it does. */
const WIDTHS: ReadonlyMap<string, number> = new Map(Object.entries(MICROS).filter(([, us]) => Object.values(STATS_INTERVALS).some((w) => w.unit === us)));
/** At most as many buckets as the endpoint answers rows. */
const MAX_BUCKETS = STATS?.maxRows ?? 1000;

const named = (problems: readonly ErrorDetail[], name: string) => problems.some((p) => p.location === name);

/** The route's parameters, read once; `required` reads a parameter that must be given. */
function paramReader(c: Context, takes: readonly string[]): { get: Params; required: (name: string) => string; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];
  const get = readParams(queryParams(c), c.req.path, { takes }, problems);
  const required = (name: string): string => {
    const v = get(name) ?? '';
    if (!v && !named(problems, name)) problems.push({ reason: 'required', location: name, message: `${name} is required` });
    return v;
  };
  return { get, required, problems };
}

function checkText(problems: ErrorDetail[], name: string, value: string): void {
  if (value.length > MAX_TEXT_LENGTH) problems.push({ reason: 'invalid', location: name, message: `${name} is longer than ${MAX_TEXT_LENGTH} characters` });
}

/** project and interval, each given once; every problem is named in one 400. */
function functionParams(c: Context): { project: string; interval: string } {
  const { required, problems } = paramReader(c, ['project', 'interval']);
  const project = required('project');
  const interval = required('interval');
  checkText(problems, 'project', project);
  if (interval && !named(problems, 'interval') && !INTERVALS.includes(interval)) {
    problems.push({ reason: 'invalid', location: 'interval', message: `interval must be one of ${INTERVALS.join(', ')}` });
  }
  if (problems.length) throw badParams(problems);
  return { project, interval };
}

interface BucketParams {
  project: string;
  functionId: string;
  start: number;
  end: number;
  width: number;
}

/**
 * project, function_id (optional), start (inclusive) and end (exclusive) as ISO instants on
 * bucket boundaries, and width; every problem is named in one 400.
 */
function bucketParams(c: Context): BucketParams {
  const { get, required, problems } = paramReader(c, ['project', 'function_id', 'start', 'end', 'width']);
  const project = required('project');
  const functionId = get('function_id') ?? '';
  checkText(problems, 'project', project);
  checkText(problems, 'function_id', functionId);
  const widthText = required('width');
  const width = WIDTHS.get(widthText);
  if (widthText && !named(problems, 'width') && width === undefined) problems.push({ reason: 'invalid', location: 'width', message: `width must be one of ${[...WIDTHS.keys()].join(', ')}` });
  const instant = (name: string): number | undefined => {
    const text = required(name);
    if (!text || named(problems, name)) return undefined;
    const read = readIsoMicros(text);
    if ('us' in read) {
      // Bucket boundaries only: a bucket cut by the window would not be the endpoint's bucket.
      if (width !== undefined && read.us % width !== 0) problems.push({ reason: 'invalid', location: name, message: `${name} must be the start of a ${widthText} (UTC) bucket: ${text.slice(0, 64)}` });
      return read.us;
    }
    problems.push({
      reason: 'invalid',
      location: name,
      message: read.problem === 'out-of-range' ? `${name} must be within ${INSTANT_RANGE.text}` : `${name} is not an ISO 8601 timestamp: ${text.slice(0, 64)}`,
    });
    return undefined;
  };
  const start = instant('start');
  const end = instant('end');
  if (start !== undefined && end !== undefined && width !== undefined && !named(problems, 'start') && !named(problems, 'end')) {
    if (end <= start) problems.push({ reason: 'invalid', location: 'end', message: 'end must be after start' });
    else if ((end - start) / width > MAX_BUCKETS) {
      problems.push({ reason: 'invalid', location: 'end', message: `the window holds ${(end - start) / width} buckets of a ${widthText}; at most ${MAX_BUCKETS}: choose a shorter window or a wider bucket` });
    }
  }
  if (problems.length) throw badParams(problems);
  return { project, functionId, start: start!, end: end!, width: width! };
}

export function functionRoutes(deps: AppDeps): Hono {
  const app = new Hono();
  /** Runs a computation with the endpoints' time limit; past it, a 503 naming `what`. */
  const within = <T>(what: string, run: () => T): T => {
    const timeoutMs = deps.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    try {
      return withDeadline(performance.now() + timeoutMs, run);
    } catch (err) {
      if (!(err instanceof QueryTimeout)) throw err;
      throw new AppError('unavailable', `${what} ran longer than the ${timeoutMs / 1000} s limit and was stopped; try a shorter interval`);
    }
  };
  const compute = (c: Context): { stats: FunctionStats; interval: string; now: number } => {
    const { project, interval } = functionParams(c);
    const now = deps.clock.now();
    const stats = within('the function table', () => functionStats(deps.store, project, interval, now));
    // The instant the window was computed from, as on the endpoints.
    c.header('X-Log-Explorer-Now', String(now));
    return { stats, interval, now };
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

  app.get('/api/functions/buckets', (c) => {
    const { project, functionId, start, end, width } = bucketParams(c);
    const result = within('the buckets', () => invocationBuckets(deps.store, { project, functionId, first: start, last: end - width, unit: width }));
    const body: FunctionBucketsAnswer = { result, window: { start, end, width, startIso: formatIsoMicros(start), endIso: formatIsoMicros(end) } };
    return json(c, body);
  });

  return app;
}
