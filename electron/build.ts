/**
 * `tsx electron/build.ts`: bundles the desktop shell into dist/electron/ with esbuild, since
 * Electron runs JavaScript only:
 *   main.cjs            main process (CommonJS: no ESM-before-ready caveats)
 *   preload.cjs         sandboxed preload: CommonJS, `electron` its only require
 *   server-process.cjs  the utility process, with the whole server and sql.js inside
 *   parse-worker.mjs    the import's parse worker (server/ingest/parse-worker.ts, built only
 *                       once that file exists), self-contained like the server process. ESM,
 *                       not CJS: the import code finds it as new URL('./parse-worker.mjs',
 *                       import.meta.url), which in server-process.cjs is this folder, and the
 *                       same name then works next to dist/server/*.mjs (scripts/run-server.mjs).
 *                       Node's worker_threads load .mjs files in the utility process as in
 *                       Node; CommonJS packages inside get `require` from a banner.
 *   sql-wasm.wasm       sql.js's WebAssembly, read at run time next to the bundle
 *   sql-wasm.js         sql.js's script, loaded at run time (again after an engine trap)
 *   *.sql               the endpoint queries (queries/*.sql), which server/endpoints/sql-files.ts
 *                       reads next to the bundle: bundled, its import.meta.url is the bundle's
 * The renderer is built separately (`npm run build` → dist/renderer/).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type BuildOptions, type Metafile, type Plugin } from 'esbuild';
import { BUNDLES, ELECTRON_OUT_DIR, SQL_SCRIPT, SQL_WASM } from './runtime-paths.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Electron 41 ships Node 24 and Chromium 146; these targets leave headroom. */
const NODE_TARGET = 'node22';
const CHROME_TARGET = 'chrome130';

// CommonJS has no import.meta: the server code's `import.meta.url` (sql-files.ts finding the
// .sql files, db.ts's createRequire) becomes the bundle's own URL.
const IMPORT_META_BANNER = 'var __import_meta_url = require("node:url").pathToFileURL(__filename).href;';
const IMPORT_META_DEFINE = { 'import.meta.url': '__import_meta_url', 'import.meta.dirname': '__dirname', 'import.meta.filename': '__filename' };

// An ESM bundle has no require, __dirname or __filename: bundled CommonJS packages (sql.js)
// and the wasm path below use them.
const ESM_REQUIRE_BANNER = [
  'import { createRequire as __createRequire } from "node:module";',
  'import { fileURLToPath as __fileURLToPath } from "node:url";',
  'const require = __createRequire(import.meta.url);',
  'const __filename = __fileURLToPath(import.meta.url);',
  'const __dirname = __fileURLToPath(new URL(".", import.meta.url));',
].join(' ');

/** The parse worker's source; the worker bundle is built only when it exists. */
export const PARSE_WORKER_ENTRY = path.join(ROOT, 'server', 'ingest', 'parse-worker.ts');

/** How server/store/db.ts finds sql.js's files, and the copy next to the bundle each becomes. */
const SQL_JS_NEEDLES: ReadonlyArray<[needle: string, copy: string]> = [
  ["require.resolve('sql.js/dist/sql-wasm.wasm')", SQL_WASM],
  ["require.resolve('sql.js/dist/sql-wasm.js')", SQL_SCRIPT],
];

/**
 * server/store/db.ts finds sql.js's wasm and script with require.resolve through node_modules,
 * which a packaged app does not ship (electron-builder drops nested node_modules, and the
 * bundle needs none). In the bundle each of those expressions becomes the copy next to the
 * bundle. Fails the build loudly if db.ts changes how it finds the files.
 */
export function sqlWasmNextToBundle(): Plugin {
  return {
    name: 'sql-wasm-next-to-bundle',
    setup(b) {
      b.onLoad({ filter: /[\\/]server[\\/]store[\\/]db\.ts$/ }, async (args) => {
        let source = await fs.promises.readFile(args.path, 'utf8');
        for (const [needle, copy] of SQL_JS_NEEDLES) {
          const found = source.split(needle).length - 1;
          if (found !== 1) {
            return { errors: [{ text: `expected exactly one ${needle} in server/store/db.ts, found ${found}: update electron/build.ts to how db.ts now locates sql.js` }] };
          }
          source = source.replace(needle, `require("node:path").join(__dirname, ${JSON.stringify(copy)})`);
        }
        return { contents: source, loader: 'ts' };
      });
    },
  };
}

export interface ElectronBuildOptions {
  outDir?: string;
  minify?: boolean;
  /** Linked source maps (not shipped: electron-builder.json excludes *.map). */
  sourcemap?: boolean;
  /** The parse worker's entry (tests); default PARSE_WORKER_ENTRY, skipped while it does not exist. */
  parseWorkerEntry?: string;
}

export interface ElectronBuildResult {
  outDir: string;
  /** Every file written, relative to outDir, sorted. */
  files: string[];
}

