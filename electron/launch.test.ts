import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../server/testing/fixtures.ts';
import { defaultMainFile, findElectronBinary, launchElectron, launchEnv } from './launch.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A fake electron package folder: path.txt and dist/ as the real install.js leaves them. */
function fakePackage(opts: { pathTxt?: string; binary?: string } = {}): string {
  const dir = tempDir('le-electron-pkg-');
  dirs.push(dir);
  if (opts.pathTxt !== undefined) fs.writeFileSync(path.join(dir, 'path.txt'), opts.pathTxt);
  if (opts.binary) {
    fs.mkdirSync(path.dirname(path.join(dir, 'dist', opts.binary)), { recursive: true });
    fs.writeFileSync(path.join(dir, 'dist', opts.binary), '');
  }
  return dir;
}

describe('findElectronBinary', () => {
  it('finds the binary path.txt names under dist/', () => {
    const dir = fakePackage({ pathTxt: 'electron', binary: 'electron' });
    expect(findElectronBinary({ packageDir: dir, env: {} })).toEqual({ ok: true, path: path.join(dir, 'dist', 'electron') });
  });

  it('handles the macOS layout', () => {
    const rel = 'Electron.app/Contents/MacOS/Electron';
    const dir = fakePackage({ pathTxt: rel, binary: rel });
    expect(findElectronBinary({ packageDir: dir, env: {} })).toEqual({ ok: true, path: path.join(dir, 'dist', rel) });
  });

  it('explains a skipped download and how to install the binary, without throwing', () => {
    const dir = fakePackage();
    const found = findElectronBinary({ packageDir: dir, env: { ELECTRON_SKIP_BINARY_DOWNLOAD: '1' } });
    expect(found.ok).toBe(false);
    const reason = found.ok ? '' : found.reason;
    expect(reason).toContain('path.txt is missing');
    expect(reason).toContain('ELECTRON_SKIP_BINARY_DOWNLOAD=1');
    expect(reason).toContain('ELECTRON_SKIP_BINARY_DOWNLOAD is set in this environment ("1")');
    expect(reason).toContain('node node_modules/electron/install.js');
    expect(reason).toContain("Electron's release host");
  });

  it('reports a path.txt whose binary is gone', () => {
    const dir = fakePackage({ pathTxt: 'electron' });
    const found = findElectronBinary({ packageDir: dir, env: {} });
    expect(found).toMatchObject({ ok: false });
    expect(!found.ok && found.reason).toContain(`${path.join(dir, 'dist', 'electron')}, which does not exist`);
  });

  it('honours ELECTRON_OVERRIDE_DIST_PATH as the electron package does', () => {
    const dist = tempDir('le-electron-dist-');
    dirs.push(dist);
    fs.writeFileSync(path.join(dist, 'electron'), '');
    expect(findElectronBinary({ packageDir: fakePackage(), env: { ELECTRON_OVERRIDE_DIST_PATH: dist } })).toEqual({ ok: true, path: path.join(dist, 'electron') });
    expect(findElectronBinary({ packageDir: fakePackage(), env: { ELECTRON_OVERRIDE_DIST_PATH: path.join(dist, 'nope') } }).ok).toBe(false);
  });

  it('reports the real install of this checkout as it is (here: installed without the binary)', () => {
    const found = findElectronBinary();
    const pkg = path.resolve(import.meta.dirname, '..', 'node_modules', 'electron');
    const hasBinary = fs.existsSync(path.join(pkg, 'path.txt'));
    expect(found.ok).toBe(hasBinary);
  });
});

describe('launchElectron', () => {
  it('runs the binary on the main file with the extra arguments, without ELECTRON_RUN_AS_NODE', async () => {
    // Node stands in for Electron: the "main file" prints what it was given.
    const dir = tempDir('le-launch-');
    dirs.push(dir);
    const main = path.join(dir, 'main.cjs');
    fs.writeFileSync(
      main,
      'process.stdout.write(JSON.stringify({ argv: process.argv.slice(2), runAsNode: process.env.ELECTRON_RUN_AS_NODE ?? null, marker: process.env.MARKER, data: process.env.LOG_EXPLORER_DATA_DIR ?? null }))',
    );
    const run = async (dataDir?: string) => {
      const env: NodeJS.ProcessEnv = { ...process.env, ELECTRON_RUN_AS_NODE: '1', MARKER: 'm' };
      delete env.LOG_EXPLORER_DATA_DIR;
      const child = launchElectron({ binary: process.execPath, mainFile: main, args: ['--flag', 'x'], env, ...(dataDir ? { dataDir } : {}), stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      expect(code).toBe(0);
      return JSON.parse(out) as unknown;
    };
    expect(await run()).toEqual({ argv: ['--flag', 'x'], runAsNode: null, marker: 'm', data: null });
    // npm start -- --data-dir: the app opens that folder, as npm run serve would.
    expect(await run(dir)).toEqual({ argv: ['--flag', 'x'], runAsNode: null, marker: 'm', data: dir });
  });

  it('launchEnv resolves a relative data folder and leaves the caller\'s environment alone', () => {
    const base = { ELECTRON_RUN_AS_NODE: '1', A: 'b' };
    expect(launchEnv(base, 'rel/data')).toEqual({ A: 'b', LOG_EXPLORER_DATA_DIR: path.resolve('rel/data') });
    expect(launchEnv(base)).toEqual({ A: 'b' });
    expect(base).toEqual({ ELECTRON_RUN_AS_NODE: '1', A: 'b' });
  });

  it('defaults to the bundle electron/build.ts writes', () => {
    expect(defaultMainFile('/repo')).toBe(path.join('/repo', 'dist', 'electron', 'main.cjs'));
  });
});
