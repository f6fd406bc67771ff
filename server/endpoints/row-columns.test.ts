import { afterEach, describe, expect, it } from 'vitest';
import { DAY, NOW, fnRecord, importRecords, storeKeeper } from '../testing/fixtures.ts';
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
});
