import { describe, expect, it } from 'vitest';
import { fieldText, valueAtPath, type FieldFilter } from '../../../contract/fields.ts';
import { addFieldFilter, checkFieldFilter, fieldFilterFor, fieldFilterLabel, fieldPathAt, flippedOp, removeFieldFilter } from './field-filters.ts';

const country = (op: FieldFilter['op'], value: string): FieldFilter => ({ path: 'request.headers.cf_ipcountry', op, value });

describe('values a test cannot carry', () => {
  it('a typed filter is checked: path, value, numbers trimmed', () => {
    expect(checkFieldFilter(' parsed.user_name ', 'is', 'alice')).toEqual({ ok: true, filter: { path: 'parsed.user_name', op: 'is', value: 'alice' } });
    expect(checkFieldFilter('response.origin_time', 'gte', ' 100 ')).toEqual({ ok: true, filter: { path: 'response.origin_time', op: 'gte', value: '100' } });
    expect(checkFieldFilter('bad path', 'is', 'x')).toMatchObject({ ok: false });
    expect(checkFieldFilter('a', 'is', '')).toEqual({ ok: false, reason: 'Enter a value' });
    expect(checkFieldFilter('a', 'lte', 'x')).toEqual({ ok: false, reason: 'Enter a number' });
    // Texts are compared exactly: their spaces are part of them.
    expect(checkFieldFilter('a', 'is', ' x ')).toEqual({ ok: true, filter: { path: 'a', op: 'is', value: ' x ' } });
  });
});

describe('chips', () => {
  it('including what was excluded flips the chip in place; a repeat adds nothing', () => {
    const list = [country('not', 'DE'), { path: 'a', op: 'is', value: '1' } as FieldFilter];
    expect(addFieldFilter(list, country('is', 'DE'))).toEqual([country('is', 'DE'), { path: 'a', op: 'is', value: '1' }]);
    expect(addFieldFilter(list, country('not', 'DE'))).toEqual(list);
    expect(addFieldFilter(list, country('is', 'FR'))).toEqual([...list, country('is', 'FR')]);
  });

  it('a second bound of the same kind on a path replaces the first', () => {
    const list: FieldFilter[] = [{ path: 't', op: 'gte', value: '10' }, { path: 't', op: 'lte', value: '90' }];
    expect(addFieldFilter(list, { path: 't', op: 'gte', value: '20' })).toEqual([{ path: 't', op: 'gte', value: '20' }, { path: 't', op: 'lte', value: '90' }]);
  });

  it('removes exactly the chip named; flips only is and is not', () => {
    expect(removeFieldFilter([country('is', 'DE'), country('is', 'FR')], country('is', 'DE'))).toEqual([country('is', 'FR')]);
    expect(flippedOp('is')).toBe('not');
    expect(flippedOp('not')).toBe('is');
    expect(flippedOp('prefix')).toBeNull();
    expect(flippedOp('gte')).toBeNull();
  });

  it('reads as a sentence', () => {
    expect(fieldFilterLabel(country('is', 'DE'))).toBe('request.headers.cf_ipcountry is DE');
    expect(fieldFilterLabel(country('not', 'DE'))).toBe('request.headers.cf_ipcountry is not DE');
    expect(fieldFilterLabel({ path: 't', op: 'gte', value: '100' })).toBe('t ≥ 100');
    expect(fieldFilterLabel(country('prefix', 'D'))).toBe('request.headers.cf_ipcountry starts with D…');
  });
});

// A record's metadata in the query shape: every object inside a one-element array.
const META = [
  {
    request: [{ method: 'GET', headers: [{ cf_ipcountry: 'DE', 'x.dotted': 'no' }], tags: ['a', 'b'], one: ['only'] }],
    response: [{ status_code: 200, ok: true, gone: null }],
  },
];

describe('the path of a value in the detail panel’s JSON', () => {
  it('looks through one-element arrays, as the server reads the path', () => {
    expect(fieldPathAt(META, [0, 'request', 0, 'headers', 0, 'cf_ipcountry'])).toBe('request.headers.cf_ipcountry');
    expect(fieldPathAt(META, [0, 'response', 0, 'status_code'])).toBe('response.status_code');
    expect(fieldPathAt(META, [0, 'request', 0, 'one', 0])).toBe('request.one');
  });

  it('has none inside a longer array, for a key with a dot, or at the root', () => {
    expect(fieldPathAt(META, [0, 'request', 0, 'tags', 1])).toBeNull();
    expect(fieldPathAt(META, [0, 'request', 0, 'headers', 0, 'x.dotted'])).toBeNull();
    expect(fieldPathAt(META, [])).toBeNull();
    expect(fieldPathAt(META, [0])).toBeNull();
  });

  it('the server’s reading of that path finds the same value', () => {
    expect(valueAtPath(META, 'request.headers.cf_ipcountry')).toBe('DE');
    expect(valueAtPath(META, 'request.one')).toBe('only');
    expect(valueAtPath(META, 'request.tags')).toEqual(['a', 'b']);
    expect(valueAtPath(META, 'request.nothing')).toBeUndefined();
    expect(fieldText(valueAtPath(META, 'response.status_code'))).toBe('200');
    expect(fieldText(valueAtPath(META, 'response.ok'))).toBe('true');
  });

  it('filter for this value / exclude it: a number or boolean as text; none for null', () => {
    expect(fieldFilterFor(META, [0, 'response', 0, 'status_code'], 200, false)).toEqual({ path: 'response.status_code', op: 'is', value: '200' });
    expect(fieldFilterFor(META, [0, 'response', 0, 'ok'], true, true)).toEqual({ path: 'response.ok', op: 'not', value: 'true' });
    expect(fieldFilterFor(META, [0, 'response', 0, 'gone'], null, false)).toBeNull();
    expect(fieldFilterFor(META, [0, 'request', 0, 'tags', 0], 'a', false)).toBeNull();
  });

  it('a value the wire cannot match exactly can still be excluded', () => {
    const m = [{ note: '!important' }];
    expect(fieldFilterFor(m, [0, 'note'], '!important', false)).toBeNull();
    expect(fieldFilterFor(m, [0, 'note'], '!important', true)).toEqual({ path: 'note', op: 'not', value: '!important' });
  });
});
