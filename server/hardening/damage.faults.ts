/**
 * Slow: every kind of file the store writes, flipped, cut, zeroed, swapped or deleted behind the
 * app's back, on the demo data set (every source) in the real CLI server, restarted each time.
 * Derived files (columns files, paths.log) must give every answer exactly as before; committed
 * ones (partition databases, record files, urls.log, the catalog) either the answer from before
 * or a refusal naming the file, never another 200; and no damage makes the app delete a file.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../testing/fixtures.ts';
import { ROOT, startCli } from './helpers.ts';

const NOW_ISO = '2026-11-22T10:30:45Z';
const KEY = 'damage-key-0123456789abcdef';
const root = tempDir('le-damage-faults-');
const pristine = path.join(root, 'pristine');
let before: Answers;
let project = '';

type Answers = Record<string, { status: number; body: string }>;

const week = `start=2026-11-15T10:30:45Z&end=${NOW_ISO}`;
const hour = `start=2026-11-22T09:30:45Z&end=${NOW_ISO}`;

/** The requests compared, over every source the demo set holds. */
function requests(): string[] {
  const out = [
    `/api/endpoints/usage.api-counts?project=${project}&interval=daily`,
    `/api/endpoints/usage.api-counts?project=${project}&interval=minutely`,
    `/api/endpoints/logs.all?project=${project}&project_tier=ENTERPRISE`,
    `/api/endpoints/functions.invocation-stats?project=${project}&interval=7day`,
    `/api/endpoints/functions.invocation-stats?project=${project}&interval=1hr`,
    `/api/endpoints/functions.invocation-stats?project=${project}&interval=5min`,
  ];
  for (const source of ['edge_logs', 'function_edge_logs', 'function_logs', 'auth_logs', 'postgres_logs', 'storage_logs', 'realtime_logs', 'postgrest_logs', 'pgbouncer_logs']) {
    out.push(`/api/logs/count?source=${source}&${week}`);
    out.push(`/api/logs/histogram?source=${source}&${week}`);
    out.push(`/api/logs?source=${source}&limit=200&${hour}`);
    out.push(`/api/logs/count?source=${source}&q=error&${week}`);
  }
  out.push(`/api/logs/facets?source=edge_logs&fields=status,method,path&${week}`);
  out.push(`/api/logs/facets?source=auth_logs&fields=status,path,level&${week}`);
  out.push(`/api/logs/facets?source=storage_logs&fields=status,method,path&${week}`);
  out.push(`/api/logs/count?source=edge_logs&path=/rest&${week}`);
  out.push(`/api/logs?source=edge_logs&status=5xx&limit=100&${week}`);
  return out;
}

async function answersOf(dir: string): Promise<{ answers: Answers; output: string }> {
  const cli = startCli(['--data-dir', dir, '--port', '0', '--now', NOW_ISO], { LOG_EXPLORER_API_KEY: KEY });
  try {
    const url = await cli.listening;
    const answers: Answers = {};
    for (const r of requests()) {
      // A search answers with what it has scanned so far after a short wait and goes on in the
      // background: asked again until complete, so a slow machine only waits longer.
      for (let attempt = 0; ; attempt++) {
        const res = await fetch(url + r, { headers: { 'X-API-KEY': KEY } });
        answers[r] = { status: res.status, body: await res.text() };
        const partialSearch = r.startsWith('/api/logs/count?') && r.includes('&q=') && answers[r].body.includes('"complete":false');
        if (!partialSearch || attempt >= 600) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    return { answers, output: cli.output() };
  } finally {
    cli.child.kill('SIGTERM');
    await cli.exited;
  }
}

function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else out.push(path.relative(dir, path.join(d, e.name)));
    }
  };
  walk(dir);
  return out.filter((f) => f !== 'LOCK').sort();
}

/** A copy of the pristine store to damage. */
function copy(name: string): string {
  const dir = path.join(root, name);
  fs.cpSync(pristine, dir, { recursive: true });
  return dir;
}

const filesOf = (dir: string, ext: string) => listing(dir).filter((f) => f.endsWith(ext));

