/**
 * Imports (docs/ARCHITECTURE.md, "App API"):
 *
 * - `POST /api/imports?source=&project=&filename=&id=` with the export file as the raw body,
 *   streamed to the importer (never held whole); answers the report once the data is saved.
 * - `GET /api/imports`: running and recent imports with bytes and records so far.
 * - `POST /api/demo`: loads the embedded demo data, where the server has it.
 */
import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import type { ImportRun } from '../../contract/api-types.ts';
import { AppError, badParam } from '../errors.ts';
import { json } from '../http.ts';
import { ImportCancelled, ImportFailure, importStream, ImportTooLarge } from '../ingest/import.ts';
import { BodyWatch, bodyStalled, MIN_UPLOAD_BYTES_PER_WINDOW, queryParams, readParams } from '../request.ts';
import { findSource, SOURCE_NAMES } from '../sources.ts';
import { isDiskFull } from '../store/log-store.ts';
import { DISK_FULL_MESSAGE, type AppDeps, type AppShared } from './context.ts';

/** Imports stream to disk and never sit in memory: the limit only stops runaway uploads. */
export const DEFAULT_MAX_UPLOAD_BYTES = 64 * 1024 ** 3;
const KEEP_FINISHED_IMPORTS = 50;

export function importRoutes(deps: AppDeps, shared: AppShared): Hono {
  const app = new Hono();
  const { imports, bodyWindowMs } = shared;
  const maxUpload = deps.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;

  app.post('/api/imports', async (c) => {
    const get = readParams(queryParams(c), c.req.path, { takes: ['source', 'id', 'filename', 'project'] });
    const sourceParam = get('source');
    const idParam = get('id');
    const fileParam = get('filename');
    const projectParam = get('project');
    if (sourceParam && !findSource(sourceParam)) {
      throw badParam('source', `source must be one of ${SOURCE_NAMES.join(', ')} or their aliases`);
    }
    // A reused id would overwrite the earlier run's progress, which a client may still be polling.
    if (idParam !== undefined && imports.has(idParam)) {
      const message = `an import with id ${idParam} exists already; give each import its own id`;
      throw new AppError('conflict', message, [{ reason: 'duplicate', location: 'id', message }]);
    }
    const length = Number(c.req.header('content-length') ?? NaN);
    if (Number.isFinite(length) && length > maxUpload) {
      throw new AppError('payload_too_large', `the upload is ${length} bytes; the limit is ${maxUpload}`);
    }
    const body = c.req.raw.body;
    if (!body) throw badParam('body', 'the request body (the export file) is empty');
    const run: ImportRun = {
      id: idParam ?? randomUUID(),
      file: fileParam,
      state: 'running',
      bytes: 0,
      totalBytes: Number.isFinite(length) ? length : undefined,
      records: 0,
      startedAt: Date.now(),
    };
    imports.set(run.id, run);
    let tooLarge = false;
    const stalledMessage = `the upload stalled: less than ${MIN_UPLOAD_BYTES_PER_WINDOW / 1024} KiB arrived in ${bodyWindowMs / 1000} s`;
    let stalled = false;
    const watch = new BodyWatch(body.getReader(), bodyWindowMs, MIN_UPLOAD_BYTES_PER_WINDOW, () => {
      stalled = true;
      return bodyStalled(stalledMessage);
    });
    async function* chunks(): AsyncGenerator<Buffer> {
      let seen = 0;
      for (;;) {
        const next = await watch.read();
        if (next.done) return;
        const chunk = next.value;
        seen += chunk.byteLength;
        if (seen > maxUpload) {
          tooLarge = true;
          throw new Error('upload too large');
        }
        yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      }
    }
    try {
      const report = await importStream(deps.store, chunks(), {
        source: sourceParam,
        project: projectParam,
        fileName: run.file,
        onProgress: (p) => {
          run.bytes = p.bytes;
          run.records = p.records;
        },
        // A small gzip may inflate without end: its content counts against the same limit.
        maxContentBytes: maxUpload,
        // The client went away: stop the import (and its parser) now, not when the file is read.
        signal: c.req.raw.signal,
      });
      run.state = 'done';
      run.report = report;
      return json(c, { result: report });
    } catch (err) {
      run.state = 'failed';
      if (tooLarge) {
        run.error = 'upload too large';
        throw new AppError('payload_too_large', `the upload is larger than the limit of ${maxUpload} bytes`);
      }
      if (stalled) {
        run.error = stalledMessage;
        throw bodyStalled(stalledMessage);
      }
      if (err instanceof ImportTooLarge) {
        run.error = `the decompressed size of the body passed the limit of ${err.limit} bytes; the import failed and nothing from this file was kept (a failed import leaves the store as it was)`;
        throw new AppError('payload_too_large', run.error, [{ reason: 'too_large', location: 'body', message: run.error }]);
      }
      if (err instanceof ImportCancelled) {
        // Nobody reads this answer (the client has gone); the progress entry says what happened.
        run.error = err.message;
        throw new AppError('bad_request', err.message, [{ reason: 'cancelled', location: 'body', message: err.message }]);
      }
      if (err instanceof ImportFailure) {
        run.error = err.message;
        throw badParam('body', err.message, 'import_failed');
      }
      run.error = isDiskFull(err) ? DISK_FULL_MESSAGE : 'internal error';
      throw err;
    } finally {
      run.finishedAt = Date.now();
      pruneImports(imports);
    }
  });

  app.get('/api/imports', (c) => json(c, { result: [...imports.values()].reverse() }));

  app.post('/api/demo', async (c) => {
    if (!deps.loadDemo) throw new AppError('not_found', 'this server has no demo data');
    return json(c, { result: await deps.loadDemo() });
  });

  return app;
}

function pruneImports(imports: Map<string, ImportRun>): void {
  const finished = [...imports.values()].filter((r) => r.state !== 'running');
  for (const r of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED_IMPORTS))) imports.delete(r.id);
}
