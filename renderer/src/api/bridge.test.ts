/**
 * The renderer's side of the desktop bridge, against a fake shell and a real QueryClient:
 * data-changed refreshes every query, export requests reach the handler with their format,
 * and stopping listens to nothing more. (useShellEvents is a useEffect around listenToShell
 * and shellHandlers; the browser test e2e/bridge.spec.ts runs it mounted.)
 */
import { QueryClient, QueryObserver } from '@tanstack/react-query';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeBridge } from '../testing/fake-bridge.ts';
import { getBridge, listenToShell, shellHandlers } from './bridge.ts';

afterEach(() => {
  vi.unstubAllGlobals();
});

/** A deferred answer: the test decides when a fetch finishes. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('getBridge', () => {
  it('is undefined in a browser (no logExplorer) and outside one (no window)', () => {
    expect(getBridge()).toBeUndefined();
    vi.stubGlobal('window', {});
    expect(getBridge()).toBeUndefined();
  });

  it('is the shell’s object in the desktop app', () => {
    const bridge = fakeBridge();
    vi.stubGlobal('window', { logExplorer: bridge });
    expect(getBridge()).toBe(bridge);
  });

  it('ignores a logExplorer that does not say it is the desktop shell', () => {
    vi.stubGlobal('window', { logExplorer: { desktop: false } });
    expect(getBridge()).toBeUndefined();
  });
});

describe('listenToShell with the page’s handlers', () => {
  it('data-changed invalidates every query, whatever its key', async () => {
    const qc = new QueryClient();
    const keys = [['sources'], ['clock'], ['imports'], ['endpoints'], ['endpoint', 'functions.invocation-stats', { project: 'p', interval: '1h' }], ['logs', 'search', {}], ['views']];
    for (const k of keys) qc.setQueryData(k, 1);
    const bridge = fakeBridge();
    listenToShell(bridge, shellHandlers(qc, () => {}));
    expect(keys.map((k) => qc.getQueryState(k)!.isInvalidated)).toEqual(keys.map(() => false));

    bridge.fireDataChanged();

    await vi.waitFor(() => expect(keys.map((k) => qc.getQueryState(k)!.isInvalidated)).toEqual(keys.map(() => true)));
  });

  it('data-changed refetches the queries a page shows', async () => {
    const qc = new QueryClient();
    let stored = ['edge_logs'];
    const queryFn = vi.fn(async () => [...stored]);
    const observer = new QueryObserver(qc, { queryKey: ['sources'], queryFn, staleTime: Infinity });
    const seen: string[][] = [];
    const unsubscribe = observer.subscribe((r) => {
      if (r.data) seen.push(r.data);
    });
    await vi.waitFor(() => expect(seen).toEqual([['edge_logs']]));

    const bridge = fakeBridge();
    listenToShell(bridge, shellHandlers(qc, () => {}));
    stored = ['edge_logs', 'function_edge_logs'];
    bridge.fireDataChanged();

    await vi.waitFor(() => expect(seen.at(-1)).toEqual(['edge_logs', 'function_edge_logs']));
    expect(queryFn).toHaveBeenCalledTimes(2);
    unsubscribe();
  });

  it('a data-changed during the first fetch (demo data loading at first start) ends with the new data', async () => {
    const qc = new QueryClient();
    const answers = [deferred<string[]>(), deferred<string[]>()];
    let call = 0;
    const observer = new QueryObserver(qc, { queryKey: ['sources'], queryFn: () => answers[call++]!.promise });
    const seen: string[][] = [];
    const unsubscribe = observer.subscribe((r) => {
      if (r.data) seen.push(r.data);
    });
    const bridge = fakeBridge();
    listenToShell(bridge, shellHandlers(qc, () => {}));
    await vi.waitFor(() => expect(call).toBe(1));

    // The shell loaded the demo data while the page's first request was under way.
    bridge.fireDataChanged();
    await vi.waitFor(() => expect(call).toBe(2));
    answers[0]!.resolve([]); // the first answer, read before the demo data was in
    answers[1]!.resolve(['demo']);

    await vi.waitFor(() => expect(seen.at(-1)).toEqual(['demo']));
    expect(seen).not.toContainEqual([]);
    unsubscribe();
  });

  it('hands export requests to the handler with their format', () => {
    const exportView = vi.fn();
    const bridge = fakeBridge();
    listenToShell(bridge, shellHandlers(new QueryClient(), exportView));
    bridge.fireExportRequested('ndjson');
    bridge.fireExportRequested('csv');
    expect(exportView.mock.calls).toEqual([['ndjson'], ['csv']]);
  });

  it('stops listening to both events when the returned function is called (unmount)', () => {
    const qc = new QueryClient();
    const cancel = vi.spyOn(qc, 'cancelQueries');
    const invalidate = vi.spyOn(qc, 'invalidateQueries');
    const exportView = vi.fn();
    const bridge = fakeBridge();
    const stop = listenToShell(bridge, shellHandlers(qc, exportView));
    expect(bridge.listeners()).toEqual({ dataChanged: 1, exportRequested: 1 });

    stop();

    expect(bridge.listeners()).toEqual({ dataChanged: 0, exportRequested: 0 });
    bridge.fireDataChanged();
    bridge.fireExportRequested('json');
    // The handler starts its work synchronously (cancelQueries), so not called now is never called.
    expect(cancel).not.toHaveBeenCalled();
    expect(invalidate).not.toHaveBeenCalled();
    expect(exportView).not.toHaveBeenCalled();
  });

  it('mounted, unmounted and mounted again (React’s strict mode) listens exactly once', () => {
    const bridge = fakeBridge();
    const handlers = shellHandlers(new QueryClient(), () => {});
    listenToShell(bridge, handlers)();
    listenToShell(bridge, handlers);
    expect(bridge.listeners()).toEqual({ dataChanged: 1, exportRequested: 1 });
  });
});
