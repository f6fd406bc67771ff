/**
 * What the HTTP edge reads from a request, read one way for every route: a JSON body (within a
 * size limit and a time window, own keys only) and the parameters (own keys only; a parameter
 * given twice is a 400, never "the first one wins"; every problem named in one 400). Routes
 * receive checked values; nothing deeper reads the request.
 */
import type { Context } from 'hono';
import { AppError, badParam, badParams, type ErrorDetail } from './errors.ts';

/** Largest JSON body of parameters (endpoints, clock, views, connections); read whole, so kept small. */
export const MAX_PARAMS_BODY_BYTES = 1024 ** 2;
/**
 * The body window: a body of parameters must arrive within it, and an upload (which may take
 * hours) must bring MIN_UPLOAD_BYTES_PER_WINDOW in each window the server waits for it.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;
/** About 0.5 KiB/s at the default window: far below any real upload, far above a trickle meant to hold the connection. */
export const MIN_UPLOAD_BYTES_PER_WINDOW = 16 * 1024;

type ChunkRead = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;

/** A timer this late means the event loop was busy (a long synchronous query, say), not that the client was silent. */
const TIMER_LATE_MS = 100;

/**
 * Reads a request body under a watch: each `windowMs` the app spends waiting for it must bring
 * `minBytes` or the body's end, else `stalled()` is thrown (a 408). Only waiting counts, so a busy
 * consumer (an import committing a batch) never makes the client look slow; a window in which the
 * event loop itself stalled starts over rather than blaming the client.
 */
export class BodyWatch {
  #waited = 0;
  #bytes = 0;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly windowMs: number,
    private readonly minBytes: number,
    private readonly stalled: () => AppError,
  ) {}

  async read(): Promise<ChunkRead> {
    // race() handles this read's rejection too, should it lose and the connection close later.
    const next = this.reader.read().then((r) => ({ r }));
    for (;;) {
      const remaining = this.windowMs - this.#waited;
      const started = performance.now();
      let late = false;
      let timer: NodeJS.Timeout | undefined;
      const elapsed = new Promise<null>((resolve) => {
        timer = setTimeout(() => {
          late = performance.now() - started - remaining > TIMER_LATE_MS;
          // After setImmediate: data already in the socket is read first, not taken for silence.
          setImmediate(resolve, null);
        }, remaining);
      });
      const got = await Promise.race([next, elapsed]);
      clearTimeout(timer);
      const bytes = got && !got.r.done ? got.r.value.byteLength : 0;
      // Data can also win the race after a stall: the loop reads sockets before late timers.
      if (late || performance.now() - started - remaining > TIMER_LATE_MS) {
        this.#waited = 0;
        this.#bytes = bytes;
      } else {
        this.#waited += Math.min(performance.now() - started, remaining);
        this.#bytes += bytes;
        if (this.#waited >= this.windowMs) {
          if (this.#bytes < this.minBytes && !got?.r.done) throw this.stalled();
          this.#waited = this.#bytes = 0;
        }
      }
      if (got) return got.r;
    }
  }
}

/** The 408 of a body given up on; the rest of it will never be read, so the connection closes. */
export function bodyStalled(message: string): AppError {
  return new AppError('timeout', message, [], { Connection: 'close' });
}

/** A small body as text: at most MAX_PARAMS_BODY_BYTES (413), within one body window (408). */
async function readSmallBody(c: Context, windowMs: number): Promise<string> {
  const tooLarge = () => new AppError('payload_too_large', `a request body of parameters is limited to ${MAX_PARAMS_BODY_BYTES} bytes`);
  if (Number(c.req.header('content-length') ?? 0) > MAX_PARAMS_BODY_BYTES) throw tooLarge();
  const body = c.req.raw.body;
  if (!body) return '';
  // At most 1 MiB: it must arrive whole within one window.
  const watch = new BodyWatch(body.getReader(), windowMs, Infinity, () => bodyStalled(`the request body did not arrive within ${windowMs / 1000} s`));
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await watch.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_PARAMS_BODY_BYTES) throw tooLarge();
    parts.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(parts));
}

