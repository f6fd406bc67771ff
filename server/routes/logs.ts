/**
 * The explorer's routes (docs/ARCHITECTURE.md, "Explorer"): records of any source with search,
 * filters and a cursor; a histogram; facets; a count and a streamed export of everything that
 * matches; and each source's fields, so the renderer never keeps its own copy.
 */
import path from 'node:path';
import { Hono, type Context } from 'hono';
import { countMatches, facets, histogram } from '../explorer/aggregate.ts';
import { DEFAULT_BUCKETS } from '../explorer/buckets.ts';
import type { SearchProgress } from '../explorer/search-summary.ts';
import { discoverFields } from '../explorer/record-fields.ts';
import { indexedPathsOf } from '../explorer/field-index.ts';
import {
  fieldsOf,
  functionTexts,
  partitionsOf,
  projectRefs,
  QUERY_PARAMS,
  readExplorerQuery,
  recordOf,
  routeParams,
  rowFields,
  scanRows,
  sourceWatch,
  splitOf,
  writeCursor,
  type Cursor,
  type ExplorerQuery,
} from '../explorer/query.ts';
import { AppError, badParam } from '../errors.ts';
import { StoreFileDamaged } from '../store/damage.ts';
import { metadataOfRecord } from '../store/record.ts';
import { SOURCES } from '../sources.ts';
import { formatIsoMicros } from '../time.ts';
import { DEFAULT_QUERY_TIMEOUT_MS } from '../endpoints/run.ts';
import { csvCell, json } from '../http.ts';
import type { AppDeps } from './context.ts';
import type { CountBody, ExplorerColumn, ExplorerPage, ExplorerRow, FieldPathsAnswer, ExplorerSource, FacetsAnswer, HistogramAnswer, ScanProgress } from '../../contract/api-types.ts';

/** Records the field list is discovered from: the newest of the query. */
const FIELD_SAMPLE = 2000;

/** How long one page of a text search may scan before it answers with what it found so far. */
export const SEARCH_BUDGET_MS = 250;

/**
 * An export goes in short pages, each followed by a turn of the event loop, so an import's
 * batches and other requests wait at most a page (one export used to hold a 5,000-record import
 * from 2 s to 20 s). A page aims at EXPORT_PAGE_MS: its row count follows the time the last
 * one took (records differ in size), within these bounds; a text search's page also stops
 * scanning after EXPORT_PAGE_MS.
 */
export const EXPORT_PAGE_MS = 4;
export const EXPORT_PAGE_ROWS = { first: 100, min: 10, max: 1000 } as const;

/**
 * The parameters each route reads besides QUERY_PARAMS; any other is a 400 (query.ts, routeParams).
 * The renderer sends exactly these (renderer/src/api/logs.ts).
 */
const ROUTE_PARAMS = {
  page: ['limit', 'cursor'],
  histogram: ['buckets'],
  facets: ['fields'],
  count: [],
  fieldPaths: [],
  export: ['cursor', 'format'],
} as const satisfies Record<string, readonly string[]>;

/**
 * A text search's aggregate answers say how far back its shared walk has counted
 * (explorer/search-summary.ts): `complete: false` while it runs, and the page asks again.
 */
function scannedOf(p: SearchProgress | undefined): { scanned?: ScanProgress } {
  return p ? { scanned: { through: p.through, throughIso: formatIsoMicros(p.through), complete: p.complete } } : {};
}

