import { describe, expect, it } from 'vitest';
import { MICROS } from '../time.ts';
import {
  afterLogflarePage,
  afterManagementPage,
  bigQueryPageSql,
  clickHousePageSql,
  compareCursor,
  isoSeconds,
  logflareWindow,
  LOGFLARE_MAX_WINDOW_US,
  managementWindow,
  sqlString,
  type LogflareWindow,
} from './pages.ts';

const { minute: MIN, hour: HOUR } = MICROS;
// 2026-06-22T09:34:00Z
const T0 = Date.UTC(2026, 5, 22, 9, 34) * 1000;

describe('the SQL of a page, exactly as the issue writes it', () => {
  it('bigquery: the first page (>= start, no id) and the pages after a row', () => {
    expect(bigQueryPageSql('edge_logs', { ts: 1782120840000000, id: null })).toBe(
      'select id, timestamp, event_message, metadata from edge_logs where timestamp >= timestamp_micros(1782120840000000) order by timestamp asc, id asc limit 1000',
    );
    expect(bigQueryPageSql('postgres_logs', { ts: 1782120846215000, id: 'a1b2' })).toBe(
      "select id, timestamp, event_message, metadata from postgres_logs where timestamp > timestamp_micros(1782120846215000) or (timestamp = timestamp_micros(1782120846215000) and id > 'a1b2') order by timestamp asc, id asc limit 1000",
    );
  });

  it('clickhouse: the same two forms over the logs table of one source', () => {
    expect(clickHousePageSql('supavisor_logs', { ts: 1782120840000000, id: null })).toBe(
      "select id, timestamp, event_message, severity_text, log_attributes from logs where source = 'supavisor_logs' and timestamp >= fromUnixTimestamp64Micro(1782120840000000) order by timestamp asc, id asc limit 1000",
    );
    expect(clickHousePageSql('edge_logs', { ts: 1782120846215000, id: 'a1b2' })).toBe(
      "select id, timestamp, event_message, severity_text, log_attributes from logs where source = 'edge_logs' and (timestamp > fromUnixTimestamp64Micro(1782120846215000) or (timestamp = fromUnixTimestamp64Micro(1782120846215000) and id > 'a1b2')) order by timestamp asc, id asc limit 1000",
    );
  });

  it('ids are inlined as escaped literals', () => {
    expect(sqlString(`it's a \\ test`)).toBe(String.raw`'it\'s a \\ test'`);
    expect(bigQueryPageSql('edge_logs', { ts: 5, id: "x' or '1'='1" })).toContain(String.raw`id > 'x\' or \'1\'=\'1'`);
  });

  it('a window end is written in whole seconds, UTC', () => {
    expect(isoSeconds(T0)).toBe('2026-06-22T09:34:00Z');
  });
});

describe('Management API windows', () => {
  it('start in the minute before the cursor, whole minutes, at most 24 hours, never past the last whole minute', () => {
    // A cursor mid-minute: its minute. One on a whole minute: the minute before.
    expect(managementWindow({ ts: T0 + 6_215_000, id: 'x' }, T0 + 30 * HOUR)).toEqual({ start: T0, end: T0 + 24 * HOUR });
    expect(managementWindow({ ts: T0, id: null }, T0 + 30 * HOUR)).toEqual({ start: T0 - MIN, end: T0 - MIN + 24 * HOUR });
    expect(managementWindow({ ts: T0, id: null }, T0 + 5 * MIN + 59_000_000)).toEqual({ start: T0 - MIN, end: T0 + 5 * MIN });
    // Caught up: the cursor has reached the last whole minute.
    expect(managementWindow({ ts: T0 + 5 * MIN, id: null }, T0 + 5 * MIN + 59_000_000)).toBeNull();
  });

  it('a full page moves the cursor to its last row; a shorter one to the window end, caught up when that is now', () => {
    const w = { start: T0, end: T0 + HOUR };
    const keys = Array.from({ length: 1000 }, (_, i) => ({ ts: T0 + i, id: `r${i}` }));
    expect(afterManagementPage({ ts: T0, id: null }, w, keys, 1000, T0 + 2 * HOUR)).toEqual({ next: { ts: T0 + 999, id: 'r999' }, caughtUp: false });
    expect(afterManagementPage({ ts: T0, id: null }, w, keys.slice(0, 3), 3, T0 + 2 * HOUR)).toEqual({ next: { ts: T0 + HOUR, id: null }, caughtUp: false });
    expect(afterManagementPage({ ts: T0, id: null }, w, [], 0, T0 + HOUR + 30_000_000)).toEqual({ next: { ts: T0 + HOUR, id: null }, caughtUp: true });
  });

  it('a full page that does not go past the cursor is an error, not a loop', () => {
    const stuck = Array.from({ length: 1000 }, () => ({ ts: T0, id: 'a' }));
    expect(afterManagementPage({ ts: T0, id: 'a' }, { start: T0, end: T0 + HOUR }, stuck, 1000, T0 + 2 * HOUR)).toEqual({ error: expect.stringContaining('does not go past') });
  });

  it('cursors order by instant, then no id first, then id bytes', () => {
    expect(compareCursor({ ts: 1, id: 'b' }, { ts: 2, id: null })).toBe(-1);
    expect(compareCursor({ ts: 2, id: null }, { ts: 2, id: '' })).toBe(-1);
    expect(compareCursor({ ts: 2, id: 'Z' }, { ts: 2, id: 'a' })).toBe(-1);
    expect(compareCursor({ ts: 2, id: 'a' }, { ts: 2, id: 'a' })).toBe(0);
  });
});

describe('Logflare windows', () => {
  const w: LogflareWindow = { from: T0, to: T0 + HOUR, pageEnd: T0 + HOUR, pages: 0, atNow: false };

  it('windows end at now at the latest', () => {
    expect(logflareWindow(T0, T0 + 10 * MIN, HOUR)).toEqual({ from: T0, to: T0 + 10 * MIN, pageEnd: T0 + 10 * MIN, pages: 0, atNow: true });
    expect(logflareWindow(T0, T0 + 10 * HOUR, HOUR)).toEqual({ ...w });
    expect(logflareWindow(T0 + 10 * MIN, T0 + 10 * MIN, HOUR)).toBeNull();
  });

  it('a short page ends the window; one page doubles the next span', () => {
    expect(afterLogflarePage(w, [T0 + 5], HOUR)).toEqual({ done: true, cursor: T0 + HOUR, caughtUp: false, nextSpan: 2 * HOUR });
    expect(afterLogflarePage({ ...w, atNow: true }, [], LOGFLARE_MAX_WINDOW_US)).toEqual({ done: true, cursor: T0 + HOUR, caughtUp: true, nextSpan: LOGFLARE_MAX_WINDOW_US });
  });

  it('a full page moves the next page end to its oldest instant, inclusive', () => {
    const ts = Array.from({ length: 100 }, (_, i) => T0 + HOUR - i * 1000);
    expect(afterLogflarePage(w, ts, HOUR)).toEqual({ done: false, window: { ...w, pageEnd: T0 + HOUR - 99_000, pages: 1 } });
  });

  it('a full page whose rows all share its oldest instant is reported and that instant skipped, not read again', () => {
    const same = Array.from({ length: 100 }, () => T0 + 30 * MIN);
    const out = afterLogflarePage(w, same, HOUR);
    expect(out).toEqual({ done: false, window: { ...w, pageEnd: T0 + 30 * MIN - 1, pages: 1 }, warning: expect.stringContaining('2026-06-22T10:04:00.000000Z') });
  });
});
