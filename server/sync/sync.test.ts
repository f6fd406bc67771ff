/**
 * The sync against the fake Management API, in virtual time (ManualClock + ManualTimers): the
 * remote is a real HTTP server on 127.0.0.1; every wait (polls, back-offs, 429 pauses, the
 * call budget) passes on the manual clock.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sourceInfo, type SourceName } from '../sources.ts';
import { LogStore } from '../store/log-store.ts';
import { FakeManagementApi, type FakeDialect } from '../testing/fake-management-api.ts';
import { tempDir } from '../testing/fixtures.ts';
import { MICROS } from '../time.ts';
import { readConnectionInput, CONNECTIONS_FILE } from './connections.ts';
import { SyncManager } from './manager.ts';
import { floorMinute, MAX_WINDOW_US } from './pages.ts';
import { SYNC_STATE_FILE } from './state.ts';
import { allIn, FOUR, recordOf, recordsOf, REF, remoteById, runUntil, settle, storedById, TOKEN } from './testing.ts';
import { ManualClock, ManualTimers } from './timers.ts';

const { second: SEC, minute: MIN, hour: HOUR, day: DAY } = MICROS;
// 2026-06-22T12:00:30Z
const NOW = Date.UTC(2026, 5, 22, 12, 0, 30) * 1000;
const START = NOW - 3 * DAY;

interface World {
  clock: ManualClock;
  timers: ManualTimers;
  fake: FakeManagementApi;
  store: LogStore;
  sync: SyncManager;
  dir: string;
}

const worlds: World[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const w of worlds.splice(0)) {
    await w.sync.stop();
    await w.store.close();
    await w.fake.close();
    fs.rmSync(w.dir, { recursive: true, force: true });
  }
});

async function world(dialect: FakeDialect, opts: { callsPerMinute?: number; fakeOptions?: ConstructorParameters<typeof FakeManagementApi>[0] } = {}): Promise<World> {
  const clock = new ManualClock(NOW);
  const timers = new ManualTimers(clock);
  const fake = new FakeManagementApi({ clock, ...opts.fakeOptions });
  fake.addUser('u1', TOKEN, [REF]).addProject(REF, dialect);
  await fake.listen();
  const dir = tempDir('le-sync-');
  const store = await LogStore.open(path.join(dir, 'data'));
  const sync = SyncManager.open({ store, clock, timers, ...(opts.callsPerMinute ? { callsPerMinute: opts.callsPerMinute } : {}) });
  sync.start();
  const w = { clock, timers, fake, store, sync, dir };
  worlds.push(w);
  return w;
}

function connect(w: World, body: Record<string, unknown> = {}) {
  return w.sync.create(readConnectionInput({ kind: 'supabase', ref: REF, url: w.fake.url, token: TOKEN, sources: FOUR.map(([t]) => t), start: new Date(START / 1000).toISOString(), ...body }, w.clock.now()));
}

/** Fills the fake's four tables with 3 days of records (2,400 each); returns them per table. */
function fill(fake: FakeManagementApi, count = 2400): Map<string, ReturnType<typeof recordsOf>> {
  const out = new Map<string, ReturnType<typeof recordsOf>>();
  FOUR.forEach(([table], i) => {
    // Records up to the last whole minute before now (the current minute is read at the next poll).
    const records = recordsOf(table, START, floorMinute(NOW), count, i + 1);
    fake.add(REF, table, records);
    out.set(table, records);
  });
  return out;
}

/** The store holds exactly the fake's records of each table (of `tables`): the same ids, the same content, the connection's project. */
function expectSameRecords(w: World, tables: readonly string[] = FOUR.map(([t]) => t)): void {
  for (const [table, source] of FOUR.filter(([t]) => tables.includes(t))) {
    const stored = storedById(w.store, source);
    const remote = remoteById(w.fake.records(REF, table), source);
    expect([...stored.keys()].sort(), table).toEqual([...remote.keys()].sort());
    for (const [id, rec] of remote) {
      expect(stored.get(id)!.record, `${table} ${id}`).toEqual(rec);
      expect(stored.get(id)!.project).toBe(REF);
    }
  }
}

