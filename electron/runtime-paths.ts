/**
 * Where the built app's files are, relative to the bundled main file (dist/electron/main.cjs),
 * in a checkout and inside an electron-builder package. electron/build.ts writes these names;
 * electron-builder.json must ship them (electron-builder.test.ts checks both).
 */
import path from 'node:path';

export const ELECTRON_OUT_DIR = 'dist/electron';
export const RENDERER_OUT_DIR = 'dist/renderer';

/** File names of the bundles in dist/electron. */
export const BUNDLES = {
  main: 'main.cjs',
  preload: 'preload.cjs',
  serverProcess: 'server-process.cjs',
  /** Built only once server/ingest/parse-worker.ts exists; found next to serverProcess. */
  parseWorker: 'parse-worker.mjs',
} as const;

/** sql.js's WebAssembly, copied next to the server bundle (the bundle loads it at run time). */
export const SQL_WASM = 'sql-wasm.wasm';
/** sql.js's script, copied beside it: a trapped engine is replaced by evaluating it again. */
export const SQL_SCRIPT = 'sql-wasm.js';

/**
 * The path of a file that electron-builder unpacked from app.asar (asarUnpack). The server
 * process reads its files with plain Node fs, and Chromium's utility process is not
 * guaranteed to see inside archives, so it gets real files.
 */
export function unpackedPath(p: string): string {
  return p.replace(/([\\/])app\.asar([\\/])/, '$1app.asar.unpacked$2');
}

export interface RuntimePaths {
  /** Loaded by Electron itself, which reads inside app.asar. */
  preload: string;
  /** The utility process entry, its wasm and the renderer: real files (unpacked). */
  serverProcess: string;
  rendererDir: string;
  /** Working directory of the server process: the renderer's parent, so relative static paths stay on one drive. */
  serverCwd: string;
}

export function runtimePaths(mainDir: string): RuntimePaths {
  const rendererDir = unpackedPath(path.join(mainDir, '..', 'renderer'));
  return {
    preload: path.join(mainDir, BUNDLES.preload),
    serverProcess: unpackedPath(path.join(mainDir, BUNDLES.serverProcess)),
    rendererDir,
    serverCwd: path.dirname(rendererDir),
  };
}
