import { describe, expect, it } from 'vitest';
import type { FunctionStatsRow } from '../../../server/functions/types.ts';
import { functionLogsHref, functionName, nextSort, rangeCovering, sortFunctionRows } from './function-table.ts';

function row(functionId: string, slug: string | null, invocations: number, errors: number, p99Ms: number | null = null): FunctionStatsRow {
  return {
    functionId,
    slug,
    invocations,
    errors,
    errorRate: invocations > 0 ? errors / invocations : null,
    avgMs: p99Ms,
    p95Ms: p99Ms,
    p99Ms,
    minMs: p99Ms,
    maxMs: p99Ms,
    percentiles: 'exact',
  };
}

// Error rates: a 0.5, b 0.1, c 0.5 (busier than a), d never called.
const ROWS = [row('id-a', 'alpha', 4, 2, 30), row('id-b', 'beta', 10, 1, 90), row('id-c', null, 8, 4, 10), row('id-d', 'delta', 0, 0)];
const ids = (rows: FunctionStatsRow[]) => rows.map((r) => r.functionId);

describe('sortFunctionRows', () => {
  it('by error rate, worst first: ties go to the busier function, the never-called one last', () => {
    expect(ids(sortFunctionRows(ROWS, { key: 'errorRate', dir: 'desc' }))).toEqual(['id-c', 'id-a', 'id-b', 'id-d']);
  });

  it('ascending keeps functions without a figure last', () => {
    expect(ids(sortFunctionRows(ROWS, { key: 'errorRate', dir: 'asc' }))).toEqual(['id-b', 'id-c', 'id-a', 'id-d']);
    expect(ids(sortFunctionRows(ROWS, { key: 'p99Ms', dir: 'asc' }))).toEqual(['id-c', 'id-a', 'id-b', 'id-d']);
  });

  it('by name uses the slug, else the id', () => {
    expect(ids(sortFunctionRows(ROWS, { key: 'name', dir: 'asc' }))).toEqual(['id-a', 'id-b', 'id-d', 'id-c']);
    expect(functionName(ROWS[2]!)).toBe('id-c');
  });

  it('does not change its input', () => {
    const before = ids(ROWS);
    sortFunctionRows(ROWS, { key: 'invocations', dir: 'asc' });
    expect(ids(ROWS)).toEqual(before);
  });
});

describe('nextSort', () => {
  it('a new column starts worst-first (names A→Z); the same column flips', () => {
    expect(nextSort({ key: 'invocations', dir: 'desc' }, 'errorRate')).toEqual({ key: 'errorRate', dir: 'desc' });
    expect(nextSort({ key: 'errorRate', dir: 'desc' }, 'errorRate')).toEqual({ key: 'errorRate', dir: 'asc' });
    expect(nextSort({ key: 'errorRate', dir: 'desc' }, 'name')).toEqual({ key: 'name', dir: 'asc' });
  });
});

describe('functionLogsHref', () => {
  it('opens the Logs page on the function’s invocation records over a range covering the window', () => {
    const MIN = 60_000_000;
    expect(functionLogsHref('abc', 'f-1', 7 * 24 * 60 * MIN)).toBe('/logs?project=abc&source=function_edge_logs&function_id=f-1&range=7d');
    const u = new URL(functionLogsHref('a&b', 'f 1', 5 * MIN), 'http://127.0.0.1');
    expect(Object.fromEntries(u.searchParams)).toEqual({ project: 'a&b', source: 'function_edge_logs', function_id: 'f 1', range: '15m' });
  });

  it('takes the narrowest preset covering the window, the widest when none does', () => {
    const MIN = 60_000_000;
    // Presets: 15 min, 1 h, 3 h, 24 h, 7 days.
    expect([5 * MIN, 15 * MIN, 15 * MIN + 1, 60 * MIN, 61 * MIN, 24 * 60 * MIN, 25 * 60 * MIN, 8 * 24 * 60 * MIN].map(rangeCovering)).toEqual(['15m', '15m', '1h', '1h', '3h', '24h', '7d', '7d']);
  });
});
