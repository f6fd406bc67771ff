/**
 * `kill -9` during a sync, twice, then a restart that finishes it: the store ends with exactly
 * the remote's records, none twice, and every source's count (committed with its cursor) agrees.
 * And a stop and start: the cards show what they showed, and the sync goes on from its cursors
 * without asking again for what it has. The server is the real CLI (`server/main.ts`) as a child
 * process; the remote is the fake Management API in this process, answering slowly in the first
 * test so the kills land between a page's answer and its commit.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { ConnectionView } from '../../contract/api-types.ts';
import { startCli, sleep, storeProblems, type Cli } from '../hardening/helpers.ts';
import { LogStore } from '../store/log-store.ts';
import { FakeManagementApi } from '../testing/fake-management-api.ts';
import { tempDir } from '../testing/fixtures.ts';
import { formatIsoMicros, MICROS } from '../time.ts';
import { floorMinute } from './pages.ts';
import { FOUR, recordOf, recordsOf, REF, remoteById, storedById, TOKEN } from './testing.ts';
import { RECORD_DERIVED } from '../store/store-files.ts';

const NOW = Date.UTC(2026, 5, 22, 12, 0, 30) * 1000;
const START = NOW - 3 * MICROS.day;
const KEY = 'crash-test-key-0123456789';
const dir = tempDir('le-sync-crash-');
const dataDir = path.join(dir, 'data');
const fake = new FakeManagementApi({ delayMs: 120 });
const quick = new FakeManagementApi();
const children: Cli[] = [];

afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await fake.close();
  await quick.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function serve(folder = dataDir, now = NOW): Cli {
  const cli = startCli(['--data-dir', folder, '--port', '0', '--api-key', KEY, '--now', formatIsoMicros(now)]);
  children.push(cli);
  return cli;
}

async function api<T>(url: string, p: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${url}${p}`, { ...init, headers: { 'x-api-key': KEY, 'content-type': 'application/json' } });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return ((await res.json()) as { result: T }).result;
}

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

it('kill -9 during a sync, twice; the restart resumes: the same final set, no duplicates, counts that agree', { timeout: 180_000 }, async () => {
  fake.addUser('u1', TOKEN, [REF]).addProject(REF, 'clickhouse');
  FOUR.forEach(([table], i) => fake.add(REF, table, recordsOf(table, START, floorMinute(NOW), 2400, 11 + i)));
  await fake.listen();

  // First run: the connection is created, and the server killed once a few pages are answered.
  const first = serve();
  const url1 = await first.listening;
  await api(url1, '/api/connections', {
    method: 'POST',
    body: JSON.stringify({ kind: 'supabase', ref: REF, url: fake.url, token: TOKEN, sources: FOUR.map(([t]) => t), start: formatIsoMicros(START) }),
  });
  await waitFor('5 calls', () => fake.calls.length >= 5);
  first.child.kill('SIGKILL');
  expect((await first.exited).signal).toBe('SIGKILL');

  // Second run: it picks the connection up from the data folder; killed again a few pages on.
  const second = serve();
  await second.listening;
  const before = fake.calls.length;
  await waitFor('5 more calls', () => fake.calls.length >= before + 5);
  second.child.kill('SIGKILL');
  expect((await second.exited).signal).toBe('SIGKILL');

  // Third run: left to finish, then stopped the ordinary way.
  const third = serve();
  const url3 = await third.listening;
  let view: ConnectionView | undefined;
  await waitFor('every source following', async () => {
    view = (await api<ConnectionView[]>(url3, '/api/connections'))[0];
    return Object.values(view!.sources).every((s) => s.state === 'following');
  });
  third.child.kill('SIGTERM');
  expect((await third.exited).code).toBe(0);

  // Nothing secret reached the output of any run.
  for (const c of children) expect(c.output()).not.toContain(TOKEN);

  const store = await LogStore.open(dataDir);
  try {
    // Block indexes (`.grams`) are derived files storeProblems does not know yet (another change is adding them).
    const problems = storeProblems(store)
      .map((p) => (p.startsWith('files no committed partition names: ') ? p.split(': ')[0] + ': ' + p.slice(p.indexOf(': ') + 2).split(', ').filter((f) => !RECORD_DERIVED.some((ext) => f.endsWith(ext))).join(', ') : p))
      .filter((p) => !p.endsWith(': '));
    expect(problems).toEqual([]);
    for (const [table, source] of FOUR) {
      const stored = storedById(store, source); // throws on an id stored twice
      const remote = remoteById(fake.records(REF, table), source);
      expect([...stored.keys()].sort(), table).toEqual([...remote.keys()].sort());
      for (const [id, rec] of remote) expect(stored.get(id)!.record, `${table} ${id}`).toEqual(rec);
      // The count is committed with the cursor: it agrees with what the store holds, across the kills.
      expect(view!.sources[source]!.records, table).toBe(remote.size);
    }
  } finally {
    await store.close();
  }
  // The kills landed mid-sync: pages were asked for again after a restart.
  expect(fake.calls.filter((c) => c.status === 200).length).toBeGreaterThan(16);
});

it('a stop and a start: the cards show the same sync times, counts and cursors, and the sync goes on from its cursors', { timeout: 120_000 }, async () => {
  const folder = path.join(dir, 'restart');
  const sources = FOUR.slice(0, 2);
  quick.addUser('u1', TOKEN, [REF]).addProject(REF, 'bigquery');
  sources.forEach(([table], i) => quick.add(REF, table, recordsOf(table, START, floorMinute(NOW), 1500, 21 + i)));
  await quick.listen();
  const cards = async (url: string) => (await api<ConnectionView[]>(url, '/api/connections'))[0]!;
  const stop = async (cli: Cli) => {
    cli.child.kill('SIGTERM');
    expect((await cli.exited).code).toBe(0);
  };

  const first = serve(folder);
  const url1 = await first.listening;
  await api(url1, '/api/connections', {
    method: 'POST',
    body: JSON.stringify({ kind: 'supabase', ref: REF, url: quick.url, token: TOKEN, dialect: 'bigquery', sources: sources.map(([t]) => t), start: formatIsoMicros(START) }),
  });
  let before: ConnectionView | undefined;
  await waitFor('every source following', async () => Object.values((before = await cards(url1)).sources).every((s) => s.state === 'following'));
  await stop(first);
  const calls = quick.calls.length;

  // The same instant (--now): every source is caught up, so no call, and the cards read as before.
  const second = serve(folder);
  const url2 = await second.listening;
  await waitFor('every source following', async () => Object.values((await cards(url2)).sources).every((s) => s.state === 'following'));
  await sleep(500);
  const after = await cards(url2);
  expect(after.sources).toEqual(before!.sources);
  for (const s of Object.values(after.sources)) expect(s.syncedAtIso).toBe(formatIsoMicros(NOW));
  expect(quick.calls.length).toBe(calls);
  await stop(second);

  // Five minutes later, with two records after the edge cursor: one call a source, from its cursor.
  const cursor = floorMinute(NOW);
  quick.add(REF, 'edge_logs', [recordOf('edge_logs', 'after-restart-1', cursor + 10 * MICROS.second, 1), recordOf('edge_logs', 'after-restart-2', cursor + 3 * MICROS.minute, 2)]);
  const third = serve(folder, NOW + 5 * MICROS.minute);
  const url3 = await third.listening;
  let last: ConnectionView | undefined;
  await waitFor('every source through the new now', async () => Object.values((last = await cards(url3)).sources).every((s) => s.through === floorMinute(NOW + 5 * MICROS.minute)));
  const asked = quick.calls.slice(calls);
  expect(asked).toHaveLength(2);
  for (const c of asked) expect(c.sql).toContain(`where timestamp >= timestamp_micros(${cursor})`);
  expect(asked.map((c) => c.rows).sort()).toEqual([0, 2]);
  expect(last!.sources['cloudflare.logs.prod']!.records).toBe(1502);
  await stop(third);
});
