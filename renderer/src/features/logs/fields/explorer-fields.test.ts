import { describe, expect, it } from 'vitest';
import type { FieldPath } from './field-paths-api.ts';
import type { ExplorerSource } from '../../../api/logs.ts';
import { DEFAULT_VIEW, type LogsView } from '../../../lib/url-state.ts';
import { searchLabel, switchSource } from '../explorer/explorer-state.ts';
import { shortPath } from './field-facets.tsx';
import { matchFields, typeLabel } from './field-picker.tsx';

const EDGE: ExplorerSource = { source: 'cloudflare.logs.prod', alias: 'edge_logs', label: 'Edge requests', fields: ['status', 'method', 'path'], split: 'status', columns: ['timestamp', 'status', 'method', 'path', 'event_message'] };
const PG: ExplorerSource = { source: 'postgres.logs', alias: 'postgres_logs', label: 'Postgres', fields: ['level'], split: 'level', columns: ['timestamp', 'level', 'event_message'] };

const field = (path: string, types = ['string']): FieldPath => ({ path, types, count: 1, examples: [] });

describe('the field picker’s search', () => {
  const list = [field('request.cf.countryside'), field('request.headers.cf_ipcountry'), field('request.cf.country'), field('response.status_code', ['number'])];

  it('keeps the paths holding every word; the last part equal to the last word first, then starting with it', () => {
    expect(matchFields(list, 'country').map((f) => f.path)).toEqual(['request.cf.country', 'request.cf.countryside', 'request.headers.cf_ipcountry']);
    expect(matchFields(list, 'cf country').map((f) => f.path)).toEqual(['request.cf.country', 'request.cf.countryside', 'request.headers.cf_ipcountry']);
    expect(matchFields(list, 'status').map((f) => f.path)).toEqual(['response.status_code']);
    expect(matchFields(list, 'HEADERS country').map((f) => f.path)).toEqual(['request.headers.cf_ipcountry']);
    expect(matchFields(list, '  ')).toEqual(list);
  });

  it('names types as a person reads them, leaving out null beside another type', () => {
    expect(typeLabel(['number'])).toBe('number');
    expect(typeLabel(['string', 'null'])).toBe('text');
    expect(typeLabel(['null'])).toBe('null');
    expect(typeLabel(['boolean', 'string'])).toBe('bool · text');
  });

  it('a facet’s heading keeps the last two parts of a long path', () => {
    expect(shortPath('request.headers.cf_ipcountry')).toBe('…headers.cf_ipcountry');
    expect(shortPath('parsed.user_name')).toBe('parsed.user_name');
  });
});

describe('the explorer’s field state across sources and in recent searches', () => {
  const logs: LogsView = {
    ...DEFAULT_VIEW.logs,
    source: 'edge_logs',
    q: 'timeout',
    fieldFilters: [{ path: 'request.headers.cf_ipcountry', op: 'is', value: 'DE' }],
    fieldFacets: ['request.cf.city'],
    columns: [{ id: 'timestamp' }, { id: 'metadata.request.cf.city' }],
    dense: true,
  };

  it('another source drops the field chips, facets and columns; the same source keeps them', () => {
    const pg = switchSource(logs, PG);
    expect(pg).toMatchObject({ source: 'postgres_logs', q: 'timeout', dense: true });
    expect(pg.fieldFilters).toBeUndefined();
    expect(pg.fieldFacets).toBeUndefined();
    expect(pg.columns).toBeUndefined();
    expect(switchSource(logs, EDGE)).toMatchObject({ fieldFilters: logs.fieldFilters, fieldFacets: logs.fieldFacets, columns: logs.columns });
  });

  it('a recent search’s label names the field chips after the built-in ones', () => {
    const withStatus: LogsView = { ...logs, filters: [{ field: 'status', value: '5xx', exclude: false }] };
    expect(searchLabel(EDGE, withStatus, undefined)).toBe('Edge requests · "timeout" · status 5xx, request.headers.cf_ipcountry is DE · 1 h');
  });
});
