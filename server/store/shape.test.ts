import { describe, expect, it } from 'vitest';
import { nestsDeeperThan, pick, toIngestShape, toQueryShape, type Json, type JsonObject } from './shape.ts';

const ingest = {
  request: { method: 'GET', path: '/rest/v1/todos', headers: { host: 'abc.supabase.co' } },
  response: { status_code: 200 },
  args: ['a', 'b'],
  hops: [{ at: 1, via: { node: 'n1' } }, { at: 2, via: { node: 'n2' } }],
  level: 'info',
  empty: null,
};

// Written by hand from the rule: every nested record becomes a one-element array of records.
const query = [
  {
    request: [{ method: 'GET', path: '/rest/v1/todos', headers: [{ host: 'abc.supabase.co' }] }],
    response: [{ status_code: 200 }],
    args: ['a', 'b'],
    hops: [
      { at: 1, via: [{ node: 'n1' }] },
      { at: 2, via: [{ node: 'n2' }] },
    ],
    level: 'info',
    empty: null,
  },
];

describe('toQueryShape', () => {
  it('wraps the ingest shape: nested objects become one-element arrays, repeated records stay arrays', () => {
    expect(toQueryShape(ingest)).toEqual(query);
  });

  it('is idempotent: the query shape comes back equal', () => {
    expect(toQueryShape(query)).toEqual(query);
  });

  it('keeps key order, so the serialized JSON of both shapes is identical', () => {
    expect(JSON.stringify(toQueryShape(ingest))).toBe(JSON.stringify(query));
    expect(JSON.stringify(toQueryShape(query))).toBe(JSON.stringify(query));
  });

  it('missing or null metadata is an empty array', () => {
    expect(toQueryShape(undefined)).toEqual([]);
    expect(toQueryShape(null)).toEqual([]);
  });

  it('an empty object is one empty record', () => {
    expect(toQueryShape({})).toEqual([{}]);
  });
});

describe('toIngestShape', () => {
  it('unwraps the query shape back to nested objects', () => {
    expect(toIngestShape(query)).toEqual(ingest);
  });
});

describe('pick', () => {
  it('reads a path through the query shape', () => {
    expect(pick(query, ['request', 'path'])).toBe('/rest/v1/todos');
    expect(pick(query, ['request', 'headers', 'host'])).toBe('abc.supabase.co');
  });

  it('reads a path through the ingest shape', () => {
    expect(pick(ingest, ['response', 'status_code'])).toBe(200);
  });

  it('steps into the first element of a repeated record', () => {
    expect(pick(query, ['hops', 'via', 'node'])).toBe('n1');
  });

  it('is undefined for a missing key, through a scalar, or into an empty array', () => {
    expect(pick(query, ['request', 'nope'])).toBeUndefined();
    expect(pick(query, ['level', 'x'])).toBeUndefined();
    expect(pick([], ['a'])).toBeUndefined();
    expect(pick(undefined, ['a'])).toBeUndefined();
  });
});

describe('any depth, any key', () => {
  it('toQueryShape rebuilds 100,000 levels of nesting without exhausting the stack', () => {
    const levels = 100_000;
    const deep = JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`) as Json;
    let v: Json | undefined = toQueryShape(deep)[0];
    let count = 0;
    while (v !== null && typeof v === 'object' && !Array.isArray(v) && 'a' in v) {
      count++;
      const next: Json = v.a as Json;
      v = Array.isArray(next) ? next[0] : next;
    }
    expect([count, v]).toEqual([levels, 1]);
  });

  it('keeps a __proto__ key as an own key in both shapes (assignment would set the prototype)', () => {
    const parsed = JSON.parse('{"__proto__": {"x": 1}, "b": 2}') as JsonObject;
    const q = toQueryShape(parsed)[0] as JsonObject;
    expect(Object.keys(q)).toEqual(['__proto__', 'b']);
    expect(JSON.stringify(q)).toBe('{"__proto__":[{"x":1}],"b":2}');
    expect(Object.getPrototypeOf(q)).toBe(Object.prototype);
    expect(JSON.stringify(toIngestShape([q]))).toBe('{"__proto__":{"x":1},"b":2}');
  });

  it('nestsDeeperThan counts objects and arrays, a scalar being level 0', () => {
    expect(nestsDeeperThan(1, 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 2)).toBe(true);
    expect(nestsDeeperThan({ a: 1, b: [[[]]] }, 4)).toBe(false);
    expect(nestsDeeperThan({ a: 1, b: [[[]]] }, 3)).toBe(true);
  });
});