function externalImports(meta: Metafile, outfile: string): string[] {
  const key = Object.keys(meta.outputs).find((k) => path.resolve(ROOT, k) === path.resolve(outfile));
  return [...new Set((key ? meta.outputs[key]!.imports : []).filter((i) => i.external).map((i) => i.path))].sort();
}

export async function buildElectron(options: ElectronBuildOptions = {}): Promise<ElectronBuildResult> {
  const outDir = path.resolve(ROOT, options.outDir ?? ELECTRON_OUT_DIR);
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const common: BuildOptions = {
    absWorkingDir: ROOT,
    bundle: true,
    format: 'cjs',
    minify: options.minify ?? false,
    sourcemap: options.sourcemap ?? false,
    legalComments: 'linked',
    logLevel: 'warning',
    metafile: true,
    external: ['electron'],
  };
  const outfile = (name: string) => path.join(outDir, name);

  const workerEntry = options.parseWorkerEntry ?? PARSE_WORKER_ENTRY;
  const [main, preload, server, worker] = await Promise.all([
    build({
      ...common,
      entryPoints: [path.join(ROOT, 'electron/main.ts')],
      outfile: outfile(BUNDLES.main),
      platform: 'node',
      target: NODE_TARGET,
      banner: { js: IMPORT_META_BANNER },
      define: { ...IMPORT_META_DEFINE, LOG_EXPLORER_VERSION: JSON.stringify(version) },
    }),
    build({
      ...common,
      entryPoints: [path.join(ROOT, 'electron/preload.ts')],
      outfile: outfile(BUNDLES.preload),
      // A sandboxed preload has no Node: building for the browser makes any Node import an error.
      platform: 'browser',
      target: CHROME_TARGET,
    }),
    build({
      ...common,
      entryPoints: [path.join(ROOT, 'electron/server-process.ts')],
      outfile: outfile(BUNDLES.serverProcess),
      platform: 'node',
      target: NODE_TARGET,
      banner: { js: IMPORT_META_BANNER },
      define: IMPORT_META_DEFINE,
      plugins: [sqlWasmNextToBundle()],
    }),
    fs.existsSync(workerEntry)
      ? build({
          ...common,
          entryPoints: [workerEntry],
          outfile: outfile(BUNDLES.parseWorker),
          format: 'esm',
          platform: 'node',
          target: NODE_TARGET,
          banner: { js: ESM_REQUIRE_BANNER },
          plugins: [sqlWasmNextToBundle()],
        })
      : undefined,
  ]);

  const preloadImports = externalImports(preload.metafile!, outfile(BUNDLES.preload));
  if (preloadImports.some((i) => i !== 'electron')) throw new Error(`the sandboxed preload may require only electron, but requires ${preloadImports.join(', ')}`);
  const nodeOnly = (i: string) => i === 'electron' || i.startsWith('node:') || /^[a-z_]+(\/[a-z_]+)?$/.test(i);
  for (const [name, result] of [
    [BUNDLES.main, main],
    [BUNDLES.serverProcess, server],
    ...(worker ? [[BUNDLES.parseWorker, worker] as const] : []),
  ] as const) {
    const odd = externalImports(result.metafile!, outfile(name)).filter((i) => !nodeOnly(i));
    if (odd.length) throw new Error(`${name} must be self-contained but leaves ${odd.join(', ')} to node_modules`);
  }

  const requireHere = createRequire(import.meta.url);
  fs.copyFileSync(requireHere.resolve('sql.js/dist/sql-wasm.wasm'), outfile(SQL_WASM));
  fs.copyFileSync(requireHere.resolve('sql.js/dist/sql-wasm.js'), outfile(SQL_SCRIPT));
  // Next to the server bundle, where server/endpoints/sql-files.ts looks once bundled.
  for (const f of fs.readdirSync(path.join(ROOT, 'queries'))) {
    if (f.endsWith('.sql')) fs.copyFileSync(path.join(ROOT, 'queries', f), outfile(f));
  }

  const files = fs.readdirSync(outDir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.relative(outDir, path.join(d.parentPath, d.name)).split(path.sep).join('/'))
    .sort();
  return { outDir, files };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const started = performance.now();
  buildElectron({ minify: process.argv.includes('--minify'), sourcemap: process.argv.includes('--sourcemap') }).then(
    (r) => {
      const sizes = r.files.map((f) => `  ${f.padEnd(36)} ${(fs.statSync(path.join(r.outDir, f)).size / 1024).toFixed(0).padStart(6)} KiB`);
      console.log(`built ${path.relative(process.cwd(), r.outDir) || '.'} in ${((performance.now() - started) / 1000).toFixed(1)} s\n${sizes.join('\n')}`);
    },
    (err: Error) => {
      console.error(err.message);
      process.exitCode = 1;
    },
  );
}