describe.each(['bigquery', 'clickhouse'] as const)('a %s project', (dialect) => {
  it('a 3-day backfill of 4 sources ends with exactly the remote records (ids and content), then follows', async () => {
    const w = await world(dialect);
    const filled = fill(w.fake);
    const view = await connect(w);
    expect(view.token).toBe('…4567');
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    expectSameRecords(w);
    const after = w.sync.view(view.id);
    // `detect` tries ClickHouse first and keeps the dialect that answered.
    expect(after.detectedDialect).toBe(dialect);
    for (const [table, source] of FOUR) {
      expect(after.sources[source]).toMatchObject({ state: 'following', error: null, records: filled.get(table)!.length, through: floorMinute(NOW) });
    }
    // Every call asked for whole minutes, at most 24 hours, in one of the two SQL forms of its dialect.
    const ok = w.fake.calls.filter((c) => c.status === 200);
    // Per source: three windows of 24 hours, and one more page for the minute holding more than 1,000.
    expect(ok.length).toBe(4 * 4);
    for (const c of ok) {
      expect(c.startText).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
      expect(c.endText).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
      expect(c.end! - c.start!).toBeLessThanOrEqual(MAX_WINDOW_US);
      expect(c.sql).toMatch(dialect === 'bigquery' ? /^select id, timestamp, event_message, metadata from / : /^select id, timestamp, event_message, severity_text, log_attributes from logs where source = /);
    }
    // Detection cost one refused call, on a BigQuery project only.
    expect(w.fake.calls.filter((c) => c.status !== 200).length).toBe(dialect === 'bigquery' ? 1 : 0);
    // The detected dialect is kept with the connection.
    const file = JSON.parse(fs.readFileSync(path.join(w.store.dataDir, CONNECTIONS_FILE), 'utf8')) as { connections: Array<{ detected: string }> };
    expect(file.connections[0]!.detected).toBe(dialect);
  });

  it('late records appear after the next poll; each poll re-reads the last 10 minutes, and re-reads add nothing twice', async () => {
    const w = await world(dialect);
    fill(w.fake, 1200);
    const view = await connect(w, { sources: ['edge_logs', 'postgres_logs'] });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    const before = w.sync.view(view.id).sources['cloudflare.logs.prod']!.records;
    // Ingested late: 4 minutes old (inside the re-read), and new ones up to the next minute; one 30 minutes late (outside it).
    const late = [recordOf('edge_logs', 'late-4min', floorMinute(NOW) - 4 * MIN + 7, 1), recordOf('edge_logs', 'new-1', floorMinute(NOW) + 10 * SEC, 2)];
    const tooLate = recordOf('edge_logs', 'late-30min', floorMinute(NOW) - 30 * MIN, 3);
    w.fake.add(REF, 'edge_logs', [...late, tooLate]);
    const calls = w.fake.calls.length;
    await runUntil(w.sync, w.clock, w.timers, () => w.fake.calls.length >= calls + 2 && allIn(w.sync, 'following'), 2 * MIN);
    const ids = new Set(w.store.dump('cloudflare.logs.prod').map((r) => r.id));
    expect(ids.has('late-4min')).toBe(true);
    expect(ids.has('new-1')).toBe(true);
    expect(ids.has('late-30min')).toBe(false);
    const edge = w.sync.view(view.id).sources['cloudflare.logs.prod']!;
    expect(edge.records).toBe(before + 2);
    expect(edge.through).toBe(floorMinute(NOW) + MIN);
    // Each poll is one call per source over [now - 11 min, now) (the minute before the re-read start, whole minutes).
    const poll = w.fake.calls.slice(calls).find((c) => c.sql!.includes('edge_logs'))!;
    expect(poll.end! - poll.start!).toBe(11 * MIN);
    // More polls: nothing is added twice.
    await runUntil(w.sync, w.clock, w.timers, () => w.clock.us >= NOW + 10 * MIN, 11 * MIN);
    expect(storedById(w.store, 'cloudflare.logs.prod').size).toBe(before + 2);
  });
});

