/**
 * Which project an imported record belongs to when the export does not say: Supabase Studio's
 * CSV download has no `project` column, but every edge record's host is
 * `<ref>.supabase.co`. The ref is taken from the host; a project option fills only records
 * whose host names no project, and is never given to a record whose host names another one.
 * Expected counts and refs are written out by hand.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sourceInfo } from '../sources.ts';
import { LogStore } from '../store/log-store.ts';
import { importStream, type ImportOptions } from './import.ts';
import { canonicalRecord, normalizeRecord, projectFromRequest, refOfHost } from './normalize.ts';

// 2026-11-15T15:48:00Z, then one second per row.
const T0 = Date.UTC(2026, 10, 15, 15, 48) * 1000;
const A = 'ouwmmbchcsjxvtfobujc';
const B = 'blcewytrjvljrooddvav';
const EDGE = sourceInfo('cloudflare.logs.prod');

const dirs: string[] = [];
const stores: LogStore[] = [];

async function newStore(): Promise<LogStore> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-project-'));
  dirs.push(dir);
  const store = await LogStore.open(dir);
  stores.push(store);
  return store;
}

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const run = (store: LogStore, body: string, opts: ImportOptions = {}) => importStream(store, [Buffer.from(body)], opts);

/** Query-shape metadata of one edge request to `host`, as Studio exports it. */
function meta(host: string, p = '/storage/v1/object/a.png') {
  return [{ request: [{ host, method: 'GET', path: p, url: `https://${host}${p}`, headers: [{ host }] }], response: [{ status_code: 200 }] }];
}

/** A Studio CSV: id, timestamp, event_message, metadata (JSON text); no project column. */
function studioCsv(hosts: readonly string[]): string {
  const cell = (v: string) => `"${v.replace(/"/g, '""')}"`;
  const lines = ['id,timestamp,event_message,metadata'];
  hosts.forEach((host, i) => {
    const iso = new Date((T0 + i * 1_000_000) / 1000).toISOString();
    lines.push([`row-${i}`, iso, cell(`GET | 200 | https://${host}/storage/v1/object/a.png`), cell(JSON.stringify(meta(host)))].join(','));
  });
  return `${lines.join('\n')}\n`;
}

/** 36 rows of project A, then 14 of project B: a Studio CSV download of two projects. */
const MIXED = [...Array.from({ length: 36 }, () => `${A}.supabase.co`), ...Array.from({ length: 14 }, () => `${B}.supabase.co`)];

const projectsOf = (store: LogStore) => {
  const counts: Record<string, number> = {};
  for (const r of store.dump('cloudflare.logs.prod')) counts[r.project] = (counts[r.project] ?? 0) + 1;
  return counts;
};

describe('refOfHost', () => {
  it('reads the ref of a project host and of its functions host, in any case, with a port or a trailing dot', () => {
    expect(refOfHost(`${A}.supabase.co`)).toBe(A);
    expect(refOfHost(`${A}.functions.supabase.co`)).toBe(A);
    expect(refOfHost(`${A.toUpperCase()}.Supabase.CO:443`)).toBe(A);
    expect(refOfHost(`${A}.supabase.co.`)).toBe(A);
  });
  it('names no project for other hosts', () => {
    expect(refOfHost('api.example.com')).toBeNull();
    expect(refOfHost('supabase.co')).toBeNull();
    expect(refOfHost('short.supabase.co')).toBeNull(); // not 20 characters
    expect(refOfHost(`${A}.supabase.co.evil.example`)).toBeNull();
    expect(refOfHost(`x.${A}.supabase.co`)).toBeNull();
  });
});

