/**
 * The explorer's API: `/api/logs/fields`, `/api/logs`, `/api/logs/histogram`,
 * `/api/logs/facets`, `/api/logs/count` and `/api/logs/export`. Their answers carry more than
 * `result` (a cursor, how far a search scanned, the bucket width, facet remainders), so they are
 * read whole here rather than through client.ts's `api()`, with the same key header and the
 * same error envelope.
 */
import { keepPreviousData, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import type { ErrorBody } from '../../../contract/api-types.ts';
import type { FilterField } from '../../../contract/filters.ts';
import { ApiError, getApiKey } from './client.ts';
import { downloadBlob } from '../lib/download.ts';
import { formatBytes } from '../lib/format.ts';
import { parseIsoMicros } from '../../../contract/instants.ts';
import { SEARCH_REFETCH_MS, searchProgress } from '../lib/search-progress.ts';

// The answers' types are the contract's, shared with the server's routes.
export type {
  CountAnswer,
  ExplorerColumn,
  ExplorerFields,
  ExplorerPage,
  ExplorerRow,
  ExplorerSource,
  FacetsAnswer,
  FacetValue,
  HistogramAnswer,
  HistogramBucket,
  ScanProgress,
} from '../../../contract/api-types.ts';
import type { CountAnswer, CountBody, ExplorerPage, ExplorerSource, FacetsAnswer, HistogramAnswer, ScanProgress } from '../../../contract/api-types.ts';

export type ExportFormat = 'csv' | 'ndjson';

/** The explorer asks for this many rows per page (the API allows up to EXPLORER_MAX_LIMIT). */
export const EXPLORER_PAGE_SIZE = 200;
/** Histogram buckets across the range. */
export const HISTOGRAM_BUCKETS = 60;

/**
 * The query parameters of an `/api/logs*` request: one value each, except `field`, repeated
 * once per condition on a field inside the records (lib/field-state.ts).
 */
export type LogsParams = Record<string, string | readonly string[]>;

export function logsUrl(path: '' | '/histogram' | '/facets' | '/count' | '/export' | '/field-paths', params: LogsParams): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of typeof v === 'string' ? [v] : v) q.append(k, one);
  const qs = q.toString();
  return `/api/logs${path}${qs ? `?${qs}` : ''}`;
}

async function fail(res: Response): Promise<never> {
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  const err = (body as Partial<ErrorBody> | null)?.error;
  if (err && typeof err.message === 'string') {
    throw new ApiError({ code: err.code ?? res.status, status: err.status ?? 'ERROR', message: err.message, errors: Array.isArray(err.errors) ? err.errors : [] });
  }
  const message = `${res.status} ${res.statusText || 'error'}`;
  throw new ApiError({ code: res.status, status: 'ERROR', message, errors: [{ reason: 'http', message }] });
}

async function request(url: string, signal?: AbortSignal): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { 'X-API-KEY': getApiKey() ?? '' }, signal, cache: 'no-store' });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    const message = 'The server did not answer. Is Log Explorer still running?';
    throw new ApiError({ code: 0, status: 'NETWORK', message, errors: [{ reason: 'network', message }] });
  }
  if (!res.ok) await fail(res);
  return res;
}

/** The whole JSON answer (not just `result`). */
export async function getLogsJson<T>(path: '' | '/histogram' | '/facets' | '/count' | '/fields' | '/field-paths', params: LogsParams, signal?: AbortSignal): Promise<T> {
  const res = await request(path === '/fields' ? '/api/logs/fields' : logsUrl(path, params), signal);
  return (await res.json()) as T;
}

// ---- hooks ----
// Keys start with 'endpoint' so imports, deletes, clock changes and Refresh invalidate them
// with the endpoint results (hooks.ts's invalidateData).

/** The sources, their fields and columns, edge requests first. */
export function useLogFields() {
  return useQuery({
    queryKey: ['logs-fields'],
    queryFn: async ({ signal }) => (await getLogsJson<{ result: ExplorerSource[] }>('/fields', {}, signal)).result,
    staleTime: Infinity,
  });
}

/** Newest first, paged by the server's cursor. */
export function useExplorerLogs(params: LogsParams | null) {
  const p = params ?? {};
  return useInfiniteQuery({
    queryKey: ['endpoint', 'logs.explorer', p],
    initialPageParam: null as string | null,
    queryFn: ({ pageParam, signal }) => {
      const q: LogsParams = { ...p, limit: String(EXPLORER_PAGE_SIZE) };
      if (pageParam !== null) q.cursor = pageParam;
      return getLogsJson<ExplorerPage>('', q, signal);
    },
    getNextPageParam: (last): string | undefined => last.next ?? undefined,
    enabled: params !== null,
    staleTime: Infinity,
    placeholderData: keepPreviousData,
  });
}

