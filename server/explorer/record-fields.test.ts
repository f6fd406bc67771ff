import { describe, expect, it } from 'vitest';
import { valueAt } from '../../contract/fields.ts';
import { conditionBlockBits, conditionLiterals, conditionValueNeeds, discoverFields, fieldMatcher, readFieldConditions } from './record-fields.ts';

const ingest = { request: { method: 'GET', headers: { cf_ipcountry: 'DE', 'x-client-info': 'supabase-js/2' } }, response: { status_code: 503 }, parsed: { user_name: 'ana' } };
const query = [{ request: [{ method: 'GET', headers: [{ cf_ipcountry: 'FR' }] }], response: [{ status_code: 200 }] }];

describe('record fields', () => {
  it('finds a dotted path in either metadata shape', () => {
    expect(valueAt(ingest, ['request', 'headers', 'cf_ipcountry'])).toBe('DE');
    expect(valueAt(query, ['request', 'headers', 'cf_ipcountry'])).toBe('FR');
    expect(valueAt(query, ['response', 'status_code'])).toBe(200);
    expect(valueAt(ingest, ['request', 'nope'])).toBeUndefined();
    expect(valueAt(ingest, ['__proto__'])).toBeUndefined();
  });

  it('equal, not equal, starts with and number bounds; one path’s values are alternatives, the rest must all hold', () => {
    const m = (...c: string[]) => fieldMatcher(readFieldConditions(c))!;
    expect(m('request.headers.cf_ipcountry:DE')(ingest)).toBe(true);
    expect(m('request.headers.cf_ipcountry:DE')(query)).toBe(false);
    expect(m('request.headers.cf_ipcountry:DE', 'request.headers.cf_ipcountry:FR')(query)).toBe(true);
    expect(m('request.headers.cf_ipcountry:!DE')(query)).toBe(true);
    expect(m('request.headers.cf_ipcountry:!DE')(ingest)).toBe(false);
    // A record without the field passes an exclusion and fails an equality or a bound.
    expect(m('parsed.user_name:!ana')(query)).toBe(true);
    expect(m('parsed.user_name:ana')(query)).toBe(false);
    expect(m('response.status_code:>=500')(ingest)).toBe(true);
    expect(m('response.status_code:>=500')(query)).toBe(false);
    expect(m('response.status_code:<=200')(query)).toBe(true);
    expect(m('response.status_code:>=500', 'response.status_code:<=599')(ingest)).toBe(true);
    expect(m('response.status_code:200')(query)).toBe(true);
    expect(m('request.headers.x-client-info:supabase-js*')(ingest)).toBe(true);
    expect(m('request.headers.cf_ipcountry:DE', 'parsed.user_name:bob')(ingest)).toBe(false);
  });

  it('refuses what it cannot read, naming field', () => {
    for (const bad of ['nocolon', ':x', 'a..b:x', 'a b:x', 'x:>=', 'x:<=abc']) {
      expect(() => readFieldConditions([bad]), bad).toThrow(expect.objectContaining({ details: [expect.objectContaining({ location: 'field' })] }));
    }
    expect(() => readFieldConditions(Array.from({ length: 21 }, () => 'a:b'))).toThrow(/at most 20/);
  });

  it('gives the block index the texts a match must hold: single text values only', () => {
    expect(conditionLiterals(readFieldConditions(['parsed.user_name:ana', 'request.headers.cf_ipcountry:DE', 'request.headers.cf_ipcountry:FR', 'response.status_code:503', 'x:!y', 'p:abc*']))).toEqual(['ana', 'abc']);
    // A value a number's text may be, or start with, is not in the bytes as written (1e3 is 1000); others are.
    const literals = (c: string) => conditionLiterals(readFieldConditions([c]));
    for (const c of ['a:1000', 'a:-2.5', 'a:1e+21', 'a:12*', 'a:2026-*', 'a:1.5e*', 'a:Infinity']) expect(literals(c), c).toEqual([]);
    for (const c of ['a:1e3', 'a:-0', 'a:1.0', 'a: 7 ', 'a:0x10', 'a:727503696c163e57', 'a:7275c*', 'a:2026-11-28']) expect(literals(c), c).toEqual([c.slice(2).replace(/\*$/, '')]);
    // The block index's trigram bits: one set per literal of three characters or more.
    expect(conditionBlockBits(readFieldConditions(['request.headers.cf_ray:fb5f*', 'a:1234', 'b:xy'])).length).toBe(1);
    // The value bits compare texts as conditions do (numbers too), for values of four characters or more and shorter equal ones.
    const needs = (cs: string[]) => conditionValueNeeds(readFieldConditions(cs)).map((n) => n.path);
    expect(needs(['request.headers.cf_ray:fb5f*', 'code:1234', 'n:12*', 'short:DE', 'x:!y', 'y:>=4', 'o:{"a":*', 'two:a', 'two:b'])).toEqual(['request.headers.cf_ray', 'code', 'short']);
  });

  it('lists the fields of a sample, most common first, with their types and examples', () => {
    const f = discoverFields([ingest, query, { request: { method: 'POST', cf: { city: 'Köln' } }, tags: ['a', 'b'] }]);
    expect(f[0]).toEqual({ path: 'request.method', types: ['string'], count: 3, examples: ['GET', 'POST'] });
    expect(f.find((x) => x.path === 'response.status_code')).toEqual({ path: 'response.status_code', types: ['number'], count: 2, examples: ['503', '200'] });
    expect(f.find((x) => x.path === 'tags')).toMatchObject({ types: ['array'], count: 1, examples: [] });
    expect(f.find((x) => x.path === 'request.cf.city')?.examples).toEqual(['Köln']);
  });
});
