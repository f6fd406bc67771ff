/**
 * `npm run import -- --data-dir DIR [--source NAME] [--project REF] FILE...`
 * Prints one JSON report per file; exits 1 if any file failed entirely.
 *
 * One process owns a data folder (store/data-lock.ts). When a server holds it and its lock
 * names its API, the files go through that server (POST /api/imports), with the same output;
 * when another import or a server without an API holds it, the CLI says who and exits 2.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { LogStore } from '../store/log-store.ts';
import { defaultDataDir } from '../store/data-dir.ts';
import { DataFolderLocked, type DataLockInfo } from '../store/data-lock.ts';
import { ImportFailure, importFile } from './import.ts';

const { values, positionals } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    source: { type: 'string' },
    project: { type: 'string' },
  },
  allowPositionals: true,
});

if (positionals.length === 0) {
  console.error('usage: npm run import -- --data-dir DIR [--source NAME] [--project REF] FILE...');
  process.exit(2);
}

type Outcome = object | { file: string; failed: true; reason: string };

const dataDir = values['data-dir'] ?? defaultDataDir();
let store: LogStore | undefined;
try {
  store = await LogStore.open(dataDir, { lockKind: 'import' });
} catch (err) {
  if (!(err instanceof DataFolderLocked)) throw err;
  const { holder } = err;
  if (!holder.url || !holder.apiKey || !(await answers(holder.url, holder.apiKey))) {
    console.error(err.message);
    process.exit(2);
  }
  console.error(`the data folder is held by pid ${holder.pid} (${holder.kind}); importing through its API at ${holder.url}`);
  await run((file) => importThrough(holder, file));
}

if (store) {
  const local = store;
  await run(async (file) => {
    try {
      return await importFile(local, file, { source: values.source, project: values.project });
    } catch (err) {
      const reason = err instanceof ImportFailure ? err.message : `internal error: ${(err as Error).stack ?? err}`;
      return { file, failed: true, reason };
    }
  });
}

/** Imports every file in order, one JSON line each; exits 1 if any failed entirely. */
async function run(importOne: (file: string) => Promise<Outcome>): Promise<never> {
  let failed = false;
  for (const file of positionals) {
    const outcome = await importOne(file);
    if ('failed' in outcome && outcome.failed) failed = true;
    console.log(JSON.stringify(outcome));
  }
  await store?.close();
  process.exit(failed ? 1 : 0);
}

interface Reply {
  status: number;
  body: string;
}

/** One request to the holder's API (127.0.0.1 only: its Host check wants exactly host:port). */
function request(base: string, apiKey: string, method: string, pathAndQuery: string, body?: fs.ReadStream, length?: number): Promise<Reply> {
  const url = new URL(pathAndQuery, base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        hostname: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method,
        headers: {
          Host: url.host,
          'X-API-KEY': apiKey,
          ...(length !== undefined ? { 'Content-Type': 'application/octet-stream', 'Content-Length': String(length) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          // The server may answer (say, a 400 for the source) before it has read the whole file.
          body?.destroy();
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body) {
      body.on('error', (err) => req.destroy(err));
      body.pipe(req);
    } else req.end();
  });
}

/** True if the server named in the lock is up and takes its key. */
async function answers(base: string, apiKey: string): Promise<boolean> {
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(base)) return false;
  try {
    const reply = await Promise.race([
      request(base, apiKey, 'GET', '/api/sources'),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 5_000).unref()),
    ]);
    return reply.status === 200;
  } catch {
    return false;
  }
}

/** Streams one file to POST /api/imports; the report is the server's, as a local import's. */
async function importThrough(holder: DataLockInfo, file: string): Promise<Outcome> {
  let size: number;
  try {
    await fs.promises.access(file, fs.constants.R_OK);
    size = (await fs.promises.stat(file)).size;
  } catch (err) {
    return { file, failed: true, reason: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  const query = new URLSearchParams({ filename: path.basename(file) });
  if (values.source) query.set('source', values.source);
  if (values.project) query.set('project', values.project);
  let reply: Reply;
  try {
    reply = await request(holder.url!, holder.apiKey!, 'POST', `/api/imports?${query}`, fs.createReadStream(file, { highWaterMark: 1 << 20 }), size);
  } catch (err) {
    return { file, failed: true, reason: `the server at ${holder.url} did not answer: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  let parsed: { result?: object; error?: { message?: string } } | undefined;
  try {
    parsed = JSON.parse(reply.body) as typeof parsed;
  } catch {
    parsed = undefined;
  }
  if (reply.status === 200 && parsed?.result) return parsed.result;
  return { file, failed: true, reason: parsed?.error?.message ?? `the server at ${holder.url} answered ${reply.status}` };
}