/**
 * A text search's aggregates answer with what the server's walk has counted so far; the page
 * asks again about every second until the answer is complete (lib/search-progress.ts).
 */
export function whileSearching(params: LogsParams) {
  const start = typeof params.start === 'string' ? parseIsoMicros(params.start) : undefined;
  return (query: { state: { data?: { scanned?: ScanProgress } } }): number | false =>
    searchProgress(query.state.data?.scanned, { start }).complete ? false : SEARCH_REFETCH_MS;
}

/** `buckets`: at most this many (the server picks the narrowest round width that fits). */
export function useHistogram(params: LogsParams | null, buckets: number = HISTOGRAM_BUCKETS) {
  const p = { ...(params ?? {}), buckets: String(buckets) };
  return useQuery({
    queryKey: ['endpoint', 'logs.histogram', p],
    queryFn: ({ signal }) => getLogsJson<HistogramAnswer>('/histogram', p, signal),
    enabled: params !== null,
    staleTime: Infinity,
    placeholderData: keepPreviousData,
    refetchInterval: whileSearching(p),
  });
}

export function useFacets(params: LogsParams | null, fields: readonly FilterField[]) {
  const p = { ...(params ?? {}), fields: fields.join(',') };
  return useQuery({
    queryKey: ['endpoint', 'logs.facets', p],
    queryFn: ({ signal }) => getLogsJson<FacetsAnswer>('/facets', p, signal),
    enabled: params !== null && fields.length > 0,
    staleTime: Infinity,
    placeholderData: keepPreviousData,
    refetchInterval: whileSearching(p),
  });
}

/** Asked only when the export dialog opens; a search's count is asked again until complete. */
export function useLogsCount(params: LogsParams | null) {
  const p = params ?? {};
  return useQuery({
    queryKey: ['endpoint', 'logs.count', p],
    queryFn: async ({ signal }): Promise<CountAnswer> => {
      const body = await getLogsJson<CountBody>('/count', p, signal);
      return body.scanned ? { ...body.result, scanned: body.scanned } : body.result;
    },
    enabled: params !== null,
    staleTime: 0,
    refetchInterval: whileSearching(p),
  });
}

/** The file name the server suggests (Content-Disposition), if any. */
function dispositionName(header: string | null): string | null {
  if (!header) return null;
  const star = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (star) {
    try {
      return decodeURIComponent(star[1]!.trim());
    } catch {
      // fall through to the plain form
    }
  }
  const plain = /filename="?([^";]+)"?/i.exec(header);
  return plain ? plain[1]!.trim() : null;
}

/** Bytes of an export held as chunks before they are folded into its Blob (kept by the browser, out of the page's heap). */
const EXPORT_FOLD_BYTES = 8 * 1024 * 1024;

/**
 * Downloads every matching record. The key travels in a header, so a plain link cannot do
 * it: the answer is read here (reporting bytes as they come) and saved from a Blob, built as
 * it arrives so the page holds at most EXPORT_FOLD_BYTES of it. An answer the server cuts off
 * (it stops an export that cannot finish without its final chunk) is an ApiError and nothing
 * is saved: a short file must never look like the whole export.
 */
export async function downloadExport(
  params: LogsParams,
  format: ExportFormat,
  fallbackName: string,
  onProgress: (bytes: number) => void,
  signal?: AbortSignal,
): Promise<{ fileName: string; bytes: number }> {
  const res = await request(logsUrl('/export', { ...params, format }), signal);
  const type = format === 'csv' ? 'text/csv;charset=utf-8' : 'application/x-ndjson';
  let saved = new Blob([], { type });
  let chunks: Uint8Array[] = [];
  let held = 0;
  let bytes = 0;
  const fold = () => {
    saved = new Blob([saved, ...(chunks as BlobPart[])], { type });
    chunks = [];
    held = 0;
  };
  try {
    const reader = res.body?.getReader();
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        bytes += value.byteLength;
        held += value.byteLength;
        if (held >= EXPORT_FOLD_BYTES) fold();
        onProgress(bytes);
      }
    } else {
      const buf = new Uint8Array(await res.arrayBuffer());
      chunks.push(buf);
      bytes = buf.byteLength;
    }
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    const message = `The export was cut off after ${formatBytes(bytes)}: the server stopped before the last record (its log says why). Nothing was saved; try again.`;
    throw new ApiError({ code: 0, status: 'INCOMPLETE', message, errors: [{ reason: 'incomplete', message }] });
  }
  fold();
  const fileName = dispositionName(res.headers.get('content-disposition')) ?? `${fallbackName}.${format}`;
  downloadBlob(fileName, saved);
  return { fileName, bytes };
}
