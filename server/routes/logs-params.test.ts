/**
 * The parameters of `/api/logs*`: each route takes exactly the names it reads, each once. A
 * misspelt filter (`stauts=500`) or a repeat (`buckets=6&buckets=12`) is a 400 naming it, in the
 * one error envelope, rather than an answer that quietly ignores it or takes the first value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeRecord, makeTestApp, MIN, NOW, type TestApp } from '../testing/fixtures.ts';
import { formatIsoMicros } from '../time.ts';

const P = 'projaaaaaaaaaaaaaaaa';
const RANGE = `start=${formatIsoMicros(NOW - 60 * MIN)}&end=${formatIsoMicros(NOW)}`;

/** What readExplorerQuery reads for every route, in the order the messages list them. */
const QUERY = 'source, project, start, end, q, regex, field, status, method, path, level, function_id';
/** Each route's accepted names, written out by hand from the routes (logs.ts) and readExplorerQuery. */
const TAKES: Record<string, string> = {
  '/api/logs': `${QUERY}, limit, cursor`,
  '/api/logs/histogram': `${QUERY}, buckets`,
  '/api/logs/facets': `${QUERY}, fields`,
  '/api/logs/count': QUERY,
  '/api/logs/export': `${QUERY}, cursor, format`,
  '/api/logs/field-paths': QUERY,
};

let t: TestApp;
beforeAll(async () => {
  // Five edge records in the last hour: three 500s (two POST), two 200s (GET).
  t = await makeTestApp({
    edge: [
      edgeRecord(NOW - 1 * MIN, { id: 'a', status: 500, method: 'POST' }),
      edgeRecord(NOW - 2 * MIN, { id: 'b', status: 200 }),
      edgeRecord(NOW - 3 * MIN, { id: 'c', status: 500, method: 'POST' }),
      edgeRecord(NOW - 4 * MIN, { id: 'd', status: 500 }),
      edgeRecord(NOW - 5 * MIN, { id: 'e', status: 200 }),
    ],
  });
});
afterAll(async () => {
  await t.close();
});

interface Detail {
  reason: string;
  location?: string;
  message: string;
}

/** The whole error body of a 400, checked to be the one envelope. */
async function badRequest(p: string): Promise<{ message: string; errors: Detail[] }> {
  const res = await t.request(p);
  const body = (await res.json()) as { error: { code: number; status: string; message: string; errors: Detail[] } };
  expect(res.status, `${p}: ${JSON.stringify(body)}`).toBe(400);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error)).toEqual(['code', 'status', 'message', 'errors']);
  expect(body.error.code).toBe(400);
  expect(body.error.status).toBe('INVALID_ARGUMENT');
  return { message: body.error.message, errors: body.error.errors };
}

describe('facets fields', () => {
  it('a field listed once counts each record once; listed twice it is a 400 naming `fields` and the field', async () => {
    const res = await t.request(`/api/logs/facets?source=edge_logs&${RANGE}&fields=status,method`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: unknown }).result).toEqual({
      status: [
        { value: 500, count: 3 },
        { value: 200, count: 2 },
      ],
      method: [
        { value: 'GET', count: 3 },
        { value: 'POST', count: 2 },
      ],
    });
    for (const [fields, field] of [
      ['status,status', 'status'],
      ['method,%20status,method', 'method'],
      ['path,status,path', 'path'],
    ]) {
      const message = `fields lists ${field} more than once`;
      expect(await badRequest(`/api/logs/facets?source=edge_logs&${RANGE}&fields=${fields}`)).toEqual({ message, errors: [{ reason: 'duplicate', location: 'fields', message }] });
    }
  });
});

describe('a parameter given more than once', () => {
  it('is a 400 `duplicate` naming it on every /api/logs route, its own parameters included, even with the same value twice', async () => {
    const cases: Array<[string, string, string]> = [
      ['/api/logs', 'limit=5&limit=6', 'limit'],
      ['/api/logs', 'cursor=a&cursor=b', 'cursor'],
      ['/api/logs', 'status=500&status=500', 'status'],
      ['/api/logs/histogram', 'buckets=6&buckets=12', 'buckets'],
      ['/api/logs/histogram', 'q=x&q=y', 'q'],
      ['/api/logs/facets', 'fields=status&fields=method', 'fields'],
      ['/api/logs/count', 'method=GET&method=POST', 'method'],
      ['/api/logs/export', 'format=csv&format=ndjson', 'format'],
      ['/api/logs/export', 'format=csv&format=csv', 'format'],
      ['/api/logs/export', 'project=a&project=b', 'project'],
    ];
    for (const [route, extra, name] of cases) {
      const message = `${name} is given more than once`;
      expect(await badRequest(`${route}?source=edge_logs&${RANGE}&${extra}`), `${route}?${extra}`).toEqual({ message, errors: [{ reason: 'duplicate', location: name, message }] });
    }
    const message = 'source is given more than once';
    expect(await badRequest(`/api/logs/count?source=edge_logs&source=edge_logs&${RANGE}`)).toEqual({ message, errors: [{ reason: 'duplicate', location: 'source', message }] });
  });
});

