/**
 * Columns of a partition database, built at once and in steps (the background builder's way),
 * against the rows themselves: newest first, dictionaries, the store's path ids, hour counts,
 * and a file round trip (checked against the path dictionary it was built with).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { sourceInfo, type SourceName } from '../sources.ts';
import { loadEngine, openDbSync, type Db, type SqlValue } from './db.ts';
import { hotInsertSql, partitionDdl } from './partition.ts';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../testing/fixtures.ts';
import { buildScanColumns, buildScanColumnsInSteps, encodeScanColumns, NONE, readScanColumns, ROW_COLUMNS, type PathIds } from './scan-columns.ts';

/** Path ids as a store-wide dictionary gives them: from 2 (1 is the dictionary's token), in order of first sight. */
function pathIds(epoch = '0123456789abcdef'): PathIds & { texts: string[] } {
  const texts = ['', ''];
  return {
    epoch,
    texts,
    ofText: (text) => (texts.includes(text) ? texts.indexOf(text) : texts.push(text) - 1),
    ofUrl: () => {
      throw new Error('no edge rows here');
    },
  };
}

beforeAll(async () => {
  await loadEngine();
});

const HOUR = 3_600_000_000;
const T0 = 1_795_000_000_000_000 - (1_795_000_000_000_000 % HOUR);

interface Row {
  rid: number;
  ts: number;
  project: number;
  status: number | null;
  method: string | null;
  path: string | null;
  fn: number;
}

/** A partition database of `source` with n rows: instants over 3 hours, many shared, rids shuffled against them. */
function partition(name: SourceName, n: number, newestFirst = false): { db: Db; rows: Row[] } {
  const source = sourceInfo(name);
  const db = openDbSync();
  for (const stmt of partitionDdl(source, newestFirst)) db.exec(stmt);
  const rows: Row[] = [];
  let seed = 5;
  const rnd = (k: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), Math.floor(seed / 65536) % k);
  db.transaction(() => {
    for (let i = 1; i <= n; i++) {
      const row: Row = {
        rid: i,
        ts: T0 + rnd(3 * 3600) * 1_000_000 + (i % 3 === 0 ? 0 : rnd(1000)),
        project: 1 + rnd(3),
        status: rnd(10) === 0 ? null : [200, 404, 500][rnd(3)]!,
        method: ['GET', 'POST', null][rnd(3)]!,
        path: ['/a', '/b/c', null][rnd(3)]!,
        fn: 1 + rnd(4),
      };
      rows.push(row);
      // rid, project, ts, blk, boff, len, then the source's hot columns.
      const common = [row.rid, row.project, row.ts, 0, i, 10 + (i % 7)];
      if (source.hot === 'function_edge') db.run(hotInsertSql(source), [...common, row.fn, 1.5, row.status, row.method, row.path]);
      else db.run(hotInsertSql(source), [...common, row.status, row.method, row.path, null]);
    }
  });
  return { db, rows };
}

