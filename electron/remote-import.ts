/**
 * Imports files through a server of another process (the one holding the data folder, whose UI
 * the window shows instead of its own server's): each file is streamed to its POST /api/imports,
 * as `npm run import` does. The outcome per file is the bridge's, as for an import in the app's
 * own server process.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { ImportReport } from '../server/ingest/import.ts';
import type { ServerAddress } from './app-api.ts';
import type { ImportFileOutcome } from './bridge.ts';

interface Reply {
  status: number;
  body: string;
}

/** One upload. node:http rather than fetch: the body streams from disk with its length, as the CLI sends it. */
function upload(server: ServerAddress, route: string, file: string, size: number): Promise<Reply> {
  const url = new URL(route, server.url);
  return new Promise((resolve, reject) => {
    const body = fs.createReadStream(file, { highWaterMark: 1 << 20 });
    const req = http.request(
      {
        hostname: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { Host: url.host, 'X-API-KEY': server.apiKey, 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          // The server may answer (a 400 for the source) before it has read the whole file.
          body.destroy();
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', (err) => {
      body.destroy();
      reject(err);
    });
    body.on('error', (err) => req.destroy(err));
    body.pipe(req);
  });
}

export async function importThroughServer(server: ServerAddress, files: readonly string[], opts: { source?: string; project?: string } = {}): Promise<ImportFileOutcome[]> {
  const out: ImportFileOutcome[] = [];
  for (const file of files) {
    let size: number;
    try {
      await fs.promises.access(file, fs.constants.R_OK);
      size = (await fs.promises.stat(file)).size;
    } catch (err) {
      out.push({ file, ok: false, reason: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` });
      continue;
    }
    const query = new URLSearchParams({ filename: path.basename(file) });
    if (opts.source) query.set('source', opts.source);
    if (opts.project) query.set('project', opts.project);
    let reply: Reply;
    try {
      reply = await upload(server, `/api/imports?${query}`, file, size);
    } catch (err) {
      out.push({ file, ok: false, reason: `the server at ${server.url} did not answer: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` });
      continue;
    }
    let parsed: { result?: ImportReport; error?: { message?: string } } | undefined;
    try {
      parsed = JSON.parse(reply.body) as typeof parsed;
    } catch {
      parsed = undefined;
    }
    if (reply.status === 200 && parsed?.result) out.push({ file, ok: true, report: parsed.result });
    else out.push({ file, ok: false, reason: parsed?.error?.message ?? `the server at ${server.url} answered ${reply.status}` });
  }
  return out;
}
