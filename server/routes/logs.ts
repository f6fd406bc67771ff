/**
 * The explorer's routes (docs/ARCHITECTURE.md, "Explorer"): records of any source with search,
 * filters and a cursor; a histogram; facets; a count and a streamed export of everything that
 * matches; and each source's fields, so the renderer never keeps its own copy.
 */
import type { Context, Hono } from 'hono';
import type { AppDeps } from '../app.ts';
import { countMatches, DEFAULT_BUCKETS, facets, histogram } from '../explorer/aggregate.ts';
import { fieldsOf, functionTexts, projectRefs, readExplorerQuery, recordOf, rowFields, scanRows, singleParams, splitOf, writeCursor, type ExplorerQuery } from '../explorer/query.ts';
import { badParam } from '../errors.ts';
import { SOURCES } from '../sources.ts';
import { formatIsoMicros } from '../time.ts';
import { DEFAULT_QUERY_TIMEOUT_MS } from '../endpoints/run.ts';
import { csvCell, json } from '../http.ts';

/** How long one page of a text search may scan before it answers with what it found so far. */
export const SEARCH_BUDGET_MS = 250;

const LABELS: Record<string, string> = {
  edge_logs: 'Edge requests',
  postgres_logs: 'Postgres',
  function_edge_logs: 'Function invocations',
  function_logs: 'Function runtime',
  auth_logs: 'Auth',
  realtime_logs: 'Realtime',
  storage_logs: 'Storage',
  postgrest_logs: 'PostgREST',
  pgbouncer_logs: 'Pooler (PgBouncer)',
};

export function registerLogRoutes(app: Hono, deps: AppDeps): void {
  const timeoutMs = deps.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  const query = (c: Context): ExplorerQuery => readExplorerQuery(deps.store, singleParams((n) => c.req.queries(n)), deps.clock.now());

  app.get('/api/logs/fields', (c) =>
    json(c, {
      result: SOURCES.map((s) => {
        const fields = fieldsOf(s);
        const columns = ['timestamp', ...fields.filter((f) => f !== 'path'), ...(fields.includes('path') ? ['path'] : []), 'event_message'];
        return { source: s.name, alias: s.alias, label: LABELS[s.alias] ?? s.alias, fields, split: splitOf(s), columns };
      }),
    }),
  );

  app.get('/api/logs', async (c) => {
    const q = query(c);
    const refOf = projectRefs(deps.store);
    const fnText = functionTexts(deps.store);
    const rows: Array<Record<string, unknown>> = [];
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
    return json(c, { result: rows, next: next ? writeCursor(next) : null, scanned: { through, throughIso: formatIsoMicros(through), complete: progress.complete || more } });
  });

  app.get('/api/logs/histogram', async (c) => {
    const q = query(c);
    const bucketsText = c.req.query('buckets');
    const h = await histogram(deps.store, q, bucketsText === undefined ? DEFAULT_BUCKETS : Number(bucketsText), performance.now() + timeoutMs, c.req.raw.signal);
    return json(c, { result: h.buckets, width: h.width, split: h.split });
  });

  app.get('/api/logs/facets', async (c) => {
    const q = query(c);
    const f = await facets(deps.store, q, c.req.query('fields'), performance.now() + timeoutMs, c.req.raw.signal);
    return json(c, f);
  });

  app.get('/api/logs/count', async (c) => {
    const q = query(c);
    return json(c, { result: await countMatches(deps.store, q, performance.now() + timeoutMs, c.req.raw.signal) });
  });

  app.get('/api/logs/export', (c) => {
    const q = query(c);
    const format = c.req.query('format') ?? 'ndjson';
    if (format !== 'ndjson' && format !== 'csv') throw badParam('format', 'format must be ndjson or csv');
    const fields = fieldsOf(q.source);
    const refOf = projectRefs(deps.store);
    const fnText = functionTexts(deps.store);
    const encoder = new TextEncoder();
    let cursor = q.cursor;
    let done = false;
    let header = format === 'csv';
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (done) return controller.close();
        const lines: string[] = [];
        if (header) {
          lines.push(['id', 'timestamp', ...fields, 'event_message', 'metadata'].join(','));
          header = false;
        }
        const page = { ...q, cursor, q: q.q };
        let count = 0;
        const progress = await scanRows(
          deps.store,
          page,
          (row, record) => {
            const rec = recordOf(q, row, record(), refOf(row.project));
            const f = rowFields(deps.store, q, row, fnText);
            count++;
            if (format === 'ndjson') lines.push(JSON.stringify({ ...rec, fields: f }));
            else lines.push([rec.id, formatIsoMicros(row.ts), ...fields.map((k) => f[k] ?? ''), rec.event_message, JSON.stringify(rec.metadata)].map((v) => csvCell(String(v ?? ''))).join(','));
          },
          { matches: 1000, signal: c.req.raw.signal },
        );
        cursor = progress.last;
        if (progress.complete || count === 0) done = true;
        if (lines.length) controller.enqueue(encoder.encode(lines.join('\n') + '\n'));
        if (done) controller.close();
      },
    });
    const name = `${q.source.alias}-${formatIsoMicros(q.end).replace(/[:.]/g, '-')}.${format}`;
    return c.body(stream, 200, {
      'Content-Type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'Content-Disposition': `attachment; filename="${name}"`,
    });
  });
}
