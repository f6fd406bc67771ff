import { describe, expect, it } from 'vitest';
import { csvCell, toCsv } from './csv.ts';

describe('csvCell', () => {
  it('leaves plain values bare', () => {
    expect(csvCell('GET')).toBe('GET');
    expect(csvCell(1773500966535897)).toBe('1773500966535897');
    expect(csvCell(true)).toBe('true');
  });
  it('quotes commas, quotes, newlines and edge spaces; doubles inner quotes', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line1\nline2')).toBe('"line1\nline2"');
    expect(csvCell('cr\r')).toBe('"cr\r"');
    expect(csvCell(' padded')).toBe('" padded"');
  });
  it('writes objects as JSON text (quoted, since JSON has quotes)', () => {
    expect(csvCell([{ a: 1 }])).toBe('"[{""a"":1}]"');
  });
  it('writes null and undefined as empty cells', () => {
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
  });
});

describe('toCsv', () => {
  it('header row, CRLF line ends, union of keys in first-seen order', () => {
    expect(toCsv([{ a: 1, b: 'x' }, { b: 'y,z', c: null }])).toBe('a,b,c\r\n1,x,\r\n,"y,z",\r\n');
  });
  it('uses the given columns', () => {
    expect(toCsv([{ a: 1, b: 2 }], ['b'])).toBe('b\r\n2\r\n');
  });
  it('an empty result is just the header', () => {
    expect(toCsv([], ['timestamp', 'count'])).toBe('timestamp,count\r\n');
  });
});