describe('failures', () => {
  it('a 500 and a 429 in the middle lose nothing: the source backs off, the connection waits Retry-After, and both say so', async () => {
    // A budget of 3 calls a minute: the sources sleep between pages, so each state can be seen.
    const w = await world('bigquery', { callsPerMinute: 3, fakeOptions: { retryAfterSeconds: 90 } });
    fill(w.fake, 2400);
    w.fake.failAt(5, { status: 500, body: { error: 'Internal Server Error' } });
    w.fake.failAt(9, { status: 429, body: { message: 'ThrottlerException: Too Many Requests' }, headers: { 'retry-after': '90' } });
    const view = await connect(w, { dialect: 'bigquery' });
    const seen: string[] = [];
    const kinds = new Set<string>();
    await runUntil(w.sync, w.clock, w.timers, () => {
      for (const s of Object.values(w.sync.view(view.id).sources)) {
        if (s.state === 'waiting') seen.push(`${s.waitReason}: ${s.error} until +${(s.waitUntil! - w.clock.us) / SEC}s`);
        if (s.state === 'waiting') kinds.add(`${s.errorKind} ${s.errorStatus}`);
      }
      return allIn(w.sync, 'following');
    });
    expect(seen, JSON.stringify(seen)).toContain('backoff: Internal Server Error until +5s');
    // The kind of each problem and the status behind it, for the app to say what to do.
    expect([...kinds].sort()).toEqual(['rate_limited 429', 'remote 500']);
    for (const s of Object.values(w.sync.view(view.id).sources)) expect(s).toMatchObject({ error: null, errorKind: null, errorStatus: null });
    expect(seen.some((s) => s.startsWith('rate_limited: ThrottlerException: Too Many Requests until +'))).toBe(true);
    // No call went out while the connection waited for the 429's Retry-After.
    const at429 = w.fake.calls.find((c) => c.status === 429)!.at;
    expect(w.fake.calls.filter((c) => c.at > at429 && c.at < at429 + 90 * SEC)).toEqual([]);
    expectSameRecords(w);
  });

  it('a 429 without Retry-After waits a minute; 5xx back off 5 s, 10 s, 20 s … at most 5 minutes', async () => {
    const w = await world('bigquery');
    w.fake.failNext({ status: 429, body: { message: 'ThrottlerException: Too Many Requests' } });
    for (let i = 0; i < 9; i++) w.fake.failNext({ status: 502, body: 'Bad Gateway' });
    const view = await connect(w, { dialect: 'bigquery', sources: ['edge_logs'] });
    const waits: Array<[string | null, number]> = [];
    await runUntil(w.sync, w.clock, w.timers, () => {
      const s = w.sync.view(view.id).sources['cloudflare.logs.prod']!;
      if (s.state === 'waiting') waits.push([s.waitReason, (s.waitUntil! - w.clock.us) / SEC]);
      return s.state === 'following';
    });
    expect(waits).toEqual([
      ['rate_limited', 60],
      ['backoff', 5],
      ['backoff', 10],
      ['backoff', 20],
      ['backoff', 40],
      ['backoff', 80],
      ['backoff', 160],
      ['backoff', 300],
      ['backoff', 300],
      ['backoff', 300],
    ]);
  });

  it("a bad token fails the connection with the remote's message and makes no more calls; a new token resumes it", async () => {
    const w = await world('bigquery');
    fill(w.fake, 100);
    const view = await w.sync.create(readConnectionInput({ kind: 'supabase', ref: REF, url: w.fake.url, token: 'sbp_wrong0123456789', sources: ['edge_logs', 'auth_logs'], start: new Date(START / 1000).toISOString() }, w.clock.now()));
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'failed'));
    for (const s of Object.values(w.sync.view(view.id).sources)) expect(s).toMatchObject({ state: 'failed', error: 'Unauthorized', errorKind: 'auth', errorStatus: 401 });
    const calls = w.fake.calls.length;
    expect(calls).toBeLessThanOrEqual(2);
    w.clock.us += HOUR;
    await settle(w.sync);
    expect(w.fake.calls.length).toBe(calls);
    await w.sync.update(view.id, { token: TOKEN });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    expect(w.sync.view(view.id).token).toBe('…4567');
    for (const s of Object.values(w.sync.view(view.id).sources)) expect(s).toMatchObject({ error: null, errorKind: null, errorStatus: null });
    expect(storedById(w.store, 'cloudflare.logs.prod').size).toBe(100);
  });

  it("an unknown ref fails with the platform's 403 message", async () => {
    const w = await world('bigquery');
    const other = 'qqqqqqqqqqqqqqqqqqqq';
    const view = await w.sync.create(readConnectionInput({ kind: 'supabase', ref: other, url: w.fake.url, token: TOKEN, sources: ['edge_logs'] }, w.clock.now()));
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'failed'));
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/^Your account does not have the necessary privileges/),
      errorKind: 'auth',
      errorStatus: 403,
    });
  });

  it('an unreachable host: waiting, saying it cannot reach the host, backing off', async () => {
    const w = await world('bigquery');
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const view = await w.sync.create(readConnectionInput({ kind: 'supabase', ref: REF, url: `http://127.0.0.1:${closed}`, token: TOKEN, sources: ['edge_logs'] }, w.clock.now()));
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'waiting'));
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']).toMatchObject({
      state: 'waiting',
      waitReason: 'backoff',
      error: `cannot reach http://127.0.0.1:${closed}: ECONNREFUSED`,
      errorKind: 'remote',
      errorStatus: null,
      waitUntil: w.clock.us + 5 * SEC,
    });
    w.timers.fireNext();
    await settle(w.sync);
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']).toMatchObject({ state: 'waiting', waitUntil: w.clock.us + 10 * SEC });
  });

  it('a query the project refuses (a table it does not have) fails that source only', async () => {
    const w = await world('bigquery');
    fill(w.fake, 50);
    const view = await connect(w, { dialect: 'bigquery', sources: ['edge_logs', 'realtime_logs'] });
    // The fake holds no realtime_logs rows but knows the table; make it refuse one page with the engine's error.
    w.fake.failAt(1, { status: 400, body: { result: [], error: { code: 400, errors: [{ domain: 'global', location: 'q', locationType: 'parameter', message: 'Not found: Table realtime_logs', reason: 'notFound' }], message: 'Not found: Table realtime_logs', status: 'INVALID_ARGUMENT' } } });
    await runUntil(w.sync, w.clock, w.timers, () => {
      const s = w.sync.view(view.id).sources;
      return Object.values(s).some((x) => x.state === 'failed') && Object.values(s).some((x) => x.state === 'following');
    });
    const failed = Object.values(w.sync.view(view.id).sources).find((s) => s.state === 'failed')!;
    expect(failed).toMatchObject({ error: 'Not found: Table realtime_logs', errorKind: 'refused', errorStatus: 400 });
  });
});

