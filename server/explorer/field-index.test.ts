/**
 * Field conditions and facets on indexed paths (store/field-columns.ts, field-index.ts) over
 * the API, against answers worked out here from the records themselves with a reading of the
 * rules written for this test (not the server's): random edge records in both metadata shapes,
 * with fields missing, null, numbers, booleans, one- and two-element arrays, objects and
 * Unicode; equal, not equal, starts with, number bounds, alternatives, exclusions, with an
 * unindexed path, a text search, a built-in filter and a project, over windows that cover
 * partitions whole and cut them. Then the columns files' field index damaged, of an old format
 * and capped: the same answers, and the files built again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appOver, DAY, fieldSectionOf, HOUR, importRecords, MIN, NOW, SEC, tempDir, type TestApp } from '../testing/fixtures.ts';
import { LogStore } from '../store/log-store.ts';
import { COLUMNS_FORMAT } from '../store/scan-columns.ts';

const PROJECTS = ['projaaaaaaaaaaaaaaaa', 'projbbbbbbbbbbbbbbbb'];

/** A small deterministic generator (no library: the test must not depend on the code's). */
function lcg(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return Math.floor(s / 65536) % n;
  };
}

// `undefined`: the key is left out.
const COUNTRIES: unknown[] = ['DE', 'DE', 'DE', 'FR', 'FR', 'US', 'GB', 'D', 'DEU', 'Ünïcødé', '日本', '', 49, true, null, undefined, undefined, ['DE'], ['DE', 'FR'], [['FR']], { c: 'DE' }];
const CLIENTS: unknown[] = ['supabase-js/2.1', 'supabase-js/2.10', 'supabase-py/1.0', '2.5', 12.5, ' 7 ', '', '1e3', 'Infinity', '-0', '0x10', 3, null, undefined];
const TYPES: unknown[] = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'image/png', undefined];
const AGENTS: unknown[] = ['curl/8', 'Mozilla/5.0 (X11)', 'Mozilla/5.0 (Mac)', 'node', undefined];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface Rec {
  id: string;
  timestamp: number;
  project: string;
  event_message: string;
  metadata: Json;
  /** The metadata in the ingest shape, for the reference. */
  plain: { [k: string]: Json };
}

/** Every nested object a one-element array, as BigQuery returns records. */
function queryShape(v: Json): Json {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, x !== null && typeof x === 'object' && !Array.isArray(x) ? [queryShape(x)] : x]));
}

/** Records over 60 hours before NOW (three day partitions), each instant its own. */
function records(seed: number, n: number): Rec[] {
  const r = lcg(seed);
  const pick = <T>(xs: readonly T[]) => xs[r(xs.length)]!;
  return Array.from({ length: n }, (_, i) => {
    const headers: Record<string, unknown> = { cf_ipcountry: pick(COUNTRIES), x_client_info: pick(CLIENTS), user_agent: pick(AGENTS) };
    const plain = JSON.parse(
      JSON.stringify({
        request: { method: 'GET', url: `https://x.supabase.co/rest/v1/t?i=${i}`, headers, cf: { country: pick(COUNTRIES), asn: 1000 + r(50) } },
        response: { status_code: pick([200, 200, 404, 500]), headers: { content_type: pick(TYPES) } },
      }),
    ) as { [k: string]: Json };
    return {
      id: `fx-${seed}-${i}`,
      timestamp: NOW - Math.floor((i * 60 * HOUR) / n) - r(1000),
      project: PROJECTS[r(2)]!,
      event_message: `GET | ${i % 7 === 0 ? 'slow upstream' : 'ok'}`,
      metadata: r(2) ? queryShape(plain) : plain,
      plain,
    };
  });
}

// ---- the reference: the rules of contract/fields.ts, read again here ----

/** The value at a dotted path: one-element arrays are looked through; a longer array on the way is no value. */
function lookup(m: Json, p: string): Json | undefined {
  let v: Json | undefined = m;
  for (const k of p.split('.')) {
    while (Array.isArray(v)) v = v.length === 1 ? v[0] : undefined;
    if (v === undefined || v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, k)) return undefined;
    v = (v as { [k: string]: Json })[k];
  }
  while (Array.isArray(v) && v.length === 1) v = v[0];
  return v;
}

