/**
 * E2E data. The shared server is seeded with the demo data set (server/demo, the same
 * generator `npm run demo-data` runs) at a fixed "now"; the import tests use a small hand-made
 * export with a broken line at a known place.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEMO_PROJECTS } from '../../server/demo/generate.ts';
import { writeDemoSet } from '../../server/demo/demo-set.ts';

export const NOW_ISO = '2026-03-14T15:09:26.535897Z';
/** The busiest demo project (70% of the traffic). */
export const BUSY = DEMO_PROJECTS[0]!.ref;
export const DEMO_RECORDS = 10_000;

const MINUTE = 60_000_000;
const HOUR = 60 * MINUTE;

/** mulberry32: small, fast, deterministic. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function nowMicros(): number {
  return Date.parse(NOW_ISO) * 1000 + 897; // Date.parse keeps ms only
}

const PATHS = [
  '/rest/v1/todos',
  '/rest/v1/profiles',
  '/storage/v1/object/public/avatars/u1.png',
  '/auth/v1/token',
  '/auth/v1/user',
  '/realtime/v1/websocket',
  '/functions/v1/hello',
  '/rest/v1/rpc/auth_check',
];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PATCH', 'DELETE'];
const STATUSES = [200, 200, 200, 200, 201, 204, 301, 304, 400, 401, 404, 500, 503];

function edgeRecord(r: () => number, ts: number, project: string, i: number) {
  const p = PATHS[Math.floor(r() * PATHS.length)]!;
  const method = METHODS[Math.floor(r() * METHODS.length)]!;
  const status = STATUSES[Math.floor(r() * STATUSES.length)]!;
  const url = `https://${project}.supabase.co${p}`;
  return {
    id: `edge-${project.slice(0, 5)}-${String(i).padStart(6, '0')}`,
    timestamp: ts,
    project,
    event_message: `${method} | ${status} | 203.0.113.${i % 250} | ${(i * 7919).toString(16)} | ${url} | Mozilla/5.0 (fixture)`,
    metadata: {
      request: { method, path: p, url, host: `${project}.supabase.co`, headers: { user_agent: 'Mozilla/5.0 (fixture)', cf_ipcountry: 'DE' }, cf: { colo: 'FRA', country: 'DE' } },
      response: { status_code: status, headers: { content_type: 'application/json' }, origin_time: Math.round(5 + r() * 200) },
    },
  };
}

/**
 * Writes the demo set for `now` and returns the nine `<alias>.ndjson` files (not the
 * `variants/`, which repeat the edge records in other formats).
 */
export async function writeDemoExports(dir: string): Promise<string[]> {
  const summary = await writeDemoSet(dir, { now: nowMicros(), records: DEMO_RECORDS, seed: 7 });
  return summary.files.filter((f) => !f.file.includes('/')).map((f) => path.join(dir, f.file));
}

/**
 * The demo set's records of the given sources (by alias, e.g. `edge_logs`), as the shared server
 * imported them (same seed, records and clock): specs work out their expected figures from
 * these, not from the API under test.
 */
/** A demo record as its export file holds it (the ingest shape, µs timestamps). */
export interface DemoExportRecord {
  id: string;
  timestamp: number;
  project?: string;
  event_message: string;
  metadata: Record<string, unknown>;
}

export async function readDemoRecords<T>(aliases: readonly string[]): Promise<Record<string, T[]>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-expect-'));
  try {
    const files = await writeDemoExports(dir);
    const read = (alias: string) =>
      fs
        .readFileSync(files.find((f) => path.basename(f) === `${alias}.ndjson`)!, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as T);
    return Object.fromEntries(aliases.map((alias) => [alias, read(alias)]));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * An export as one project's log explorer downloads it (no project field), for the import
 * test: `n` good edge records plus one broken line (line `badLine`; 0 = none).
 */
export function writeImportFile(file: string, n: number, badLine: number, idPrefix = 'import'): void {
  const now = nowMicros();
  const r = rng(7);
  const lines: string[] = [];
  for (let k = 0; k < n; k++) {
    const rec = edgeRecord(r, now - Math.floor(r() * 6 * HOUR), 'gammaprojectref00003', k) as Record<string, unknown>;
    delete rec.project;
    rec.id = `${idPrefix}-${k}`;
    lines.push(JSON.stringify(rec));
  }
  if (badLine > 0) lines.splice(badLine - 1, 0, '{"timestamp": "not a time", "event_message": "broken"');
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}