/**
 * The request's JSON object body, as its own keys on an object without a prototype (so
 * `__proto__` is just a key). Anything but a JSON object is a 400 at `body` saying "the request
 * body must be <expected>"; an empty body is no parameters where `emptyIsNone` says so.
 */
export async function readJsonBody(c: Context, windowMs: number, expected: string, opts: { emptyIsNone?: boolean } = {}): Promise<Record<string, unknown>> {
  const text = await readSmallBody(c, windowMs);
  const own = Object.create(null) as Record<string, unknown>;
  if (opts.emptyIsNone && text.trim() === '') return own;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badParam('body', `the request body must be ${expected}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badParam('body', `the request body must be ${expected}`);
  for (const [k, v] of Object.entries(parsed)) own[k] = v;
  return own;
}

/** Every value given for each parameter name, on an object without a prototype (own keys only). */
export type ParamValues = Record<string, unknown[]>;

/** The query string's parameters. */
export function queryParams(c: Context): ParamValues {
  const given = Object.create(null) as ParamValues;
  for (const [k, v] of Object.entries(c.req.queries())) given[k] = v;
  return given;
}

/**
 * The body's parameters added to `given`: a name in both the query string and the body is
 * given twice (a repeat, not an override), and an array value is that many values.
 */
export function withBody(given: ParamValues, body: Record<string, unknown>): ParamValues {
  for (const [k, v] of Object.entries(body)) given[k] = [...(Object.hasOwn(given, k) ? given[k]! : []), ...(Array.isArray(v) ? v : [v])];
  return given;
}

/** The one value given for each name (the first: a repeat is a problem of its own), without a prototype. */
export function firstValues(given: ParamValues): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(given)) out[k] = v[0];
  return out;
}

export interface ParamRules {
  /** The names the route reads. */
  takes: readonly string[];
  /** A name it does not take: a 400 `unknown` (so a misspelt filter cannot widen an answer silently), or ignored (the default). */
  others?: 'refused' | 'ignored';
  /** Names that may be given several times (read with `all`). */
  repeatable?: readonly string[];
}

/** The problem of a parameter given more than once. */
export function givenTwice(name: string): ErrorDetail {
  return { reason: 'duplicate', location: name, message: `${name} is given more than once` };
}

/** The problems of a request's parameters, in the order given: names it does not take (when refused) and names given more than once. */
export function paramProblems(given: ParamValues, route: string, rules: ParamRules): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const takes = rules.takes.length ? `it takes ${rules.takes.join(', ')}` : 'it takes none';
  for (const [name, values] of Object.entries(given)) {
    if (!rules.takes.includes(name)) {
      if (rules.others === 'refused') problems.push({ reason: 'unknown', location: name, message: `${name.slice(0, 64)} is not a parameter of ${route}; ${takes}` });
    } else if (values.length > 1 && !rules.repeatable?.includes(name)) problems.push(givenTwice(name));
  }
  return problems;
}

/** A route's parameters: one value each ('' counts as not given), and every value of a repeatable one. */
export interface Params {
  (name: string): string | undefined;
  all(name: string): string[];
}

/**
 * A route's parameters, checked whole before any is read (paramProblems). The problems are one
 * 400, or, given `problems`, are added there so the route names them with its own in one 400.
 * Reading a name outside `takes` is the route's own bug, thrown as such.
 */
export function readParams(given: ParamValues, route: string, rules: ParamRules, problems?: ErrorDetail[]): Params {
  const found = paramProblems(given, route, rules);
  if (problems) problems.push(...found);
  else if (found.length) throw badParams(found);
  const values = (name: string): string[] => {
    if (!rules.takes.includes(name)) throw new Error(`${route} reads ${name}, which it does not list among its parameters`);
    return Object.hasOwn(given, name) ? given[name]!.map(String) : [];
  };
  const one = (name: string): string | undefined => {
    if (rules.repeatable?.includes(name)) throw new Error(`${route} reads the repeatable ${name} as one value`);
    return values(name)[0] || undefined;
  };
  return Object.assign(one, { all: (name: string) => values(name).filter((v) => v !== '') });
}
