/**
 * The two remotes a connection reads: Supabase's Management API analytics endpoint (`supabase`,
 * a personal access token as `Authorization: Bearer`) and a Logflare server's `logs.all`
 * endpoint (`logflare`, an access token as `x-api-key`; another Log Explorer answers the same).
 *
 * Secrets: the token travels in a header, only to the connection's own base URL (https, or
 * plain http to a loopback address), and redirects are never followed (a 3xx is an error naming
 * where it pointed). No message made here contains a header.
 */
import { span } from '../activity.ts';
import type { Clock } from '../time.ts';
import { formatIsoMicros } from '../time.ts';
import { isoSeconds, type Window } from './pages.ts';

export type Dialect = 'bigquery' | 'clickhouse';
export type ConnectionKind = 'supabase' | 'logflare';

export const SUPABASE_API_URL = 'https://api.supabase.com';
/** How long one call may take before it counts as a network failure. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** An answer larger than this is refused (1,000 rows of a few KB each are far below). */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/** What went wrong with one call, as the sync acts on it. */
export type RemoteFailure =
  /** 401, 403: the token or its rights; the connection stops. */
  | { kind: 'auth'; status: number; message: string }
  /** 429: the connection waits (Retry-After, else a minute). */
  | { kind: 'rate'; status: number; message: string; retryAfterMs: number | null }
  /** 5xx, 408, no answer, a cut answer: back off and try again. */
  | { kind: 'transient'; status: number | null; message: string }
  /** The remote refused this request (a 400 for the SQL, a 404, a redirect): the source stops. */
  | { kind: 'refused'; status: number; message: string };

export class RemoteError extends Error {
  constructor(readonly failure: RemoteFailure) {
    super(failure.message);
  }
}

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * A connection's base URL, checked and normalized (no trailing slash): https, or http to a
 * loopback address only; no credentials, query or fragment.
 */
export function checkBaseUrl(text: string): { url: string } | { problem: string } {
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    return { problem: 'url must be an absolute URL such as https://api.supabase.com' };
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && LOOPBACK.test(u.hostname))) {
    return { problem: 'url must use https (plain http is allowed only to this machine: localhost, 127.0.0.1, [::1])' };
  }
  if (u.username || u.password) return { problem: 'url must not carry a user name or password; give the token in token' };
  if (u.search || u.hash) return { problem: 'url must not have a query string or a fragment' };
  return { url: `${u.origin}${u.pathname.replace(/\/+$/, '')}` };
}

/** The message a remote gave in its answer: its `error` (text, or an object's `message`), else its `message`, else the text. */
export function remoteMessage(body: unknown, text: string, status: number): string {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    const e = b.error;
    if (typeof e === 'string' && e.trim()) return e;
    if (typeof e === 'object' && e !== null && typeof (e as Record<string, unknown>).message === 'string') return (e as { message: string }).message;
    if (typeof b.message === 'string' && b.message.trim()) return b.message;
    if (Array.isArray(b.message) && b.message.every((m) => typeof m === 'string')) return b.message.join('; ');
  }
  const t = text.trim();
  if (t && !t.startsWith('<')) return t.length > 500 ? `${t.slice(0, 500)}…` : t;
  return `HTTP ${status}`;
}

/** Retry-After as ms: delta-seconds or an HTTP date (against the app's clock). */
export function retryAfterMs(header: string | null, clock: Clock): number | null {
  if (!header) return null;
  const t = header.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const at = Date.parse(t);
  return Number.isFinite(at) ? Math.max(0, at - clock.now() / 1000) : null;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  clock: Clock;
}

