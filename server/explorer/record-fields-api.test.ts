/**
 * Filters and facets on fields inside records over the API, against answers worked out here
 * from the records: `field=path:value` (equal, not equal, starts with, number bounds, several
 * values of one path), with a text search and a built-in filter, on pages, counts, histograms
 * and facets; and the field list discovered from the records.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appOver, DAY, importRecords, MIN, NOW, SEC, storeKeeper, type TestApp } from '../testing/fixtures.ts';
import { recordBlocksHeld } from '../store/record-blocks.ts';

const keeper = storeKeeper('le-fields-');
afterEach(() => keeper.cleanup());

const REF = 'projaaaaaaaaaaaaaaaa';
const COUNTRIES = ['DE', 'FR', 'US', undefined, 'DE', 'GB'];
const AGENTS = ['supabase-js/2.1', 'supabase-py/1.0', 'curl/8', 'supabase-js/2.4'];

function records() {
  return Array.from({ length: 400 }, (_, i) => {
    const country = COUNTRIES[i % COUNTRIES.length];
    const status = [200, 404, 500, 503][i % 4]!;
    const headers: Record<string, unknown> = { 'x-client-info': AGENTS[i % AGENTS.length] };
    if (country) headers.cf_ipcountry = country;
    return {
      id: `f-${i}`,
      timestamp: NOW - i * 7 * MIN,
      project: REF,
      event_message: `GET | ${status} | ${i % 5 === 0 ? 'slow upstream' : 'ok'}`,
      metadata: { request: { method: 'GET', url: `https://x.supabase.co/rest/v1/t?i=${i}`, path: '/rest/v1/t', headers, cf: { asn: 1000 + (i % 50) } }, response: { status_code: status } },
    };
  });
}
type Rec = ReturnType<typeof records>[number];
const country = (r: Rec) => r.metadata.request.headers.cf_ipcountry as string | undefined;

const window = `start=${encodeURIComponent(new Date((NOW - 4 * DAY) / 1000).toISOString())}&end=${encodeURIComponent(new Date((NOW + MIN) / 1000).toISOString())}`;
const f = (...c: string[]) => c.map((x) => `field=${encodeURIComponent(x)}`).join('&');

async function get<T>(t: TestApp, url: string): Promise<T> {
  for (;;) {
    const res = await t.request(url);
    const body = (await res.json()) as T & { scanned?: { complete: boolean } };
    expect(res.status, `${url}: ${JSON.stringify(body)}`).toBe(200);
    // An aggregate over records answers with its progress until its walk is done.
    if (!body.scanned || body.scanned.complete || url.startsWith('/api/logs?')) return body;
  }
}

describe('fields inside records', () => {
  it('count, pages, histogram and facets under field conditions equal the records’ own', async () => {
    const store = await keeper.open(keeper.newDir());
    const recs = records();
    await importRecords(store, 'edge_logs', recs);
    const t = appOver(store);
    const cases: Array<[string, (r: Rec) => boolean]> = [
      [f('request.headers.cf_ipcountry:DE'), (r) => country(r) === 'DE'],
      [f('request.headers.cf_ipcountry:DE', 'request.headers.cf_ipcountry:FR'), (r) => country(r) === 'DE' || country(r) === 'FR'],
      [f('request.headers.cf_ipcountry:!DE'), (r) => country(r) !== 'DE'],
      [f('request.headers.x-client-info:supabase-js*'), (r) => String(r.metadata.request.headers['x-client-info']).startsWith('supabase-js')],
      [f('request.cf.asn:>=1040'), (r) => r.metadata.request.cf.asn >= 1040],
      [f('request.cf.asn:>=1010', 'request.cf.asn:<=1012'), (r) => r.metadata.request.cf.asn >= 1010 && r.metadata.request.cf.asn <= 1012],
      [f('response.status_code:503'), (r) => r.metadata.response.status_code === 503],
      [`${f('request.headers.cf_ipcountry:DE')}&q=slow`, (r) => country(r) === 'DE' && r.event_message.includes('slow')],
      [`${f('request.headers.cf_ipcountry:!US')}&status=5xx`, (r) => country(r) !== 'US' && r.metadata.response.status_code >= 500],
    ];
    for (const [params, test] of cases) {
      const want = recs.filter(test);
      const count = await get<{ result: { count: number } }>(t, `/api/logs/count?source=edge_logs&${params}&${window}`);
      expect(count.result.count, params).toBe(want.length);
      const hist = await get<{ result: Array<{ count: number }> }>(t, `/api/logs/histogram?source=edge_logs&${params}&${window}`);
      expect(hist.result.reduce((a, b) => a + b.count, 0), params).toBe(want.length);
      // Every page, following the cursor: exactly the matching ids, newest first.
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { result: Array<{ id: string }>; next: string | null } = await get(t, `/api/logs?source=edge_logs&${params}&limit=100&${window}${cursor ? `&cursor=${cursor}` : ''}`);
        ids.push(...page.result.map((r) => r.id));
        cursor = page.next;
      } while (cursor);
      expect(ids, params).toEqual(want.map((r) => r.id));
    }
  });

  it('facets on a field inside the records, beside the built-in ones, in the order asked', async () => {
    const store = await keeper.open(keeper.newDir());
    const recs = records();
    await importRecords(store, 'edge_logs', recs);
    const t = appOver(store);
    const body = await get<{ result: Record<string, Array<{ value: string | number; count: number }>>; others: Record<string, number> }>(
      t,
      `/api/logs/facets?source=edge_logs&fields=${encodeURIComponent('request.headers.cf_ipcountry,status')}&${window}`,
    );
    expect(Object.keys(body.result)).toEqual(['request.headers.cf_ipcountry', 'status']);
    const byCountry = new Map<string, number>();
    for (const r of recs) if (country(r)) byCountry.set(country(r)!, (byCountry.get(country(r)!) ?? 0) + 1);
    expect(new Map(body.result['request.headers.cf_ipcountry']!.map((v) => [v.value, v.count]))).toEqual(byCountry);
    expect(body.result.status!.reduce((a, b) => a + b.count, 0)).toBe(recs.length);
    // With a condition on the same field.
    const de = await get<{ result: Record<string, Array<{ value: string; count: number }>> }>(
      t,
      `/api/logs/facets?source=edge_logs&fields=${encodeURIComponent('request.headers.x-client-info')}&${f('request.headers.cf_ipcountry:DE')}&${window}`,
    );
    const agents = new Map<string, number>();
    for (const r of recs) if (country(r) === 'DE') agents.set(String(r.metadata.request.headers['x-client-info']), (agents.get(String(r.metadata.request.headers['x-client-info'])) ?? 0) + 1);
    expect(new Map(de.result['request.headers.x-client-info']!.map((v) => [v.value, v.count]))).toEqual(agents);
  });

  it('lists the fields the records carry, with types and examples; refuses bad conditions naming field', async () => {
    const store = await keeper.open(keeper.newDir());
    await importRecords(store, 'edge_logs', records());
    const t = appOver(store);
    const body = await get<{ result: Array<{ path: string; types: string[]; count: number; examples: string[] }>; sampled: number }>(t, `/api/logs/field-paths?source=edge_logs&${window}`);
    expect(body.sampled).toBe(400);
    const c = body.result.find((x) => x.path === 'request.headers.cf_ipcountry')!;
    expect(c.types).toEqual(['string']);
    expect(c.count).toBe(records().filter((r) => country(r) !== undefined).length);
    expect(c.examples.sort()).toEqual(['DE', 'FR', 'GB', 'US']);
    expect(body.result.find((x) => x.path === 'request.cf.asn')?.types).toEqual(['number']);
    for (const bad of ['nocolon', 'a b:c', 'x:>=abc']) {
      const res = await t.request(`/api/logs/count?source=edge_logs&field=${encodeURIComponent(bad)}&${window}`);
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as { error: { errors: Array<{ location: string }> } }).error.errors[0]!.location).toBe('field');
    }
  });

  it('reads fields inside metadata given as JSON text (CSV rows, some exports), with and without the field index', async () => {
    const store = await keeper.open(keeper.newDir());
    const recs = records();
    // The same records, their metadata written as a JSON string.
    await importRecords(store, 'edge_logs', recs.map((r) => ({ ...r, metadata: JSON.stringify(r.metadata) })));
    const t = appOver(store);
    const byCountry = new Map<string, number>();
    for (const r of recs) if (country(r)) byCountry.set(country(r)!, (byCountry.get(country(r)!) ?? 0) + 1);
    const check = async (when: string) => {
      const paths = await get<{ result: Array<{ path: string }> }>(t, `/api/logs/field-paths?source=edge_logs&${window}`);
      expect(paths.result.map((x) => x.path), when).toContain('request.headers.cf_ipcountry');
      const count = await get<{ result: { count: number } }>(t, `/api/logs/count?source=edge_logs&${f('request.headers.cf_ipcountry:DE')}&${window}`);
      expect(count.result.count, when).toBe(byCountry.get('DE'));
      const asn = await get<{ result: { count: number } }>(t, `/api/logs/count?source=edge_logs&${f('request.cf.asn:>=1040')}&${window}`);
      expect(asn.result.count, when).toBe(recs.filter((r) => r.metadata.request.cf.asn >= 1040).length);
      const facets = await get<{ result: Record<string, Array<{ value: string; count: number }>> }>(t, `/api/logs/facets?source=edge_logs&fields=${encodeURIComponent('request.headers.cf_ipcountry')}&${window}`);
      expect(new Map(facets.result['request.headers.cf_ipcountry']!.map((v) => [v.value, v.count])), when).toEqual(byCountry);
    };
    await check('read from the records');
    await store.columnsSettled();
    await check('field index built');
  });

  // 4,000 records are read in line by the columns path; 6,000 take the walk (aggregate.ts, RECORD_ROWS_IN_LINE).
  it.each([4000, 6000])('a condition on a path the field index leaves out (a ray per record) reads only the blocks that may hold its value: %i records', async (n) => {
    const dir = keeper.newDir();
    const written = await keeper.open(dir);
    let seed = 11;
    const hex = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return (Math.floor(seed / 65536) % 65536).toString(16).padStart(4, '0');
    };
    // 30 to 45 blocks of records; a few rays start with fb5f, one in ten is written as JSON text.
    const recs = Array.from({ length: n }, (_, i) => {
      const ray = i % 997 === 5 ? `fb5f${hex()}${hex()}${hex()}` : `${hex()}${hex()}${hex()}${hex()}`;
      const metadata = { request: { method: 'GET', headers: { cf_ray: ray, note: `padding ${'x'.repeat(1500)}` } }, response: { status_code: 200 } };
      return { id: `ray-${i}`, timestamp: NOW - i * 30 * SEC, project: REF, event_message: `GET | 200 | ${ray}`, metadata: i % 10 === 3 ? JSON.stringify(metadata) : metadata };
    });
    await importRecords(written, 'edge_logs', recs);
    await written.columnsSettled();
    // Opened again: no block is left decompressed in memory.
    await keeper.close(written);
    const t = appOver(await keeper.open(dir));
    const rayOf = (r: (typeof recs)[number]) => (typeof r.metadata === 'string' ? (JSON.parse(r.metadata) as { request: { headers: { cf_ray: string } } }) : r.metadata).request.headers.cf_ray;
    for (const [value, prefix] of [
      ['fb5f', true],
      [rayOf(recs[1234]!), false],
      [rayOf(recs[3000]!).slice(0, 6), true],
      ['zzzz', true],
    ] as const) {
      const want = recs.filter((r) => (prefix ? rayOf(r).startsWith(value) : rayOf(r) === value)).length;
      const before = recordBlocksHeld().decompressed;
      const count = await get<{ result: { count: number } }>(t, `/api/logs/count?source=edge_logs&${f(`request.headers.cf_ray:${value}${prefix ? '*' : ''}`)}&${window}`);
      expect(count.result.count, value).toBe(want);
      // Each matching record is in one block; every other block is ruled out by the field bits.
      expect(recordBlocksHeld().decompressed - before, value).toBeLessThanOrEqual(want);
    }
  });
});