/** As the page shows a value: text, numbers and booleans written, objects and arrays as JSON; null when absent. */
function shown(v: Json | undefined): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** Whether a record passes `path:value` conditions: one path's equal/starts-with values are alternatives, everything else must hold. */
function passes(rec: Rec, conditions: string[]): boolean {
  const byPath = new Map<string, string[]>();
  for (const c of conditions) {
    const at = c.indexOf(':');
    byPath.set(c.slice(0, at), [...(byPath.get(c.slice(0, at)) ?? []), c.slice(at + 1)]);
  }
  for (const [p, tests] of byPath) {
    const text = shown(lookup(rec.plain, p));
    const alternatives = tests.filter((t) => !t.startsWith('!') && !t.startsWith('>=') && !t.startsWith('<='));
    if (alternatives.length && !alternatives.some((t) => text !== null && (t.endsWith('*') && t.length > 1 ? text.startsWith(t.slice(0, -1)) : text === t))) return false;
    for (const t of tests) {
      if (t.startsWith('!') && text === t.slice(1)) return false;
      if (t.startsWith('>=') || t.startsWith('<=')) {
        const n = text === null ? NaN : Number(text);
        if (!Number.isFinite(n) || (t.startsWith('>=') ? n < Number(t.slice(2)) : n > Number(t.slice(2)))) return false;
      }
    }
  }
  return true;
}

/** The top 10 of a count map (count descending, then the smaller text by code units) and how many values are left out. */
function top(counts: Map<string, number>): { values: Array<{ value: string; count: number }>; others: number } {
  const all = [...counts].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
  return { values: all.slice(0, 10).map(([value, count]) => ({ value, count })), others: Math.max(0, all.length - 10) };
}

const iso = (us: number) => new Date(Math.floor(us / 1000)).toISOString();
const fieldParams = (conditions: string[]) => conditions.map((c) => `&field=${encodeURIComponent(c)}`).join('');

interface Case {
  conditions: string[];
  extra?: string;
  also?: (r: Rec) => boolean;
}

const CASES: Case[] = [
  { conditions: ['request.headers.cf_ipcountry:DE'] },
  { conditions: ['request.headers.cf_ipcountry:!DE'] },
  { conditions: ['request.headers.cf_ipcountry:D*'] },
  { conditions: ['request.headers.cf_ipcountry:DE', 'request.headers.cf_ipcountry:FR'] },
  { conditions: ['request.headers.cf_ipcountry:!DE', 'request.headers.cf_ipcountry:!'] },
  { conditions: ['request.headers.cf_ipcountry:Ünïcødé'] },
  { conditions: ['request.headers.cf_ipcountry:日*'] },
  { conditions: ['request.headers.cf_ipcountry:49'] },
  { conditions: ['request.headers.cf_ipcountry:true'] },
  { conditions: ['request.headers.cf_ipcountry:["DE","FR"]'] },
  { conditions: ['request.headers.cf_ipcountry:{"c":"DE"}'] },
  { conditions: ['request.headers.cf_ipcountry:XX'] },
  { conditions: ['request.headers.x_client_info:>=2'] },
  { conditions: ['request.headers.x_client_info:<=2.5'] },
  { conditions: ['request.headers.x_client_info:>=0', 'request.headers.x_client_info:<=10'] },
  { conditions: ['request.headers.x_client_info:>=-1', 'request.headers.x_client_info:!2.5'] },
  { conditions: ['request.headers.x_client_info:supabase-js*'] },
  { conditions: ['request.headers.x_client_info:supabase-js*', 'request.headers.x_client_info:3'] },
  { conditions: ['response.headers.content_type:application/json*', 'request.cf.country:DE'] },
  { conditions: ['request.headers.user_agent:!curl/8', 'request.cf.country:!FR'] },
  // An indexed path with one that is not (request.cf.asn): the index and the record together.
  { conditions: ['request.headers.cf_ipcountry:DE', 'request.cf.asn:>=1020'] },
  { conditions: ['request.cf.country:D*'], extra: '&q=slow', also: (r) => r.event_message.includes('slow') },
  { conditions: ['request.headers.cf_ipcountry:!US'], extra: '&status=5xx', also: (r) => (lookup(r.plain, 'response.status_code') as number) >= 500 },
  { conditions: ['request.headers.cf_ipcountry:DE', 'request.headers.cf_ipcountry:US'], extra: `&project=${PROJECTS[1]}`, also: (r) => r.project === PROJECTS[1] },
];

