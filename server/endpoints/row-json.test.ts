import { describe, expect, it } from 'vitest';
import { keepRowJson, serializeResult } from './row-json.ts';

describe('serializeResult', () => {
  it('is exactly the UTF-8 of JSON.stringify({result: rows}), whether rows are kept or not (empty, nested, unicode, null)', () => {
    const rows = [
      keepRowJson({ id: 'a', timestamp: 1, event_message: 'é "q"\n Zürich 🚀 \u2028', metadata: [{ request: [{ path: '/x' }] }] }),
      { id: 'b', timestamp: 2, event_message: null, metadata: [] },
      keepRowJson({ id: 'c', timestamp: 3 }),
    ];
    expect(serializeResult(rows).toString('utf8')).toBe(JSON.stringify({ result: rows }));
    expect(serializeResult(rows.slice(1, 2)).toString('utf8')).toBe(JSON.stringify({ result: rows.slice(1, 2) }));
    expect(serializeResult([]).toString('utf8')).toBe('{"result":[]}');
  });

  it('a kept row answers with the JSON it had when kept (rows are kept only once they are final)', () => {
    const row = keepRowJson({ id: 'a', n: 1 });
    row.n = 2;
    expect(serializeResult([row]).toString('utf8')).toBe('{"result":[{"id":"a","n":1}]}');
  });
});
