import { afterEach, describe, expect, it } from 'vitest';
import { DAY, MIN, NOW, SEC, fnRecord, importRecords, storeKeeper } from '../testing/fixtures.ts';
import { Rng } from '../demo/random.ts';
import { RowColumnsCache } from './row-columns.ts';

const keeper = storeKeeper();
afterEach(() => keeper.cleanup());

describe('RowColumnsCache', () => {
  it('holds the partitions asked last, at most its bound, each with every row as stored (NULL as NaN)', async () => {
    const store = await keeper.open(keeper.newDir());
    // Ten days, three records a day (one without an execution time): ten partitions at least.
    const records = Array.from({ length: 30 }, (_, i) => fnRecord(NOW - Math.floor(i / 3) * DAY - (i % 3) * 1000, { exec: i % 3 === 2 ? null : i }));
    await importRecords(store, 'function_edge_logs', records);
    const parts = store.partitions('deno-relay-logs');
    expect(parts.length).toBeGreaterThanOrEqual(10);
    const cache = new RowColumnsCache('function_edge_logs', ['ts', 'exec'], 4);
    const seen: Array<[number, number]> = [];
    for (const p of parts) {
      const c = cache.of(store, p);
      expect(c.length).toBe(p.row.rows);
      for (let i = 0; i < c.length; i++) seen.push([c.cols[0]![i]!, c.cols[1]![i]!]);
      expect(cache.size).toBeLessThanOrEqual(4);
    }
    const byTs = (a: [number, number], b: [number, number]) => a[0] - b[0];
    const expected = records.map((r, i): [number, number] => [r.timestamp, i % 3 === 2 ? NaN : i]);
    expect(seen.sort(byTs)).toEqual(expected.sort(byTs));
    // The first partition was dropped; asked again, it is read again whole.
    expect(cache.of(store, parts[0]!).length).toBe(parts[0]!.row.rows);
    expect(cache.size).toBe(4);
  });

  it('lists the rows of the minutes a window overlaps, whatever order the rows came in, and the rows added later', async () => {
    const store = await keeper.open(keeper.newDir());
    const r = new Rng(5);
    const hour = NOW - (NOW % (60 * MIN));
    // 400 records over the hour in random order, then 100 more.
    const at = () => hour + r.int(60 * MIN);
    const first = Array.from({ length: 400 }, () => fnRecord(at()));
    await importRecords(store, 'function_edge_logs', first);
    const cache = new RowColumnsCache('function_edge_logs', ['ts'], 4);
    const p = store.partitions('deno-relay-logs').find((x) => x.start <= hour && hour < x.end)!;
    const inWindow = (from: number, to: number) => {
      const c = cache.of(store, p);
      const got: number[] = [];
      for (const list of c.rowsOfMinutes(from, to)) for (const i of list) if (c.cols[0]![i]! >= from && c.cols[0]![i]! < to) got.push(c.cols[0]![i]!);
      return got.sort((a, b) => a - b);
    };
    const expectIn = (records: Array<{ timestamp: number }>, from: number, to: number) =>
      records
        .map((x) => x.timestamp)
        .filter((t) => t >= from && t < to)
        .sort((a, b) => a - b);
    // Windows that start and end inside minutes, one of a whole minute, one of five, the hour.
    const windows: Array<[number, number]> = [
      [hour + 7 * MIN + 13 * SEC, hour + 12 * MIN + 13 * SEC],
      [hour + 30 * MIN, hour + 31 * MIN],
      [hour, hour + 60 * MIN],
      [hour + 59 * MIN + 59 * SEC, hour + 60 * MIN],
    ];
    for (const [from, to] of windows) expect(inWindow(from, to)).toEqual(expectIn(first, from, to));
    const later = Array.from({ length: 100 }, () => fnRecord(at()));
    await importRecords(store, 'function_edge_logs', later);
    for (const [from, to] of windows) expect(inWindow(from, to)).toEqual(expectIn([...first, ...later], from, to));
  });
});