/** One GET answered with `{"result": [...]}`: its rows, or a RemoteError. */
async function getRows(url: URL, headers: Record<string, string>, opts: CallOptions): Promise<unknown[]> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  const where = url.origin;
  let res: Response;
  try {
    res = await fetch(url, { method: 'GET', headers: { accept: 'application/json', ...headers }, redirect: 'manual', signal });
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    if (timeout.aborted) throw new RemoteError({ kind: 'transient', status: null, message: `no answer from ${where} within ${timeoutMs / 1000} s` });
    throw new RemoteError({ kind: 'transient', status: null, message: `cannot reach ${where}: ${networkReason(err)}` });
  }
  let text: string;
  try {
    text = await readText(res);
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    throw new RemoteError({ kind: 'transient', status: res.status, message: `the answer of ${where} was cut off: ${networkReason(err)}` });
  }
  let body: unknown;
  const parsed = span('sync: parse page');
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  parsed();
  const status = res.status;
  if (status >= 300 && status < 400) {
    const to = res.headers.get('location');
    throw new RemoteError({ kind: 'refused', status, message: `${where} redirected (${status})${to ? ` to ${to}` : ''}; redirects are not followed, so the token goes only to the connection's own URL: set the URL the remote answers at` });
  }
  if (status === 401 || status === 403) throw new RemoteError({ kind: 'auth', status, message: remoteMessage(body, text, status) });
  if (status === 429) throw new RemoteError({ kind: 'rate', status, message: remoteMessage(body, text, status), retryAfterMs: retryAfterMs(res.headers.get('retry-after'), opts.clock) });
  if (status >= 500 || status === 408) throw new RemoteError({ kind: 'transient', status, message: remoteMessage(body, text, status) });
  if (status < 200 || status >= 300) throw new RemoteError({ kind: 'refused', status, message: remoteMessage(body, text, status) });
  // Query errors can come with a 200: `{"result": [], "error": ...}`.
  const b = body as { result?: unknown; error?: unknown } | undefined;
  if (b && typeof b === 'object' && b.error !== undefined && b.error !== null && b.error !== '') {
    throw new RemoteError({ kind: 'refused', status, message: remoteMessage(body, text, status) });
  }
  if (!b || typeof b !== 'object' || !Array.isArray(b.result)) {
    throw new RemoteError({ kind: 'transient', status, message: `${where} answered ${status} without a result array` });
  }
  return b.result;
}

async function readText(res: Response): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > MAX_ANSWER_BYTES) throw new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  if (!res.body) return '';
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_ANSWER_BYTES) throw new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}

function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message ?? String(err);
}

/** `GET {base}/v1/projects/{ref}/analytics/endpoints/logs.all?sql=…&iso_timestamp_start=…&iso_timestamp_end=…`. */
export function managementQuery(base: string, ref: string, token: string, sql: string, window: Window, opts: CallOptions): Promise<unknown[]> {
  const url = new URL(`${base}/v1/projects/${encodeURIComponent(ref)}/analytics/endpoints/logs.all`);
  url.searchParams.set('sql', sql);
  url.searchParams.set('iso_timestamp_start', isoSeconds(window.start));
  url.searchParams.set('iso_timestamp_end', isoSeconds(window.end));
  return getRows(url, { authorization: `Bearer ${token}` }, opts);
}

/**
 * `GET {base}/api/endpoints/query/logs.all?project=…&iso_timestamp_start=…&iso_timestamp_end=…`
 * (start exclusive, end inclusive). `project_tier=ENTERPRISE` is sent too: this app's logs.all
 * requires it (its widest retention); Logflare ignores parameters an endpoint does not declare.
 */
export function logflareQuery(base: string, project: string, token: string, from: number, to: number, opts: CallOptions): Promise<unknown[]> {
  const url = new URL(`${base}/api/endpoints/query/logs.all`);
  url.searchParams.set('project', project);
  url.searchParams.set('project_tier', 'ENTERPRISE');
  url.searchParams.set('iso_timestamp_start', formatIsoMicros(from));
  url.searchParams.set('iso_timestamp_end', formatIsoMicros(to));
  return getRows(url, { 'x-api-key': token }, opts);
}