describe('a parameter a route does not take', () => {
  it('is a 400 `unknown` naming it and listing what the route takes, on every /api/logs route', async () => {
    for (const [route, takes] of Object.entries(TAKES)) {
      const message = `stauts is not a parameter of ${route}; it takes ${takes}`;
      expect(await badRequest(`${route}?source=edge_logs&${RANGE}&stauts=500`), route).toEqual({ message, errors: [{ reason: 'unknown', location: 'stauts', message }] });
    }
    const message = 'source is not a parameter of /api/logs/fields; it takes none';
    expect(await badRequest('/api/logs/fields?source=edge_logs')).toEqual({ message, errors: [{ reason: 'unknown', location: 'source', message }] });
  });

  it('another route’s own parameter is unknown here (a page’s limit on a count, buckets on a page...)', async () => {
    const cases: Array<[string, string]> = [
      ['/api/logs', 'buckets'],
      ['/api/logs', 'format'],
      ['/api/logs/histogram', 'cursor'],
      ['/api/logs/histogram', 'fields'],
      ['/api/logs/facets', 'limit'],
      ['/api/logs/count', 'limit'],
      ['/api/logs/count', 'cursor'],
      ['/api/logs/export', 'limit'],
      ['/api/logs/export', 'api_key'],
    ];
    for (const [route, name] of cases) {
      const message = `${name} is not a parameter of ${route}; it takes ${TAKES[route]}`;
      expect(await badRequest(`${route}?source=edge_logs&${RANGE}&${name}=1`), `${route} ${name}`).toEqual({ message, errors: [{ reason: 'unknown', location: name, message }] });
    }
  });

  it('every problem is named at once, in the order given: unknown ones and repeats', async () => {
    const unknownA = `stauts is not a parameter of /api/logs/count; it takes ${QUERY}`;
    const unknownB = `limit is not a parameter of /api/logs/count; it takes ${QUERY}`;
    const repeat = 'status is given more than once';
    expect(await badRequest(`/api/logs/count?source=edge_logs&stauts=500&limit=5&status=5xx&status=4xx`)).toEqual({
      message: `${unknownA}; ${unknownB}; ${repeat}`,
      errors: [
        { reason: 'unknown', location: 'stauts', message: unknownA },
        { reason: 'unknown', location: 'limit', message: unknownB },
        { reason: 'duplicate', location: 'status', message: repeat },
      ],
    });
  });
});

describe('the parameters each route takes', () => {
  it('are all accepted, each once, with the values the page sends (renderer/src/api/logs.ts: explorerParams, limit and cursor, buckets, fields, format)', async () => {
    const first = (await (await t.request(`/api/logs?source=edge_logs&${RANGE}&limit=2`)).json()) as { next: string };
    expect(first.next).toEqual(expect.any(String));
    // Every filter the explorer sends; level and function_id empty (edge records have neither), as "not given".
    const filters = `source=cloudflare.logs.prod&project=${P}&${RANGE}&q=rest&regex=0&status=5xx&method=POST&path=/rest/&level=&function_id=`;
    const ok: string[] = [
      `/api/logs?${filters}&limit=200&cursor=${first.next}`,
      `/api/logs/histogram?${filters}&buckets=60`,
      `/api/logs/facets?${filters}&fields=status,method,path`,
      `/api/logs/count?${filters}`,
      `/api/logs/export?${filters}&cursor=${first.next}&format=csv`,
      '/api/logs/fields',
    ];
    for (const p of ok) {
      const res = await t.request(p);
      expect(res.status, `${p}: ${res.status === 200 ? '' : await res.text()}`).toBe(200);
      await res.arrayBuffer();
    }
    // The count with every filter: the POST 500s with "rest" in their URL, a and c.
    const count = (await (await t.request(`/api/logs/count?${filters}`)).json()) as { result: { count: number } };
    expect(count.result.count).toBe(2);
  });
});

describe('a repeatable parameter', () => {
  it('field may be given several times (each one condition); any other repeat is still a 400', async () => {
    const ok = await t.request(`/api/logs/count?source=edge_logs&field=${encodeURIComponent('response.status_code:500')}&field=${encodeURIComponent('request.method:POST')}`);
    expect(ok.status).toBe(200);
    // Of the fixture's five, the two POSTs that answered 500.
    expect(((await ok.json()) as { result: { count: number } }).result.count).toBe(2);
    const twice = await t.request('/api/logs/count?source=edge_logs&q=a&q=b');
    expect(twice.status).toBe(400);
  });
});
