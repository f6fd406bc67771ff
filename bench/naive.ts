/**
 * The naive native baseline the benches compare against: one wide table in better-sqlite3
 * (a bench-only optional dependency), filled line by line, queried the obvious way.
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { createRequire } from 'node:module';
import { RE2JS } from 're2js';

type Stmt = { run(...a: unknown[]): unknown; all(...a: unknown[]): unknown[]; get(...a: unknown[]): unknown };
export interface NativeDb {
  exec(sql: string): void;
  prepare(sql: string): Stmt;
  pragma(p: string): unknown;
  function(name: string, fn: (...a: unknown[]) => unknown): void;
  aggregate(name: string, spec: { start: () => unknown; step: (s: unknown, ...a: unknown[]) => unknown; result: (s: unknown) => unknown }): void;
  transaction<T>(fn: () => T): () => T;
  close(): void;
}

/** Opens better-sqlite3 if it is installed (it compiles from source; CI may lack it). */
export function openNative(file: string, fresh = true): NativeDb | undefined {
  try {
    const require = createRequire(import.meta.url);
    const Database = require('better-sqlite3') as new (f: string) => NativeDb;
    if (fresh) fs.rmSync(file, { force: true });
    const db = new Database(file);
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec(`CREATE TABLE IF NOT EXISTS logs (id TEXT PRIMARY KEY, source TEXT, project TEXT, timestamp INTEGER, event_message TEXT,
      metadata TEXT, function_id TEXT, execution_time_ms REAL, status_code INTEGER, url TEXT, path TEXT)`);
    db.exec('CREATE INDEX IF NOT EXISTS logs_source_ts ON logs(source, project, timestamp)');
    db.aggregate('p_rank', {
      start: () => ({ v: [] as number[], p: 0 }),
      step: (s, v, p) => {
        const st = s as { v: number[]; p: number };
        if (typeof v === 'number') st.v.push(v);
        st.p = p as number;
        return st;
      },
      result: (s) => {
        const st = s as { v: number[]; p: number };
        if (!st.v.length) return null;
        st.v.sort((a, b) => a - b);
        return st.v[Math.max(1, Math.ceil((st.p / 100) * st.v.length)) - 1];
      },
    });
    const cache = new Map<string, RE2JS>();
    db.function('re2', (p, s) => {
      let re = cache.get(p as string);
      if (!re) cache.set(p as string, (re = RE2JS.compile(p as string)));
      return re.test(String(s)) ? 1 : 0;
    });
    return db;
  } catch (err) {
    console.warn(`better-sqlite3 unavailable (${(err as Error).message.split('\n')[0]}); native baseline skipped`);
    return undefined;
  }
}

const dig = (m: unknown, ...path: string[]): unknown => {
  let cur = m;
  for (const k of path) {
    if (Array.isArray(cur)) cur = cur[0];
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
};

/** Imports an NDJSON file into the wide table the obvious way; returns records inserted. */
export async function naiveImport(db: NativeDb, file: string, source: string): Promise<number> {
  const insert = db.prepare('INSERT OR IGNORE INTO logs VALUES (?,?,?,?,?,?,?,?,?,?,?)');
  let n = 0;
  let batch: unknown[][] = [];
  const flush = db.transaction(() => {
    for (const row of batch) insert.run(...row);
  });
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line) continue;
    const r = JSON.parse(line) as Record<string, unknown>;
    const m = r.metadata;
    const project = (r.project as string | undefined) ?? (dig(m, 'project_ref') as string | undefined) ?? (dig(m, 'project') as string | undefined);
    batch.push([
      r.id,
      source,
      project,
      r.timestamp,
      r.event_message,
      JSON.stringify(m),
      dig(m, 'function_id') ?? null,
      dig(m, 'execution_time_ms') ?? null,
      dig(m, 'response', 'status_code') ?? null,
      dig(m, 'request', 'url') ?? null,
      dig(m, 'request', 'path') ?? null,
    ]);
    n++;
    if (batch.length >= 10_000) {
      flush();
      batch = [];
    }
  }
  flush();
  return n;
}

/** The three endpoints over the wide table, written the straightforward way. */
export const NAIVE_SQL = {
  invocationStats: `SELECT timestamp - timestamp % @unit AS b, count(*) c, sum(status_code >= 400) e, min(execution_time_ms),
      max(execution_time_ms), avg(execution_time_ms), p_rank(execution_time_ms, 95), p_rank(execution_time_ms, 99)
    FROM logs WHERE source = 'deno-relay-logs' AND project = @project AND timestamp >= @first AND timestamp < @end GROUP BY b ORDER BY b`,
  logsAll: `SELECT id, timestamp, event_message, metadata FROM logs WHERE source = 'cloudflare.logs.prod' AND project = @project
    AND timestamp > @cutoff ORDER BY timestamp DESC, id LIMIT 100`,
  apiCounts: `SELECT timestamp - timestamp % @unit AS b, sum(path LIKE '%/rest%'), sum(path LIKE '%/storage%'), sum(path LIKE '%/auth%'),
      sum(path LIKE '%/realtime%') FROM logs WHERE source = 'cloudflare.logs.prod' AND timestamp >= @start AND re2(@pattern, url)
    GROUP BY b ORDER BY b`,
} as const;
