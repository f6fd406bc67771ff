/**
 * A data folder damaged behind the app's back, on a real store in a temporary folder: every
 * answer after the damage is either the answer from before it or a refusal naming the file, and
 * no file is ever deleted for it. Derived files (columns files, paths.log) are rebuilt and
 * answer as before; committed ones (the catalog, partition databases, record files, urls.log)
 * are named at start-up and in a 503 for the requests that need them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appOver, DAY, edgeRecord, fieldSectionOf, fnRecord, HOUR, importRecords, MIN, NOW, storeKeeper, type TestApp } from '../testing/fixtures.ts';
import { spawnSync } from 'node:child_process';
import { checkStore, formatCheckReport } from './check.ts';
import { StoreRefused } from './damage.ts';
import type { LogStore } from './log-store.ts';

const keeper = storeKeeper('le-damage-');
afterEach(() => keeper.cleanup());

const REF = 'projaaaaaaaaaaaaaaaa';
const iso = (us: number) => new Date(us / 1000).toISOString();

/** 3 days of edge records (every 7 minutes, a status and path of their own), function calls, and auth records with paths. */
function fixture() {
  const edge = [];
  const paths = ['/rest/v1/todos', '/storage/v1/object/a.png', '/auth/v1/token', '/realtime/v1/websocket', '/functions/v1/hello'];
  for (let i = 0; i < (3 * DAY) / (7 * MIN); i++) {
    const p = paths[i % paths.length]!;
    edge.push({
      id: `e-${i}`,
      timestamp: NOW - i * 7 * MIN,
      project: REF,
      event_message: `GET | ${[200, 404, 500][i % 3]} | https://x.supabase.co${p}?i=${i}${i % 50 === 0 ? ' needle' : ''}`,
      metadata: { request: { method: i % 4 ? 'GET' : 'POST', url: `https://x.supabase.co${p}?i=${i}`, path: p }, response: { status_code: [200, 404, 500][i % 3] } },
    });
  }
  const fn = Array.from({ length: 300 }, (_, i) => fnRecord(NOW - i * 11 * MIN, { id: `f-${i}`, project: REF, exec: 5 + (i % 40), status: i % 9 ? 200 : 500 }));
  const auth = Array.from({ length: 200 }, (_, i) => ({
    id: `a-${i}`,
    timestamp: NOW - i * 13 * MIN,
    project: REF,
    event_message: JSON.stringify({ msg: 'request completed', path: `/token${i % 3}`, status: i % 5 ? 200 : 400 }),
    metadata: { level: i % 5 ? 'info' : 'error', path: `/token${i % 3}`, method: 'POST', status: i % 5 ? 200 : 400 },
  }));
  return { edge, fn, auth };
}

const week = `start=${encodeURIComponent(iso(NOW - 7 * DAY))}&end=${encodeURIComponent(iso(NOW))}`;
const day = `start=${encodeURIComponent(iso(NOW - DAY))}&end=${encodeURIComponent(iso(NOW))}`;

/** The requests compared before and after each damage, by what they read. */
const REQUESTS = {
  apiCounts: `/api/endpoints/usage.api-counts?project=${REF}&interval=daily`,
  logsAll: `/api/endpoints/logs.all?project=${REF}&project_tier=PRO`,
  stats: `/api/endpoints/functions.invocation-stats?project=${REF}&interval=7day`,
  statsHour: `/api/endpoints/functions.invocation-stats?project=${REF}&interval=1hr`,
  edgeCount: `/api/logs/count?source=edge_logs&${week}`,
  edgeHistogram: `/api/logs/histogram?source=edge_logs&${week}`,
  edgeFacets: `/api/logs/facets?source=edge_logs&fields=status,method,path&${week}`,
  edgePathFilter: `/api/logs/count?source=edge_logs&path=/rest&${day}`,
  edgeSearch: `/api/logs/count?source=edge_logs&q=needle&${week}`,
  edgePage: `/api/logs?source=edge_logs&status=5xx&limit=50&${day}`,
  authFacets: `/api/logs/facets?source=auth_logs&fields=status,path,level&${week}`,
  authPage: `/api/logs?source=auth_logs&path=/token1&limit=20&${week}`,
  fnFacets: `/api/logs/facets?source=function_edge_logs&fields=status&${week}`,
} as const;
type Name = keyof typeof REQUESTS;

