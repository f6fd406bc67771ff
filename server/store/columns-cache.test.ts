/** The columns cache keeps to its budget, counting what its users load after it handed the columns out. */
import { afterEach, describe, expect, it } from 'vitest';
import { at, DAY, edgeRecord, importRecords, storeKeeper } from '../testing/fixtures.ts';
import type { ColumnName } from './scan-columns.ts';

const keeper = storeKeeper('le-columns-cache-');
afterEach(() => keeper.cleanup());

const DAYS = 12;
const PER_DAY = 3000;
const T = at('2026-10-01T00:00:00Z');

describe('the columns cache', () => {
  it('stays within its budget when the columns it handed out have more loaded into them', async () => {
    const dir = keeper.newDir();
    // Sparse records in time order: one day partition each, their columns files written.
    const records = Array.from({ length: DAYS * PER_DAY }, (_, i) => edgeRecord(T + Math.floor(i / PER_DAY) * DAY + (i % PER_DAY) * 20_000_000, { id: `c-${i}` }));
    const first = await keeper.open(dir);
    await importRecords(first, 'edge_logs', records);
    await first.columnsSettled();
    await keeper.close(first);

    // A budget of three partitions' ts columns (8 bytes a row), on a store opened afresh.
    const budget = 3 * PER_DAY * 8;
    const store = await keeper.open(dir, { columnsBudgetBytes: budget });
    const parts = store.partitions('cloudflare.logs.prod');
    expect(parts.length).toBe(DAYS);
    const more: ColumnName[] = ['rid', 'status', 'method', 'path', 'url', 'len'];
    let largest = 0;
    for (const p of parts) {
      // As a walk does: the columns it asked for, then more of them once it has them.
      const cols = store.columns(p, ['ts']);
      cols.load(more);
      largest = Math.max(largest, cols.bytes);
    }
    // ts, rid, status, method, path, url, len: 8 + 6 * 4 bytes a row at least.
    expect(largest).toBeGreaterThanOrEqual(PER_DAY * 32);
    // Over the budget by at most the partition used last (it is never dropped).
    expect(store.heldBytes().columnsCache).toBeLessThanOrEqual(budget + largest);
  });
});
