/**
 * The explorer over many hours: histograms, facets, counts and pages come from each partition's
 * columns file and its hour counts (whole hours) plus rows (the hours cut by the window). Here
 * they are compared with a plain reference computed from the records themselves, for windows
 * aligned to hours and not, with and without filters, for edge and auth records. Also the
 * columns files' life: written with each version, rebuilt when missing or cut short.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appOver, importRecords, makeTestApp, MIN, NOW, SEC, tempDir, type TestApp } from '../testing/fixtures.ts';
import { filesUnder } from '../hardening/helpers.ts';
import { LogStore } from '../store/log-store.ts';
import { partitionsTalliedFromColumns } from './search-summary.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const HOUR = 60 * MIN;
const PROJECTS = ['projaaaaaaaaaaaaaaaa', 'projbbbbbbbbbbbbbbbb'];
const METHODS = ['GET', 'POST', 'DELETE'];
const PATHS = ['/rest/v1/todos', '/rest/v1/orders', '/auth/v1/token', '/storage/v1/object/x.png'];
const STATUSES = [200, 201, 301, 404, 500, 503];
const LEVELS = ['info', 'warning', 'error'];

/** A small deterministic generator (no library: the test must not depend on the code's). */
function lcg(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    // The high bits: an LCG's low bits repeat with short periods (the lowest alternates).
    return Math.floor(s / 65536) % n;
  };
}

interface Rec {
  id: string;
  ts: number;
  project: string;
  method: string;
  path: string;
  status: number;
  level: string;
}

/** Records over 30 hours before NOW, a few hundred, some sharing an instant; a third with one of 30 storage paths (so paths have more than the top 10). */
function records(seed: number, n = 600): Rec[] {
  const r = lcg(seed);
  const out: Rec[] = [];
  for (let i = 0; i < n; i++) {
    const ts = NOW - r(30 * 60) * MIN - (i % 7 === 0 ? 0 : r(60) * SEC);
    out.push({ id: `r${seed}-${i}`, ts, project: PROJECTS[r(2)]!, method: METHODS[r(3)]!, path: r(3) === 0 ? `/storage/v1/object/b/${r(30)}.png` : PATHS[r(4)]!, status: STATUSES[r(6)]!, level: LEVELS[r(3)]! });
  }
  return out;
}

const edgeOf = (x: Rec) => ({
  id: x.id,
  timestamp: x.ts,
  project: x.project,
  event_message: `${x.method} | ${x.status} | ${x.path}`,
  metadata: { request: { method: x.method, url: `https://${x.project}.supabase.co${x.path}?q=${x.id}`, path: x.path }, response: { status_code: x.status } },
});
const authOf = (x: Rec) => ({
  id: x.id,
  timestamp: x.ts,
  project: x.project,
  event_message: `${x.level} ${x.path}`,
  metadata: { level: x.level, status: x.status, method: x.method, path: x.path },
});

const iso = (us: number) => new Date(Math.floor(us / 1000)).toISOString().replace('Z', `${String(((us % 1000) + 1000) % 1000).padStart(3, '0')}Z`);

interface Filter {
  project?: string;
  status?: string;
  method?: string;
  path?: string;
  level?: string;
}

function matches(x: Rec, f: Filter, start: number, end: number): boolean {
  if (!(x.ts > start && x.ts <= end)) return false;
  if (f.project && x.project !== f.project) return false;
  if (f.status === '5xx' && !(x.status >= 500 && x.status <= 599)) return false;
  if (f.status === '!200' && x.status === 200) return false;
  if (f.method && x.method !== f.method) return false;
  if (f.path && !x.path.startsWith(f.path)) return false;
  if (f.level && x.level !== f.level) return false;
  return true;
}

const query = (f: Filter) =>
  Object.entries(f)
    .map(([k, v]) => `&${k}=${encodeURIComponent(v)}`)
    .join('');

