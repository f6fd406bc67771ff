/**
 * The endpoint rules live in the registry entries only (queries/registry.ts): GET /api/endpoints
 * lists them, and both the speed paths and the SQL answer by them. Expected figures here are
 * computed from the listing (or stated by hand from the endpoint spec), never read from the code
 * under test.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { API_FAMILIES } from '../../contract/registry.ts';
import { ENDPOINTS, ERROR_RULE, type EndpointDefinition } from '../../queries/registry.ts';
import type { ApiCountsRow, EndpointListing, InvocationStatsRow, LogRow } from '../../contract/api-types.ts';
import { DAY, HOUR, MIN, NOW, SEC, edgeRecord, fnRecord, makeTestApp, rows, type TestApp } from '../testing/fixtures.ts';
import { formatIsoMicros } from '../time.ts';
import { RULE_BINDS, validateParams } from './params.ts';
import { runEndpoint, runEndpointSql, type ResultRow } from './run.ts';
import { endpointSql, readSqlFile, sqlDirectory } from './sql-files.ts';
import { API_INTERVALS, LOGS_ALL_ROWS, STATS_INTERVALS, TIER_RETENTION } from './windows.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const P = 'projaaaaaaaaaaaaaaaa';
const trunc = (ts: number, unit: number) => ts - (ts % unit);

async function listing(t: TestApp): Promise<Map<string, EndpointListing>> {
  const res = await t.request('/api/endpoints');
  expect(res.status).toBe(200);
  const list = ((await res.json()) as { result: EndpointListing[] }).result;
  return new Map(list.map((e) => [e.name, e]));
}

describe('queries/registry.ts is data only', () => {
  const source = fs.readFileSync(path.join(ROOT, 'queries', 'registry.ts'), 'utf8');

  it('imports no Node module and reads no file', () => {
    expect(source).not.toMatch(/\bfrom\s+['"]node:/);
    expect(source).not.toMatch(/\bfrom\s+['"](fs|path|url|module)(\/[\w/]+)?['"]/);
    expect(source).not.toMatch(/\brequire\s*\(/);
    expect(source).not.toMatch(/\bimport\s*\(/);
    expect(source).not.toContain('import.meta');
    expect(source).not.toMatch(/readFile/);
    // Only the shared contract, which imports no package (scripts/layering.test.ts), so nothing can pull a Node module in either.
    const from = [...source.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'/gm)].map((m) => m[1]);
    expect(from.length).toBeGreaterThan(0);
    expect(source).not.toMatch(/^\s*import\s+['"]/m);
    for (const spec of from) expect(spec).toMatch(/^\.\.\/contract\/[\w-]+\.ts$/);
  });

  it('names a SQL file per entry, which exists in queries/, and carries no SQL text itself', () => {
    for (const def of ENDPOINTS) {
      expect(def.sqlFile, def.name).toBe(`${def.name}.sql`);
      expect(fs.existsSync(path.join(ROOT, 'queries', def.sqlFile)), def.sqlFile).toBe(true);
      expect(def.sql, def.name).toBeUndefined();
      expect(endpointSql(def)).toBe(fs.readFileSync(path.join(ROOT, 'queries', def.sqlFile), 'utf8'));
    }
  });

  it('declares each rule parameter with exactly the rule keys (and fallback) as its choices', () => {
    for (const def of ENDPOINTS) {
      for (const [rules, keys] of [
        [def.intervals, def.intervals && Object.keys(def.intervals.windows)],
        [def.tiers, def.tiers && Object.keys(def.tiers.tiers)],
      ] as const) {
        if (!rules) continue;
        const spec = def.params.find((p) => p.name === rules.param);
        expect(spec?.allowed, `${def.name} ${rules.param}`).toEqual(keys);
        expect(spec?.fallback, `${def.name} ${rules.param}`).toBe(rules.fallback);
        // A fallback is a lenient choice; without one, other values are a 400.
        expect(spec?.kind).toBe(rules.fallback === undefined ? 'choice' : 'lenient-choice');
      }
    }
  });
});

describe('the .sql files state no rule, they bind it', () => {
  const body = (file: string) =>
    readSqlFile(file)
      .split('\n')
      .map((l) => l.replace(/--.*$/, ''))
      .join('\n');

  it('each file uses the bind names of its entry’s rules', () => {
    for (const def of ENDPOINTS) {
      const sql = body(def.sqlFile);
      const expected = [
        ...(def.intervals ? [RULE_BINDS.spanUs, RULE_BINDS.unitUs] : []),
        ...(def.tiers ? [RULE_BINDS.retentionUs] : []),
        ...(def.rows !== undefined ? [RULE_BINDS.rows] : []),
        ...(def.errorRule ? [RULE_BINDS.errorStatusAtLeast] : []),
      ];
      for (const name of Object.values(RULE_BINDS)) {
        expect(new RegExp(`@${name}\\b`).test(sql), `${def.sqlFile} @${name}`).toBe(expected.includes(name));
      }
    }
  });

  it('maps no interval or tier to numbers, and cuts rows and counts errors only through binds', () => {
    for (const def of ENDPOINTS) {
      const sql = body(def.sqlFile);
      expect(sql, def.sqlFile).not.toMatch(/CASE\s+@(interval|project_tier)\b/i);
      expect(sql, def.sqlFile).not.toMatch(/LIMIT\s+\d/i);
      expect(sql, def.sqlFile).not.toMatch(/status\s*>=?\s*\d/i);
      // Spans and retentions of the spec (5 min, 15 min, 7 days, 90 days) appear nowhere.
      for (const n of [5 * MIN, 15 * MIN, 7 * DAY, 90 * DAY]) expect(sql, `${def.sqlFile} ${n}`).not.toContain(String(n));
    }
  });

  it('usage.api-counts counts each API family of the registry by its bit, into its column, in its order', () => {
    // The family bits are stored per record at import, so the SQL reads them rather than binding the paths.
    const counted = [...body('usage.api-counts.sql').matchAll(/sum\(\(e\.families & (\d+)\) != 0\) AS (\w+)/g)].map((m) => ({ bit: Number(m[1]), column: m[2] }));
    expect(counted).toEqual(API_FAMILIES.map((f) => ({ bit: f.bit, column: f.column })));
  });
});

describe('server/endpoints/sql-files.ts finds the queries', () => {
  it('in the sources: queries/, two folders above this module', () => {
    expect(sqlDirectory().href).toBe(pathToFileURL(path.join(ROOT, 'queries')).href + '/');
  });

  it('in a bundle: next to the bundle, whose URL import.meta.url then is', () => {
    expect(sqlDirectory('file:///opt/app/resources/app.asar.unpacked/dist/electron/server-process.cjs').href).toBe('file:///opt/app/resources/app.asar.unpacked/dist/electron/');
    expect(sqlDirectory('file:///repo/dist/server/main.mjs').href).toBe('file:///repo/dist/server/');
    expect(sqlDirectory('file:///C:/Program%20Files/Log%20Explorer/dist/electron/server-process.cjs').href).toBe('file:///C:/Program%20Files/Log%20Explorer/dist/electron/');
  });

  it('reads only bare .sql names', () => {
    expect(() => readSqlFile('../package.json')).toThrow(/not an endpoint SQL file/);
    expect(() => readSqlFile('sub/logs.all.sql')).toThrow(/not an endpoint SQL file/);
    expect(() => readSqlFile('no-such-endpoint.sql')).toThrow(/missing/);
  });
});

describe('windows.ts is derived from the registry', () => {
  it('matches the spec: windows, buckets, retention, row cut (stated by hand)', () => {
    expect(STATS_INTERVALS).toEqual({
      '5min': { span: 5 * MIN, unit: SEC },
      '15min': { span: 15 * MIN, unit: MIN },
      '1hr': { span: HOUR, unit: MIN },
      '1day': { span: DAY, unit: HOUR },
      '7day': { span: 7 * DAY, unit: DAY },
    });
    expect(API_INTERVALS).toEqual({ hourly: { span: HOUR, unit: HOUR }, daily: { span: 7 * DAY, unit: DAY }, minutely: { span: HOUR, unit: MIN } });
    expect(TIER_RETENTION).toEqual({ FREE: DAY, PRO: 7 * DAY, PAYG: 90 * DAY, ENTERPRISE: 90 * DAY });
    expect(LOGS_ALL_ROWS).toBe(100);
    expect(ERROR_RULE).toEqual({ statusAtLeast: 400 });
  });
});

describe('GET /api/endpoints lists the rules', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('per entry: intervals, tiers, fallbacks, the row cut and the error rule, as the spec states them', async () => {
    t = await makeTestApp();
    const l = await listing(t);
    expect(l.get('functions.invocation-stats')).toMatchObject({
      intervals: {
        '5min': { spanUs: 300_000_000, unitUs: 1_000_000 },
        '15min': { spanUs: 900_000_000, unitUs: 60_000_000 },
        '1hr': { spanUs: 3_600_000_000, unitUs: 60_000_000 },
        '1day': { spanUs: 86_400_000_000, unitUs: 3_600_000_000 },
        '7day': { spanUs: 604_800_000_000, unitUs: 86_400_000_000 },
      },
      intervalParam: 'interval',
      fallbackInterval: '1day',
      errorRule: { statusAtLeast: 400 },
      maxRows: 1000,
    });
    expect(l.get('usage.api-counts')).toMatchObject({
      intervals: {
        hourly: { spanUs: 3_600_000_000, unitUs: 3_600_000_000 },
        daily: { spanUs: 604_800_000_000, unitUs: 86_400_000_000 },
        minutely: { spanUs: 3_600_000_000, unitUs: 60_000_000 },
      },
      intervalParam: 'interval',
    });
    expect(l.get('usage.api-counts')).not.toHaveProperty('fallbackInterval');
    expect(l.get('logs.all')).toMatchObject({
      tiers: { FREE: { retentionUs: 86_400_000_000 }, PRO: { retentionUs: 604_800_000_000 }, PAYG: { retentionUs: 7_776_000_000_000 }, ENTERPRISE: { retentionUs: 7_776_000_000_000 } },
      tierParam: 'project_tier',
      fallbackTier: 'FREE',
      rows: 100,
      maxRows: 1000,
    });
    // Rules appear only where the endpoint has them.
    expect(l.get('logs.all')).not.toHaveProperty('intervals');
    expect(l.get('logs.all')).not.toHaveProperty('errorRule');
    expect(l.get('usage.api-counts')).not.toHaveProperty('tiers');
    expect(l.get('functions.invocation-stats')).not.toHaveProperty('rows');
  });
});

describe('the listed rules are what the endpoints do (speed path over HTTP and the SQL)', () => {
  let t: TestApp;
  let l: Map<string, EndpointListing>;
  /** Every edge record's instant (all of project P). */
  const edgeTs: number[] = [];
  const def = (name: string) => ENDPOINTS.find((e) => e.name === name)!;
  /** Both forms' rows: the speed path as a request gets it, then the SQL definition. */
  async function both<T>(name: string, params: Record<string, string>): Promise<Array<[string, T[]]>> {
    const d = def(name);
    return [
      ['speed path', await rows<T>(t, name, params)],
      ['SQL', (await runEndpointSql(t.store, d, validateParams(d, params), NOW)) as unknown as T[]],
    ];
  }

  const stats = () => l.get('functions.invocation-stats')!;
  const api = () => l.get('usage.api-counts')!;
  const logs = () => l.get('logs.all')!;

  beforeAll(async () => {
    // The listing first (an empty app), to place records at its own edges.
    const bare = await makeTestApp();
    l = await listing(bare);
    await bare.close();
    const { statusAtLeast } = stats().errorRule!;
    const edge: unknown[] = [];
    for (const [interval, w] of Object.entries(api().intervals!)) {
      // At the window's start (in) and 1 µs before it (out), on a URL of the interval's own.
      const url = (id: string) => `https://${P}.supabase.co/rest/v1/${interval}-${id}`;
      edge.push(edgeRecord(NOW - w.spanUs, { id: `api-${interval}-in`, url: url('in'), path: '/rest/v1/x' }));
      edge.push(edgeRecord(NOW - w.spanUs - 1, { id: `api-${interval}-out`, url: url('out'), path: '/rest/v1/x' }));
    }
    for (const [tier, { retentionUs }] of Object.entries(logs().tiers!)) {
      edge.push(edgeRecord(NOW - retentionUs, { id: `tier-${tier}-at-cutoff` }));
      edge.push(edgeRecord(NOW - retentionUs + 1, { id: `tier-${tier}-inside` }));
    }
    // More recent rows than the cut, all inside every tier.
    for (let i = 0; i < logs().rows! + 7; i++) edge.push(edgeRecord(NOW - (i + 1) * SEC, { id: `recent-${String(i).padStart(4, '0')}` }));
    const fn = [
      fnRecord(NOW - 2 * SEC, { status: statusAtLeast - 1 }),
      fnRecord(NOW - 2 * SEC, { status: statusAtLeast }),
      fnRecord(NOW - 2 * SEC, { status: statusAtLeast + 100 }),
    ];
    for (const e of edge) edgeTs.push((e as { timestamp: number }).timestamp);
    t = await makeTestApp({ edge, fn });
  });
  afterAll(() => t.close());

  it('invocation-stats: per interval, buckets trunc(now − spanUs, unitUs) … trunc(now, unitUs), unitUs apart (span/unit + 1 of them)', async () => {
    for (const [interval, { spanUs, unitUs }] of Object.entries(stats().intervals!)) {
      const first = trunc(NOW - spanUs, unitUs);
      const last = trunc(NOW, unitUs);
      const n = (last - first) / unitUs + 1;
      // Every listed unit divides its span, so the inclusive series has span/unit + 1 buckets.
      expect(n, interval).toBe(spanUs / unitUs + 1);
      for (const [form, got] of await both<InvocationStatsRow>('functions.invocation-stats', { project: P, interval })) {
        const where = `${form} ${interval}`;
        expect(got, where).toHaveLength(n);
        expect(got.map((r) => r.timestamp), where).toEqual(Array.from({ length: n }, (_, i) => first + i * unitUs));
      }
    }
  });

  it('invocation-stats: an unlisted interval answers as fallbackInterval', async () => {
    const other = await both<InvocationStatsRow>('functions.invocation-stats', { project: P, interval: 'fortnight' });
    const fallback = await both<InvocationStatsRow>('functions.invocation-stats', { project: P, interval: stats().fallbackInterval! });
    other.forEach(([form, got], i) => expect(got, form).toEqual(fallback[i]![1]));
  });

  it('invocation-stats: the error rule counts a status of statusAtLeast and above, not below', async () => {
    for (const interval of Object.keys(stats().intervals!)) {
      for (const [form, got] of await both<InvocationStatsRow>('functions.invocation-stats', { project: P, interval })) {
        expect([got.reduce((s, r) => s + r.count, 0), got.reduce((s, r) => s + r.error_count, 0)], `${form} ${interval}`).toEqual([3, 2]);
      }
    }
  });

  it('api-counts: per interval, records at or after now − spanUs, in buckets of unitUs', async () => {
    for (const [interval, { spanUs, unitUs }] of Object.entries(api().intervals!)) {
      const ts = NOW - spanUs;
      const expected = [{ timestamp: formatIsoMicros(trunc(ts, unitUs)).slice(0, 19), total_rest_requests: 1, total_storage_requests: 0, total_auth_requests: 0, total_realtime_requests: 0 }];
      // Only this interval's own URLs: the pattern ends at the interval's name.
      for (const [form, got] of await both<ApiCountsRow>('usage.api-counts', { project: `/rest/v1/${interval}-`, interval })) {
        expect(got, `${form} ${interval}`).toEqual(expected);
      }
    }
  });

  it('logs.all: per tier (and fallbackTier for others), strictly newer than now − retentionUs, cut to `rows` rows', async () => {
    const tiers = logs().tiers!;
    const rowCut = logs().rows!;
    for (const tier of [...Object.keys(tiers), 'NO-SUCH-TIER']) {
      const { retentionUs } = tiers[tier] ?? tiers[logs().fallbackTier!]!;
      // A range around this tier's edge: of the records there, those strictly newer than the cutoff.
      const start = NOW - retentionUs - 1;
      const end = NOW - retentionUs + 1;
      const expected = edgeTs.filter((ts) => ts > Math.max(NOW - retentionUs, start) && ts <= end).sort((a, b) => b - a);
      expect(expected.length, tier).toBeGreaterThan(0);
      expect(expected.every((ts) => ts === end), tier).toBe(true);
      const range = { iso_timestamp_start: formatIsoMicros(start), iso_timestamp_end: formatIsoMicros(end) };
      for (const [form, got] of await both<LogRow>('logs.all', { project: P, project_tier: tier, ...range })) {
        expect(got.map((r) => r.timestamp), `${form} ${tier}`).toEqual(expected);
      }
      for (const [form, got] of await both<LogRow>('logs.all', { project: P, project_tier: tier })) {
        expect(got, `${form} ${tier}`).toHaveLength(rowCut);
        expect(got.every((r) => r.timestamp > NOW - retentionUs), `${form} ${tier}`).toBe(true);
      }
    }
  });
});

