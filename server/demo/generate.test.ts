import { describe, expect, it } from 'vitest';
import type { Json, JsonObject } from '../store/shape.ts';
import { SOURCE_NAMES, SOURCES, type SourceName } from '../sources.ts';
import { PreSerializedRecord } from './common.ts';
import { ageAtQuantile, DEMO_PROJECTS, generateRecords, HISTORY_DAYS, type DemoRecord } from './generate.ts';

// 2026-11-22T10:00:00.123456Z, with sub-millisecond digits of its own.
const NOW = Date.UTC(2026, 10, 22, 10, 0, 0) * 1000 + 123_456;
const HOUR = 3_600_000_000;
const DAY = 24 * HOUR;
const REFS = new Set(DEMO_PROJECTS.map((p) => p.ref));

const gen = (source: SourceName, count: number, seed = 1, now = NOW) => [...generateRecords(source, { now, count, seed })];

// Generated once and shared by the statistical tests (kept small enough to stay fast).
const edge = gen('cloudflare.logs.prod', 12_000);
const fnEdge = gen('deno-relay-logs', 12_000);
const small = new Map<SourceName, DemoRecord[]>(SOURCE_NAMES.map((s) => [s, gen(s, 2_000)]));

function obj(v: Json | undefined): JsonObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`not an object: ${JSON.stringify(v)}`);
  return v;
}
const str = (v: Json | undefined): string => {
  if (typeof v !== 'string') throw new Error(`not a string: ${JSON.stringify(v)}`);
  return v;
};
const statusClass = (s: number) => Math.floor(s / 100);
const fraction = (n: number, of: number) => n / of;

