import { describe, expect, it } from 'vitest';
import { checkFilterValue, parseFilterList, printFilterList, printStatus, readStatus } from './filters.ts';

describe('a field parameter: comma-separated values, ! to exclude', () => {
  it('reads values in order, trimmed, skipping blanks and a lone !', () => {
    expect(parseFilterList(' 5xx , !404 ,, ! ,!!x')).toEqual([
      { value: '5xx', exclude: false },
      { value: '404', exclude: true },
      { value: '!x', exclude: true },
    ]);
    expect(parseFilterList('')).toEqual([]);
  });

  it('writes them back as it reads them', () => {
    const items = [
      { value: '5xx', exclude: false },
      { value: '504', exclude: true },
    ];
    expect(printFilterList(items)).toBe('5xx,!504');
    expect(parseFilterList(printFilterList(items))).toEqual(items);
  });
});

describe('status values', () => {
  it('a code is any three digits: 600 and 099 too, the server and the page alike', () => {
    expect(readStatus('600')).toEqual({ code: 600 });
    expect(readStatus('099')).toEqual({ code: 99 });
    expect(printStatus({ code: 99 })).toBe('099');
    expect(readStatus('99')).toBeUndefined();
    expect(readStatus('1000')).toBeUndefined();
  });

  it('a class is 1xx to 5xx, any case; none is records without a status', () => {
    expect(readStatus('5XX')).toEqual({ cls: 5 });
    expect(readStatus('6xx')).toBeUndefined();
    expect(readStatus(' None ')).toEqual({ none: true });
    expect(printStatus({ cls: 5 })).toBe('5xx');
    expect(printStatus({ none: true })).toBe('none');
  });
});

describe('checkFilterValue', () => {
  it('checkFilterValue normalizes codes, classes and methods and refuses what the wire form cannot carry', () => {
    expect(checkFilterValue('status', ' 5XX ')).toEqual({ ok: true, value: '5xx' });
    expect(checkFilterValue('status', '503')).toEqual({ ok: true, value: '503' });
    // Records without a status: selectable as `status=none`.
    expect(checkFilterValue('status', 'None')).toEqual({ ok: true, value: 'none' });
    expect(checkFilterValue('status', '6xx').ok).toBe(false);
    expect(checkFilterValue('status', '99').ok).toBe(false);
    expect(checkFilterValue('method', 'post')).toEqual({ ok: true, value: 'POST' });
    expect(checkFilterValue('path', '/a,b').ok).toBe(false);
    expect(checkFilterValue('level', '!error').ok).toBe(false);
    expect(checkFilterValue('level', '   ').ok).toBe(false);
    expect(checkFilterValue('function_id', 'f-1')).toEqual({ ok: true, value: 'f-1' });
  });

  it('takes status 600 (the page refused what the server answers) and a method with a hyphen', () => {
    expect(checkFilterValue('status', '600')).toEqual({ ok: true, value: '600' });
    expect(checkFilterValue('method', 'm-search')).toEqual({ ok: true, value: 'M-SEARCH' });
  });
});
