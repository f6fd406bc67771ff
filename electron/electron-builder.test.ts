/**
 * electron-builder.json ships every file the packaged app loads at run time: each file the
 * shell build writes, the renderer, sql.js's wasm; and what the server process reads with
 * plain fs is unpacked from app.asar where runtime-paths.ts looks for it.
 *
 * electron-builder itself is not installed here (it downloads Electron), so its file
 * matching is modelled: patterns in order, `!` excludes, the last match wins (minimatch
 * globs of `*`, `**` and `?` only, which is all the config uses).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../server/testing/fixtures.ts';
import { buildElectron } from './build.ts';
import { BUNDLES, ELECTRON_OUT_DIR, RENDERER_OUT_DIR, runtimePaths, SQL_SCRIPT, SQL_WASM } from './runtime-paths.ts';

interface BuilderConfig {
  extraMetadata: { main: string };
  files: string[];
  asarUnpack: string[];
  asar: boolean;
  directories: { output: string };
  linux: { target: string[] };
  mac: { target: string[] };
  win: { target: string[] };
}

const ROOT = path.resolve(import.meta.dirname, '..');
const config = JSON.parse(fs.readFileSync(path.join(ROOT, 'electron-builder.json'), 'utf8')) as BuilderConfig;

/** A minimatch-style glob (`**`, `*`, `?`; no braces or classes) as a RegExp over `/` paths. */
function globToRegExp(glob: string): RegExp {
  if (/[{}[\]]/.test(glob)) throw new Error(`glob feature not modelled: ${glob}`);
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^$()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** electron-builder's `files` rule: ordered patterns, the last one that matches decides. */
function shipped(file: string, patterns: readonly string[]): boolean {
  let included = false;
  for (const p of patterns) {
    const negated = p.startsWith('!');
    if (globToRegExp(negated ? p.slice(1) : p).test(file)) included = !negated;
  }
  return included;
}

const unpacked = (file: string) => config.asarUnpack.some((p) => globToRegExp(p).test(file));

let builtFiles: string[];
let work: string;

beforeAll(async () => {
  work = tempDir('le-builder-');
  const result = await buildElectron({ outDir: path.join(work, ELECTRON_OUT_DIR), sourcemap: true });
  builtFiles = result.files.map((f) => `${ELECTRON_OUT_DIR}/${f}`);
});

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

describe('the glob model', () => {
  it('matches like minimatch on the forms the config uses', () => {
    expect(globToRegExp('dist/electron/**/*').test('dist/electron/main.cjs')).toBe(true);
    expect(globToRegExp('dist/electron/**/*').test('dist/electron/a/b.js')).toBe(true);
    expect(globToRegExp('dist/electron/*.sql').test('dist/electron/logs.all.sql')).toBe(true);
    expect(globToRegExp('dist/electron/*.sql').test('dist/electron/x/logs.all.sql')).toBe(false);
    expect(globToRegExp('**/*.map').test('dist/electron/main.cjs.map')).toBe(true);
    expect(globToRegExp('dist/renderer/**/*').test('dist/rendererX/index.html')).toBe(false);
  });
});

describe('electron-builder.json', () => {
  it('starts the bundled main process', () => {
    expect(config.extraMetadata.main).toBe(`${ELECTRON_OUT_DIR}/${BUNDLES.main}`);
  });

  it('ships every file the shell build writes (but no source maps)', () => {
    expect(builtFiles).toEqual(
      expect.arrayContaining([BUNDLES.main, BUNDLES.preload, BUNDLES.serverProcess, SQL_WASM, SQL_SCRIPT, 'logs.all.sql'].map((f) => `${ELECTRON_OUT_DIR}/${f}`)),
    );
    for (const file of builtFiles) expect(shipped(file, config.files), file).toBe(!file.endsWith('.map'));
    expect(builtFiles.some((f) => f.endsWith('.map'))).toBe(true);
  });

  it('ships the renderer', () => {
    for (const file of [`${RENDERER_OUT_DIR}/index.html`, `${RENDERER_OUT_DIR}/assets/index-abc123.js`, `${RENDERER_OUT_DIR}/assets/index-abc123.css`]) {
      expect(shipped(file, config.files), file).toBe(true);
    }
  });

  it('ships no sources, no node_modules (the bundles carry their code) and not its own output', () => {
    for (const file of ['electron/main.ts', 'server/server.ts', 'node_modules/sql.js/dist/sql-wasm.wasm', 'node_modules/react/index.js', 'queries/logs.all.sql', `${config.directories.output}/x.AppImage`, 'README.md']) {
      expect(shipped(file, config.files), file).toBe(false);
    }
  });

  it('unpacks from app.asar exactly what the server process reads with plain fs, at the paths main.ts computes', () => {
    expect(config.asar).toBe(true);
    const mainDir = path.join('/opt/Log Explorer/resources/app.asar', ELECTRON_OUT_DIR);
    const p = runtimePaths(mainDir);
    const asUnpacked = (abs: string) => {
      const marker = `${path.sep}app.asar.unpacked${path.sep}`;
      expect(abs, abs).toContain(marker);
      return abs.slice(abs.indexOf(marker) + marker.length).split(path.sep).join('/');
    };
    expect(unpacked(asUnpacked(p.serverProcess))).toBe(true);
    expect(unpacked(`${asUnpacked(p.rendererDir)}/index.html`)).toBe(true);
    expect(unpacked(`${asUnpacked(p.rendererDir)}/assets/index-abc123.js`)).toBe(true);
    // The server bundle reads the wasm and the queries next to itself.
    for (const file of builtFiles.filter((f) => f.endsWith('.sql') || f.endsWith('.wasm') || f.endsWith(SQL_SCRIPT))) expect(unpacked(file), file).toBe(true);
    // Electron loads main and preload from inside the archive.
    expect(p.preload).toBe(path.join(mainDir, BUNDLES.preload));
    expect(unpacked(`${ELECTRON_OUT_DIR}/${BUNDLES.preload}`)).toBe(false);
  });

  it('keeps paths as they are in a checkout (no app.asar)', () => {
    const p = runtimePaths(path.join(ROOT, ELECTRON_OUT_DIR));
    expect(p.serverProcess).toBe(path.join(ROOT, ELECTRON_OUT_DIR, BUNDLES.serverProcess));
    expect(p.rendererDir).toBe(path.join(ROOT, RENDERER_OUT_DIR));
    expect(p.serverCwd).toBe(path.join(ROOT, 'dist'));
  });

  it('builds AppImage and deb for Linux, dmg for macOS, an NSIS installer for Windows', () => {
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.mac.target).toEqual(['dmg']);
    expect(config.win.target).toEqual(['nsis']);
  });
});