const FACETS = ['request.headers.cf_ipcountry', 'request.headers.x_client_info', 'request.cf.country', 'response.headers.content_type'];

describe('fields inside records, from the field index', () => {
  let dir: string;
  let t: TestApp;
  const recs = records(17, 700);
  const windows = [
    // The three day partitions whole, and one cut at both ends (rows counted one by one).
    { name: 'whole', start: NOW - 4 * DAY, end: NOW + MIN },
    { name: 'cut', start: NOW - 30 * HOUR - 7 * MIN, end: NOW - 2 * HOUR + 11 * SEC },
  ];

  beforeAll(async () => {
    dir = tempDir('le-field-index-');
    t = appOver(await LogStore.open(dir));
    await importRecords(t.store, 'edge_logs', recs.map(({ plain: _plain, ...r }) => r));
    await t.store.columnsSettled();
  }, 120_000);
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function get<T>(url: string): Promise<T> {
    for (;;) {
      const res = await t.request(url);
      const body = (await res.json()) as T & { scanned?: { complete: boolean } };
      expect(res.status, `${url}: ${JSON.stringify(body)}`).toBe(200);
      if (!body.scanned || body.scanned.complete || url.startsWith('/api/logs?')) return body;
    }
  }

  /** The answers a case gets: count, histogram total, every page's ids, and record facets. */
  async function answers(c: Case, w: { start: number; end: number }) {
    const q = `source=edge_logs&start=${encodeURIComponent(iso(w.start))}&end=${encodeURIComponent(iso(w.end))}${fieldParams(c.conditions)}${c.extra ?? ''}`;
    const count = (await get<{ result: { count: number } }>(`/api/logs/count?${q}`)).result.count;
    const hist = (await get<{ result: Array<{ count: number }> }>(`/api/logs/histogram?${q}&buckets=500`)).result.reduce((a, b) => a + b.count, 0);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { result: Array<{ id: string }>; next: string | null } = await get(`/api/logs?${q}&limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      ids.push(...page.result.map((r) => r.id));
      cursor = page.next;
    } while (cursor);
    const facets = await get<{ result: Record<string, unknown>; others: Record<string, number>; scanned?: unknown }>(`/api/logs/facets?${q}&fields=${encodeURIComponent(FACETS.join(','))}`);
    return { count, hist, ids, facets };
  }

  function expected(c: Case, w: { start: number; end: number }) {
    const want = recs.filter((r) => r.timestamp > w.start && r.timestamp <= w.end && passes(r, c.conditions) && (c.also?.(r) ?? true)).sort((a, b) => b.timestamp - a.timestamp);
    const result: Record<string, unknown> = {};
    const others: Record<string, number> = {};
    for (const f of FACETS) {
      const counts = new Map<string, number>();
      for (const r of want) {
        const v = shown(lookup(r.plain, f));
        if (v !== null) counts.set(v, (counts.get(v) ?? 0) + 1);
      }
      const tops = top(counts);
      result[f] = tops.values;
      others[f] = tops.others;
    }
    return { ids: want.map((r) => r.id), result, others };
  }

  it('count, histogram, pages and facets under every kind of condition equal the records’ own', async () => {
    for (const w of windows) {
      for (const c of CASES) {
        const label = `${w.name} ${c.conditions.join(' ')}${c.extra ?? ''}`;
        const got = await answers(c, w);
        const want = expected(c, w);
        expect(got.ids, label).toEqual(want.ids);
        expect(got.count, label).toBe(want.ids.length);
        expect(got.hist, label).toBe(want.ids.length);
        expect(got.facets.result, label).toEqual(want.result);
        expect(got.facets.others, label).toEqual(want.others);
      }
    }
  }, 300_000);

  it('counts indexed fields from the columns (no walk of the records), and walks them for a text search', async () => {
    const q = `source=edge_logs&start=${encodeURIComponent(iso(windows[0]!.start))}&end=${encodeURIComponent(iso(windows[0]!.end))}`;
    // A walk answers with how far it got (`scanned`); the columns answer without.
    const indexed = await get<{ scanned?: unknown }>(`/api/logs/facets?${q}&fields=request.headers.cf_ipcountry&field=${encodeURIComponent('request.headers.x_client_info:>=1')}`);
    expect(indexed.scanned).toBeUndefined();
    const count = await get<{ scanned?: unknown }>(`/api/logs/count?${q}&field=${encodeURIComponent('request.cf.country:DE')}`);
    expect(count.scanned).toBeUndefined();
    const searched = await get<{ scanned?: unknown }>(`/api/logs/count?${q}&q=slow&field=${encodeURIComponent('request.cf.country:DE')}`);
    expect(searched.scanned).toMatchObject({ complete: true });
  });

  it('marks the indexed paths in the field list: every path the records carry with few values', async () => {
    const body = await get<{ result: Array<{ path: string; indexed?: true }>; indexed: string[] }>(`/api/logs/field-paths?source=edge_logs&start=${encodeURIComponent(iso(NOW - 4 * DAY))}&end=${encodeURIComponent(iso(NOW + MIN))}`);
    // Always scalars in these records (the others are objects in some of them, which may leave them out of a partition).
    for (const p of ['request.method', 'request.cf.asn', 'response.status_code']) {
      expect(body.indexed, p).toContain(p);
      expect(body.result.find((f) => f.path === p)?.indexed, p).toBe(true);
    }
    expect(body.indexed).toEqual([...body.indexed].sort());
    expect(body.indexed).not.toContain('request');
  });
});

describe('a damaged, old or capped field index', () => {
  it('answers the same from the records meanwhile, and is built again', async () => {
    const recs = records(23, 300);
    const dir = tempDir('le-field-damage-');
    let t = appOver(await LogStore.open(dir));
    try {
      await importRecords(t.store, 'edge_logs', recs.map(({ plain: _plain, ...r }) => r));
      await t.store.columnsSettled();
      const q = `source=edge_logs&start=${encodeURIComponent(iso(NOW - 4 * DAY))}&end=${encodeURIComponent(iso(NOW + MIN))}`;
      const ask = async () => {
        const out: unknown[] = [];
        for (const url of [
          `/api/logs/count?${q}&field=${encodeURIComponent('request.headers.cf_ipcountry:DE')}`,
          `/api/logs/facets?${q}&fields=request.headers.cf_ipcountry,status`,
          `/api/logs/facets?${q}&fields=request.headers.x_client_info&field=${encodeURIComponent('request.headers.cf_ipcountry:!FR')}`,
        ]) {
          let body: { scanned?: { complete: boolean } };
          do body = (await (await t.request(url)).json()) as { scanned?: { complete: boolean } };
          while (body.scanned && !body.scanned.complete);
          const { scanned: _scanned, ...rest } = body as Record<string, unknown>;
          out.push(rest);
        }
        // Every page (a walk of the records stops a page at its time budget and goes on from `next`).
        const rows: unknown[] = [];
        let cursor: string | null = null;
        do {
          const page = (await (await t.request(`/api/logs?${q}&limit=1000&field=${encodeURIComponent('request.headers.cf_ipcountry:D*')}${cursor ? `&cursor=${cursor}` : ''}`)).json()) as { result: unknown[]; next: string | null };
          rows.push(...page.result);
          cursor = page.next;
        } while (cursor);
        out.push(rows);
        return out;
      };
      const before = await ask();
      const files = fs.readdirSync(path.join(dir, 'parts', 'edge_logs')).filter((f) => f.endsWith('.cols')).map((f) => path.join(dir, 'parts', 'edge_logs', f));
      expect(files.length).toBeGreaterThan(1);
      const whole = files.map((f) => fs.readFileSync(f));

      // A flipped byte in the ids of a path the questions ask about: it is read from the records, and the file built again.
      for (const f of files) {
        const buf = fs.readFileSync(f);
        buf[fieldSectionOf(f, 'request.headers.cf_ipcountry').firstIds]! ^= 0x01;
        fs.writeFileSync(f, buf);
      }
      await t.close();
      t = appOver(await LogStore.open(dir));
      expect(await ask()).toEqual(before);
      await t.store.columnsSettled();
      expect(files.map((f) => fs.readFileSync(f).equals(whole[files.indexOf(f)]!))).toEqual(files.map(() => true));
      expect(await ask()).toEqual(before);

      // A flipped byte in the descriptor, and a file of the previous format: built again (in the background, or when asked).
      const [first, second] = files as [string, string];
      const desc = fs.readFileSync(first);
      desc[fieldSectionOf(first).at + 9]! ^= 0x40;
      fs.writeFileSync(first, desc);
      const old = fs.readFileSync(second);
      old.writeUInt32LE(COLUMNS_FORMAT - 1, 4);
      fs.writeFileSync(second, old);
      await t.close();
      t = appOver(await LogStore.open(dir));
      expect(await ask()).toEqual(before);
      await t.store.columnsSettled();
      expect(fs.readFileSync(first).equals(whole[0]!)).toBe(true);
      expect(fs.readFileSync(second).readUInt32LE(4)).toBe(COLUMNS_FORMAT);
      expect(fieldSectionOf(second).bytes).toBeGreaterThan(0);
      expect(await ask()).toEqual(before);
    } finally {
      await t.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('a partition with more distinct values of a path than the index keeps answers it from its records', async () => {
    const dir = tempDir('le-field-capped-');
    const t = appOver(await LogStore.open(dir));
    try {
      // One busy half hour (one partition): a user agent of its own for every request (past MAX_FIELD_TEXTS), countries from a few.
      const n = 16_500;
      const hourStart = NOW - (NOW % HOUR);
      const recs = Array.from({ length: n }, (_, i) => ({
        id: `cap-${i}`,
        timestamp: hourStart + Math.floor((i * 30 * MIN) / n),
        project: PROJECTS[0]!,
        event_message: 'GET',
        metadata: { request: { headers: { user_agent: `agent/${i}`, cf_ipcountry: ['DE', 'FR', 'US'][i % 3] } } },
      }));
      await importRecords(t.store, 'edge_logs', recs);
      await t.store.columnsSettled();
      expect(fs.readdirSync(path.join(dir, 'parts', 'edge_logs')).filter((f) => f.endsWith('.cols'))).toHaveLength(1);
      const q = `source=edge_logs&start=${encodeURIComponent(iso(NOW - 2 * HOUR))}&end=${encodeURIComponent(iso(NOW + MIN))}`;
      const agents = (await (await t.request(`/api/logs/facets?${q}&fields=request.headers.user_agent,request.headers.cf_ipcountry`)).json()) as {
        result: Record<string, Array<{ value: string; count: number }>>;
        others: Record<string, number>;
        scanned?: { complete: boolean };
      };
      // Read from the records: the walk answers (with its progress); every agent once, the top ten by text.
      expect(agents.scanned).toBeDefined();
      const byText = recs.map((r) => r.metadata.request.headers.user_agent).sort();
      expect(agents.result['request.headers.user_agent']).toEqual(byText.slice(0, 10).map((value) => ({ value, count: 1 })));
      expect(agents.others['request.headers.user_agent']).toBe(n - 10);
      expect(agents.result['request.headers.cf_ipcountry']).toEqual([
        { value: 'DE', count: 5500 },
        { value: 'FR', count: 5500 },
        { value: 'US', count: 5500 },
      ]);
      const one = (await (await t.request(`/api/logs/count?${q}&field=${encodeURIComponent('request.headers.user_agent:agent/1234')}`)).json()) as { result: { count: number } };
      expect(one.result.count).toBe(1);
      // The country is still indexed there: counted from the columns.
      const countries = (await (await t.request(`/api/logs/facets?${q}&fields=request.headers.cf_ipcountry`)).json()) as { scanned?: unknown };
      expect(countries.scanned).toBeUndefined();
    } finally {
      await t.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