export function logRoutes(deps: AppDeps): Hono {
  const app = new Hono();
  const timeoutMs = deps.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  /** The route's parameters, checked whole (unknown or repeated ones are a 400), and its query. */
  const read = (c: Context, own: readonly string[]): { q: ExplorerQuery; get: (name: string) => string | undefined } => {
    const get = routeParams(c.req.queries(), [...QUERY_PARAMS, ...own], c.req.path);
    const q = readExplorerQuery(deps.store, get, deps.clock.now(), { limit: own.includes('limit'), cursor: own.includes('cursor') });
    return { q, get };
  };

  app.get('/api/logs/fields', (c) => {
    routeParams(c.req.queries(), [], c.req.path);
    return json(c, {
      result: SOURCES.map((s): ExplorerSource => {
        const fields = fieldsOf(s);
        const columns: ExplorerColumn[] = ['timestamp', ...fields.filter((f) => f !== 'path'), ...(fields.includes('path') ? (['path'] as const) : []), 'event_message'];
        return { source: s.name, alias: s.alias, label: s.label, fields, split: splitOf(s), columns };
      }),
    });
  });

  app.get('/api/logs', async (c) => {
    const { q } = read(c, ROUTE_PARAMS.page);
    const refOf = projectRefs(deps.store);
    const fnText = functionTexts(deps.store);
    const rows: ExplorerRow[] = [];
    let lastReturned: { ts: number; rid: number } | null = null;
    let more = false;
    const progress = await scanRows(
      deps.store,
      q,
      (row, record) => {
        if (rows.length === q.limit) {
          more = true;
          return;
        }
        rows.push({ ...recordOf(q, row, record(), refOf(row.project)), fields: rowFields(deps.store, q, row, fnText) });
        lastReturned = { ts: row.ts, rid: row.rid };
      },
      { matches: q.limit + 1, budgetMs: SEARCH_BUDGET_MS, deadline: performance.now() + timeoutMs, signal: c.req.raw.signal },
    );
    // A full page continues after its last row; a search that ran out of time, after the last row it looked at.
    const next = more ? lastReturned : !progress.complete ? progress.last : null;
    const through = progress.complete && !more ? q.start : (progress.last?.ts ?? q.end);
    const page: ExplorerPage = { result: rows, next: next ? writeCursor(next) : null, scanned: { through, throughIso: formatIsoMicros(through), complete: progress.complete || more } };
    return json(c, page);
  });

  // The fields a source's records carry (from the newest records of the query), for the field
  // picker; those the source indexes are marked, and listed whole in `indexed`.
  app.get('/api/logs/field-paths', async (c) => {
    const { q } = read(c, ROUTE_PARAMS.fieldPaths);
    const sample: unknown[] = [];
    await scanRows(
      deps.store,
      q,
      (_row, record) => {
        // A record that does not parse tells nothing about fields.
        const { readable, metadata } = metadataOfRecord(record().toString('utf8'));
        if (readable) sample.push(metadata);
      },
      { matches: FIELD_SAMPLE, budgetMs: SEARCH_BUDGET_MS * 4, deadline: performance.now() + timeoutMs, signal: c.req.raw.signal },
    );
    const indexed = indexedPathsOf(deps.store, partitionsOf(deps.store, q));
    return json(c, { result: discoverFields(sample, undefined, indexed), sampled: sample.length, indexed } satisfies FieldPathsAnswer);
  });

  app.get('/api/logs/histogram', async (c) => {
    const { q, get } = read(c, ROUTE_PARAMS.histogram);
    const bucketsText = get('buckets');
    const h = await histogram(deps.store, q, bucketsText === undefined ? DEFAULT_BUCKETS : Number(bucketsText), performance.now() + timeoutMs, c.req.raw.signal);
    return json(c, { result: h.buckets, width: h.width, split: h.split, ...scannedOf(h.scanned) } satisfies HistogramAnswer);
  });

  app.get('/api/logs/facets', async (c) => {
    const { q, get } = read(c, ROUTE_PARAMS.facets);
    const { scanned, ...f } = await facets(deps.store, q, get('fields'), performance.now() + timeoutMs, c.req.raw.signal);
    return json(c, { ...f, ...scannedOf(scanned) } satisfies FacetsAnswer);
  });

  app.get('/api/logs/count', async (c) => {
    const { q } = read(c, ROUTE_PARAMS.count);
    const { scanned, ...result } = await countMatches(deps.store, q, performance.now() + timeoutMs, c.req.raw.signal);
    return json(c, { result, ...scannedOf(scanned) } satisfies CountBody);
  });

  app.get('/api/logs/export', async (c) => {
    const { q, get } = read(c, ROUTE_PARAMS.export);
    const format = get('format') ?? 'ndjson';
    if (format !== 'ndjson' && format !== 'csv') throw badParam('format', 'format must be ndjson or csv');
    const signal = c.req.raw.signal;
    const fields = fieldsOf(q.source);
    const refOf = projectRefs(deps.store);
    const fnText = functionTexts(deps.store);
    const encoder = new TextEncoder();
    // One watch for the whole export: each page is a walk of its own, and a deletion between two
    // of them would otherwise leave the next one nothing to read, ending early but looking complete.
    const watch = sourceWatch(deps.store, q);
    let cursor: Cursor | null = q.cursor;
    let done = false;
    let header = format === 'csv';
    let exported = 0;
    let pageRows: number = EXPORT_PAGE_ROWS.first;

    /** The next page's lines, or null when a search's page found none within its time. */
    const nextPage = async (): Promise<Uint8Array | null> => {
      const started = performance.now();
      watch();
      const lines: string[] = [];
      if (header) {
        lines.push(['id', 'timestamp', ...fields, 'event_message', 'metadata'].join(','));
        header = false;
      }
      let rows = 0;
      const progress = await scanRows(
        deps.store,
        { ...q, cursor },
        (row, record) => {
          const rec = recordOf(q, row, record(), refOf(row.project));
          const f = rowFields(deps.store, q, row, fnText);
          rows++;
          if (format === 'ndjson') lines.push(JSON.stringify({ ...rec, fields: f }));
          else lines.push([rec.id, formatIsoMicros(row.ts), ...fields.map((k) => f[k] ?? ''), rec.event_message, JSON.stringify(rec.metadata)].map((v) => csvCell(String(v ?? ''))).join(','));
        },
        { matches: pageRows, budgetMs: EXPORT_PAGE_MS, signal, watch },
      );
      cursor = progress.last;
      exported += rows;
      // Only a walk that looked at every row is the end: a search's page may find nothing in its time.
      if (progress.complete) done = true;
      const chunk = lines.length ? encoder.encode(lines.join('\n') + '\n') : null;
      const ms = performance.now() - started;
      if (rows > 0) pageRows = Math.round(Math.min(EXPORT_PAGE_ROWS.max, Math.max(EXPORT_PAGE_ROWS.min, (rows * EXPORT_PAGE_MS) / Math.max(ms, 0.05))));
      return chunk;
    };

    // The first page before the answer starts: an export that cannot even begin gets an error
    // status and the JSON envelope rather than a 200.
    const first = await nextPage();
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        if (first) controller.enqueue(first);
        if (done) controller.close();
      },
      async pull(controller) {
        try {
          // A pull must enqueue or close, else the reader waits for ever: pages that found nothing go on.
          for (;;) {
            // A turn of the event loop between pages: an import's batches get theirs.
            await new Promise<void>((resolve) => setImmediate(resolve));
            if (cancelled) return;
            const chunk = await nextPage();
            if (cancelled) return;
            if (chunk) controller.enqueue(chunk);
            if (done) return controller.close();
            if (chunk) return;
          }
        } catch (err) {
          if (err instanceof StoreFileDamaged) deps.store.damage.note(err);
          // A client that left needs no line in the log.
          if (!signal.aborted && !cancelled) console.error(`export of ${q.source.alias} stopped after ${exported} records, the connection was cut: ${failureReason(err)}`);
          cutOff(c, controller);
        }
      },
      cancel() {
        cancelled = true;
      },
    });
    const name = `${q.source.alias}-${formatIsoMicros(q.end).replace(/[:.]/g, '-')}.${format}`;
    return c.body(stream, 200, {
      'Content-Type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'Content-Disposition': `attachment; filename="${name}"`,
      // Chunked from the start: @hono/node-server then streams at once. Without it the adapter
      // reads the first chunks before the headers, and a failure there becomes a 500 whose body
      // is the raw error message.
      'Transfer-Encoding': 'chunked',
    });
  });

  return app;
}

