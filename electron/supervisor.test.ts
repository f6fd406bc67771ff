/**
 * The supervisor against a REAL server process: electron/server-process.ts forked with tsx,
 * the real server, a temp data folder. The utilityProcess adapter in main.ts speaks the same
 * messages, so what is proven here is what the desktop app runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { edgeRecord, tempDir } from '../server/testing/fixtures.ts';
import { appApi } from './app-api.ts';
import type { ToServer } from './protocol.ts';
import { forkNodeServer, ServerStartError, ServerSupervisor, type ServerCrash, type ServerProcess } from './supervisor.ts';

const ENTRY = path.join(import.meta.dirname, 'server-process.ts');
const spawnTs = () => forkNodeServer(ENTRY, { execArgv: ['--import', 'tsx'] });

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function supervisor(dataDir: string, extra: Partial<ConstructorParameters<typeof ServerSupervisor>[0]> = {}) {
  const s = new ServerSupervisor({ spawn: spawnTs(), config: { dataDir, demo: false }, ...extra });
  cleanups.push(() => s.shutdown());
  return s;
}

function dataDir(): string {
  const dir = tempDir('le-electron-');
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function clockStatus(url: string, key?: string): Promise<number> {
  const res = await fetch(`${url}/api/clock`, { headers: key ? { 'X-API-KEY': key } : {} });
  await res.arrayBuffer();
  return res.status;
}

function nextCrash(s: ServerSupervisor): Promise<ServerCrash> {
  return new Promise((resolve) => {
    const off = s.onCrash((c) => {
      off();
      resolve(c);
    });
  });
}

describe('ServerSupervisor with the real server process', () => {
  it('starts the server on a free loopback port with a fresh key, answering /api/clock only with that key', async () => {
    const s = supervisor(dataDir());
    const ready = await s.start();
    expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.origin).toBe(ready.url);
    expect(ready.port).toBe(Number(new URL(ready.url).port));
    expect(ready.apiKey).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(s.state).toBe('ready');
    expect(await clockStatus(ready.url, ready.apiKey)).toBe(200);
    expect(await clockStatus(ready.url, 'wrong-key')).toBe(401);
    expect(await clockStatus(ready.url)).toBe(401);
    expect(s.lastLines().some((l) => l.startsWith(`listening on ${ready.url}`))).toBe(true);
    // The key never appears in the log.
    expect(s.lastLines().join('\n')).not.toContain(ready.apiKey);
  });

  it('imports files by path in the server process and reports each file', async () => {
    const dir = dataDir();
    const s = supervisor(dir);
    const ready = await s.start();
    const now = Date.now() * 1000;
    const file = path.join(dir, 'edge_logs.ndjson');
    fs.writeFileSync(file, [edgeRecord(now - 60_000_000), edgeRecord(now - 30_000_000), edgeRecord(now - 1_000_000)].map((r) => JSON.stringify(r)).join('\n') + '\n{not json\n');
    const progress: number[] = [];
    s.onImportProgress((p) => progress.push(p.bytes));

    const results = await s.importFiles([file, path.join(dir, 'missing.ndjson')]);

    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ file, ok: true, report: { source: 'cloudflare.logs.prod', imported: 3, duplicates: 0, rejected: 1 } });
    expect(results[1]).toMatchObject({ ok: false });
    expect(results[1]!.ok === false && results[1]!.reason).toMatch(/cannot read .*missing\.ndjson/);
    expect(progress.length).toBeGreaterThan(0);
    const sources = await appApi(ready).sources();
    expect(sources.find((x) => x.source === 'cloudflare.logs.prod')?.count).toBe(3);
  });

  it('imports with the source and project given, as an upload does; an unknown source fails that file only', async () => {
    const dir = dataDir();
    const s = supervisor(dir);
    const ready = await s.start();
    const REF = 'supvprojaaaaaaaaaaaa';
    const now = Date.now() * 1000;
    // Neither the name nor the records tell the source, and the records name no project.
    const file = path.join(dir, 'export.ndjson');
    fs.writeFileSync(file, [1, 2].map((i) => JSON.stringify({ timestamp: now - i * 1_000_000, event_message: `new connection ${i}`, metadata: { host: 'db-default' } })).join('\n'));

    const [recognized] = await s.importFiles([file]);
    expect(recognized!.ok === false && recognized!.reason).toMatch(/cannot tell the source/);

    const [unknown] = await s.importFiles([file], { source: 'nginx_logs', project: REF });
    expect(unknown!.ok === false && unknown!.reason).toMatch(/unknown source "nginx_logs"/);

    const [chosen] = await s.importFiles([file], { source: 'auth_logs', project: REF });
    expect(chosen).toMatchObject({ file, ok: true, report: { source: 'gotrue.logs.prod', imported: 2, rejected: 0 } });
    const sources = await appApi(ready).sources();
    expect(sources.find((x) => x.source === 'gotrue.logs.prod')).toMatchObject({ count: 2, projects: [{ ref: REF, count: 2 }] });
  });

  it('reports a SIGKILLed server as a crash with its last log lines, and restart brings a new server back', async () => {
    const dir = dataDir();
    const s = supervisor(dir);
    const first = await s.start();
    const crashed = nextCrash(s);

    process.kill(first.pid!, 'SIGKILL');
    const crash = await crashed;

    expect(crash.signal).toBe('SIGKILL');
    expect(crash.code).toBeNull();
    expect(crash.message).toContain('killed by SIGKILL');
    expect(crash.lastLines).toContain(`server process ${first.pid}: opening the store in ${dir}`);
    expect(crash.lastLines.some((l) => l.startsWith(`listening on ${first.url}`))).toBe(true);
    expect(s.state).toBe('crashed');
    expect(s.current).toBeUndefined();
    await expect(s.importFiles(['/nowhere'])).rejects.toThrow(/crashed/);

    const second = await s.restart();
    expect(s.state).toBe('ready');
    expect(second.pid).not.toBe(first.pid);
    expect(second.apiKey).not.toBe(first.apiKey);
    expect(await clockStatus(second.url, second.apiKey)).toBe(200);
    expect(await clockStatus(second.url, first.apiKey)).toBe(401);
  });

  it('fails an import in flight when the server dies under it', async () => {
    const dir = dataDir();
    const s = supervisor(dir);
    const ready = await s.start();
    const file = path.join(dir, 'edge_logs.ndjson');
    const now = Date.now() * 1000;
    const lines: string[] = [];
    for (let i = 0; i < 20_000; i++) lines.push(JSON.stringify(edgeRecord(now - i * 1_000_000)));
    fs.writeFileSync(file, lines.join('\n'));
    const running = s.importFiles([file]);
    // Kill it once the import is under way.
    await new Promise<void>((resolve) => s.onImportProgress(() => resolve()));
    process.kill(ready.pid!, 'SIGKILL');
    await expect(running).rejects.toThrow(/stopped \(killed by SIGKILL\) during the import/);
  });

  it('shuts down on request: the server saves and exits 0, and the data is there on the next start', async () => {
    const dir = dataDir();
    const s = supervisor(dir);
    await s.start();
    const file = path.join(dir, 'edge_logs.ndjson');
    fs.writeFileSync(file, JSON.stringify(edgeRecord(Date.now() * 1000)) + '\n');
    await s.importFiles([file]);
    let crashed = false;
    s.onCrash(() => (crashed = true));

    await s.shutdown();

    expect(s.state).toBe('stopped');
    expect(crashed).toBe(false);
    expect(s.lastLines()).toContain('shutdown requested: saving and shutting down');
    expect(fs.existsSync(path.join(dir, 'catalog.sqlite'))).toBe(true);

    const again = supervisor(dir);
    const ready = await again.start();
    const sources = await appApi(ready).sources();
    expect(sources.find((x) => x.source === 'cloudflare.logs.prod')?.count).toBe(1);
  });

  it('rejects start with the reason and the log when the server cannot open its data folder', async () => {
    const dir = dataDir();
    const notADir = path.join(dir, 'file');
    fs.writeFileSync(notADir, 'x');
    const s = supervisor(notADir);

    const err = await s.start().then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(err).toBeInstanceOf(ServerStartError);
    expect((err as ServerStartError).message).toMatch(/^cannot start the server: .*(EEXIST|ENOTDIR)/);
    expect((err as ServerStartError).lastLines[0]).toMatch(new RegExp(`^server process \\d+: opening the store in ${notADir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    expect(s.state).toBe('crashed');
  });
});

/** A scripted stand-in for the process, to pin down the protocol edges without timing games. */
class FakeProcess implements ServerProcess {
  readonly pid = 4242;
  sent: ToServer[] = [];
  killed = false;
  private message?: (m: unknown) => void;
  private exit?: (code: number | null, signal: string | null) => void;
  private output?: (line: string, stream: 'stdout' | 'stderr') => void;
  postMessage(m: ToServer) {
    this.sent.push(m);
  }
  kill() {
    this.killed = true;
    setImmediate(() => this.exit?.(null, 'SIGTERM'));
  }
  onMessage(l: (m: unknown) => void) {
    this.message = l;
  }
  onExit(l: (code: number | null, signal: string | null) => void) {
    this.exit = l;
  }
  onOutput(l: (line: string, stream: 'stdout' | 'stderr') => void) {
    this.output = l;
  }
  emit(m: unknown) {
    this.message?.(m);
  }
  die(code: number | null, signal: string | null = null) {
    this.exit?.(code, signal);
  }
  write(line: string, stream: 'stdout' | 'stderr' = 'stderr') {
    this.output?.(line, stream);
  }
}