beforeAll(async () => {
  const data = path.join(root, 'demo');
  execFileSync(process.execPath, ['--import', 'tsx', 'server/demo/cli.ts', '--out', data, '--now', NOW_ISO, '--records', '20000'], { cwd: ROOT, stdio: 'pipe' });
  const imports = fs.readdirSync(data).filter((f) => f.endsWith('.ndjson')).flatMap((f) => ['--import', path.join(data, f)]);
  const cli = startCli(['--data-dir', pristine, '--port', '0', '--now', NOW_ISO, ...imports], { LOG_EXPLORER_API_KEY: KEY });
  const url = await cli.listening;
  const sources = (await (await fetch(`${url}/api/sources`, { headers: { 'X-API-KEY': KEY } })).json()) as { result: Array<{ source: string; projects: Array<{ ref: string }> }> };
  project = sources.result.find((s) => s.source === 'deno-relay-logs')!.projects[0]!.ref;
  // Let the background builder write every columns file, then stop (saving).
  await new Promise((r) => setTimeout(r, 3000));
  cli.child.kill('SIGTERM');
  await cli.exited;
  before = (await answersOf(pristine)).answers;
  for (const [r, a] of Object.entries(before)) expect(a.status, r).toBe(200);
}, 600_000);

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** What each damage does to one file's bytes. */
const DAMAGES: Record<string, (file: string, other: string) => void> = {
  flip: (f) => {
    const b = fs.readFileSync(f);
    for (let i = Math.floor(b.length / 3); i < Math.floor(b.length / 3) + 256 && i < b.length; i++) b[i] = b[i]! ^ 0xa5;
    fs.writeFileSync(f, b);
  },
  truncate: (f) => fs.truncateSync(f, Math.floor(fs.statSync(f).size / 2)),
  'zero tail': (f) => {
    const b = fs.readFileSync(f);
    b.fill(0, b.length - Math.min(4096, Math.floor(b.length / 4)));
    fs.writeFileSync(f, b);
  },
  swap: (f, other) => fs.copyFileSync(other, f),
  delete: (f) => fs.rmSync(f),
};

describe('derived files: rebuilt, every answer as before', () => {
  for (const [damage, apply] of Object.entries(DAMAGES)) {
    it(`every columns file: ${damage}`, async () => {
      const dir = copy(`cols-${damage.replace(' ', '-')}`);
      const cols = filesOf(dir, '.cols');
      expect(cols.length).toBeGreaterThan(5);
      cols.forEach((f, i) => apply(path.join(dir, f), path.join(dir, cols[(i + 1) % cols.length]!)));
      const { answers } = await answersOf(dir);
      expect(answers).toEqual(before);
    }, 300_000);
  }
  for (const damage of ['flip', 'truncate', 'zero tail', 'delete']) {
    it(`paths.log: ${damage}`, async () => {
      const dir = copy(`paths-${damage.replace(' ', '-')}`);
      DAMAGES[damage]!(path.join(dir, 'paths.log'), '');
      const { answers } = await answersOf(dir);
      expect(answers).toEqual(before);
    }, 300_000);
  }
});

describe('committed files: the answer from before or a refusal naming the file, and nothing deleted', () => {
  const kinds: Array<[string, (dir: string) => string[]]> = [
    // The newest edge partitions: logs.all and the API counts load their databases and read their records.
    ['a partition database', (dir) => filesOf(dir, '.sqlite').filter((f) => f.includes('edge_logs')).slice(-3)],
    ['a record file', (dir) => filesOf(dir, '.records').filter((f) => f.includes('edge_logs')).slice(-3)],
    ['urls.log', () => ['urls.log']],
  ];
  for (const [kind, pick] of kinds) {
    for (const [damage, apply] of Object.entries(DAMAGES)) {
      if (damage === 'swap' && kind === 'urls.log') continue;
      it(`${kind}: ${damage}`, async () => {
        const dir = copy(`${kind.replace(/\W+/g, '-')}-${damage.replace(' ', '-')}`);
        const targets = pick(dir);
        const all = kind === 'urls.log' ? targets : filesOf(dir, path.extname(targets[0]!));
        const other = (f: string) => all.find((o) => o !== f && path.dirname(o) === path.dirname(f)) ?? all.find((o) => o !== f) ?? f;
        targets.forEach((f) => apply(path.join(dir, f), path.join(dir, other(f))));
        const files = listing(dir);
        const { answers, output } = await answersOf(dir);
        let refused = 0;
        for (const [r, a] of Object.entries(answers)) {
          if (a.status === 200) expect(a.body, r).toBe(before[r]!.body);
          else {
            refused++;
            expect(a.status, `${r}: ${a.body}`).toBe(503);
            expect(a.body, r).toMatch(/the store file [^ ]+ is damaged/);
          }
        }
        // Answers the explorer gives from intact columns files need no database, so a refusal is not required;
        // a file missing or cut short is named at start-up, and the endpoints that load it refuse.
        if (damage === 'truncate' || damage === 'delete') {
          for (const f of targets) expect(output).toContain(`damaged store file: ${f.split(path.sep).join('/')}`);
          expect(refused, output).toBeGreaterThan(0);
        }
        // Nothing deleted (the columns files the server rebuilt may be new).
        expect(listing(dir).filter((f) => !f.endsWith('.cols'))).toEqual(expect.arrayContaining(files.filter((f) => !f.endsWith('.cols'))));
      }, 300_000);
    }
  }

  it('the catalog deleted: the server refuses to start, naming what is there, and every file stays', async () => {
    const dir = copy('catalog-deleted');
    fs.rmSync(path.join(dir, 'catalog.sqlite'));
    const files = listing(dir);
    const cli = startCli(['--data-dir', dir, '--port', '0', '--now', NOW_ISO], { LOG_EXPLORER_API_KEY: KEY });
    const { code } = await cli.exited;
    expect(code).toBe(2);
    expect(cli.output()).toMatch(/cannot start: the data folder .* holds \d+ partition files .* but no catalog\.sqlite/);
    expect(listing(dir)).toEqual(files);
  }, 120_000);
});
