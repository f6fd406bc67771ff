import { describe, expect, it } from 'vitest';
import { keepRowJson, serializeResult } from './row-json.ts';

describe('serializeResult', () => {
  it('is exactly JSON.stringify({result: rows}), whether rows are kept or not (empty, nested, unicode, null)', () => {
    const rows = [
      keepRowJson({ id: 'a', timestamp: 1, event_message: 'é "q"\n', metadata: [{ request: [{ path: '/x' }] }] }),
      { id: 'b', timestamp: 2, event_message: null, metadata: [] },
      keepRowJson({ id: 'c', timestamp: 3 }),
    ];
    expect(serializeResult(rows)).toBe(JSON.stringify({ result: rows }));
    expect(serializeResult([])).toBe(JSON.stringify({ result: [] }));
  });

  it('a kept row answers with the text it had when kept (rows are kept only once they are final)', () => {
    const row = keepRowJson({ id: 'a', n: 1 });
    expect(serializeResult([row])).toBe('{"result":[{"id":"a","n":1}]}');
  });
});