async function answers(t: TestApp): Promise<Record<Name, { status: number; body: unknown }>> {
  const out = {} as Record<Name, { status: number; body: unknown }>;
  for (const [name, url] of Object.entries(REQUESTS) as Array<[Name, string]>) {
    const res = await t.request(url);
    out[name] = { status: res.status, body: await res.json() };
  }
  return out;
}

/** Every file of the folder with its size (to show that nothing was deleted). */
function listing(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.name !== 'LOCK') out[path.relative(dir, full)] = fs.statSync(full).size;
    }
  };
  walk(dir);
  return out;
}

/** A store holding the fixture, saved and closed, with the answers it gave. */
async function damagedLater(): Promise<{ dir: string; before: Record<Name, { status: number; body: unknown }> }> {
  const dir = keeper.newDir();
  const store = await keeper.open(dir);
  const f = fixture();
  await importRecords(store, 'edge_logs', f.edge);
  await importRecords(store, 'function_edge_logs', f.fn);
  await importRecords(store, 'auth_logs', f.auth);
  const t = appOver(store);
  const before = await answers(t);
  for (const a of Object.values(before)) expect(a.status).toBe(200);
  await store.columnsSettled();
  await keeper.close(store);
  return { dir, before };
}

async function reopen(dir: string): Promise<{ store: LogStore; t: TestApp }> {
  const store = await keeper.open(dir);
  return { store, t: appOver(store) };
}

const partsOf = (dir: string, alias: string, ext: string) =>
  fs
    .readdirSync(path.join(dir, 'parts', alias))
    .filter((f) => f.endsWith(ext))
    .sort()
    .map((f) => path.join(dir, 'parts', alias, f));

describe('a folder without its catalog', () => {
  it('is refused at start with what it holds and what to do, and every file stays', async () => {
    const { dir } = await damagedLater();
    fs.rmSync(path.join(dir, 'catalog.sqlite'));
    const files = listing(dir);
    expect(Object.keys(files).length).toBeGreaterThan(10);
    const err = await keeper.open(dir).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreRefused);
    expect((err as Error).message).toMatch(/holds \d+ partition files \(\d+ bytes\) under parts\/ and urls\.log \(\d+ bytes\) but no catalog\.sqlite/);
    expect((err as Error).message).toMatch(/Restore catalog\.sqlite .* or move the folder aside/);
    // Twice: a second start finds the same files.
    await expect(keeper.open(dir)).rejects.toBeInstanceOf(StoreRefused);
    expect(listing(dir)).toEqual(files);
  });

  it('a catalog that is not one is refused too, and nothing is deleted', async () => {
    const { dir } = await damagedLater();
    fs.writeFileSync(path.join(dir, 'catalog.sqlite'), Buffer.alloc(4096, 0x41));
    const files = listing(dir);
    await expect(keeper.open(dir)).rejects.toThrow(/catalog\.sqlite cannot be read as this store's catalog/);
    expect(listing(dir)).toEqual(files);
  });

  it('a new folder (or one holding only views) still opens empty', async () => {
    const dir = keeper.newDir();
    fs.writeFileSync(path.join(dir, 'views.json'), '{"views":[],"searches":[]}');
    const store = await keeper.open(dir);
    expect(store.summary().every((x) => x.count === 0)).toBe(true);
  });
});

