/**
 * electron-builder.json ships every file the packaged app loads at run time: each file the
 * shell build writes, the renderer, sql.js's wasm; and what the server process reads with
 * plain fs is unpacked from app.asar where runtime-paths.ts looks for it. It also sets the
 * Electron fuses, makes the deb the Linux package, and names the icons in build/; package.json
 * carries what the deb target requires and keeps `npm run dist` out of `npm test`.
 *
 * electron-builder is installed, but packaging downloads Electron (and fpm for the deb), so the
 * tests never run it: its file matching is modelled instead: patterns in order, `!` excludes,
 * the last match wins (minimatch globs of `*`, `**` and `?` only, which is all the config uses).
 * Expected values are written out here, not read from the files under test.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderIcon } from '../scripts/make-icons.ts';
import { tempDir } from '../server/testing/fixtures.ts';
import { buildElectron } from './build.ts';
import { BUNDLES, ELECTRON_OUT_DIR, RENDERER_OUT_DIR, runtimePaths, SQL_SCRIPT, SQL_WASM } from './runtime-paths.ts';

interface BuilderConfig {
  extraMetadata: { main: string };
  files: string[];
  asarUnpack: string[];
  asar: boolean;
  directories: { output: string; buildResources: string };
  electronFuses: Record<string, boolean>;
  linux: { target: string[]; icon: string; executableName: string; syncDesktopName: boolean; category: string; maintainer?: string };
  deb: { depends: string[] };
  mac: { target: string[]; icon: string; identity: null | string };
  win: { target: string[]; icon: string };
}

interface PackageJson {
  homepage?: unknown;
  author?: unknown;
  desktopName?: string;
  scripts: Record<string, string>;
  allowScripts: Record<string, boolean>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

const ROOT = path.resolve(import.meta.dirname, '..');
const readJson = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));
const config = readJson('electron-builder.json') as BuilderConfig;
const pkg = readJson('package.json') as PackageJson;

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

  it('builds a deb for Linux (first, and only: the AppImage cannot start under Ubuntu 23.10+ AppArmor), dmg for macOS, an NSIS installer for Windows', () => {
    expect(config.linux.target[0]).toBe('deb');
    expect(config.linux.target).toEqual(['deb']);
    expect(config.mac.target).toEqual(['dmg']);
    expect(config.win.target).toEqual(['nsis']);
  });
});

describe('Electron fuses', () => {
  const FUSES: [name: string, value: boolean][] = [
    ['runAsNode', false],
    ['enableNodeOptionsEnvironmentVariable', false],
    ['enableNodeCliInspectArguments', false],
    ['enableEmbeddedAsarIntegrityValidation', true],
    ['onlyLoadAppFromAsar', true],
  ];

  it.each(FUSES)('sets %s to %s', (name, value) => {
    expect(config.electronFuses[name]).toBe(value);
  });

  it('names only fuses electron-builder knows (a typo would be dropped silently), and re-signs the unsigned macOS app ad hoc after flipping', () => {
    const known = ['runAsNode', 'enableCookieEncryption', 'enableNodeOptionsEnvironmentVariable', 'enableNodeCliInspectArguments', 'enableEmbeddedAsarIntegrityValidation', 'onlyLoadAppFromAsar', 'loadBrowserProcessSpecificV8Snapshot', 'grantFileProtocolExtraPrivileges', 'resetAdHocDarwinSignature'];
    for (const key of Object.keys(config.electronFuses)) expect(known, key).toContain(key);
    // With no signing identity nothing re-signs after the flip, and arm64 macOS refuses a broken ad-hoc signature.
    expect(config.mac.identity).toBeNull();
    expect(config.electronFuses.resetAdHocDarwinSignature).toBe(true);
  });

  it('packages the app in app.asar, which onlyLoadAppFromAsar and the integrity check need', () => {
    expect(config.asar).toBe(true);
  });

  it('leaves the packaged shell nothing that needs runAsNode: the server is a utilityProcess, no child_process, no ELECTRON_RUN_AS_NODE', () => {
    for (const bundle of [BUNDLES.main, BUNDLES.preload, BUNDLES.serverProcess]) {
      const code = fs.readFileSync(path.join(work, ELECTRON_OUT_DIR, bundle), 'utf8');
      expect(code, bundle).not.toContain('ELECTRON_RUN_AS_NODE');
      expect(code, bundle).not.toMatch(/require\(["'](?:node:)?child_process["']\)/);
    }
    expect(fs.readFileSync(path.join(work, ELECTRON_OUT_DIR, BUNDLES.main), 'utf8')).toContain('utilityProcess.fork(');
  });
});

describe('the deb', () => {
  it('depends on what Electron links beyond electron-builder\'s defaults (libgbm, ALSA under either name)', () => {
    for (const dep of ['libgtk-3-0', 'libnss3', 'libxss1', 'libxtst6', 'xdg-utils', 'libatspi2.0-0', 'libsecret-1-0', 'libgbm1']) expect(config.deb.depends).toContain(dep);
    expect(config.deb.depends).toContain('libasound2t64 | libasound2');
  });

  it('installs log-explorer with a desktop entry whose name matches the window class Electron sets', () => {
    expect(config.linux.executableName).toBe('log-explorer');
    expect(config.linux.category).toBe('Development');
    expect(config.linux.syncDesktopName).toBe(true);
    expect(pkg.desktopName).toBe('log-explorer.desktop');
  });

  it('has the homepage and the author with an email that the deb target requires (Maintainer and Homepage fields)', () => {
    expect(pkg.homepage).toMatch(/^https:\/\/\S+$/);
    expect(pkg.author).toEqual({ name: expect.stringMatching(/\S/), email: expect.stringMatching(/^[^@\s]+@[^@\s]+\.[^@\s]+$/) });
    // The Maintainer comes from the author: one identity, not two.
    expect(config.linux.maintainer).toBeUndefined();
  });
});

/** An 8-bit RGBA, non-interlaced PNG decoded to its header and straight RGBA bytes. */
function readPng(file: string): { width: number; height: number; depth: number; colorType: number; rgba: Uint8Array } {
  const buf = fs.readFileSync(file);
  expect(buf.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(buf.toString('ascii', 12, 16)).toBe('IHDR');
  const width = buf.readUInt32BE(16);
  const height = buf.readUInt32BE(20);
  const depth = buf[24]!;
  const colorType = buf[25]!;
  const interlace = buf[28]!;
  const idat: Buffer[] = [];
  for (let at = 8; at < buf.length; ) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString('ascii', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + length);
    expect(buf.readUInt32BE(at + 8 + length), `${file} ${type} CRC`).toBe(zlib.crc32(buf.subarray(at + 4, at + 8 + length)));
    if (type === 'IDAT') idat.push(data);
    at += 12 + length;
  }
  if (depth !== 8 || colorType !== 6 || interlace !== 0) return { width, height, depth, colorType, rgba: new Uint8Array(0) };
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * 4;
  const rgba = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    for (let x = 0; x < stride; x++) {
      const left = x >= 4 ? rgba[y * stride + x - 4]! : 0;
      const up = y > 0 ? rgba[(y - 1) * stride + x]! : 0;
      const upLeft = x >= 4 && y > 0 ? rgba[(y - 1) * stride + x - 4]! : 0;
      const paeth = () => {
        const p = left + up - upLeft;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        return pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      };
      const predictor = [0, left, up, (left + up) >> 1, filter === 4 ? paeth() : 0][filter]!;
      rgba[y * stride + x] = (raw[y * (stride + 1) + 1 + x]! + predictor) & 255;
    }
  }
  return { width, height, depth, colorType, rgba };
}