describe.each([
  ['deno-relay-logs', false],
  ['deno-relay-logs', true],
  ['gotrue.logs.prod', false],
  ['gotrue.logs.prod', true],
] as const)('columns of %s (instants keyed descending: %s)', (name, newestFirst) => {
  it('built at once and in steps of 5,000 (45,000 rows), they hold the rows newest first, ties by row number, with the hour counts', async () => {
    const { db, rows } = partition(name, 45_000, newestFirst);
    const paths = pathIds();
    const once = buildScanColumns(db, sourceInfo(name), paths);
    let steps = 0;
    const stepped = (await buildScanColumnsInSteps(() => db, sourceInfo(name), paths, async () => (++steps, true)))!;
    expect(steps).toBe(9);
    const want = [...rows].sort((a, b) => b.ts - a.ts || b.rid - a.rid);
    for (const c of [once, stepped]) {
      expect(c.n).toBe(45_000);
      expect([...c.rid]).toEqual(want.map((r) => r.rid));
      expect([...c.ts]).toEqual(want.map((r) => r.ts));
      expect([...c.status]).toEqual(want.map((r) => r.status ?? NONE));
      expect([...c.method].map((v) => (v === NONE ? null : c.dicts.method[v]))).toEqual(want.map((r) => r.method));
      expect([...c.path].map((v) => (v === NONE ? null : paths.texts[v]))).toEqual(want.map((r) => r.path));
      // Hour counts: per (hour, project, status, method) summed, as the rows say.
      const fromRows = new Map<string, number>();
      for (const r of rows) {
        const k = `${Math.floor(r.ts / HOUR)} ${r.project} ${r.status ?? NONE} ${r.method}`;
        fromRows.set(k, (fromRows.get(k) ?? 0) + 1);
      }
      const fromCounts = new Map<string, number>();
      for (let j = 0; j < c.hours.m; j++) {
        const m = c.hours.method[j]!;
        const k = `${c.hours.hour[j]} ${c.hours.project[j]} ${c.hours.status[j]} ${m === NONE ? null : c.dicts.method[m]}`;
        fromCounts.set(k, (fromCounts.get(k) ?? 0) + c.hours.count[j]!);
      }
      expect(fromCounts).toEqual(fromRows);
      // Path counts: per (project, path) over the whole partition, ordered by project then path id.
      const perPath = new Map<string, number>();
      for (const r of rows) if (r.path !== null) perPath.set(`${r.project} ${r.path}`, (perPath.get(`${r.project} ${r.path}`) ?? 0) + 1);
      const pc = c.pathCounts;
      const got = new Map<string, number>();
      const order: Array<[number, number]> = [];
      for (let j = 0; j < pc.k; j++) {
        got.set(`${pc.project[j]} ${paths.texts[pc.path[j]!]}`, pc.count[j]!);
        order.push([pc.project[j]!, pc.path[j]!]);
      }
      expect(got).toEqual(perPath);
      expect(order).toEqual([...order].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
    }
  });

  it('reads each step as one or two ranges of the table key, never sorting it', async () => {
    const { db } = partition(name, 12_000, newestFirst);
    const asked: Array<[string, SqlValue[]]> = [];
    const watched = new Proxy(db, {
      get(target, key) {
        if (key === 'rows') return (sql: string, params: SqlValue[] = []) => (asked.push([sql, params]), target.rows(sql, params));
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    expect(await buildScanColumnsInSteps(() => watched, sourceInfo(name), pathIds(), async () => true)).not.toBeNull();
    const steps = asked.filter(([sql]) => sql.includes('LIMIT'));
    expect(steps.length).toBeGreaterThan(2);
    for (const [sql, params] of steps) expect(db.rows(`EXPLAIN QUERY PLAN ${sql}`, params).map((r) => r[3]).join('; '), sql).not.toMatch(/TEMP B-TREE/);
  });

  it('gives up when the database has left memory as a step starts, even after `between` said to go on', async () => {
    const { db } = partition(name, 12_000, newestFirst);
    let steps = 0;
    // Gone from the third step on (dropped by other work after the turn ended).
    const gone = await buildScanColumnsInSteps(() => (steps < 2 ? db : null), sourceInfo(name), pathIds(), async () => (++steps, true));
    expect(gone).toBeNull();
    expect(steps).toBe(2);
  });

  it('gives up when told to between steps', async () => {
    const { db } = partition(name, 25_000);
    expect(await buildScanColumnsInSteps(() => db, sourceInfo(name), pathIds(), async () => false)).toBeNull();
  });

  it('round-trips through the file format, row arrays read only when asked', () => {
    const { db } = partition(name, 3_000);
    const built = buildScanColumns(db, sourceInfo(name), pathIds('00000000deadbeef'));
    const dir = tempDir();
    const file = path.join(dir, 'x-v1.cols');
    const code = sourceInfo(name).code;
    fs.writeFileSync(file, encodeScanColumns(built, { source: code, start: 7_200_000_000, version: 3, pathBytes: 500, pathCount: 20 }));
    const id = { source: code, start: 7_200_000_000, version: 3, epoch: '00000000deadbeef', rows: 3_000, pathsOk: (b: number, n: number) => b <= 500 && n === 20 };
    // Built against another path dictionary: its path ids mean nothing here.
    expect(readScanColumns(file, { ...id, epoch: '00000000deadbeee' })).toBeNull();
    // Another partition's, another version's, another row count's file under this name.
    expect(readScanColumns(file, { ...id, start: 0 })).toBeNull();
    expect(readScanColumns(file, { ...id, version: 4 })).toBeNull();
    expect(readScanColumns(file, { ...id, source: code + 1 })).toBeNull();
    expect(readScanColumns(file, { ...id, rows: 2_999 })).toBeNull();
    // The path dictionary was cut below what the file may use.
    expect(readScanColumns(file, { ...id, pathsOk: (b: number) => b <= 499 })).toBeNull();
    // Its texts merged or split (the count at those bytes differs).
    expect(readScanColumns(file, { ...id, pathsOk: (_b: number, n: number) => n === 19 })).toBeNull();
    const read = readScanColumns(file, id)!;
    expect(read.hours).toEqual(built.hours);
    expect(() => read.ts).toThrow(/not loaded/);
    read.load(ROW_COLUMNS);
    for (const k of ROW_COLUMNS) expect([...read[k]], k).toEqual([...built[k]]);
    expect(read.pathCounts).toEqual(built.pathCounts);
    expect(read.dicts.method).toEqual(built.dicts.method);
    expect(read.dicts.level).toEqual(built.dicts.level);
    // Cut short: not a whole file, so it is built again.
    const whole = fs.readFileSync(file);
    fs.truncateSync(file, whole.length - 1);
    expect(readScanColumns(file, id)).toBeNull();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds a flipped byte anywhere in the file: the header, a dictionary, the hour counts, a row array or the path counts', () => {
    const { db } = partition(name, 2_000);
    const built = buildScanColumns(db, sourceInfo(name), pathIds('00000000deadbeef'));
    const dir = tempDir();
    const file = path.join(dir, 'x-v1.cols');
    const code = sourceInfo(name).code;
    const whole = encodeScanColumns(built, { source: code, start: 0, version: 1, pathBytes: 10, pathCount: 1 });
    const id = { source: code, start: 0, version: 1, epoch: '00000000deadbeef', rows: 2_000, pathsOk: () => true };
    // Every 97th byte and the last, one at a time: each copy fails somewhere between opening and loading everything.
    for (const at of [...Array.from({ length: Math.ceil(whole.length / 97) }, (_, i) => i * 97), whole.length - 1]) {
      const bad = Buffer.from(whole);
      bad[at] = bad[at]! ^ 0x5a;
      fs.writeFileSync(file, bad);
      let ok: boolean;
      try {
        const c = readScanColumns(file, id);
        ok = c !== null && (c.load(ROW_COLUMNS), c.pathCounts.k >= 0);
      } catch {
        ok = false;
      }
      expect(ok, `byte ${at}`).toBe(false);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