describe('derived files damaged: rebuilt, every answer as before', () => {
  it('columns files flipped, zeroed at the tail, cut, or swapped with another partition’s', async () => {
    const { dir, before } = await damagedLater();
    const cols = partsOf(dir, 'edge_logs', '.cols');
    expect(cols.length).toBeGreaterThanOrEqual(3);
    const [a, b, c] = cols as [string, string, string];
    const bytesA = fs.readFileSync(a);
    for (let i = 300; i < 300 + 256 && i < bytesA.length; i++) bytesA[i] = bytesA[i]! ^ 0xff;
    fs.writeFileSync(a, bytesA);
    const bytesB = fs.readFileSync(b);
    bytesB.fill(0, Math.floor(bytesB.length / 2));
    fs.writeFileSync(b, bytesB);
    // c replaced by a copy of another partition's file (the same length is not needed to fool a length check).
    fs.copyFileSync(cols[cols.length - 1] === c ? b : cols[cols.length - 1]!, c);
    for (const f of partsOf(dir, 'auth_logs', '.cols')) fs.truncateSync(f, fs.statSync(f).size - 8);
    const { t } = await reopen(dir);
    expect(await answers(t)).toEqual(before);
  });

  it('paths.log cut mid-file or deleted', async () => {
    const { dir, before } = await damagedLater();
    const file = path.join(dir, 'paths.log');
    const size = fs.statSync(file).size;
    fs.truncateSync(file, Math.floor(size / 2) + 3);
    let again = await reopen(dir);
    expect(await answers(again.t)).toEqual(before);
    await keeper.close(again.store);
    fs.rmSync(file);
    again = await reopen(dir);
    expect(await answers(again.t)).toEqual(before);
  });
});

