import { describe, expect, it } from 'vitest';
import type { ExplorerColumn } from '../api/logs.ts';
import { columnField, columnsParam, effectiveColumns, fieldColumn, isDefaultLayout, moveColumn, parseColumns, resizeColumn, toggleColumn, type ColumnSpec } from './table-columns.ts';

const EDGE: ExplorerColumn[] = ['timestamp', 'status', 'method', 'path', 'event_message'];

describe('columns in the URL', () => {
  it('round trip: order, widths, fields inside the records', () => {
    const cols: ColumnSpec[] = [{ id: 'timestamp' }, { id: 'status', width: 60 }, { id: 'metadata.request.cf.country', width: 120 }, { id: 'event_message' }];
    const text = columnsParam(cols);
    expect(text).toBe('timestamp,status:60,metadata.request.cf.country:120,event_message');
    expect(parseColumns(text)).toEqual(cols);
  });

  it('drops unknown names, repeats and bad widths; clamps widths; nothing is the source’s own', () => {
    expect(parseColumns('timestamp,bogus,status,status,metadata.bad path,path:9999,level:x')).toEqual([{ id: 'timestamp' }, { id: 'status' }, { id: 'path', width: 1200 }]);
    expect(parseColumns('method:5')).toEqual([{ id: 'method', width: 40 }]);
    expect(parseColumns('')).toBeUndefined();
    expect(parseColumns(null)).toBeUndefined();
    expect(parseColumns('nope')).toBeUndefined();
  });

  it('a field inside the records is named metadata.<path>, so `path` stays the built-in column', () => {
    expect(fieldColumn('path')).toBe('metadata.path');
    expect(columnField('metadata.path')).toBe('path');
    expect(columnField('path')).toBeNull();
  });
});

describe('the columns a table shows', () => {
  it('the source’s own without a choice; a chosen built-in the source lacks is skipped', () => {
    expect(effectiveColumns(undefined, EDGE).map((c) => c.id)).toEqual(EDGE);
    expect(effectiveColumns([{ id: 'level' }, { id: 'event_message' }, { id: 'metadata.a' }], EDGE).map((c) => c.id)).toEqual(['event_message', 'metadata.a']);
    expect(effectiveColumns([{ id: 'level' }], EDGE).map((c) => c.id)).toEqual(EDGE);
  });

  it('knows the source’s own layout', () => {
    expect(isDefaultLayout(EDGE.map((id) => ({ id })), EDGE)).toBe(true);
    expect(isDefaultLayout([...EDGE.map((id) => ({ id })).slice(0, 4), { id: 'event_message', width: 300 }], EDGE)).toBe(false);
  });

  it('a shown column goes before the message, which fills the row; hiding takes it out', () => {
    const base = EDGE.map((id) => ({ id }) as ColumnSpec);
    expect(toggleColumn(base, 'metadata.request.cf.country').map((c) => c.id)).toEqual(['timestamp', 'status', 'method', 'path', 'metadata.request.cf.country', 'event_message']);
    expect(toggleColumn(base, 'method').map((c) => c.id)).toEqual(['timestamp', 'status', 'path', 'event_message']);
    expect(toggleColumn([{ id: 'timestamp' }], 'status').map((c) => c.id)).toEqual(['timestamp', 'status']);
  });

  it('moves a column one place, not past an end; sets and clears a width', () => {
    const base = EDGE.map((id) => ({ id }) as ColumnSpec);
    expect(moveColumn(base, 'path', -1).map((c) => c.id)).toEqual(['timestamp', 'status', 'path', 'method', 'event_message']);
    expect(moveColumn(base, 'timestamp', -1)).toEqual(base);
    expect(moveColumn(base, 'event_message', 1)).toEqual(base);
    expect(resizeColumn(base, 'path', 333.4)[3]).toEqual({ id: 'path', width: 333 });
    expect(resizeColumn(resizeColumn(base, 'path', 200), 'path', undefined)[3]).toEqual({ id: 'path' });
  });
});
