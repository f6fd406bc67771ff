import { describe, expect, it } from 'vitest';
import { printFieldFilter, readFieldFilter, unsendable, type FieldFilter } from './fields.ts';

const country = (op: FieldFilter['op'], value: string): FieldFilter => ({ path: 'request.headers.cf_ipcountry', op, value });

describe('the written form of a field filter', () => {
  it('writes each test as the server reads it', () => {
    expect(printFieldFilter(country('is', 'DE'))).toBe('request.headers.cf_ipcountry:DE');
    expect(printFieldFilter(country('not', 'DE'))).toBe('request.headers.cf_ipcountry:!DE');
    expect(printFieldFilter(country('prefix', 'D'))).toBe('request.headers.cf_ipcountry:D*');
    expect(printFieldFilter({ path: 'response.origin_time', op: 'gte', value: '100' })).toBe('response.origin_time:>=100');
    expect(printFieldFilter({ path: 'response.origin_time', op: 'lte', value: '-2.5' })).toBe('response.origin_time:<=-2.5');
  });

  it('reads back what it writes, for every test', () => {
    const all: FieldFilter[] = [country('is', 'DE'), country('not', 'DE'), country('prefix', 'D'), { path: 'a', op: 'gte', value: '1e3' }, { path: 'a', op: 'lte', value: '0' }, country('is', ''), country('not', '*'), country('is', '*')];
    for (const f of all) expect(readFieldFilter(printFieldFilter(f))).toEqual({ ok: true, filter: f });
  });

  it('reads the value after the first colon only: a value may hold colons', () => {
    expect(readFieldFilter('request.url:https://x.co/a')).toEqual({ ok: true, filter: { path: 'request.url', op: 'is', value: 'https://x.co/a' } });
  });

  it('refuses what the server refuses: no path, a bad path, a bound that is not a number', () => {
    expect(readFieldFilter(':DE').ok).toBe(false);
    expect(readFieldFilter('DE').ok).toBe(false);
    expect(readFieldFilter('request headers:DE').ok).toBe(false);
    expect(readFieldFilter('a..b:DE').ok).toBe(false);
    expect(readFieldFilter('a:>=').ok).toBe(false);
    expect(readFieldFilter('a:<=ten').ok).toBe(false);
  });

  it('says why in the API’s words, which the server answers a refused condition with', () => {
    expect(readFieldFilter('a:<=ten')).toEqual({ ok: false, reason: 'field a:<= takes a number, not ten' });
    expect(readFieldFilter('DE')).toEqual({ ok: false, reason: 'field takes path:value (e.g. request.headers.cf_ipcountry:DE), not DE' });
  });
});

describe('values a test cannot carry', () => {
  it('an equal value the wire would read as another test is refused; exclusion carries any', () => {
    expect(unsendable('is', '!x')).toMatch(/excluded/);
    expect(unsendable('is', '>=5')).not.toBeNull();
    expect(unsendable('is', 'abc*')).toMatch(/starts with/);
    expect(unsendable('is', '*')).toBeNull();
    expect(unsendable('is', '')).toBeNull();
    expect(unsendable('not', '!x*')).toBeNull();
    expect(unsendable('prefix', '!x')).not.toBeNull();
    expect(unsendable('gte', 'ten')).toBe('Enter a number');
    expect(unsendable('gte', '10')).toBeNull();
  });
});
