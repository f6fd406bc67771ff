/**
 * The built shell is self-contained: bundled into a folder outside the repository (so no
 * node_modules is reachable), the server bundle runs under plain Node, finds sql.js's wasm
 * and the endpoint queries next to itself, serves a renderer and answers the API.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../queries/registry.ts';
import { edgeRecord, tempDir } from '../server/testing/fixtures.ts';
import { appApi } from './app-api.ts';
import { buildElectron, PARSE_WORKER_ENTRY, type ElectronBuildResult } from './build.ts';
import { BUNDLES, SQL_SCRIPT, SQL_WASM } from './runtime-paths.ts';
import { forkNodeServer, ServerSupervisor, type ServerReady } from './supervisor.ts';

let built: ElectronBuildResult;
let work: string;

beforeAll(async () => {
  work = tempDir('le-electron-build-');
  built = await buildElectron({ outDir: path.join(work, 'app', 'dist', 'electron') });
});

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

describe('buildElectron', () => {
  it('writes the three bundles, the wasm and the endpoint queries, and nothing that needs node_modules', () => {
    const queries = fs.readdirSync(path.join(import.meta.dirname, '..', 'queries')).filter((f) => f.endsWith('.sql'));
    expect(queries.length).toBeGreaterThan(0);
    for (const f of [BUNDLES.main, BUNDLES.preload, BUNDLES.serverProcess, SQL_WASM, SQL_SCRIPT, ...queries]) expect(built.files).toContain(f);
    const wasm = fs.readFileSync(path.join(built.outDir, SQL_WASM));
    expect(wasm.subarray(0, 4)).toEqual(Buffer.from([0x00, 0x61, 0x73, 0x6d])); // "\0asm"
  });

  it('puts every SQL file the registry names next to the server bundle, where server/endpoints/sql-files.ts looks once bundled', () => {
    const names = ENDPOINTS.map((e) => e.sqlFile);
    expect(names.length).toBeGreaterThan(0);
    for (const f of names) {
      expect(built.files).toContain(f);
      expect(fs.readFileSync(path.join(built.outDir, f), 'utf8')).toBe(fs.readFileSync(path.join(import.meta.dirname, '..', 'queries', f), 'utf8'));
    }
    // The bundle found its import.meta.url replaced by its own URL (CommonJS has no import.meta).
    expect(fs.readFileSync(path.join(built.outDir, BUNDLES.serverProcess), 'utf8')).not.toContain('import.meta');
  });

  it('builds a preload that requires nothing but electron (a sandboxed preload has no Node)', () => {
    const code = fs.readFileSync(path.join(built.outDir, BUNDLES.preload), 'utf8');
    expect([...code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1])).toEqual(['electron']);
    expect(code).toContain('exposeInMainWorld(BRIDGE_GLOBAL, api)');
    expect(code).not.toMatch(/\bprocess\.|__dirname/);
  });

  it('builds a main process that requires only electron and Node built-ins', () => {
    const code = fs.readFileSync(path.join(built.outDir, BUNDLES.main), 'utf8');
    const required = new Set([...code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]!));
    expect([...required].filter((r) => r !== 'electron' && !r.startsWith('node:'))).toEqual([]);
    // The version comes from package.json at build time.
    const version = (JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
    expect(code).toContain(JSON.stringify(version));
  });

  describe('the server bundle under plain Node, away from the repository', () => {
    let supervisor: ServerSupervisor;
    let ready: ServerReady;
    const dataDir = () => path.join(work, 'data');

    beforeAll(async () => {
      const renderer = path.join(work, 'app', 'dist', 'renderer');
      fs.mkdirSync(renderer, { recursive: true });
      fs.writeFileSync(path.join(renderer, 'index.html'), '<!doctype html><title>stub</title><main data-testid="app-shell"></main>');
      supervisor = new ServerSupervisor({
        spawn: forkNodeServer(path.join(built.outDir, BUNDLES.serverProcess), { cwd: path.dirname(renderer) }),
        config: { dataDir: dataDir(), rendererDir: renderer, demo: true },
      });
      ready = await supervisor.start();
    });

    afterAll(async () => {
      await supervisor?.shutdown();
    });

    it('serves the renderer with the CSP', async () => {
      const res = await fetch(`${ready.url}/`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('data-testid="app-shell"');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    });

    it('runs the endpoints (sql.js wasm and the .sql files found next to the bundle)', async () => {
      const res = await fetch(`${ready.url}/api/endpoints/logs.all?project=proj&project_tier=FREE`, { headers: { 'X-API-KEY': ready.apiKey } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ result: [] });
      expect((await appApi(ready).endpoints()).map((e) => e.name).sort()).toEqual(['functions.invocation-stats', 'logs.all', 'usage.api-counts']);
    });

    it('imports a file by path', async () => {
      const file = path.join(work, 'edge_logs.ndjson');
      fs.writeFileSync(file, `${JSON.stringify(edgeRecord(Date.now() * 1000, { project: 'proj' }))}\n`);
      const [result] = await supervisor.importFiles([file]);
      expect(result).toMatchObject({ ok: true, report: { source: 'cloudflare.logs.prod', imported: 1 } });
    });

    it('loads the demo data through POST /api/demo, and clearing a source empties it', async () => {
      const api = appApi(ready);
      const reports = await api.loadDemo();
      expect(reports).toBeDefined();
      expect(reports!.map((r) => r.source).sort()).toHaveLength(9);
      expect(reports!.every((r) => r.imported > 0 && r.rejected === 0)).toBe(true);
      const before = (await api.sources()).find((s) => s.source === 'postgres.logs')!.count;
      expect(before).toBe(reports!.find((r) => r.source === 'postgres.logs')!.imported);
      await api.deleteSource('postgres.logs');
      expect((await api.sources()).find((s) => s.source === 'postgres.logs')!.count).toBe(0);
    });
  });
});

describe('the parse worker bundle (once server/ingest/parse-worker.ts exists)', () => {
  let out: ElectronBuildResult;

  beforeAll(async () => {
    // A stand-in worker that, like an import worker may, pulls in server code and sql.js (CommonJS).
    const entry = path.join(work, 'worker-src', 'parse-worker.ts');
    fs.mkdirSync(path.dirname(entry), { recursive: true });
    fs.writeFileSync(
      entry,
      `import { parentPort } from 'node:worker_threads';
import { openDb } from ${JSON.stringify(path.join(import.meta.dirname, '..', 'server', 'store', 'db.ts'))};
parentPort!.on('message', async (sql: string) => {
  const db = await openDb();
  parentPort!.postMessage({ rows: db.rows(sql), url: import.meta.url });
});
`,
    );
    out = await buildElectron({ outDir: path.join(work, 'worker-app', 'dist', 'electron'), parseWorkerEntry: entry });
  });

  it('is built from the default entry exactly when server/ingest/parse-worker.ts exists', () => {
    expect(built.files.includes(BUNDLES.parseWorker)).toBe(fs.existsSync(PARSE_WORKER_ENTRY));
  });

  it('is an ES module next to the server process, found as new URL("./parse-worker.mjs", its import.meta.url), that runs away from node_modules', async () => {
    expect(out.files).toContain(BUNDLES.parseWorker);
    const serverProcessUrl = pathToFileURL(path.join(out.outDir, BUNDLES.serverProcess));
    const workerUrl = new URL(`./${BUNDLES.parseWorker}`, serverProcessUrl);
    const worker = new Worker(workerUrl);
    try {
      const reply = await new Promise<{ rows: unknown[][]; url: string }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage('SELECT 6 * 7');
      });
      expect(reply).toEqual({ rows: [[42]], url: workerUrl.href });
    } finally {
      await worker.terminate();
    }
  });
});