/** Nearest-rank percentile, computed here independently of the generator. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
}

describe('generateRecords: determinism', () => {
  it('yields identical records for the same source, now, count and seed', () => {
    for (const s of SOURCE_NAMES) {
      expect(JSON.stringify(gen(s, 300, 7))).toBe(JSON.stringify(gen(s, 300, 7)));
    }
  });

  it('yields different records for a different seed', () => {
    for (const s of SOURCE_NAMES) {
      const a = gen(s, 50, 1);
      const b = gen(s, 50, 2);
      expect(a.map((r) => r.id)).not.toEqual(b.map((r) => r.id));
      expect(a.map((r) => r.timestamp)).not.toEqual(b.map((r) => r.timestamp));
    }
  });

  it('gives every record a unique UUID-format id, across all sources', () => {
    const all = [edge, fnEdge, ...small.values()].flat();
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(all.filter((r) => !uuid.test(r.id)).slice(0, 1)).toEqual([]);
    expect(new Set(all.map((r) => r.id)).size).toBe(all.length);
  });

  it('shares no ids between sets made with another count or now', () => {
    const a = new Set(gen('cloudflare.logs.prod', 500).map((r) => r.id));
    expect(gen('cloudflare.logs.prod', 501).some((r) => a.has(r.id))).toBe(false);
    expect(gen('cloudflare.logs.prod', 500, 1, NOW + 1).some((r) => a.has(r.id))).toBe(false);
  });

  it('rejects a now that is not integer microseconds', () => {
    expect(() => gen('postgres.logs', 1, 1, NOW + 0.5)).toThrow(/microseconds/);
  });

  it('returns deeply frozen records', () => {
    for (const recs of small.values()) {
      const r = recs[0]!;
      expect(Object.isFrozen(r)).toBe(true);
      expect(Object.isFrozen(r.metadata)).toBe(true);
    }
    const m = edge[0]!.metadata;
    expect(Object.isFrozen(obj(m['request']))).toBe(true);
    expect(Object.isFrozen(obj(obj(m['request'])['headers']))).toBe(true);
    expect(Object.isFrozen(obj(obj(m['response'])['headers']))).toBe(true);
  });
});

describe('generateRecords: time', () => {
  it('puts every timestamp in (now - 90 days, now], as integer microseconds, newest first', () => {
    for (const recs of [edge, fnEdge, ...small.values()]) {
      const bad = recs.filter(
        (r, i) =>
          !Number.isSafeInteger(r.timestamp) ||
          r.timestamp > NOW ||
          r.timestamp <= NOW - HISTORY_DAYS * DAY ||
          (i > 0 && r.timestamp > recs[i - 1]!.timestamp),
      );
      expect(bad.slice(0, 1)).toEqual([]);
    }
  });

  it('keeps the age distribution at its quantile edges exactly', () => {
    expect(ageAtQuantile(0)).toBe(0);
    expect(ageAtQuantile(0.5)).toBe(DAY);
    expect(ageAtQuantile(0.9)).toBe(7 * DAY);
    expect(ageAtQuantile(0.99999999999)).toBeLessThan(90 * DAY);
  });

  it('is dense near now: ~50% in the last 24 h, ~90% within 7 days, a thin tail to 90 days', () => {
    const n = edge.length;
    const within = (age: number) => fraction(edge.filter((r) => NOW - r.timestamp < age).length, n);
    expect(within(DAY)).toBeGreaterThan(0.47);
    expect(within(DAY)).toBeLessThan(0.53);
    expect(within(7 * DAY)).toBeGreaterThan(0.88);
    expect(within(7 * DAY)).toBeLessThan(0.92);
    expect(within(30 * DAY)).toBeLessThan(0.975);
    expect(within(60 * DAY)).toBeLessThan(1);
    // The last hour is denser than an average hour of the 90 days by a wide margin.
    expect(within(HOUR) * 90 * 24).toBeGreaterThan(20);
  });

  it('has sub-millisecond digits', () => {
    const withMicros = edge.filter((r) => r.timestamp % 1000 !== 0).length;
    expect(withMicros / edge.length).toBeGreaterThan(0.99);
  });
});

describe('generateRecords: projects', () => {
  it('has three projects with 20-letter refs and 3-5 functions with UUID ids each', () => {
    expect(DEMO_PROJECTS).toHaveLength(3);
    for (const p of DEMO_PROJECTS) {
      expect(p.ref).toMatch(/^[a-z]{20}$/);
      expect(p.functions.length).toBeGreaterThanOrEqual(3);
      expect(p.functions.length).toBeLessThanOrEqual(5);
      for (const f of p.functions) {
        expect(f.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(f.name).toMatch(/^[a-z][a-z0-9-]+$/);
      }
    }
  });

  it('puts the project where sources.ts says, and only there', () => {
    for (const s of SOURCES) {
      const misplaced = small.get(s.name)!.filter((r) =>
        s.project.in === 'record'
          ? !REFS.has(r.project ?? '') || r.metadata['project_ref'] !== undefined
          : r.project !== undefined || !REFS.has(str(r.metadata[s.project.key])),
      );
      expect(misplaced.slice(0, 1)).toEqual([]);
    }
  });

  it('gives the projects unequal traffic (busy > medium > quiet > 0)', () => {
    const counts = DEMO_PROJECTS.map((p) => edge.filter((r) => r.project === p.ref).length);
    expect(counts[0]!).toBeGreaterThan(counts[1]! * 2);
    expect(counts[1]!).toBeGreaterThan(counts[2]! * 2);
    expect(counts[2]!).toBeGreaterThan(0);
  });
});

describe('generateRecords: function edge logs (deno-relay-logs)', () => {
  it('references functions of the record’s own project, with deployment id and version', () => {
    for (const r of fnEdge.slice(0, 2000)) {
      const m = r.metadata;
      const project = DEMO_PROJECTS.find((p) => p.ref === m['project_ref'])!;
      const fn = project.functions.find((f) => f.id === m['function_id'])!;
      expect(fn).toBeDefined();
      expect(m['version']).toMatch(/^\d+$/);
      expect(m['deployment_id']).toBe(`${project.ref}_${fn.id}_${str(m['version'])}`);
      const req = obj(m['request']);
      const status = obj(m['response'])['status_code'];
      expect(req['pathname']).toBe(`/functions/v1/${fn.name}`);
      expect(req['url']).toBe(`https://${project.ref}.supabase.co/functions/v1/${fn.name}${str(req['search'])}`);
      expect(r.event_message).toBe(`${str(req['method'])} | ${String(status)} | ${str(req['url'])}`);
      expect(obj(req['headers'])['host']).toBe(`${project.ref}.supabase.co`);
    }
  });

  it('has execution times with a long tail (median tens of ms, p99 in the seconds)', () => {
    const times = fnEdge.flatMap((r) => (typeof r.metadata['execution_time_ms'] === 'number' ? [r.metadata['execution_time_ms']] : []));
    times.sort((a, b) => a - b);
    const median = percentile(times, 50);
    const p99 = percentile(times, 99);
    expect(median).toBeGreaterThanOrEqual(20);
    expect(median).toBeLessThanOrEqual(80);
    expect(p99).toBeGreaterThanOrEqual(1000);
    expect(p99 / median).toBeGreaterThan(15);
    expect(times.every((t) => Number.isInteger(t) && t >= 0)).toBe(true);
  });

  it('leaves out execution_time_ms on about 1% of records', () => {
    const missing = fnEdge.filter((r) => !('execution_time_ms' in r.metadata)).length;
    expect(missing / fnEdge.length).toBeGreaterThan(0.006);
    expect(missing / fnEdge.length).toBeLessThan(0.014);
  });

  it('mixes statuses about 85/3/9/3 % across 2xx/3xx/4xx/5xx', () => {
    const share = (c: number) => fnEdge.filter((r) => statusClass(obj(r.metadata['response'])['status_code'] as number) === c).length / fnEdge.length;
    expect(share(2)).toBeGreaterThan(0.82);
    expect(share(2)).toBeLessThan(0.88);
    expect(share(3)).toBeGreaterThan(0.02);
    expect(share(3)).toBeLessThan(0.04);
    expect(share(4)).toBeGreaterThan(0.075);
    expect(share(4)).toBeLessThan(0.105);
    expect(share(5)).toBeGreaterThan(0.02);
    expect(share(5)).toBeLessThan(0.04);
  });
});

describe('generateRecords: edge logs (cloudflare.logs.prod)', () => {
  const req = (r: DemoRecord) => obj(r.metadata['request']);
  const res = (r: DemoRecord) => obj(r.metadata['response']);

  it('builds url from host, path and query string, and a sample-like event message', () => {
    // Checked in plain code and asserted once: 12 000 expect() calls would dominate the test time.
    const bad = edge.filter((r) => {
      const q = req(r);
      const path = str(q['path']);
      const search = str(q['search']);
      const headers = obj(q['headers']);
      return !(
        path.startsWith('/') &&
        !path.includes('?') &&
        (search === '' || search.startsWith('?')) &&
        q['host'] === `${r.project}.supabase.co` &&
        q['url'] === `https://${r.project}.supabase.co${path}${search}` &&
        r.event_message ===
          `${str(q['method'])} | ${String(res(r)['status_code'])} | ${str(headers['cf_connecting_ip'])} | ${str(headers['cf_ray'])} | ${str(q['url'])} | ${str(headers['user_agent'])}` &&
        obj(res(r)['headers'])['cf_ray'] === `${str(headers['cf_ray'])}-${str(obj(q['cf'])['colo'])}`
      );
    });
    expect(bad.slice(0, 1)).toEqual([]);
    const withQuery = edge.filter((r) => str(req(r)['url']).includes('?')).length;
    expect(withQuery / edge.length).toBeGreaterThan(0.3);
  });

  it('covers all four API families, paths of none, and paths with two family strings', () => {
    const families = ['/rest', '/storage', '/auth', '/realtime'];
    const counts = new Map<string, number>();
    let none = 0;
    let two = 0;
    for (const r of edge) {
      const path = str(req(r)['path']);
      const hits = families.filter((f) => path.includes(f));
      for (const f of hits) counts.set(f, (counts.get(f) ?? 0) + 1);
      if (hits.length === 0) none++;
      if (hits.length >= 2) two++;
    }
    for (const f of families) expect(counts.get(f) ?? 0).toBeGreaterThan(100);
    expect(none / edge.length).toBeGreaterThan(0.05);
    expect(two / edge.length).toBeGreaterThan(0.005);
    expect(two / edge.length).toBeLessThan(0.05);
    const paths = new Set(edge.map((r) => str(req(r)['path'])));
    expect([...paths].some((p) => p.startsWith('/auth/v1/token'))).toBe(true);
    expect([...paths].some((p) => p.startsWith('/storage/v1/object/public/'))).toBe(true);
    expect(paths.has('/realtime/v1/websocket')).toBe(true);
    expect(paths.has('/graphql/v1')).toBe(true);
    expect([...paths].some((p) => p.startsWith('/functions/v1/'))).toBe(true);
  });

  it('mixes 2xx, 3xx, 4xx and 5xx responses', () => {
    const classes = new Map<number, number>();
    for (const r of edge) {
      const c = statusClass(res(r)['status_code'] as number);
      classes.set(c, (classes.get(c) ?? 0) + 1);
    }
    expect((classes.get(2) ?? 0) / edge.length).toBeGreaterThan(0.75);
    for (const c of [3, 4, 5]) expect(classes.get(c) ?? 0).toBeGreaterThan(100);
  });

  it('carries JSON text of event message and metadata equal to JSON.stringify of each', () => {
    const bad = edge.filter((r) => {
      const json = PreSerializedRecord.jsonOf(r);
      return json?.metadata !== JSON.stringify(r.metadata) || json.eventMessage !== JSON.stringify(r.event_message);
    });
    expect(bad.slice(0, 1)).toEqual([]);
    // Invisible to equality and to copies: a parsed copy equals the record; a spread has no text.
    const r = edge[0]!;
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(Object.keys(r)).toEqual(['id', 'timestamp', 'event_message', 'project', 'metadata']);
    expect(PreSerializedRecord.jsonOf({ ...r })).toBeUndefined();
  });

  it('serializes to about 1.5-2 KB per NDJSON line', () => {
    const bytes = edge.slice(0, 5000).reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)) + 1, 0);
    const avg = bytes / 5000;
    expect(avg).toBeGreaterThan(1300);
    expect(avg).toBeLessThan(2100);
  });
});

describe('generateRecords: the service sources', () => {
  it('postgres: parsed csvlog fields with an error_severity mix', () => {
    const recs = small.get('postgres.logs')!;
    const severities = new Set(recs.map((r) => obj(r.metadata['parsed'])['error_severity']));
    for (const s of ['LOG', 'WARNING', 'ERROR', 'FATAL']) expect(severities.has(s)).toBe(true);
    const log = recs.filter((r) => obj(r.metadata['parsed'])['error_severity'] === 'LOG').length;
    expect(log / recs.length).toBeGreaterThan(0.6);
    for (const r of recs) {
      const parsed = obj(r.metadata['parsed']);
      expect(r.metadata['host']).toBe(`db-${r.project}`);
      expect(parsed['sql_state_code']).toMatch(/^[0-9A-Z]{5}$/);
      expect(parsed['timestamp']).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} UTC$/);
    }
  });

  it('gotrue: the event message is the JSON log line the metadata holds', () => {
    for (const r of small.get('gotrue.logs.prod')!) {
      const line = JSON.parse(r.event_message) as JsonObject;
      for (const [k, v] of Object.entries(line)) expect(r.metadata[k]).toEqual(v);
      expect(r.metadata['project']).toBe(r.project);
      expect(typeof line['msg']).toBe('string');
    }
  });

  it('realtime: logger context whose time is the record time', () => {
    for (const r of small.get('realtime.logs.prod')!) {
      const ctx = obj(r.metadata['context']);
      expect(ctx['time']).toBe(r.timestamp);
      expect(ctx['application']).toBe('realtime');
      expect(r.metadata['external_id']).toBe(r.metadata['project']);
      expect(['info', 'warning', 'error']).toContain(r.metadata['level']);
    }
  });

  it('storage: reqId and tenantId on every record', () => {
    for (const r of small.get('storage.logs.prod.2')!) {
      expect(r.metadata['tenantId']).toBe(r.metadata['project']);
      expect(str(r.metadata['reqId'])).toMatch(/^[0-9a-f]{16}-[A-Z]{3}$/);
    }
  });

  it('function logs: function id, event type, level, execution id and the instant in metadata', () => {
    const types = new Set<Json | undefined>();
    for (const r of small.get('deno-subhosting-events')!) {
      const m = r.metadata;
      const project = DEMO_PROJECTS.find((p) => p.ref === m['project_ref'])!;
      expect(project.functions.some((f) => f.id === m['function_id'])).toBe(true);
      expect(str(m['execution_id'])).toMatch(/^[0-9a-f-]{36}$/);
      types.add(m['event_type']);
      // The metadata timestamp is the record instant plus three nanosecond digits.
      const iso = str(m['timestamp']);
      const match = /^(.{19})\.(\d{6})\d{3}\+00:00$/.exec(iso)!;
      expect(Date.parse(`${match[1]}Z`) * 1000 + Number(match[2])).toBe(r.timestamp);
    }
    for (const t of ['log', 'boot', 'shutdown']) expect(types.has(t)).toBe(true);
  });

  it('pgbouncer and PostgREST: the host and their own kinds of message', () => {
    for (const r of small.get('pgbouncer.logs.prod')!) expect(r.metadata).toEqual({ host: `db-${r.project}` });
    for (const r of small.get('postgREST.logs.prod')!) expect(r.metadata).toEqual({ host: r.project });
    expect(small.get('pgbouncer.logs.prod')!.some((r) => r.event_message.includes('new connection to server'))).toBe(true);
    expect(small.get('postgREST.logs.prod')!.some((r) => r.event_message.startsWith('Schema cache'))).toBe(true);
  });
});