async function get<T>(path: string): Promise<T> {
  const res = await t!.request(path);
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

/** The windows: hour-aligned, cut in the middle of hours, under an hour, all of it, and more. */
const WINDOWS: Array<[number, number]> = [
  [NOW - 24 * HOUR, NOW],
  [Math.floor((NOW - 20 * HOUR) / HOUR) * HOUR - 1, Math.floor((NOW - 2 * HOUR) / HOUR) * HOUR - 1],
  [NOW - 17 * HOUR - 7 * MIN - 3, NOW - 3 * HOUR + 11 * MIN + 5],
  [NOW - 40 * MIN, NOW - 5 * MIN],
  [NOW - 31 * HOUR, NOW],
  // Covering a day partition whole (its path counts, not its rows).
  [NOW - 72 * HOUR, NOW],
];

const FILTERS: Filter[] = [{}, { project: PROJECTS[0] }, { status: '5xx' }, { status: '!200', method: 'GET' }, { path: '/rest/' }, { project: PROJECTS[1], method: 'POST', path: '/auth/' }];

describe.each([
  { source: 'edge_logs', fixture: 'edge' as const, split: 'status' as const, fields: ['status', 'method', 'path'], make: edgeOf },
  { source: 'auth_logs', fixture: 'auth' as const, split: 'status' as const, fields: ['status', 'method', 'path', 'level'], make: authOf },
])('$source over 30 hours', ({ source, fixture, fields, make }) => {
  const recs = records(source.length);

  it('histogram buckets, facets and counts equal a plain count of the records, for every window and filter', async () => {
    t = await makeTestApp(fixture === 'edge' ? { edge: recs.map(make) } : {});
    if (fixture === 'auth') await importRecords(t.store, 'auth_logs', recs.map(make));
    const filters = fixture === 'auth' ? [...FILTERS, { level: 'error' }, { level: 'warning', status: '5xx' }] : FILTERS;
    for (const [start, end] of WINDOWS) {
      for (const f of filters) {
        const mine = recs.filter((x) => matches(x, f, start, end));
        const range = `start=${iso(start)}&end=${iso(end)}`;
        const label = `${range} ${JSON.stringify(f)}`;

        const h = await get<{ result: Array<{ timestamp: number; count: number; by: Record<string, number> }>; width: number }>(`/api/logs/histogram?source=${source}&${range}${query(f)}&buckets=12`);
        const width = h.width;
        const firstBucket = Math.floor((start + 1) / width) * width;
        const expected = new Map<number, Record<string, number>>();
        for (const x of mine) {
          const b = firstBucket + Math.floor((x.ts - firstBucket) / width) * width;
          const by = expected.get(b) ?? {};
          const k = `${Math.floor(x.status / 100)}xx`;
          by[k] = (by[k] ?? 0) + 1;
          expected.set(b, by);
        }
        for (const bucket of h.result) {
          const want = expected.get(bucket.timestamp) ?? {};
          const got = Object.fromEntries(Object.entries(bucket.by).filter(([, v]) => v > 0));
          expect(got, `${label} bucket ${bucket.timestamp}`).toEqual(want);
          expect(bucket.count).toBe(Object.values(want).reduce((a, b) => a + b, 0));
        }
        expect(h.result.reduce((a, b) => a + b.count, 0), label).toBe(mine.length);

        const fc = await get<{ result: Record<string, Array<{ value: string | number; count: number }>>; others: Record<string, number> }>(`/api/logs/facets?source=${source}&${range}${query(f)}&fields=${fields.join(',')}`);
        for (const field of fields) {
          const want = new Map<string | number, number>();
          for (const x of mine) {
            const v = x[field as keyof Rec];
            want.set(v, (want.get(v) ?? 0) + 1);
          }
          // The top 10: larger count first, ties by the smaller value (texts by code units).
          const top = [...want]
            .sort(([va, a], [vb, b]) => b - a || (va < vb ? -1 : 1))
            .slice(0, 10)
            .map(([value, count]) => ({ value, count }));
          expect(fc.result[field], `${label} ${field}`).toEqual(top);
          expect(fc.others[field], `${label} ${field} others`).toBe(Math.max(0, want.size - 10));
        }
        // The facets without paths come from the hour counts where hours are whole.
        for (const field of fields.filter((x) => x !== 'path')) {
          const one = await get<{ result: Record<string, Array<{ value: string | number; count: number }>> }>(`/api/logs/facets?source=${source}&${range}${query(f)}&fields=${field}`);
          expect(one.result[field], `${label} ${field} alone`).toEqual(fc.result[field]);
        }

        const count = await get<{ result: { count: number } }>(`/api/logs/count?source=${source}&${range}${query(f)}`);
        expect(count.result.count, label).toBe(mine.length);
      }
    }
  });

  it('a search on a settled store, counted from the columns (the arrays it reads and no others), equals a plain count of the records', async () => {
    t = await makeTestApp(fixture === 'edge' ? { edge: recs.map(make) } : {});
    if (fixture === 'auth') await importRecords(t.store, 'auth_logs', recs.map(make));
    await t.store.columnsSettled();
    const [start, end] = WINDOWS[4]!;
    const before = partitionsTalliedFromColumns();
    // A word (the words decide) and a phrase (the words and texts decide), with and without filters.
    for (const text of ['orders', 'v1/orders'])
      for (const f of fixture === 'auth' ? [{}, { status: '5xx' }, { level: 'error', project: PROJECTS[0] }] : [{}, { status: '5xx' }, { method: 'GET', project: PROJECTS[1] }]) {
        const mine = recs.filter((x) => matches(x, f, start, end) && x.path.includes(text));
        const label = `${text} ${JSON.stringify(f)}`;
        const q = `source=${source}&start=${iso(start)}&end=${iso(end)}${query(f)}&q=${encodeURIComponent(text)}`;
        expect((await get<{ result: { count: number } }>(`/api/logs/count?${q}`)).result.count, label).toBe(mine.length);
        const h = await get<{ result: Array<{ count: number }> }>(`/api/logs/histogram?${q}&buckets=12`);
        expect(h.result.reduce((a, b) => a + b.count, 0), label).toBe(mine.length);
        const fc = await get<{ result: Record<string, Array<{ value: string | number; count: number }>> }>(`/api/logs/facets?${q}&fields=${fields.join(',')}`);
        for (const field of fields) {
          const want = new Map<string | number, number>();
          for (const x of mine) want.set(x[field as keyof Rec], (want.get(x[field as keyof Rec]) ?? 0) + 1);
          expect(fc.result[field]!.length, `${label} ${field}`).toBe(Math.min(10, want.size));
          for (const { value, count } of fc.result[field]!) expect(count, `${label} ${field} ${value}`).toBe(want.get(value));
        }
      }
    expect(partitionsTalliedFromColumns() - before).toBeGreaterThan(0);
  });

  it('pages follow the cursor through every matching record, newest first, across partitions', async () => {
    t = await makeTestApp(fixture === 'edge' ? { edge: recs.map(make) } : {});
    if (fixture === 'auth') await importRecords(t.store, 'auth_logs', recs.map(make));
    const [start, end] = WINDOWS[4]!;
    for (const f of [{}, { status: '5xx' }, { project: PROJECTS[1], path: '/rest/' }]) {
      const want = recs.filter((x) => matches(x, f, start, end)).sort((a, b) => b.ts - a.ts);
      const got: Array<{ id: string; timestamp: number }> = [];
      let cursor = '';
      for (let guard = 0; guard < 100; guard++) {
        const page = await get<{ result: Array<{ id: string; timestamp: number }>; next: string | null }>(`/api/logs?source=${source}&start=${iso(start)}&end=${iso(end)}${query(f)}&limit=37${cursor}`);
        got.push(...page.result);
        if (!page.next) break;
        cursor = `&cursor=${page.next}`;
      }
      // Same records, each once, instants descending (ties among equal instants in any order).
      expect(got.map((r) => r.id).sort()).toEqual(want.map((r) => r.id).sort());
      expect(got.map((r) => r.timestamp)).toEqual(want.map((r) => r.ts));
    }
  });
});

describe('columns files', () => {
  it('are written with each version and removed with it; a missing or cut file is rebuilt and the answers stay the same', async () => {
    const recs = records(3);
    const dir = tempDir();
    t = appOver(await LogStore.open(dir));
    await importRecords(t.store, 'edge_logs', recs.map(edgeOf));
    await t.store.columnsSettled();
    const cols = () => filesUnder(path.join(dir, 'parts', 'edge_logs')).filter((f) => f.endsWith('.cols'));
    const dbs = () => filesUnder(path.join(dir, 'parts', 'edge_logs')).filter((f) => f.endsWith('.sqlite'));
    // One per database version, same name.
    expect(cols()).toEqual(dbs().map((f) => f.replace('.sqlite', '.cols')));
    expect(cols().length).toBeGreaterThan(1);
    const [start, end] = WINDOWS[0]!;
    const ask = () => get<unknown>(`/api/logs/histogram?source=edge_logs&start=${iso(start)}&end=${iso(end)}&buckets=24`);
    const before = await ask();

    // Another import into one of the hours: a new version, its own columns file, the old one gone.
    await importRecords(t.store, 'cloudflare.logs.prod', [edgeOf({ id: 'late', ts: NOW - 2 * HOUR, project: PROJECTS[0]!, method: 'GET', path: '/rest/v1/todos', status: 200, level: 'info' })]);
    await t.store.columnsSettled();
    expect(cols()).toEqual(dbs().map((f) => f.replace('.sqlite', '.cols')));
    const after = (await ask()) as { result: Array<{ count: number }> };
    expect(after.result.reduce((a, b) => a + b.count, 0)).toBe((before as { result: Array<{ count: number }> }).result.reduce((a, b) => a + b.count, 0) + 1);

    // Cut one short and delete another, then reopen: the same answers, the files whole again.
    const files = cols();
    fs.truncateSync(path.join(dir, 'parts', 'edge_logs', files[0]!), 40);
    fs.rmSync(path.join(dir, 'parts', 'edge_logs', files[1]!));
    await t.close();
    t = appOver(await LogStore.open(dir));
    try {
      expect(await ask()).toEqual(after);
      // Written off the thread after the answer.
      await t.store.columnsSettled();
      expect(cols()).toEqual(files);
      expect(fs.statSync(path.join(dir, 'parts', 'edge_logs', files[0]!)).size).toBeGreaterThan(40);
    } finally {
      await t.close();
      t = undefined;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('columns files after an upgrade', () => {
  it('of an earlier format, or built against another path dictionary, are rebuilt in the background after the store opens, before any request', async () => {
    const recs = records(6);
    const dir = tempDir();
    t = appOver(await LogStore.open(dir));
    try {
      await importRecords(t.store, 'edge_logs', recs.map(edgeOf));
      await t.store.columnsSettled();
      const edgeDir = path.join(dir, 'parts', 'edge_logs');
      const cols = () => filesUnder(edgeDir).filter((f) => f.endsWith('.cols'));
      const format = (f: string) => fs.readFileSync(path.join(edgeDir, f)).readUInt32LE(4);
      const files = cols();
      expect(files.length).toBeGreaterThan(1);
      const current = format(files[0]!);
      await t.close();
      // Half as an earlier format wrote them, the rest against a path dictionary that is gone.
      for (const f of files.filter((_, i) => i % 2 === 0)) {
        const bytes = fs.readFileSync(path.join(edgeDir, f));
        bytes.writeUInt32LE(current - 1, 4);
        fs.writeFileSync(path.join(edgeDir, f), bytes);
      }
      const stamp = new Map(files.map((f) => [f, fs.statSync(path.join(edgeDir, f)).mtimeMs]));
      fs.rmSync(path.join(dir, 'paths.log'));
      t = appOver(await LogStore.open(dir));
      await t.store.columnsSettled();
      expect(cols()).toEqual(files);
      for (const f of files) {
        expect(format(f), f).toBe(current);
        expect(fs.statSync(path.join(edgeDir, f)).mtimeMs, f).not.toBe(stamp.get(f));
      }
    } finally {
      await t?.close();
      t = undefined;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the path dictionary', () => {
  it('is shared by every partition; deleted or replaced, the columns files built against it are rebuilt and path facets and filters stay the same', async () => {
    const recs = records(4);
    const dir = tempDir();
    t = appOver(await LogStore.open(dir));
    try {
      await importRecords(t.store, 'edge_logs', recs.map(edgeOf));
      await importRecords(t.store, 'auth_logs', recs.map(authOf));
      await t.store.columnsSettled();
      const range = `start=${iso(NOW - 31 * HOUR)}&end=${iso(NOW)}`;
      const ask = async () => [
        await get<unknown>(`/api/logs/facets?source=edge_logs&${range}&fields=path`),
        await get<unknown>(`/api/logs/facets?source=auth_logs&${range}&fields=path`),
        await get<unknown>(`/api/logs/facets?source=edge_logs&${range}&fields=status&path=/storage/`),
        await get<unknown>(`/api/logs?source=auth_logs&${range}&path=/rest/&limit=1000`),
      ];
      const before = await ask();
      // Both sources' paths have one id each: 4 fixed paths, up to 30 storage paths, and the token line.
      const distinct = new Set(recs.map((x) => x.path)).size;
      expect(t.store.paths.size()).toBe(distinct + 1);
      const paths = path.join(dir, 'paths.log');
      const first = fs.readFileSync(paths, 'utf8');
      for (const replace of [() => fs.rmSync(paths), () => fs.writeFileSync(paths, '"/x"\n"/rest/v1/todos"\n')]) {
        await t.close();
        replace();
        t = appOver(await LogStore.open(dir));
        expect(await ask()).toEqual(before);
        // A new dictionary under a new token.
        expect(fs.readFileSync(paths, 'utf8').split('\n')[0]).not.toBe(first.split('\n')[0]);
      }
    } finally {
      await t.close();
      t = undefined;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a request its client abandoned', () => {
  it('stops: pages, searches, histograms, facets and counts end with the cancelled error instead of running on', async () => {
    const { readExplorerQuery, scanRows, singleParams } = await import('./query.ts');
    const { countMatches, facets, histogram } = await import('./aggregate.ts');
    t = await makeTestApp({ edge: records(5).map(edgeOf) });
    const params = new URLSearchParams(`source=edge_logs&start=${iso(NOW - 31 * HOUR)}&end=${iso(NOW)}`);
    const q = readExplorerQuery(t.store, singleParams((n) => params.getAll(n)), NOW);
    const gone = new AbortController();
    gone.abort();
    const far = performance.now() + 60_000;
    const message = /cancelled by its client/;
    await expect(scanRows(t.store, { ...q, q: { text: 'zz', lower: 'zz', re: null, rawSafe: true } }, () => undefined, { signal: gone.signal })).rejects.toThrow(message);
    await expect(histogram(t.store, q, 24, far, gone.signal)).rejects.toThrow(message);
    await expect(facets(t.store, q, 'status', far, gone.signal)).rejects.toThrow(message);
    await expect(countMatches(t.store, q, far, gone.signal)).rejects.toThrow(message);
    // The same requests not cancelled answer.
    expect((await countMatches(t.store, q, far)).count).toBe(600);
  });
});

describe('topValues', () => {
  it('keeps the k largest counts, ties by the smaller value (numbers by value, texts by code units), without sorting everything', async () => {
    const { topValues } = await import('./aggregate.ts');
    const counts = new Map<string | number, number>([
      ['/b', 5],
      ['/a', 5],
      ['/z', 9],
      ['/B', 5],
      ['/c', 1],
      ['/d', 7],
    ]);
    // By hand: 9 (/z), 7 (/d), then the 5s in code-unit order: '/B' (0x42) < '/a' < '/b'.
    expect(topValues(counts, 4)).toEqual([
      { value: '/z', count: 9 },
      { value: '/d', count: 7 },
      { value: '/B', count: 5 },
      { value: '/a', count: 5 },
    ]);
    expect(topValues(new Map<string | number, number>([[503, 2], [200, 2], [404, 3]]), 10)).toEqual([
      { value: 404, count: 3 },
      { value: 200, count: 2 },
      { value: 503, count: 2 },
    ]);
    expect(topValues(new Map(), 10)).toEqual([]);
  });
});

describe('topPaths', () => {
  it('counts by store path id and reads texts only for the top: ties by the smaller text, also past 4,096 tied paths (one pass over the dictionary)', async () => {
    const { topPaths } = await import('./aggregate.ts');
    const { TextDictionary } = await import('../store/text-dictionary.ts');
    const dir = tempDir();
    try {
      const paths = new TextDictionary(path.join(dir, 'paths.log'), 'derived');
      const r = lcg(11);
      // 6,000 paths seen once, in an order unrelated to their text, and a few seen more often.
      const texts = Array.from({ length: 6_000 }, (_, i) => `/storage/v1/object/b/${(i * 7919) % 6000}-${r(1000)}.png`);
      const counts = new Float64Array(8_000);
      const want = new Map<string, number>();
      for (const t of texts) {
        counts[paths.idOf(t)] = 1;
        want.set(t, 1);
      }
      for (const [t, n] of [['/rest/v1/todos', 9], ['/auth/v1/token', 4], ['/rest/v1/orders', 4]] as const) {
        counts[paths.idOf(t)] = n;
        want.set(t, n);
      }
      const reference = (k: number) =>
        [...want]
          .sort(([ta, a], [tb, b]) => b - a || (ta < tb ? -1 : 1))
          .slice(0, k)
          .map(([value, count]) => ({ value, count }));
      expect(topPaths(counts, 10, paths)).toEqual({ top: reference(10), distinct: 6_003 });
      // Fewer tied than 4,096 at the k-th count: read one by one.
      expect(topPaths(counts, 2, paths)).toEqual({ top: reference(2), distinct: 6_003 });
      expect(topPaths(new Float64Array(10), 10, paths)).toEqual({ top: [], distinct: 0 });
      paths.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a counting walk that reads records for a filter', () => {
  it('has the search worker read every row array ahead once a partition was walked row by row, and counts as a plain count', async () => {
    const { ROW_COLUMNS } = await import('../store/scan-columns.ts');
    const { MAX_FIELD_TEXT_CHARS } = await import('../store/field-columns.ts');
    // Records a minute apart over 4 days a month back (a partition per day: not split into hours),
    // more than the walk decides in line, each with a ray long enough that a day of them passes
    // what the field index holds of a path: it is read from the records.
    const r = lcg(5);
    const from = NOW - 40 * 24 * HOUR;
    const recs: Rec[] = Array.from({ length: 6_000 }, (_, i) => ({ id: `w-${i}`, ts: from + i * MIN + r(60) * SEC, project: PROJECTS[r(2)]!, method: METHODS[r(3)]!, path: PATHS[r(4)]!, status: STATUSES[r(6)]!, level: 'info' }));
    const tail = 'f'.repeat(Math.ceil(MAX_FIELD_TEXT_CHARS / 1_000));
    const ray = (x: Rec) => `${x.status}-${x.id}-${tail}`;
    t = await makeTestApp({ edge: recs.map((x) => ({ ...edgeOf(x), metadata: { ...edgeOf(x).metadata, request: { ...edgeOf(x).metadata.request, headers: { cf_ray: ray(x) } } } })) });
    await t.store.columnsSettled();
    const asked: Array<{ label: string; names: readonly string[] }> = [];
    const ahead = t.store.readColumnsAhead.bind(t.store);
    t.store.readColumnsAhead = (p, names) => {
      asked.push({ label: p.label, names });
      ahead(p, names);
    };
    const start = from - 24 * HOUR;
    const end = from + 6 * 24 * HOUR;
    const want = recs.filter((x) => ray(x).startsWith('500-')).length;
    const q = `source=edge_logs&start=${iso(start)}&end=${iso(end)}&field=${encodeURIComponent('request.headers.cf_ray:500-*')}`;
    expect(want).toBeGreaterThan(0);
    expect((await get<{ result: { count: number } }>(`/api/logs/count?${q}`)).result.count).toBe(want);
    // The partitions after the first are asked for every row array (the record places among them).
    const labels = [...new Set(asked.map((a) => a.label))];
    expect(t.store.partitions('cloudflare.logs.prod').length).toBe(5);
    expect(labels.length).toBe(4);
    for (const label of labels) expect(asked.filter((a) => a.label === label).flatMap((a) => a.names), label).toEqual(expect.arrayContaining([...ROW_COLUMNS]));
  });
});
