import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW } from './url-state.ts';
import { usageBucketLogs } from './logs-view.ts';

describe('usageBucketLogs (a usage bar opened Logs without its URL pattern)', () => {
  const HOUR = 3_600_000_000;
  it('opens the explorer on edge requests in the bucket’s range, searching the pattern as RE2, without other chips', () => {
    const logs = { ...DEFAULT_VIEW.logs, mode: 'exact' as const, filters: [{ field: 'status' as const, value: '5xx', exclude: false }] };
    const v = usageBucketLogs(logs, { start: 10 * HOUR, end: 11 * HOUR }, 9 * HOUR, 'abc.*/storage/', 'edge_logs');
    expect(v).toMatchObject({ mode: 'explore', source: 'edge_logs', range: 'custom', start: 10 * HOUR - 1, end: 11 * HOUR - 1, q: 'abc.*/storage/', regex: true, filters: [] });
  });
  it('a partial first bucket starts where the window starts', () => {
    const v = usageBucketLogs(DEFAULT_VIEW.logs, { start: 10 * HOUR, end: 11 * HOUR }, 10 * HOUR + 1234, 'x', 'edge_logs');
    expect([v.start, v.end]).toEqual([10 * HOUR + 1233, 11 * HOUR - 1]);
  });
});