describe('icons', () => {
  const resources = path.join(ROOT, 'build');
  const files: [file: string, size: number][] = [
    ['icon.png', 1024],
    ...[16, 32, 48, 64, 128, 256, 512].map((n): [string, number] => [`icons/${n}x${n}.png`, n]),
  ];

  it('are found by the config: build/ is buildResources; Linux takes the set, macOS and Windows derive from the 1024 px one', () => {
    expect(config.directories.buildResources).toBe('build');
    expect(config.linux.icon).toBe('build/icons');
    expect(config.mac.icon).toBe('build/icon.png');
    expect(config.win.icon).toBe('build/icon.png');
  });

  it.each(files)('build/%s is a %i px square 8-bit RGBA PNG', (file, size) => {
    const png = readPng(path.join(resources, file));
    expect([png.width, png.height, png.depth, png.colorType]).toEqual([size, size, 8, 6]);
  });

  it('has no other sizes in build/icons (electron-builder would install every file there)', () => {
    expect(fs.readdirSync(path.join(resources, 'icons')).sort()).toEqual(files.slice(1).map(([f]) => path.basename(f)).sort());
  });

  it('is a rounded square: transparent corners, an opaque middle', () => {
    for (const [file, size] of files) {
      const { rgba } = readPng(path.join(resources, file));
      const alpha = (x: number, y: number) => rgba[(y * size + x) * 4 + 3];
      expect(alpha(0, 0), file).toBe(0);
      expect(alpha(size - 1, size - 1), file).toBe(0);
      expect(alpha(size >> 1, size >> 1), file).toBe(255);
    }
  });

  it('are what scripts/make-icons.ts draws now (regenerate with `npm run icons`)', () => {
    for (const [file, size] of files) expect(Buffer.from(readPng(path.join(resources, file)).rgba).equals(Buffer.from(renderIcon(size))), file).toBe(true);
  });
});