describe('the app', () => {
  it('one call budget for every connection: no minute holds more calls than it allows', async () => {
    const w = await world('bigquery', { callsPerMinute: 6 });
    fill(w.fake, 2400);
    w.fake.addUser('u2', 'sbp_second0123456789abcdef', [REF]);
    await connect(w, { dialect: 'bigquery', sources: ['edge_logs', 'postgres_logs'] });
    // The same project at the same URL (a trailing slash aside) is refused as a duplicate.
    await expect(
      w.sync.create(readConnectionInput({ kind: 'supabase', ref: REF, url: `${w.fake.url}/`, token: 'sbp_second0123456789abcdef', dialect: 'bigquery', sources: ['auth_logs'] }, w.clock.now())),
    ).rejects.toMatchObject({ kind: 'conflict', message: expect.stringMatching(/exists already/) });
    await w.sync.create(readConnectionInput({ kind: 'supabase', ref: REF, url: `http://localhost:${new URL(w.fake.url).port}`, token: 'sbp_second0123456789abcdef', dialect: 'bigquery', sources: ['auth_logs'], start: new Date(START / 1000).toISOString() }, w.clock.now()));
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    const times = w.fake.calls.map((c) => c.at);
    for (const t of times) expect(times.filter((u) => u >= t && u < t + MIN).length).toBeLessThanOrEqual(6);
    expect(w.fake.calls.every((c) => c.status === 200)).toBe(true);
    // Waiting for the budget shows in a source's view while it lasts.
    expect(w.sync.list().map((c) => c.callsLastMinute).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(6);
  });

  it('pause stops calls, resume goes on; with following off a caught-up source rests as paused', async () => {
    // A budget of 2 calls a minute: the backfill sleeps between pages, so it can be paused midway.
    const w = await world('bigquery', { callsPerMinute: 2 });
    fill(w.fake, 2400);
    const view = await connect(w, { dialect: 'bigquery', sources: ['edge_logs'], follow: false });
    await runUntil(w.sync, w.clock, w.timers, () => w.fake.calls.length >= 2);
    await w.sync.update(view.id, { paused: true });
    await settle(w.sync);
    expect(allIn(w.sync, 'paused')).toBe(true);
    const calls = w.fake.calls.length;
    w.clock.us += HOUR;
    await settle(w.sync);
    expect(w.fake.calls.length).toBe(calls);
    await w.sync.update(view.id, { paused: false });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'paused') && w.fake.calls.length > calls);
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']).toMatchObject({ state: 'paused', through: floorMinute(w.clock.us) });
    expect(storedById(w.store, 'cloudflare.logs.prod').size).toBe(2400);
  });

  it('the cursor is committed with the records: a new manager over the same folder goes on from there and adds nothing twice', async () => {
    const w = await world('clickhouse');
    fill(w.fake, 2400);
    const view = await connect(w, { dialect: 'clickhouse' });
    await runUntil(w.sync, w.clock, w.timers, () => w.fake.calls.length >= 6);
    await w.sync.stop();
    const mid = w.sync.list()[0]!;
    const callsBefore = w.fake.calls.length;
    const again = SyncManager.open({ store: w.store, clock: w.clock, timers: w.timers });
    // The view read back from the store matches what the first manager committed.
    for (const [source, s] of Object.entries(again.view(view.id).sources)) {
      expect({ records: s.records, through: s.through }).toEqual({ records: mid.sources[source]!.records, through: mid.sources[source]!.through });
    }
    again.start();
    w.sync = again;
    await runUntil(again, w.clock, w.timers, () => allIn(again, 'following'));
    expectSameRecords(w);
    // The second manager started from the cursors, not from the beginning.
    const firstPages = w.fake.calls.slice(callsBefore).filter((c) => c.sql!.includes(`fromUnixTimestamp64Micro(${START})`));
    expect(firstPages.length).toBeLessThan(4);
  });

  it('a new start reads history again from there; what is stored already dedupes', async () => {
    const w = await world('bigquery');
    fill(w.fake, 600);
    const view = await connect(w, { dialect: 'bigquery', sources: ['edge_logs'], start: new Date((NOW - DAY) / 1000).toISOString() });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    const oneDay = storedById(w.store, 'cloudflare.logs.prod').size;
    expect(oneDay).toBe(w.fake.records(REF, 'edge_logs').filter((r) => r.timestamp >= NOW - DAY).length);
    await w.sync.update(view.id, { start: START });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    expect(storedById(w.store, 'cloudflare.logs.prod').size).toBe(600);
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']!.records).toBe(600);
  });

  it('deleting a connection keeps or deletes its records; its cursors go', async () => {
    const w = await world('bigquery');
    fill(w.fake, 300);
    const a = await connect(w, { dialect: 'bigquery', sources: ['edge_logs', 'auth_logs'] });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    expect(await w.sync.remove(a.id, 'delete')).toEqual({ id: a.id, deleted: [{ source: 'cloudflare.logs.prod', records: 300 }, { source: 'gotrue.logs.prod', records: 300 }] });
    expect(w.store.summary().find((s) => s.source === 'cloudflare.logs.prod')!.count).toBe(0);
    expect(w.store.catalog.rows("SELECT key FROM meta WHERE key LIKE 'sync:%'")).toEqual([]);
    expect(w.sync.list()).toEqual([]);
    const b = await connect(w, { dialect: 'bigquery', sources: ['edge_logs'] });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    expect(await w.sync.remove(b.id, 'keep')).toEqual({ id: b.id, deleted: [] });
    expect(w.store.summary().find((s) => s.source === 'cloudflare.logs.prod')!.count).toBe(300);
  });

  it('data=delete refuses (nothing changed) when a source holds records of another project', async () => {
    const w = await world('bigquery');
    fill(w.fake, 50);
    const { importRecords } = await import('../testing/fixtures.ts');
    await importRecords(w.store, 'edge_logs', [{ ...recordOf('edge_logs', 'mine', NOW - HOUR, 1), project: 'otherprojectaaaaaaaa' }]);
    const a = await connect(w, { dialect: 'bigquery', sources: ['edge_logs'] });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    await expect(w.sync.remove(a.id, 'delete')).rejects.toMatchObject({ kind: 'conflict', message: expect.stringContaining('records of other projects') });
    expect(w.sync.list()).toHaveLength(1);
    expect(w.store.summary().find((s) => s.source === 'cloudflare.logs.prod')!.count).toBe(51);
  });
});

