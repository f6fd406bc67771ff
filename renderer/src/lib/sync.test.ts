import { describe, expect, it } from 'vitest';
import type { ConnectionView, SourceListing, SourceSyncView } from '../../../contract/api-types.ts';
import { backfillProgress, formatAge, formatCountdown, formatDuration, freshnessOf, parseProjectRef, problemWords, remoteLabel, syncingConnections } from './sync.ts';
import { MICROS } from '../../../contract/instants.ts';

const REF = 'abcdefghijklmnopqrst';
const T0 = Date.UTC(2026, 5, 22, 12, 0, 0) * 1000;

function source(p: Partial<SourceSyncView> = {}): SourceSyncView {
  return {
    records: 0,
    rejected: 0,
    through: null,
    throughIso: null,
    state: 'backfilling',
    error: null,
    errorKind: null,
    errorStatus: null,
    waitUntil: null,
    waitUntilIso: null,
    waitReason: null,
    syncedAt: null,
    syncedAtIso: null,
    warnings: [],
    ...p,
  };
}

function connection(ref: string, sources: Record<string, SourceSyncView>, p: Partial<ConnectionView> = {}): ConnectionView {
  return {
    id: `id-${ref}`,
    kind: 'supabase',
    ref,
    url: 'https://api.supabase.com',
    token: '…abcd',
    dialect: 'detect',
    detectedDialect: null,
    follow: true,
    paused: false,
    start: T0 - 7 * MICROS.day,
    startIso: '',
    sources,
    callsLastMinute: 0,
    asOf: T0,
    asOfIso: '',
    tokenProtection: 'owner-only file',
    ...p,
  };
}

describe('words for time', () => {
  it('ages: whole seconds under a minute, then minutes, hours, days', () => {
    expect(formatAge(0)).toBe('0 s');
    expect(formatAge(40.9 * MICROS.second)).toBe('40 s');
    expect(formatAge(59 * MICROS.second)).toBe('59 s');
    expect(formatAge(60 * MICROS.second)).toBe('1 min');
    expect(formatAge(MICROS.hour - 1)).toBe('59 min');
    expect(formatAge(3 * MICROS.hour - 1)).toBe('2 h');
    expect(formatAge(3 * MICROS.hour)).toBe('3 h');
    expect(formatAge(47 * MICROS.hour)).toBe('47 h');
    expect(formatAge(50 * MICROS.hour)).toBe('2 days');
    // A clock a little behind never makes an age negative.
    expect(formatAge(-5 * MICROS.second)).toBe('0 s');
  });
  it('countdowns round up, so a wait never reads 0 s before it ends', () => {
    expect(formatCountdown(41.2 * MICROS.second)).toBe('42 s');
    expect(formatCountdown(1)).toBe('1 s');
    expect(formatCountdown(0)).toBe('0 s');
    expect(formatCountdown(65 * MICROS.second)).toBe('1 min 05 s');
    expect(formatCountdown(300 * MICROS.second)).toBe('5 min 00 s');
  });
  it('durations', () => {
    expect(formatDuration(45 * MICROS.second)).toBe('45 s');
    expect(formatDuration(12 * MICROS.minute)).toBe('12 min');
    expect(formatDuration(5.5 * MICROS.hour)).toBe('5.5 h');
    expect(formatDuration(7 * MICROS.day)).toBe('7 days');
    expect(formatDuration(3.25 * MICROS.day)).toBe('3.3 days');
  });
});

describe('backfill progress', () => {
  it('is the time covered since the start, of the time from the start to now', () => {
    expect(backfillProgress(T0 - 4 * MICROS.day, T0 - 3 * MICROS.day, T0)).toEqual({ ratio: 0.25, covered: MICROS.day, total: 4 * MICROS.day });
    expect(backfillProgress(T0 - 4 * MICROS.day, null, T0)).toEqual({ ratio: 0, covered: 0, total: 4 * MICROS.day });
    // A cursor past now (the clock read a little earlier) is whole, never more.
    expect(backfillProgress(T0 - 4 * MICROS.day, T0 + MICROS.second, T0).ratio).toBe(1);
  });
});

describe('project refs', () => {
  it('reads the ref itself, a project URL or a dashboard address', () => {
    expect(parseProjectRef(` ${REF} `)).toBe(REF);
    expect(parseProjectRef(`https://${REF}.supabase.co`)).toBe(REF);
    expect(parseProjectRef(`${REF}.supabase.co/rest/v1/`)).toBe(REF);
    expect(parseProjectRef(`https://supabase.com/dashboard/project/${REF}/logs/explorer`)).toBe(REF);
    expect(parseProjectRef('abc')).toBeNull();
    expect(parseProjectRef('ABCDEFGHIJKLMNOPQRST')).toBeNull();
    expect(parseProjectRef('https://example.com/')).toBeNull();
  });
});