describe('projectFromRequest', () => {
  it('prefers the Host header, then request.host, then the URL, in either metadata shape', () => {
    expect(projectFromRequest([{ request: [{ headers: [{ host: `${A}.supabase.co` }], host: `${B}.supabase.co` }] }])).toEqual({ ref: A, host: `${A}.supabase.co` });
    expect(projectFromRequest({ request: { host: `${B}.supabase.co`, url: `https://${A}.supabase.co/rest/v1/t` } })).toEqual({ ref: B, host: `${B}.supabase.co` });
    expect(projectFromRequest({ request: { url: `https://${A}.supabase.co/rest/v1/t` } })).toEqual({ ref: A, host: `${A}.supabase.co` });
  });
  it('skips a candidate that names no project', () => {
    expect(projectFromRequest({ request: { headers: { host: 'api.example.com' }, url: `https://${B}.functions.supabase.co/hello` } })).toEqual({ ref: B, host: `${B}.functions.supabase.co` });
    expect(projectFromRequest({ request: { url: 'not a url' } })).toBeNull();
    expect(projectFromRequest(undefined)).toBeNull();
  });
});

describe('the project of an imported record', () => {
  it('a Studio CSV without a project column: every row takes the project its host names', async () => {
    const store = await newStore();
    const r = await run(store, studioCsv(MIXED), { fileName: 'edge_logs.csv' });
    expect(r).toMatchObject({ source: 'cloudflare.logs.prod', format: 'csv', imported: 50, rejected: 0, errors: [] });
    expect(projectsOf(store)).toEqual({ [A]: 36, [B]: 14 });
  });

  it('with a project option, rows whose host names another project are refused, naming both', async () => {
    const store = await newStore();
    const r = await run(store, studioCsv(MIXED), { fileName: 'edge_logs.csv', project: A });
    expect(r.imported).toBe(36);
    expect(r.rejected).toBe(14);
    // Header is line 1; the B rows are rows 37..50, lines 38..51.
    expect(r.errors.map((e) => e.line)).toEqual(Array.from({ length: 14 }, (_, i) => 38 + i));
    expect(new Set(r.errors.map((e) => e.reason))).toEqual(new Set([`project mismatch: the record's host ${B}.supabase.co names project ${B}, not the project option ${A}`]));
    expect(projectsOf(store)).toEqual({ [A]: 36 });
  });

  it('a host that names no project: rejected without an option, given the option with one', async () => {
    const hosts = ['api.example.com', 'api.example.com', `${A}.supabase.co`];
    const without = await run(await newStore(), studioCsv(hosts), { source: 'edge_logs' });
    expect(without).toMatchObject({ imported: 1, rejected: 2 });
    expect(without.errors).toEqual([
      { line: 2, reason: 'no project: the record has no project and no project option was given' },
      { line: 3, reason: 'no project: the record has no project and no project option was given' },
    ]);
    const store = await newStore();
    const withOption = await run(store, studioCsv(hosts), { source: 'edge_logs', project: A });
    expect(withOption).toMatchObject({ imported: 3, rejected: 0 });
    expect(projectsOf(store)).toEqual({ [A]: 3 });
  });

  it('a blank project option is no option', async () => {
    const store = await newStore();
    const r = await run(store, studioCsv([`${B}.supabase.co`]), { source: 'edge_logs', project: '' });
    expect(r).toMatchObject({ imported: 1, rejected: 0 });
    expect(projectsOf(store)).toEqual({ [B]: 1 });
  });

  it('a record that names its own project keeps it, whatever its host or the option say', () => {
    const n = normalizeRecord({ timestamp: T0, project: 'own-project', event_message: 'x', metadata: meta(`${B}.supabase.co`) }, EDGE, A);
    expect('record' in n && n.record.project).toBe('own-project');
  });

  it('function requests name their project by the functions host', () => {
    const n = normalizeRecord(
      { timestamp: T0, event_message: 'POST | 200', metadata: { function_id: 'f', request: { url: `https://${B}.functions.supabase.co/hello` } } },
      sourceInfo('deno-relay-logs'),
      undefined,
    );
    expect('record' in n && n.record.project).toBe(B);
  });

  it('reading back keeps the project stored at import, even one a host would now contradict', () => {
    // Imported before hosts were read: the option was given to a record naming project B.
    const stored = JSON.stringify({ id: 'old', timestamp: T0, event_message: 'x', metadata: meta(`${B}.supabase.co`) });
    const rec = JSON.parse(canonicalRecord(stored, EDGE, A, T0)) as { project: string };
    expect(rec.project).toBe(A);
  });
});