describe('pages across midnight', () => {
  it('a busy new day first reached by a few records of a page that crosses midnight is stored as hours, not as a day rewritten at 50,000 records', async () => {
    const w = await world('bigquery');
    // One record every 1.85 s from 23:00 to 01:03: the second page holds 950 rows of the first day and 50 of the next.
    const midnight = Date.UTC(2026, 5, 22) * 1000;
    const records = Array.from({ length: 4000 }, (_, i) => recordOf('edge_logs', `n${String(i).padStart(4, '0')}`, midnight + (i - 1950) * 1_850_000, i));
    w.fake.add(REF, 'edge_logs', records);
    await connect(w, { dialect: 'bigquery', sources: ['edge_logs'] });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    expectSameRecords(w, ['edge_logs']);
    const newDay = w.store.partitions('cloudflare.logs.prod').filter((p) => p.start >= midnight);
    expect(newDay.length).toBeGreaterThan(0);
    for (const p of newDay) expect(p.row.width, `partition at ${new Date(p.start / 1000).toISOString()}`).toBe(HOUR);
  });
});

describe('deleting a source', () => {
  it('sets the connections that sync it to read it again: the next sync brings its records back, and the counts equal the remote', async () => {
    const w = await world('bigquery');
    fill(w.fake, 1500);
    const view = await connect(w, { dialect: 'bigquery', sources: ['edge_logs', 'auth_logs'] });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    const remote = w.fake.records(REF, 'edge_logs').length;
    const mark = w.fake.calls.length;
    expect(await w.sync.deleteSource('cloudflare.logs.prod')).toBe(remote);
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    expectSameRecords(w, ['edge_logs', 'auth_logs']);
    expect(w.store.summary().find((s) => s.source === 'cloudflare.logs.prod')!.count).toBe(remote);
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']).toMatchObject({ records: remote, through: floorMinute(NOW), state: 'following' });
    // Read again from the connection's start; the other source asked for nothing.
    const again = w.fake.calls.slice(mark);
    expect(again[0]!.sql).toContain(`from edge_logs where timestamp >= timestamp_micros(${START})`);
    expect(again.every((c) => c.sql!.includes('from edge_logs'))).toBe(true);
  });
});

