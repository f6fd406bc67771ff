/**
 * Finds Electron's binary without `require('electron')` (which throws when the binary was
 * never downloaded) and launches the built app with it.
 *
 * `tsx electron/launch.ts [electron args...]` runs dist/electron/main.cjs (build it first with
 * `tsx electron/build.ts`); importing this module has no side effects (scripts/start.ts uses
 * `findElectronBinary` to choose between the desktop window and browser mode).
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DATA_DIR_ENV } from '../server/store/data-dir.ts';
import { BUNDLES, ELECTRON_OUT_DIR, RENDERER_OUT_DIR } from './runtime-paths.ts';

export type ElectronBinary = { ok: true; path: string } | { ok: false; reason: string };

const ROOT = path.resolve(import.meta.dirname, '..');

/** How to get the binary, for every "not installed" reason. */
function installHint(env: NodeJS.ProcessEnv): string {
  const skip = env.ELECTRON_SKIP_BINARY_DOWNLOAD
    ? ` ELECTRON_SKIP_BINARY_DOWNLOAD is set in this environment (${JSON.stringify(env.ELECTRON_SKIP_BINARY_DOWNLOAD)}), and install.js does nothing while it is set.`
    : '';
  return (
    `npm installs the electron package without its binary when ELECTRON_SKIP_BINARY_DOWNLOAD=1 (or when the download fails).${skip} ` +
    "Install the binary on a machine that can reach Electron's release host (GitHub releases, or the mirror in ELECTRON_MIRROR): " +
    '`env -u ELECTRON_SKIP_BINARY_DOWNLOAD node node_modules/electron/install.js`. ' +
    'Without it, `npm start` serves the same UI in your browser.'
  );
}

/**
 * Locates Electron's executable the way the electron package's index.js does (path.txt,
 * dist/, ELECTRON_OVERRIDE_DIST_PATH), but reports a missing binary instead of throwing.
 */
export function findElectronBinary(options: { env?: NodeJS.ProcessEnv; packageDir?: string } = {}): ElectronBinary {
  const env = options.env ?? process.env;
  let dir = options.packageDir;
  if (!dir) {
    try {
      dir = path.dirname(createRequire(import.meta.url).resolve('electron/package.json'));
    } catch {
      return { ok: false, reason: 'the electron package is not installed (run `npm install`).' };
    }
  }
  let relative: string | undefined;
  try {
    relative = fs.readFileSync(path.join(dir, 'path.txt'), 'utf8').trim();
  } catch {
    relative = undefined;
  }
  const override = env.ELECTRON_OVERRIDE_DIST_PATH;
  if (override) {
    const candidate = path.join(override, relative || 'electron');
    return fs.existsSync(candidate) ? { ok: true, path: candidate } : { ok: false, reason: `ELECTRON_OVERRIDE_DIST_PATH is set, but ${candidate} does not exist.` };
  }
  if (!relative) {
    return { ok: false, reason: `Electron's binary is not installed (${path.join(dir, 'path.txt')} is missing). ${installHint(env)}` };
  }
  const binary = path.join(dir, 'dist', relative);
  if (!fs.existsSync(binary)) {
    return { ok: false, reason: `Electron's binary is missing: path.txt names ${binary}, which does not exist. ${installHint(env)}` };
  }
  return { ok: true, path: binary };
}

export interface LaunchOptions {
  binary: string;
  /** The bundled main file (default dist/electron/main.cjs). */
  mainFile?: string;
  /** Extra arguments for Electron/Chromium and the app. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** The data folder to open (`npm start -- --data-dir`); absent: the default every mode shares. */
  dataDir?: string;
  stdio?: StdioOptions;
  cwd?: string;
}

export function defaultMainFile(root: string = ROOT): string {
  return path.join(root, ELECTRON_OUT_DIR, BUNDLES.main);
}

/**
 * The environment Electron runs with: without ELECTRON_RUN_AS_NODE (it would turn Electron into
 * plain Node), and with the data folder, when one is given, in LOG_EXPLORER_DATA_DIR, which
 * the app reads as `npm run serve` reads --data-dir.
 */
export function launchEnv(env: NodeJS.ProcessEnv, dataDir?: string): NodeJS.ProcessEnv {
  const out = { ...env };
  delete out.ELECTRON_RUN_AS_NODE;
  if (dataDir) out[DATA_DIR_ENV] = path.resolve(dataDir);
  return out;
}

/** Spawns Electron on the built main file. */
export function launchElectron(options: LaunchOptions): ChildProcess {
  const env = launchEnv(options.env ?? process.env, options.dataDir);
  return spawn(options.binary, [options.mainFile ?? defaultMainFile(), ...(options.args ?? [])], {
    env,
    stdio: options.stdio ?? 'inherit',
    cwd: options.cwd ?? ROOT,
    windowsHide: false,
  });
}

async function cli(): Promise<number> {
  const binary = findElectronBinary();
  if (!binary.ok) {
    console.error(`Cannot open the desktop app: ${binary.reason}`);
    return 1;
  }
  const mainFile = defaultMainFile();
  if (!fs.existsSync(mainFile)) {
    console.error(`${path.relative(process.cwd(), mainFile)} is missing: build the shell first (tsx electron/build.ts).`);
    return 1;
  }
  if (!fs.existsSync(path.join(ROOT, RENDERER_OUT_DIR, 'index.html'))) {
    console.error(`${RENDERER_OUT_DIR}/index.html is missing: build the UI first (npm run build).`);
    return 1;
  }
  const child = launchElectron({ binary: binary.path, mainFile, args: process.argv.slice(2) });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  return new Promise((resolve) => {
    child.on('error', (err) => {
      console.error(`cannot run ${binary.path}: ${err.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  void cli().then((code) => {
    process.exitCode = code;
  });
}