describe('other rules in an entry change both forms alike (nothing restates them)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp({
      edge: Array.from({ length: 30 }, (_, i) => edgeRecord(NOW - (i + 1) * 10 * MIN, { id: `e-${String(i).padStart(2, '0')}` })),
      fn: Array.from({ length: 30 }, (_, i) => fnRecord(NOW - (i + 1) * 10 * MIN, { status: 200 + i * 10 })),
    });
  });
  afterAll(() => t.close());

  const answer = async (d: EndpointDefinition, params: Record<string, string>): Promise<Array<[string, ResultRow[]]>> => {
    const p = validateParams(d, params);
    return [
      ['speed path', runEndpoint(t.store, d, p, NOW)],
      ['SQL', await runEndpointSql(t.store, d, p, NOW)],
    ];
  };

  it('logs.all with a 2-hour FREE tier and a cut of 7', async () => {
    const base = ENDPOINTS.find((e) => e.name === 'logs.all')!;
    const d: EndpointDefinition = { ...base, tiers: { ...base.tiers!, tiers: { ...base.tiers!.tiers, FREE: { retentionUs: 2 * HOUR } } }, rows: 7 };
    for (const [form, got] of await answer(d, { project: P, project_tier: 'FREE' })) {
      // Records every 10 minutes: 11 inside 2 hours (the one at exactly 2 hours is out), cut to 7.
      expect(got.map((r) => r.id), form).toEqual(['e-00', 'e-01', 'e-02', 'e-03', 'e-04', 'e-05', 'e-06']);
    }
    for (const [form, got] of await answer(d, { project: P, project_tier: 'GOLD' })) expect(got, `${form} GOLD is FREE`).toHaveLength(7);
  });

  it('invocation-stats with a 3-hour interval by the hour', async () => {
    const base = ENDPOINTS.find((e) => e.name === 'functions.invocation-stats')!;
    const d: EndpointDefinition = { ...base, intervals: { ...base.intervals!, windows: { ...base.intervals!.windows, '1day': { spanUs: 3 * HOUR, unitUs: HOUR } } } };
    // 10:30:45 now: hours 07:00 … 10:00, by hand; records at 10:20:45, 10:10:45, … back 300 min.
    const hours = ['2026-11-22T07:00:00Z', '2026-11-22T08:00:00Z', '2026-11-22T09:00:00Z', '2026-11-22T10:00:00Z'].map((iso) => Date.parse(iso) * 1000);
    for (const [form, got] of await answer(d, { project: P, interval: '1day' })) {
      expect(got.map((r) => r.timestamp), form).toEqual(hours);
      // 10:xx: 10:20:45, 10:10:45, 10:00:45; 09:xx, 08:xx: six each; 07:xx: 07:50:45 … 07:00:45, six.
      expect(got.map((r) => r.count), form).toEqual([6, 6, 6, 3]);
    }
  });
});
