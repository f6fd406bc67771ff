import { describe, expect, it } from 'vitest';
import { MICROS } from '../../../contract/instants.ts';
import { addFilter, explorerParams, filterLabel, filtersFromParams, filtersToParams, type LogFilter, removeFilter } from './explorer-filters.ts';

const NOW = 1773500966535897;

describe('explorer filters', () => {
  it('addFilter groups chips by field, and the same value flips instead of doubling', () => {
    let f: LogFilter[] = [];
    f = addFilter(f, { field: 'path', value: '/rest', exclude: false });
    f = addFilter(f, { field: 'status', value: '5xx', exclude: false });
    f = addFilter(f, { field: 'status', value: '503', exclude: true });
    expect(f.map(filterLabel)).toEqual(['status 5xx', 'not status 503', 'path /rest*']);
    f = addFilter(f, { field: 'status', value: '503', exclude: false });
    expect(f.map(filterLabel)).toEqual(['status 5xx', 'status 503', 'path /rest*']);
    expect(removeFilter(f, { field: 'status', value: '5xx' }).map(filterLabel)).toEqual(['status 503', 'path /rest*']);
  });

  it('filters go to one comma-separated parameter per field, `!` for excluded, and come back the same', () => {
    const chips: LogFilter[] = [
      { field: 'status', value: '5xx', exclude: false },
      { field: 'status', value: '404', exclude: true },
      { field: 'method', value: 'GET', exclude: true },
      { field: 'level', value: 'error', exclude: false },
    ];
    const params = filtersToParams(chips);
    expect(params).toEqual({ status: '5xx,!404', method: '!GET', level: 'error' });
    expect(filtersFromParams((name) => params[name] ?? null)).toEqual(chips);
  });

  it('a link with status=600 keeps its chip, as the server takes that code', () => {
    const params: Record<string, string> = { status: '600,!6xx' };
    // 6xx is no class, so only the code survives the reading.
    expect(filtersFromParams((name) => params[name] ?? null)).toEqual([{ field: 'status', value: '600', exclude: false }]);
  });

  it('explorerParams: source first, µs bounds, regex only with text, chips by field', () => {
    const p = explorerParams({
      source: 'cloudflare.logs.prod',
      project: 'abc',
      range: { start: NOW - MICROS.hour, end: NOW },
      q: 'timeout',
      regex: true,
      filters: [
        { field: 'path', value: '/auth', exclude: false },
        { field: 'status', value: '5xx', exclude: false },
      ],
    });
    expect(p).toEqual({ source: 'cloudflare.logs.prod', project: 'abc', start: '2026-03-14T14:09:26.535897Z', end: '2026-03-14T15:09:26.535897Z', q: 'timeout', regex: '1', status: '5xx', path: '/auth' });
    expect(Object.keys(p)).toEqual(['source', 'project', 'start', 'end', 'q', 'regex', 'status', 'path']);
    expect(explorerParams({ source: 'edge_logs', project: null, range: {}, q: '', regex: true, filters: [] })).toEqual({ source: 'edge_logs' });
  });
});