describe('committed files damaged: named, never a wrong or empty answer', () => {
  it('urls.log cut short: start-up names it; API counts answer 503 naming it, every time; the rest as before (searches read the record texts, not urls.log)', async () => {
    const { dir, before } = await damagedLater();
    const file = path.join(dir, 'urls.log');
    fs.truncateSync(file, Math.floor(fs.statSync(file).size / 2));
    const { store, t } = await reopen(dir);
    expect(store.damage.list()).toEqual([{ file: 'urls.log', problem: expect.stringMatching(/^it holds \d+ bytes but the catalog counts \d+$/) }]);
    const after = await answers(t);
    expect(after.apiCounts.status).toBe(503);
    expect(JSON.stringify(after.apiCounts.body)).toMatch(/the store file urls\.log is damaged/);
    // Asked again: still the same refusal, never an empty result.
    const again = await t.request(REQUESTS.apiCounts);
    expect(again.status).toBe(503);
    for (const name of ['stats', 'statsHour', 'edgeCount', 'edgeFacets', 'edgeSearch', 'authFacets', 'authPage', 'fnFacets'] as const) expect(after[name], name).toEqual(before[name]);
  });

  it('urls.log deleted: named the same way, and not recreated empty', async () => {
    const { dir } = await damagedLater();
    const file = path.join(dir, 'urls.log');
    fs.rmSync(file);
    const { store, t } = await reopen(dir);
    expect(store.damage.list()).toEqual([{ file: 'urls.log', problem: 'the file is missing' }]);
    const res = await t.request(REQUESTS.apiCounts);
    expect(res.status).toBe(503);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('a partition database missing, or flipped: start-up names the missing one; requests that need either answer 503 naming it; nothing is deleted', async () => {
    const { dir, before } = await damagedLater();
    const dbs = partsOf(dir, 'function_edge_logs', '.sqlite');
    const newest = dbs[dbs.length - 1]!;
    fs.rmSync(newest);
    const files = listing(dir);
    let again = await reopen(dir);
    const name = `parts/function_edge_logs/${path.basename(newest)}`;
    expect(again.store.damage.list()).toEqual([{ file: name, problem: 'the file is missing' }]);
    const res = await again.t.request(REQUESTS.statsHour);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { message: string; errors: Array<{ reason: string; location: string }> } };
    expect(body.error.message).toContain(`the store file ${name} is damaged (the file is missing)`);
    expect(body.error.errors[0]).toMatchObject({ reason: 'damaged', location: name });
    // Edge answers do not need it.
    const after = await answers(again.t);
    for (const n of ['apiCounts', 'logsAll', 'edgeCount', 'edgeFacets', 'edgeSearch', 'authFacets'] as const) expect(after[n], n).toEqual(before[n]);
    await keeper.close(again.store);
    expect(listing(dir)).toEqual(files);

    // An edge database with flipped bytes: found by its checksum when loaded. logs.all reads
    // the newest partitions' columns files, not their databases: right while those are whole.
    const edgeDbs = partsOf(dir, 'edge_logs', '.sqlite');
    const target = edgeDbs[edgeDbs.length - 1]!;
    const bytes = fs.readFileSync(target);
    bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0x01;
    fs.writeFileSync(target, bytes);
    again = await reopen(dir);
    const fromColumns = await again.t.request(REQUESTS.logsAll);
    expect({ status: fromColumns.status, body: await fromColumns.json() }).toEqual(before.logsAll);
    await keeper.close(again.store);
    // Without its columns file, the database is loaded to build it.
    fs.rmSync(target.replace(/\.sqlite$/, '.cols'));
    again = await reopen(dir);
    const logs = await again.t.request(REQUESTS.logsAll);
    expect(logs.status).toBe(503);
    expect(((await logs.json()) as { error: { message: string } }).error.message).toContain(`parts/edge_logs/${path.basename(target)} is damaged (its checksum does not match`);
  });

  it('a record file cut short or with a damaged block: logs.all and pages that read it answer 503 naming it', async () => {
    const { dir } = await damagedLater();
    const recs = partsOf(dir, 'edge_logs', '.records');
    const newest = recs[recs.length - 1]!;
    const bytes = fs.readFileSync(newest);
    // The first block's compressed bytes, scrambled.
    for (let i = 16; i < 400; i++) bytes[i] = (bytes[i]! * 31 + 7) & 0xff;
    fs.writeFileSync(newest, bytes);
    let again = await reopen(dir);
    for (const url of [REQUESTS.logsAll, REQUESTS.edgePage]) {
      const res = await again.t.request(url);
      expect(res.status, url).toBe(503);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain(`parts/edge_logs/${path.basename(newest)} is damaged`);
    }
    await keeper.close(again.store);
    // Another partition's record file under this name (longer, so its length passes): its blocks' CRCs name the other file.
    fs.copyFileSync(recs[0]!, newest);
    fs.appendFileSync(newest, Buffer.alloc(1 << 20));
    again = await reopen(dir);
    const swapped = await again.t.request(REQUESTS.logsAll);
    expect(swapped.status).toBe(503);
    expect(((await swapped.json()) as { error: { message: string } }).error.message).toContain(`parts/edge_logs/${path.basename(newest)} is damaged (the block at byte`);
    await keeper.close(again.store);
    fs.truncateSync(newest, 100);
    again = await reopen(dir);
    expect(again.store.damage.list()).toEqual([{ file: `parts/edge_logs/${path.basename(newest)}`, problem: expect.stringMatching(/^it holds 100 bytes but the catalog counts \d+$/) }]);
    expect((await again.t.request(REQUESTS.logsAll)).status).toBe(503);
  });
});

describe('races with a delete and an import', () => {
  it('a count running while its source is deleted answers from what it read or says the source went away (409), never a 500', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    await importRecords(store, 'edge_logs', fixture().edge);
    const t = appOver(store);
    for (let round = 0; round < 3; round++) {
      const reading = t.request(REQUESTS.edgeSearch);
      const deleting = t.request('/api/sources/edge_logs', { method: 'DELETE' });
      const [r] = await Promise.all([reading, deleting]);
      if (![200, 409].includes(r.status)) throw new Error(`${r.status} ${await r.text()}`);
      if (r.status === 409) expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/deleted while this request read them/);
      await importRecords(store, 'edge_logs', fixture().edge);
    }
  });

  it('the explorer shows only committed records while an import runs, and none of one that is rolled back', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    const base = Array.from({ length: 14 }, (_, i) => edgeRecord(NOW - i * MIN, { id: `base-${i}` }));
    await importRecords(store, 'edge_logs', base);
    const t = appOver(store);
    // The window ends after the newest record (an ISO instant in milliseconds would cut NOW's microseconds).
    const window = `start=${encodeURIComponent(iso(NOW - DAY))}&end=${encodeURIComponent(iso(NOW + MIN))}`;
    const count = async () => ((await (await t.request(`/api/logs/count?source=edge_logs&${window}`)).json()) as { result: { count: number } }).result.count;
    expect(await count()).toBe(14);
    let seen = -1;
    await expect(
      store.withWriter('cloudflare.logs.prod', async (w) => {
        w.write([
          { id: 'new-1', ts: NOW - 30 * 1000, project: REF, raw: JSON.stringify(edgeRecord(NOW - 30 * 1000, { id: 'new-1' })), url: 'https://x/rest/v1/a', families: 1, status: 200, method: 'GET', path: '/rest/v1/a', level: null },
          { id: 'new-2', ts: NOW - 3 * HOUR, project: REF, raw: JSON.stringify(edgeRecord(NOW - 3 * HOUR, { id: 'new-2' })), url: 'https://x/rest/v1/b', families: 1, status: 200, method: 'GET', path: '/rest/v1/b', level: null },
        ]);
        seen = await count();
        throw new Error('the import fails after its batch');
      }),
    ).rejects.toThrow(/fails after its batch/);
    expect(seen).toBe(14);
    expect(await count()).toBe(14);
  });
});

