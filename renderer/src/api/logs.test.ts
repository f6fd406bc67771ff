/**
 * "Export all matching" (downloadExport): a whole answer is saved under the server's file name;
 * an answer the server cuts off (it ends an export that cannot finish without the last chunk,
 * which fetch reports as a failed read) is an ApiError for the dialog's ErrorPanel and nothing is
 * saved. A user's cancel stays an AbortError.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const saved: Array<{ name: string; blob: Blob }> = [];
vi.mock('../lib/download.ts', () => ({
  downloadBlob: (name: string, blob: Blob) => void saved.push({ name, blob }),
}));

const { downloadExport } = await import('./logs.ts');
const { ApiError } = await import('./client.ts');

afterEach(() => {
  vi.unstubAllGlobals();
  saved.length = 0;
});

const enc = new TextEncoder();

/** A 200 whose body gives `chunks`, then ends (or fails with `failure`, as a cut connection does). */
function answer(chunks: string[], failure?: Error): Response {
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(enc.encode(chunks[i++]!));
      else if (failure) controller.error(failure);
      else controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-disposition': 'attachment; filename="edge_logs-x.ndjson"' } });
}

describe('downloadExport', () => {
  it('saves a whole answer under the server’s name, reporting bytes as they come', async () => {
    const fetch = vi.fn(async (_url: string) => answer(['{"id":"a"}\n', '{"id":"b"}\n']));
    vi.stubGlobal('fetch', fetch);
    const progress: number[] = [];
    const r = await downloadExport({ source: 'edge_logs', status: '5xx' }, 'ndjson', 'fallback', (b) => progress.push(b));
    expect(r).toEqual({ fileName: 'edge_logs-x.ndjson', bytes: 22 });
    expect(progress).toEqual([11, 22]);
    expect(saved).toHaveLength(1);
    expect(saved[0]!.name).toBe('edge_logs-x.ndjson');
    expect(await saved[0]!.blob.text()).toBe('{"id":"a"}\n{"id":"b"}\n');
    // The parameters the page sends to the export: its filters and the format, nothing else.
    expect(fetch.mock.calls[0]![0]).toBe('/api/logs/export?source=edge_logs&status=5xx&format=ndjson');
  });

  it('a body cut off mid-way is an ApiError that says so, and nothing is saved', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => answer(['{"id":"a"}\n'], new TypeError('network error'))));
    const err = await downloadExport({ source: 'edge_logs' }, 'csv', 'fallback', () => undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const message = 'The export was cut off after 11 B: the server stopped before the last record (its log says why). Nothing was saved; try again.';
    expect((err as InstanceType<typeof ApiError>).info).toEqual({ code: 0, status: 'INCOMPLETE', message, errors: [{ reason: 'incomplete', message }] });
    expect(saved).toEqual([]);
  });

  it('a cancel by the user is still an AbortError, not an incomplete export', async () => {
    const abort = new DOMException('The operation was aborted.', 'AbortError');
    vi.stubGlobal('fetch', vi.fn(async () => answer(['x'], abort)));
    await expect(downloadExport({ source: 'edge_logs' }, 'csv', 'fallback', () => undefined)).rejects.toBe(abort);
    expect(saved).toEqual([]);
  });

  it('a large answer is folded into its Blob as it comes; the saved file is every byte in order', async () => {
    // 20 chunks of 1 MiB: folded twice on the way (every 8 MiB), then once at the end.
    const mib = 1024 * 1024;
    const chunks = Array.from({ length: 20 }, (_, i) => String.fromCharCode(65 + i).repeat(mib));
    vi.stubGlobal('fetch', vi.fn(async () => answer(chunks)));
    const r = await downloadExport({ source: 'edge_logs' }, 'csv', 'fallback', () => undefined);
    expect(r.bytes).toBe(20 * mib);
    const text = await saved[0]!.blob.text();
    expect(text.length).toBe(20 * mib);
    for (let i = 0; i < 20; i++) expect(text[i * mib]).toBe(String.fromCharCode(65 + i));
    expect(saved[0]!.blob.type).toBe('text/csv;charset=utf-8');
  });
});
