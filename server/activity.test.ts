import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

interface Line {
  what: string;
  thread?: string;
  ms?: number;
}

describe('the activity log', () => {
  it("names a worker thread's spans and collections apart from the answering thread's", async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-activity-'));
    const log = path.join(dir, 'activity.ndjson');
    const activity = pathToFileURL(path.join(ROOT, 'server', 'activity.ts')).href;
    // tsx's ESM API registers its loader inside the worker (as parse-host.ts does).
    const pkgFile = createRequire(import.meta.url).resolve('tsx/package.json');
    const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
    const tsxApi = pathToFileURL(path.join(path.dirname(pkgFile), pkg.exports['./esm/api']!.import.default)).href;
    // Each thread collects garbage once (gc() with --expose-gc) and logs a span of 5 ms.
    const work = `const { span } = await import(${JSON.stringify(activity)}); globalThis.gc(); const end = span(NAME); const t = performance.now(); while (performance.now() - t < 5); end(); await new Promise((r) => setTimeout(r, 300));`;
    const script = `
      import { Worker } from 'node:worker_threads';
      const inWorker = ${JSON.stringify(`const NAME = 'worker work'; await import(${JSON.stringify(tsxApi)}).then((t) => t.register()); `)} + ${JSON.stringify(work)};
      const w = new Worker('(async () => {' + inWorker + '})()', { eval: true, execArgv: [] });
      await new Promise((resolve, reject) => { w.once('exit', resolve); w.once('error', reject); });
      const NAME = 'main work';
      ${work}
    `;
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, env: { ...process.env, LOG_EXPLORER_ACTIVITY: log }, timeout: 30_000 }, (err, _out, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(),
      ),
    );
    const lines = fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
    const spans = lines.filter((l) => l.what !== 'totals' && l.what !== 'memory');
    const of = (what: string) => spans.filter((l) => l.what === what);
    expect(of('main work')).toEqual([expect.not.objectContaining({ thread: expect.anything() })]);
    expect(of('worker work')).toEqual([expect.objectContaining({ thread: expect.stringMatching(/^worker \d+$/) })]);
    // A full collection of even a small heap takes a few ms: each thread's shows up once listed or in its totals.
    const totals = lines.filter((l): l is Line & { totals: Record<string, [number, number]> } => l.what === 'totals');
    const last = (thread: string) => totals.filter((t) => t.thread === thread).at(-1)?.totals ?? {};
    const main = last('main');
    const worker = last(of('worker work')[0]!.thread!);
    expect(main.gc?.[0]).toBeGreaterThanOrEqual(1);
    expect(main['gc on a worker']).toBeUndefined();
    expect(worker['gc on a worker']?.[0]).toBeGreaterThanOrEqual(1);
    expect(worker.gc).toBeUndefined();
    // Listed collections carry their thread the same way.
    for (const l of of('gc')) expect(l.thread).toBeUndefined();
    for (const l of of('gc on a worker')) expect(l.thread).toMatch(/^worker \d+$/);
  });
});
