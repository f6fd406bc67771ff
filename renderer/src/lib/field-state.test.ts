import { describe, expect, it } from 'vitest';
import { fieldParams, forOtherSource, readFieldState } from './field-state.ts';
import { DEFAULT_VIEW, decodeView, encodeView, type AppView } from './url-state.ts';

const explorer = (logs: Partial<AppView['logs']>): AppView => ({ ...DEFAULT_VIEW, page: 'logs', project: 'abc', logs: { ...DEFAULT_VIEW.logs, source: 'edge_logs', ...logs } });

const roundTrip = (v: AppView) => {
  const url = new URL(encodeView(v), 'http://127.0.0.1:4100');
  return decodeView(url.pathname, url.search);
};

describe('field conditions, field facets and the table layout in the URL', () => {
  it('every test of a field filter survives a round trip, in order, as repeated `field` parameters', () => {
    const v = explorer({
      fieldFilters: [
        { path: 'request.headers.cf_ipcountry', op: 'is', value: 'DE' },
        { path: 'request.headers.cf_ipcountry', op: 'is', value: 'FR' },
        { path: 'parsed.user_name', op: 'not', value: 'bot, the' },
        { path: 'request.path', op: 'prefix', value: '/rest/v1/' },
        { path: 'response.origin_time', op: 'gte', value: '100' },
        { path: 'response.origin_time', op: 'lte', value: '2.5' },
      ],
    });
    const url = encodeView(v);
    const q = new URLSearchParams(url.split('?')[1]);
    expect(q.getAll('field')).toEqual([
      'request.headers.cf_ipcountry:DE',
      'request.headers.cf_ipcountry:FR',
      'parsed.user_name:!bot, the',
      'request.path:/rest/v1/*',
      'response.origin_time:>=100',
      'response.origin_time:<=2.5',
    ]);
    expect(roundTrip(v)).toEqual(v);
  });

  it('facets, columns with widths, wrap and dense survive a round trip', () => {
    const v = explorer({
      fieldFacets: ['request.headers.cf_ipcountry', 'response.origin_time'],
      columns: [{ id: 'timestamp' }, { id: 'metadata.request.cf.city', width: 140 }, { id: 'status', width: 60 }, { id: 'event_message' }],
      wrap: true,
      dense: true,
    });
    expect(encodeView(v)).toBe(
      '/logs?project=abc&source=edge_logs&range=1h&facets=request.headers.cf_ipcountry,response.origin_time&cols=timestamp,metadata.request.cf.city%3A140,status%3A60,event_message&wrap=1&dense=1',
    );
    expect(roundTrip(v)).toEqual(v);
  });

  it('a view without any of it writes nothing and reads back without it', () => {
    const v = explorer({});
    expect(encodeView(v)).toBe('/logs?project=abc&source=edge_logs&range=1h');
    expect(roundTrip(v)).toEqual(v);
  });

  it('what cannot be valid is dropped: bad conditions, bad paths, repeated facets, more than 5', () => {
    const s = readFieldState(new URLSearchParams('field=bad&field=a%20b:1&field=t:>=x&field=ok.path:1&facets=a,a,b c,d,e,f,g,h'));
    expect(s.fieldFilters).toEqual([{ path: 'ok.path', op: 'is', value: '1' }]);
    expect(s.fieldFacets).toEqual(['a', 'd', 'e', 'f', 'g']);
  });

  it('the exact view keeps the explorer’s field state in memory, as it keeps its chips', () => {
    const v = explorer({ fieldFilters: [{ path: 'a', op: 'is', value: '1' }], fieldFacets: ['b'] });
    const exact = decodeView('/logs', '?project=abc&mode=exact&tier=FREE&range=1h', v);
    expect(exact.logs.fieldFilters).toEqual([{ path: 'a', op: 'is', value: '1' }]);
    expect(exact.logs.fieldFacets).toEqual(['b']);
  });

  it('another source drops the field chips, facets and columns; wrap and dense stay', () => {
    const l = explorer({ fieldFilters: [{ path: 'a', op: 'is', value: '1' }], fieldFacets: ['b'], columns: [{ id: 'timestamp' }], wrap: true, q: 'x' }).logs;
    const next = forOtherSource(l);
    expect(next.fieldFilters).toBeUndefined();
    expect(next.fieldFacets).toBeUndefined();
    expect(next.columns).toBeUndefined();
    expect(next).toMatchObject({ wrap: true, q: 'x' });
  });

  it('the API gets one `field` per chip, nothing without chips', () => {
    expect(fieldParams([{ path: 'a', op: 'not', value: '1' }, { path: 'b', op: 'prefix', value: 'x' }])).toEqual({ field: ['a:!1', 'b:x*'] });
    expect(fieldParams([])).toEqual({});
    expect(fieldParams(undefined)).toEqual({});
  });
});