describe('npm run check', () => {
  it('lists every damaged file by kind, and changes nothing in the folder', async () => {
    const { dir } = await damagedLater();
    const clean = await checkStore(dir);
    expect(clean.findings).toEqual([]);
    expect(clean.ok).toBe(true);
    expect(clean.records).toBe(fixture().edge.length + fixture().fn.length + fixture().auth.length);

    const recs = partsOf(dir, 'edge_logs', '.records');
    fs.truncateSync(recs[0]!, 50);
    const dbs = partsOf(dir, 'auth_logs', '.sqlite');
    const bytes = fs.readFileSync(dbs[0]!);
    bytes[200] = bytes[200]! ^ 0x10;
    fs.writeFileSync(dbs[0]!, bytes);
    const cols = partsOf(dir, 'function_edge_logs', '.cols');
    fs.truncateSync(cols[0]!, 200);
    fs.appendFileSync(path.join(dir, 'urls.log'), 'not json\n');
    fs.writeFileSync(path.join(dir, 'parts', 'edge_logs', '20200101-v9.sqlite'), 'left over');
    const files = listing(dir);
    const mtimes = Object.fromEntries(Object.keys(files).map((f) => [f, fs.statSync(path.join(dir, f)).mtimeMs]));

    const r = await checkStore(dir);
    expect(r.ok).toBe(false);
    const byFile = Object.fromEntries(r.findings.map((f) => [f.file, f.kind]));
    expect(byFile).toEqual({
      [`parts/edge_logs/${path.basename(recs[0]!)}`]: 'committed',
      [`parts/auth_logs/${path.basename(dbs[0]!)}`]: 'committed',
      [`parts/function_edge_logs/${path.basename(cols[0]!)}`]: 'derived',
      'parts/edge_logs/20200101-v9.sqlite': 'leftover',
    });
    // urls.log past its committed length is an unfinished import's, cut at the next start: not damage.
    expect(listing(dir)).toEqual(files);
    for (const f of Object.keys(files)) expect(fs.statSync(path.join(dir, f)).mtimeMs, f).toBe(mtimes[f]);
    expect(formatCheckReport(r).at(-1)).toMatch(/^DAMAGED: restore the committed files listed/);
  });

  it('reads the field index of each columns file: a flipped id is a derived finding, and nothing is written', async () => {
    const { dir } = await damagedLater();
    expect((await checkStore(dir)).findings).toEqual([]);
    const cols = partsOf(dir, 'edge_logs', '.cols').find((f) => fieldSectionOf(f).bytes > 0)!;
    const bytes = fs.readFileSync(cols);
    bytes[fieldSectionOf(cols).firstIds]! ^= 0x01;
    fs.writeFileSync(cols, bytes);
    const r = await checkStore(dir);
    expect(r.findings).toEqual([{ file: `parts/edge_logs/${path.basename(cols)}`, kind: 'derived', problem: expect.stringMatching(/field index fails a check/) }]);
    // Derived damage only: the store is fine to open (the index is rebuilt in the background).
    expect(r.ok).toBe(true);
    expect(fs.readFileSync(cols).equals(bytes)).toBe(true);
  });

  it('reads every group of the record texts: a flipped byte is a derived finding, and nothing is written', async () => {
    const { dir } = await damagedLater();
    expect((await checkStore(dir)).findings).toEqual([]);
    const texts = partsOf(dir, 'edge_logs', '.texts')[0]!;
    expect(texts).toBeDefined();
    const whole = fs.readFileSync(texts);
    // Past the file's and the dictionary's headers (16 + 12 bytes): the dictionary; the last bytes: a chunk.
    for (const at of [30, whole.length - 5]) {
      const bytes = Buffer.from(whole);
      bytes[at]! ^= 0x10;
      fs.writeFileSync(texts, bytes);
      const r = await checkStore(dir);
      expect(r.findings, String(at)).toEqual([{ file: `parts/edge_logs/${path.basename(texts)}`, kind: 'derived', problem: expect.stringMatching(/record texts fails its check/) }]);
      expect(r.ok).toBe(true);
      expect(fs.readFileSync(texts).equals(bytes)).toBe(true);
    }
  });

  it('reads every segment of the record words: a flipped byte in a word list or in the postings is a derived finding, and nothing is written', async () => {
    const { dir } = await damagedLater();
    const tokens = partsOf(dir, 'edge_logs', '.tokens')[0]!;
    expect(tokens).toBeDefined();
    const whole = fs.readFileSync(tokens);
    // Past the file's and the first segment's headers (16 + 56 bytes): a word list; the last byte: postings.
    for (const at of [80, whole.length - 1]) {
      const bytes = Buffer.from(whole);
      bytes[at]! ^= 0x10;
      fs.writeFileSync(tokens, bytes);
      const r = await checkStore(dir);
      expect(r.findings, String(at)).toEqual([{ file: `parts/edge_logs/${path.basename(tokens)}`, kind: 'derived', problem: expect.stringMatching(/record words fails its check/) }]);
      expect(r.ok).toBe(true);
      expect(fs.readFileSync(tokens).equals(bytes)).toBe(true);
    }
  });

  it('as a command: prints the report and exits 1 when a committed file is damaged', async () => {
    const { dir } = await damagedLater();
    fs.rmSync(partsOf(dir, 'edge_logs', '.records')[0]!);
    const out = spawnSync(process.execPath, ['--import', 'tsx', 'server/main.ts', '--check', '--data-dir', dir], { cwd: path.resolve(import.meta.dirname, '../..'), encoding: 'utf8' });
    expect(out.status).toBe(1);
    expect(out.stdout).toMatch(/committed +parts\/edge_logs\/\d{8}(T\d\d)?\.records: the file is missing/);
    expect(out.stdout).toMatch(/^DAMAGED/m);
  });
});