describe('restarts', () => {
  /** Stops the sync (saving what the cards show), closes the store, opens both again over the folder; the new sync is not started. */
  async function restart(w: World, meanwhile?: () => void): Promise<void> {
    await w.sync.stop();
    await w.store.close();
    meanwhile?.();
    w.store = await LogStore.open(path.join(w.dir, 'data'));
    w.sync = SyncManager.open({ store: w.store, clock: w.clock, timers: w.timers });
  }

  it('what the cards show is kept (times, counts, cursors); the new run asks only for what came after its cursors', async () => {
    const w = await world('bigquery');
    fill(w.fake, 1200);
    const view = await connect(w, { dialect: 'bigquery', sources: ['edge_logs', 'postgres_logs'] });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    const before = w.sync.list();
    for (const s of Object.values(before[0]!.sources)) expect(s.syncedAt).not.toBeNull();

    await restart(w);
    expect(fs.existsSync(path.join(w.store.dataDir, SYNC_STATE_FILE))).toBe(true);
    // At the same instant every source is caught up: no call, and the cards read as before.
    const calls = w.fake.calls.length;
    w.sync.start();
    await settle(w.sync);
    expect(w.fake.calls.length).toBe(calls);
    expect(w.sync.list()).toEqual(before);

    // Five minutes later, with records after the cursors: one call a source, from its cursor.
    await restart(w);
    w.clock.us += 5 * MIN;
    const cursor = floorMinute(NOW);
    w.fake.add(REF, 'edge_logs', [recordOf('edge_logs', 'after-restart-1', cursor + 30 * SEC, 1), recordOf('edge_logs', 'after-restart-2', cursor + 2 * MIN, 2)]);
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']!.syncedAt).toBe(before[0]!.sources['cloudflare.logs.prod']!.syncedAt);
    w.sync.start();
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    const after = w.fake.calls.slice(calls);
    expect(after).toHaveLength(2);
    for (const c of after) expect(c.sql).toContain(`where timestamp >= timestamp_micros(${cursor})`);
    expect(after.map((c) => c.rows).sort()).toEqual([0, 2]);
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']).toMatchObject({ records: 1202, through: floorMinute(NOW + 5 * MIN), syncedAt: NOW + 5 * MIN });
    expect(storedById(w.store, 'cloudflare.logs.prod').size).toBe(1202);
  });

  it("a 429's pause is kept: the new run shows the wait and asks nothing before it ends", async () => {
    const w = await world('bigquery', { fakeOptions: { retryAfterSeconds: 90 } });
    fill(w.fake, 100);
    w.fake.failNext({ status: 429, body: { message: 'ThrottlerException: Too Many Requests' }, headers: { 'retry-after': '90' } });
    const view = await connect(w, { dialect: 'bigquery', sources: ['edge_logs'] });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'waiting'));
    const waiting = { state: 'waiting', waitReason: 'rate_limited', waitUntil: NOW + 90 * SEC, error: 'ThrottlerException: Too Many Requests', errorKind: 'rate_limited', errorStatus: 429 };
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']).toMatchObject(waiting);
    await restart(w);
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']).toMatchObject(waiting);
    const calls = w.fake.calls.length;
    w.sync.start();
    await settle(w.sync);
    expect(w.fake.calls.length).toBe(calls);
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    expect(w.fake.calls[calls]!.at).toBeGreaterThanOrEqual(NOW + 90 * SEC);
    expect(storedById(w.store, 'cloudflare.logs.prod').size).toBe(100);
  });

  it("a refused token is kept: the new run shows the remote's message and asks nothing until a new token", async () => {
    const w = await world('bigquery');
    fill(w.fake, 100);
    const view = await w.sync.create(readConnectionInput({ kind: 'supabase', ref: REF, url: w.fake.url, token: 'sbp_wrong0123456789', dialect: 'bigquery', sources: ['edge_logs'], start: new Date(START / 1000).toISOString() }, w.clock.now()));
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'failed'));
    await restart(w);
    const failed = { state: 'failed', error: 'Unauthorized', errorKind: 'auth', errorStatus: 401 };
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']).toMatchObject(failed);
    const calls = w.fake.calls.length;
    w.sync.start();
    w.clock.us += HOUR;
    await settle(w.sync);
    expect(w.fake.calls.length).toBe(calls);
    expect(w.sync.view(view.id).sources['cloudflare.logs.prod']).toMatchObject(failed);
    await w.sync.update(view.id, { token: TOKEN });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    expect(storedById(w.store, 'cloudflare.logs.prod').size).toBe(100);
  });

  it('a damaged state file is ignored with one logged line; the sync resumes from the cursors the store holds, and the file is written again', async () => {
    const w = await world('clickhouse');
    fill(w.fake, 1200);
    const view = await connect(w, { dialect: 'clickhouse', sources: ['edge_logs', 'auth_logs'] });
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    const before = w.sync.view(view.id);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const file = path.join(w.dir, 'data', SYNC_STATE_FILE);
    await restart(w, () => fs.writeFileSync(file, '{"version": 1, "connections": {"'));
    expect(warn.mock.calls.filter(([m]) => String(m).includes(SYNC_STATE_FILE))).toEqual([[expect.stringMatching(/could not be read \(not JSON .*\); ignored it/)]]);
    for (const [name, s] of Object.entries(w.sync.view(view.id).sources)) {
      expect({ records: s.records, through: s.through, syncedAt: s.syncedAt }).toEqual({ records: before.sources[name]!.records, through: before.sources[name]!.through, syncedAt: null });
    }
    const calls = w.fake.calls.length;
    w.clock.us += 3 * MIN;
    w.sync.start();
    await runUntil(w.sync, w.clock, w.timers, () => allIn(w.sync, 'following'));
    const after = w.fake.calls.slice(calls);
    expect(after).toHaveLength(2);
    for (const c of after) expect(c.sql).toContain(`timestamp >= fromUnixTimestamp64Micro(${floorMinute(NOW)})`);
    expectSameRecords(w, ['edge_logs', 'auth_logs']);
    await w.sync.stop();
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { connections: Record<string, { sources: Record<string, { syncedAt: number }> }> };
    expect(saved.connections[view.id]!.sources['cloudflare.logs.prod']!.syncedAt).toBe(NOW + 3 * MIN);
  });
});

// Sources are checked against the app's list: every table the issue names maps to one.
it('every ClickHouse source name maps to an app source', () => {
  const names: SourceName[] = ['cloudflare.logs.prod', 'postgres.logs', 'deno-relay-logs', 'gotrue.logs.prod'];
  expect(FOUR.map(([, s]) => sourceInfo(s).name)).toEqual(names);
});