describe('problems in plain words', () => {
  const sb = { kind: 'supabase' as const, ref: REF };
  it('a refused token asks for a new one', () => {
    const w = problemWords('auth', 401, sb);
    expect(w.title).toBe('The token was refused');
    expect(w.advice).toMatch(/Create a new personal access token .* and paste it here/);
    expect(w).toMatchObject({ action: 'token', retries: false });
    expect(problemWords('auth', 401, { kind: 'logflare', ref: 'p' }).advice).toMatch(/new access token on that server/);
  });
  it('a 403 names the project and asks to check the ref or use a member’s token', () => {
    const w = problemWords('auth', 403, sb);
    expect(w.title).toBe(`The token cannot read project ${REF}`);
    expect(w.advice).toMatch(/Check the project ref/);
  });
  it('waits say the sync goes on by itself', () => {
    expect(problemWords('rate_limited', 429, sb)).toMatchObject({ title: 'Rate limited by the remote', retries: true });
    expect(problemWords('remote', null, sb)).toMatchObject({ title: 'Cannot reach the remote', retries: true });
    expect(problemWords('remote', 502, sb)).toMatchObject({ title: 'Supabase is having trouble (502)', retries: true });
    expect(problemWords('store', null, sb).advice).toMatch(/free some space/);
  });
  it('a refused query points at the dialect and the sources', () => {
    expect(problemWords('refused', 400, sb).advice).toMatch(/dialect/);
    expect(problemWords('refused', 404, sb).title).toBe('Nothing answers at this address');
    expect(problemWords('token', null, sb).action).toBe('token');
  });
});

describe('freshness', () => {
  const listing: SourceListing[] = [
    { source: 'cloudflare.logs.prod', alias: 'edge_logs', count: 5, minTimestamp: T0 - MICROS.day, maxTimestamp: T0 - MICROS.hour, minIso: null, maxIso: null, projects: [], functionIds: [] },
  ];
  it('a synced source: the connection of that project whose last commit is newest', () => {
    const older = connection(REF, { 'cloudflare.logs.prod': source({ syncedAt: T0 - 60 * MICROS.second }) }, { id: 'a' });
    const newer = connection(REF, { 'cloudflare.logs.prod': source({ syncedAt: T0 - 40 * MICROS.second }) }, { id: 'b' });
    const other = connection('qqqqqqqqqqqqqqqqqqqq', { 'cloudflare.logs.prod': source({ syncedAt: T0 }) }, { id: 'c' });
    const f = freshnessOf([older, newer, other], listing, 'cloudflare.logs.prod', REF);
    expect(f?.kind === 'synced' && f.connection.id).toBe('b');
    // All projects: any connection syncing the source.
    const all = freshnessOf([older, newer, other], listing, 'cloudflare.logs.prod', null);
    expect(all?.kind === 'synced' && all.connection.id).toBe('c');
  });
  it('an imported source: its newest record; a source with nothing: null', () => {
    const other = connection('qqqqqqqqqqqqqqqqqqqq', { 'cloudflare.logs.prod': source({ syncedAt: T0 }) });
    expect(freshnessOf([other], listing, 'cloudflare.logs.prod', REF)).toEqual({ kind: 'imported', newest: T0 - MICROS.hour });
    expect(freshnessOf([], listing, 'edge_logs', null)).toEqual({ kind: 'imported', newest: T0 - MICROS.hour });
    expect(freshnessOf([], listing, 'postgres.logs', null)).toBeNull();
  });
  it('the connections behind a source’s records of a project, and their remote in short', () => {
    const c = connection(REF, { 'cloudflare.logs.prod': source() });
    expect(syncingConnections([c], 'cloudflare.logs.prod', REF)).toEqual([c]);
    expect(syncingConnections([c], 'postgres.logs', REF)).toEqual([]);
    expect(remoteLabel(c)).toBe('Supabase');
    expect(remoteLabel({ kind: 'supabase', url: 'http://127.0.0.1:5555' })).toBe('Supabase API at 127.0.0.1:5555');
    expect(remoteLabel({ kind: 'logflare', url: 'https://logs.example.com' })).toBe('Logflare at logs.example.com');
  });
});
