/**
 * The one HTTP client of the renderer: every request to the server goes through here, with
 * the API key header, and every failure becomes an ApiError carrying the server's envelope
 * (`{"error": {code, status, message, errors: [{reason, location, message}]}}`).
 */
import type { ErrorBody, ImportReport } from '../../../contract/api-types.ts';
import { extractKeyFromHash } from '../lib/key-hash.ts';

export type ApiErrorInfo = ErrorBody['error'];

export class ApiError extends Error {
  constructor(readonly info: ApiErrorInfo) {
    super(info.message);
  }
  get code(): number {
    return this.info.code;
  }
  /** The parameters (or headers) the server blamed. */
  get locations(): string[] {
    return this.info.errors.map((e) => e.location).filter((l): l is string => !!l);
  }
}

const KEY_STORAGE = 'log-explorer.api-key';
let apiKey: string | null = null;

/**
 * Moves a `#key=...` fragment into sessionStorage and strips it from the address bar, so the
 * key never lands in history, bookmarks or copied links. Call once, before rendering.
 */
export function adoptKeyFromLocation(): void {
  const { key, rest } = extractKeyFromHash(window.location.hash);
  if (key) {
    apiKey = key;
    try {
      sessionStorage.setItem(KEY_STORAGE, key);
    } catch {
      // Storage can be disabled; the key then lives in memory for this page only.
    }
    history.replaceState(history.state, '', `${window.location.pathname}${window.location.search}${rest}`);
  }
}

export function getApiKey(): string | null {
  if (apiKey) return apiKey;
  try {
    apiKey = sessionStorage.getItem(KEY_STORAGE);
  } catch {
    apiKey = null;
  }
  return apiKey;
}

export function setApiKey(key: string): void {
  apiKey = key;
  try {
    sessionStorage.setItem(KEY_STORAGE, key);
  } catch {
    // memory only
  }
}

export function forgetApiKey(): void {
  apiKey = null;
  try {
    sessionStorage.removeItem(KEY_STORAGE);
  } catch {
    // memory only
  }
}

/**
 * A link opened in another tab of the same browser (a middle-click on Functions → Logs, a saved
 * view) starts without the key: sessionStorage is per tab, and the key must stay out of the URL
 * and out of storage that outlives the run. The new tab asks the open tabs of this
 * origin over a BroadcastChannel, which only pages of the same origin (scheme, host and port:
 * this server, this run) can hear; one holding the key answers. localStorage was the other
 * choice: it is per origin too, but it stays on disk after the run, and a later program on the
 * same port is the same origin and could read it. A stale answer (a tab left from an earlier run
 * on a reused port) fails with 401 and the app asks for the key, as it does for a wrong one.
 */
const KEY_CHANNEL = 'log-explorer.key';

interface KeyMessage {
  type: 'ask' | 'key';
  id: string;
  key?: string;
}

/** Answers other tabs' requests for the key while this tab holds one. Call once; returns a stop function. */
export function shareKeyWithOtherTabs(): () => void {
  if (typeof BroadcastChannel === 'undefined') return () => {};
  const channel = new BroadcastChannel(KEY_CHANNEL);
  channel.onmessage = (e: MessageEvent<KeyMessage>) => {
    if (e.data?.type !== 'ask' || typeof e.data.id !== 'string') return;
    const key = getApiKey();
    if (key) channel.postMessage({ type: 'key', id: e.data.id, key } satisfies KeyMessage);
  };
  return () => channel.close();
}

/** Asks the other open tabs of this origin for the key; null when none answers within `timeoutMs`. */
export function askOtherTabsForKey(timeoutMs = 400): Promise<string | null> {
  if (typeof BroadcastChannel === 'undefined') return Promise.resolve(null);
  return new Promise((resolve) => {
    const channel = new BroadcastChannel(KEY_CHANNEL);
    const id = typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`;
    const finish = (key: string | null) => {
      clearTimeout(timer);
      channel.close();
      resolve(key);
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    channel.onmessage = (e: MessageEvent<KeyMessage>) => {
      if (e.data?.type === 'key' && e.data.id === id && typeof e.data.key === 'string' && e.data.key) finish(e.data.key);
    };
    channel.postMessage({ type: 'ask', id } satisfies KeyMessage);
  });
}

export function serverOrigin(): string {
  return window.location.origin;
}

function networkError(message: string): ApiError {
  return new ApiError({ code: 0, status: 'NETWORK', message, errors: [{ reason: 'network', message }] });
}

function errorFromBody(status: number, body: unknown, fallback: string): ApiError {
  const err = (body as Partial<ErrorBody> | null)?.error;
  if (err && typeof err.message === 'string') {
    return new ApiError({ code: err.code ?? status, status: err.status ?? 'ERROR', message: err.message, errors: Array.isArray(err.errors) ? err.errors : [] });
  }
  return new ApiError({ code: status, status: 'ERROR', message: fallback, errors: [{ reason: 'http', message: fallback }] });
}

interface RequestOptions {
  method?: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
  params?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
}

/** Calls `/api/<path>` and returns the envelope's `result`. */
export async function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const qs = opts.params ? new URLSearchParams(opts.params).toString() : '';
  const headers: Record<string, string> = { 'X-API-KEY': getApiKey() ?? '' };
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`/api/${path}${qs ? `?${qs}` : ''}`, {
      method: opts.method ?? 'GET',
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
      cache: 'no-store',
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw networkError('The server did not answer. Is Log Explorer still running?');
  }
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) throw errorFromBody(res.status, body, `${res.status} ${res.statusText || 'error'}`);
  return (body as { result: T }).result;
}

/** Runs one of the endpoints by name. */
export function runEndpoint<T>(name: string, params: Record<string, string>, signal?: AbortSignal): Promise<T> {
  return api<T>(`endpoints/${encodeURIComponent(name)}`, { params, signal });
}

export interface UploadProgress {
  /** Bytes sent so far. */
  loaded: number;
  total: number;
}

export interface UploadOptions {
  id: string;
  source?: string;
  project?: string;
  onProgress?: (p: UploadProgress) => void;
  signal?: AbortSignal;
}

/**
 * Uploads one export file as the raw request body. XHR rather than fetch: only XHR reports
 * upload progress. Resolves with the import report once the server has stored the records.
 */
export function uploadImport(file: File, opts: UploadOptions): Promise<ImportReport> {
  return new Promise((resolve, reject) => {
    const q = new URLSearchParams({ id: opts.id, filename: file.name });
    if (opts.source) q.set('source', opts.source);
    if (opts.project) q.set('project', opts.project);
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/imports?${q.toString()}`);
    xhr.setRequestHeader('X-API-KEY', getApiKey() ?? '');
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.responseType = 'text';
    xhr.upload.onprogress = (e) => opts.onProgress?.({ loaded: e.loaded, total: e.lengthComputable ? e.total : file.size });
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve((body as { result: ImportReport }).result);
      else reject(errorFromBody(xhr.status, body, `${xhr.status} ${xhr.statusText || 'error'}`));
    };
    xhr.onerror = () => reject(networkError('The upload was interrupted: the server did not answer.'));
    xhr.onabort = () => reject(networkError('The upload was cancelled.'));
    opts.signal?.addEventListener('abort', () => xhr.abort());
    xhr.send(file);
  });
}