describe('ServerSupervisor protocol (scripted process)', () => {
  it('answers hello with start carrying the config and a fresh key, and never sends the key twice', async () => {
    const procs: FakeProcess[] = [];
    const keys = ['key-one', 'key-two'];
    const s = new ServerSupervisor({
      spawn: () => procs[procs.push(new FakeProcess()) - 1]!,
      config: { dataDir: '/data', rendererDir: '/renderer', demo: true },
      newApiKey: () => keys.shift()!,
      fetch: async () => new Response('{"result":{}}', { status: 200 }),
    });
    const started = s.start();
    procs[0]!.emit({ type: 'hello', pid: 4242 });
    expect(procs[0]!.sent).toEqual([{ type: 'start', config: { dataDir: '/data', rendererDir: '/renderer', demo: true, apiKey: 'key-one' } }]);
    procs[0]!.emit({ type: 'ready', url: 'http://127.0.0.1:5555', port: 5555 });
    await expect(started).resolves.toEqual({ url: 'http://127.0.0.1:5555', port: 5555, origin: 'http://127.0.0.1:5555', apiKey: 'key-one', pid: 4242 });

    // Crash, then restart: a new process gets the second key.
    procs[0]!.die(null, 'SIGSEGV');
    const restarted = s.restart();
    procs[1]!.emit({ type: 'hello', pid: 4243 });
    expect(procs[1]!.sent[0]).toMatchObject({ type: 'start', config: { apiKey: 'key-two' } });
    procs[1]!.emit({ type: 'ready', url: 'http://127.0.0.1:6666', port: 6666 });
    await expect(restarted).resolves.toMatchObject({ apiKey: 'key-two', origin: 'http://127.0.0.1:6666' });
  });

  it('sends an import with the source and project given, and without them when none are', async () => {
    const p = new FakeProcess();
    const s = new ServerSupervisor({ spawn: () => p, config: { dataDir: '/d', demo: false }, fetch: async () => new Response('{}') });
    const started = s.start();
    p.emit({ type: 'hello', pid: 1 });
    p.emit({ type: 'ready', url: 'http://127.0.0.1:1', port: 1 });
    await started;
    void s.importFiles(['/exports/a.ndjson'], { source: 'auth_logs', project: 'abcdefghijklmnopqrst' });
    void s.importFiles(['/exports/b.ndjson']);
    void s.importFiles(['/exports/c.ndjson'], { project: 'abcdefghijklmnopqrst' });
    expect(p.sent.filter((m) => m.type === 'import')).toEqual([
      { type: 'import', id: 1, files: ['/exports/a.ndjson'], source: 'auth_logs', project: 'abcdefghijklmnopqrst' },
      { type: 'import', id: 2, files: ['/exports/b.ndjson'] },
      { type: 'import', id: 3, files: ['/exports/c.ndjson'], project: 'abcdefghijklmnopqrst' },
    ]);
    // The answer settles the matching call.
    const done = s.importFiles(['/exports/d.ndjson'], { source: 'postgres_logs' });
    p.emit({ type: 'import-done', id: 4, results: [{ file: '/exports/d.ndjson', ok: false, reason: 'x' }] });
    await expect(done).resolves.toEqual([{ file: '/exports/d.ndjson', ok: false, reason: 'x' }]);
  });

  it('keeps stderr output and log messages, oldest first, bounded, for the crash report', async () => {
    const p = new FakeProcess();
    const s = new ServerSupervisor({ spawn: () => p, config: { dataDir: '/d', demo: false }, keepLines: 3, fetch: async () => new Response('{}') });
    const started = s.start();
    p.emit({ type: 'hello', pid: 1 });
    p.emit({ type: 'log', level: 'info', text: 'one\ntwo' });
    p.emit({ type: 'ready', url: 'http://127.0.0.1:1', port: 1 });
    await started;
    const crash = new Promise<ServerCrash>((r) => s.onCrash(r));
    p.write('Error: boom');
    p.write('    at somewhere');
    p.die(1);
    expect(await crash).toEqual({ code: 1, signal: null, lastLines: ['two', 'Error: boom', '    at somewhere'], message: 'The server process stopped unexpectedly (exit code 1).' });
  });

  it('ignores malformed messages and gives up after the ready timeout, killing the process', async () => {
    const p = new FakeProcess();
    const s = new ServerSupervisor({ spawn: () => p, config: { dataDir: '/d', demo: false }, readyTimeoutMs: 50 });
    const started = s.start();
    p.emit('garbage');
    p.emit({ type: 'ready', url: 42 });
    await expect(started).rejects.toThrow('the server did not become ready within 50 ms');
    expect(p.killed).toBe(true);
    expect(s.state).toBe('crashed');
  });

  it('does not call a requested shutdown a crash, and kills a server that does not exit in time', async () => {
    const p = new FakeProcess();
    const s = new ServerSupervisor({ spawn: () => p, config: { dataDir: '/d', demo: false }, shutdownTimeoutMs: 50, fetch: async () => new Response('{}') });
    const started = s.start();
    p.emit({ type: 'hello', pid: 1 });
    p.emit({ type: 'ready', url: 'http://127.0.0.1:1', port: 1 });
    await started;
    let crashed = false;
    s.onCrash(() => (crashed = true));
    await s.shutdown();
    expect(p.sent.at(-1)).toEqual({ type: 'shutdown' });
    expect(p.killed).toBe(true);
    expect(crashed).toBe(false);
    expect(s.state).toBe('stopped');
  });

  it('rejects start when the process exits before ready', async () => {
    const p = new FakeProcess();
    const s = new ServerSupervisor({ spawn: () => p, config: { dataDir: '/d', demo: false } });
    const started = s.start();
    p.write('SyntaxError: nope');
    p.die(1);
    await expect(started).rejects.toMatchObject({ message: 'the server process exited (exit code 1) before it was ready', lastLines: ['SyntaxError: nope'] });
  });
});
