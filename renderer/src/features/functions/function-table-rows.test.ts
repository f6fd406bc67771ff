import { describe, expect, it } from 'vitest';
import type { FunctionStatsRow } from '../../../../contract/api-types.ts';
import { functionLogsHref, functionName, nextSort, rangeCovering, sortFunctionRows } from './function-table-rows.ts';

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
  // Regression: the table counted the calendar window, its link opened a rolling 7 days (3,849 vs 3,829).
  it('opens the Logs page on the function’s invocation records over exactly the window the table counted', () => {
    const DAY = 86_400_000_000;
    const start = Date.UTC(2026, 10, 18) * 1000;
    const href = functionLogsHref('abc', 'f-1', { start, end: start + 8 * DAY });
    const u = new URL(href, 'http://127.0.0.1');
    // [11-18 00:00, 11-26 00:00) is the explorer's (11-17 23:59:59.999999, 11-25 23:59:59.999999].
    expect(Object.fromEntries(u.searchParams)).toEqual({
      project: 'abc',
      source: 'function_edge_logs',
      function_id: 'f-1',
      range: 'custom',
      start: '2026-11-17T23:59:59.999999Z',
      end: '2026-11-25T23:59:59.999999Z',
    });
    expect(new URL(functionLogsHref('a&b', 'f 1', { start, end: start + DAY }), 'http://127.0.0.1').searchParams.get('project')).toBe('a&b');
  });

  it('takes the narrowest preset covering the window, the widest when none does', () => {
    const MIN = 60_000_000;
    // Presets: 15 min, 1 h, 3 h, 24 h, 7 days.
    expect([5 * MIN, 15 * MIN, 15 * MIN + 1, 60 * MIN, 61 * MIN, 24 * 60 * MIN, 25 * 60 * MIN, 8 * 24 * 60 * MIN].map(rangeCovering)).toEqual(['15m', '15m', '1h', '1h', '3h', '24h', '7d', '7d']);
  });
});