/**
 * Ends a streamed answer so that every client sees it failed, never a short body that looks
 * whole: over Node's HTTP server (@hono/node-server gives the route its ServerResponse as
 * `c.env.outgoing`) the connection is destroyed before the final zero-length chunk; the adapter
 * then cancels the stream quietly (an errored stream it would log with its stack). In-process
 * (app.request) the body stream errors.
 */
function cutOff(c: Context, controller: ReadableStreamDefaultController<Uint8Array>): void {
  const outgoing = (c.env as { outgoing?: { destroy(): unknown } } | undefined)?.outgoing;
  if (outgoing) outgoing.destroy();
  else controller.error(new Error('the export stopped before its end'));
}

/** Why an export stopped, in one line for the server's log: no stack, no filesystem path. */
function failureReason(err: unknown): string {
  if (err instanceof StoreFileDamaged) return `a store file is damaged (${err.problem}); \`npm run check\` names it`;
  if (err instanceof AppError) return err.message;
  const e = err as NodeJS.ErrnoException | undefined;
  if (typeof e?.code === 'string' && typeof e.syscall === 'string') return `${e.code} on ${e.syscall}`;
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
  // Absolute paths (POSIX or Windows) keep only their last part.
  return message.replace(/(?<![\w.])(?:[A-Za-z]:)?[\\/][^\s'"`()]+/g, (p) => path.basename(p));
}
