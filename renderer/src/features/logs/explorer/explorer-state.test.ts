import { describe, expect, it } from 'vitest';
import type { ExplorerSource } from '../../../api/logs.ts';
import { MICROS } from '../../../../../contract/instants.ts';
import { DEFAULT_VIEW, type LogsView } from '../../../lib/url-state.ts';
import { pagingState, resolveSource, searchLabel, switchSource, usableFilters, withNoStatus, zoomOut } from './explorer-state.ts';

const EDGE: ExplorerSource = { source: 'cloudflare.logs.prod', alias: 'edge_logs', label: 'Edge requests', fields: ['status', 'method', 'path'], split: 'status', columns: ['timestamp', 'status', 'method', 'path', 'event_message'] };
const PG: ExplorerSource = { source: 'postgres.logs', alias: 'postgres_logs', label: 'Postgres', fields: ['level'], split: 'level', columns: ['timestamp', 'level', 'event_message'] };
const LIST = [EDGE, PG];

describe('resolveSource', () => {
  it('takes a name or an alias in any case; nothing means the first source', () => {
    expect(resolveSource(LIST, 'Postgres.Logs')).toBe(PG);
    expect(resolveSource(LIST, 'POSTGRES_LOGS')).toBe(PG);
    expect(resolveSource(LIST, '')).toBe(EDGE);
    expect(resolveSource(LIST, undefined)).toBe(EDGE);
    expect(resolveSource(LIST, 'nope')).toBeUndefined();
  });
});

describe('switching source', () => {
  const logs: LogsView = { ...DEFAULT_VIEW.logs, source: 'edge_logs', q: 'timeout', filters: [{ field: 'status', value: '5xx', exclude: false }, { field: 'level', value: 'error', exclude: true }] };
  it('keeps the search, drops the chips the new source has no field for', () => {
    expect(switchSource(logs, PG)).toMatchObject({ source: 'postgres_logs', q: 'timeout', filters: [{ field: 'level', value: 'error', exclude: true }] });
  });
  it('only chips on the source’s fields are sent', () => {
    expect(usableFilters(logs.filters!, EDGE)).toEqual([{ field: 'status', value: '5xx', exclude: false }]);
    expect(usableFilters(logs.filters!, undefined)).toEqual([]);
  });
});

describe('searchLabel', () => {
  it('names the source, the text, the chips and the range', () => {
    const logs: LogsView = { ...DEFAULT_VIEW.logs, q: 'timeout', filters: [{ field: 'status', value: '5xx', exclude: false }, { field: 'status', value: '504', exclude: true }] };
    expect(searchLabel(EDGE, logs, undefined)).toBe('Edge requests · "timeout" · status 5xx, not status 504 · 1 h');
    expect(searchLabel(EDGE, { ...logs, regex: true, filters: [] }, undefined)).toBe('Edge requests · /timeout/ · 1 h');
  });
});

describe('zoomOut', () => {
  const NOW = 1773500966535897;
  it('doubles the span around its middle', () => {
    expect(zoomOut({ start: NOW - 3 * MICROS.hour, end: NOW - MICROS.hour }, NOW)).toEqual({ start: NOW - 4 * MICROS.hour, end: NOW });
  });
  it('does not run past now when the range ended before it', () => {
    expect(zoomOut({ start: NOW - MICROS.hour, end: NOW }, NOW)).toEqual({ start: NOW - 2 * MICROS.hour, end: NOW });
  });
});

describe('pagingState', () => {
  it('a search that stopped early offers to continue from where it looked back to', () => {
    expect(pagingState({ next: 'c1', scanned: { through: 42, complete: false } }, 0)).toEqual({ kind: 'continue', through: 42 });
  });
  it('a full page offers older records; the last page says the range is exhausted', () => {
    expect(pagingState({ next: 'c2', scanned: { through: 1, complete: true } }, 200)).toEqual({ kind: 'older' });
    expect(pagingState({ next: null, scanned: { through: 1, complete: true } }, 12)).toEqual({ kind: 'end' });
    expect(pagingState({ next: null, scanned: { through: 1, complete: true } }, 0)).toEqual({ kind: 'none' });
    expect(pagingState(undefined, 0)).toEqual({ kind: 'none' });
  });
  // Regression: a search that had looked back past the range's start still offered to continue.
  it('a search that looked back past the range’s start has nothing to continue to', () => {
    expect(pagingState({ next: 'c3', scanned: { through: 99, complete: false } }, 0, 100)).toEqual({ kind: 'none' });
    expect(pagingState({ next: 'c3', scanned: { through: 100, complete: false } }, 7, 100)).toEqual({ kind: 'end' });
    expect(pagingState({ next: 'c3', scanned: { through: 101, complete: false } }, 7, 100)).toEqual({ kind: 'continue', through: 101 });
  });
});

describe('withNoStatus', () => {
  const facets = { result: { status: [{ value: 200, count: 9 }, { value: 404, count: 2 }], method: [{ value: 'GET', count: 13 }] }, others: { status: 0 } };
  const hist = (none: number) => ({ width: 60, split: 'status' as const, result: [{ timestamp: 0, count: 11 + none, by: { '2xx': 9, '4xx': 2, none } }] });
  // Regression: auth records without a status counted in the histogram but could not be selected.
  it('adds the records without a status to the status facet, by their count, from the histogram', () => {
    expect(withNoStatus(facets, hist(4))!.result.status).toEqual([
      { value: 200, count: 9 },
      { value: null, count: 4 },
      { value: 404, count: 2 },
    ]);
    expect(withNoStatus(facets, hist(1))!.result.status!.at(-1)).toEqual({ value: null, count: 1 });
  });
  it('changes nothing when every record has a status, or the histogram splits by level', () => {
    expect(withNoStatus(facets, hist(0))).toBe(facets);
    expect(withNoStatus(facets, { ...hist(3), split: 'level' })).toBe(facets);
  });
});
