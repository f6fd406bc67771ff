import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { SOURCE_NAMES } from '../sources.ts';
import { tempDir } from '../testing/fixtures.ts';
import { MICROS } from '../time.ts';
import { ConnectionFile, CONNECTIONS_FILE, InputProblems, readConnectionInput, readConnectionPatch } from './connections.ts';

const NOW = Date.UTC(2026, 5, 22, 12, 0, 30) * 1000;
const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

it('defaults: the platform API host, detect, every source (edge logs only for logflare), a week of history, following on', () => {
  expect(readConnectionInput({ kind: 'supabase', ref: 'abcdefghijklmnopqrst', token: 'sbp_0123456789abcdef' }, NOW)).toEqual({
    kind: 'supabase',
    ref: 'abcdefghijklmnopqrst',
    url: 'https://api.supabase.com',
    token: 'sbp_0123456789abcdef',
    dialect: 'detect',
    sources: [...SOURCE_NAMES],
    start: NOW - 7 * MICROS.day,
    follow: true,
  });
  expect(readConnectionInput({ kind: 'logflare', ref: 'my project', url: 'https://logs.example.com/', token: 'k' }, NOW)).toMatchObject({ url: 'https://logs.example.com', sources: ['cloudflare.logs.prod'] });
  // Aliases, names and supavisor_logs all name sources; repeats count once.
  expect(readConnectionInput({ kind: 'supabase', ref: 'abcdefghijklmnopqrst', token: 't', sources: ['edge_logs', 'cloudflare.logs.prod', 'supavisor_logs'] }, NOW).sources).toEqual(['cloudflare.logs.prod', 'pgbouncer.logs.prod']);
});

it('every problem is named at once, one per parameter', () => {
  try {
    readConnectionInput({ kind: 'supabase', ref: 'x', token: '', start: 'nope' }, NOW);
    throw new Error('accepted');
  } catch (err) {
    expect(err).toBeInstanceOf(InputProblems);
    expect((err as InputProblems).details.map((d) => d.location)).toEqual(['ref', 'token', 'start']);
  }
  expect(() => readConnectionPatch({}, 'supabase', NOW)).toThrow(/must change something/);
  expect(readConnectionPatch({ paused: true, sources: ['auth_logs'] }, 'supabase', NOW)).toEqual({ paused: true, sources: ['gotrue.logs.prod'] });
});

it('a damaged connections file is moved aside (it holds tokens), with a warning, and the app starts with none', () => {
  const dir = tempDir('le-connfile-');
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, CONNECTIONS_FILE), '{"version": 1, "connections": [{"id": 5}]}');
  fs.writeFileSync(path.join(dir, `${CONNECTIONS_FILE}.tmp`), 'half a write');
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  const file = ConnectionFile.open(dir);
  expect(file.list).toEqual([]);
  expect(warn.mock.calls[0]![0]).toMatch(/moved it to .*connections\.json\.corrupt-/);
  const names = fs.readdirSync(dir);
  expect(names.some((n) => n.startsWith(`${CONNECTIONS_FILE}.corrupt-`))).toBe(true);
  expect(names).not.toContain(`${CONNECTIONS_FILE}.tmp`);
});