describe('package.json', () => {
  it('has electron-builder as a dev dependency pinned to one version, the one installed', () => {
    expect(pkg.devDependencies['electron-builder']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.dependencies['electron-builder']).toBeUndefined();
    const installed = readJson('node_modules/electron-builder/package.json') as { version: string };
    expect(installed.version).toBe(pkg.devDependencies['electron-builder']);
  });

  it('decides on every install script in the lock file, and allows none but esbuild\'s and electron\'s (which skips its download when told to)', () => {
    const lock = readJson('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = new Set(Object.entries(lock.packages).filter(([, p]) => p.hasInstallScript).map(([k]) => k.slice(k.lastIndexOf('node_modules/') + 'node_modules/'.length)));
    for (const name of withScripts) expect(pkg.allowScripts, name).toHaveProperty([name]);
    expect(Object.entries(pkg.allowScripts).filter(([, allowed]) => allowed).map(([name]) => name).sort()).toEqual(['electron', 'esbuild']);
    // The Squirrel.Windows helper copies a bundled 7-Zip; only that target, which is not built, uses it.
    expect(pkg.allowScripts['electron-winstaller']).toBe(false);
  });

  it('`npm run dist` builds the UI, then the shell, then runs electron-builder on electron-builder.json without publishing', () => {
    const steps = pkg.scripts.dist!.split('&&').map((s) => s.trim());
    expect(steps).toEqual(['npm run build', 'npm run build:electron', 'electron-builder --config electron-builder.json --publish never']);
  });

  it('keeps packaging out of `npm test`: no script it runs, directly or through others, runs dist or electron-builder', () => {
    const reached = new Set<string>();
    const visit = (name: string) => {
      if (reached.has(name)) return;
      reached.add(name);
      for (const m of pkg.scripts[name]!.matchAll(/npm run ([\w:-]+)/g)) visit(m[1]!);
    };
    visit('test');
    expect([...reached]).toContain('test:e2e');
    expect(reached.has('dist')).toBe(false);
    for (const name of reached) expect(pkg.scripts[name], name).not.toMatch(/electron-builder/);
  });
});
