import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { loadTokenKey, TOKEN_KEY_FILE, type KeyProtector } from './token-key.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'le-key-'));
  dirs.push(d);
  return d;
};

/** A stand-in for safeStorage: reversible, and visibly not the clear text. */
const xor: KeyProtector = {
  isEncryptionAvailable: () => true,
  encryptString: (t) => Buffer.from(Buffer.from(t, 'utf8').map((b) => b ^ 0x5a)),
  decryptString: (d) => Buffer.from(d.map((b) => b ^ 0x5a)).toString('utf8'),
};

it('creates a 32-byte key once, stored only as safeStorage ciphertext (0600), and reads it back', () => {
  const dir = tmp();
  const key = loadTokenKey(dir, xor)!;
  expect(Buffer.from(key, 'base64')).toHaveLength(32);
  const file = path.join(dir, TOKEN_KEY_FILE);
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(fs.readFileSync(file).toString('utf8')).not.toContain(key);
  expect(loadTokenKey(dir, xor)).toBe(key);
});

it('no keychain, or a key that does not decrypt: no key (tokens stay in the owner-only file), and the stored key is kept', () => {
  const dir = tmp();
  const logs: string[] = [];
  expect(loadTokenKey(dir, { ...xor, isEncryptionAvailable: () => false })).toBeUndefined();
  expect(loadTokenKey(dir, undefined)).toBeUndefined();
  const key = loadTokenKey(dir, xor)!;
  const locked: KeyProtector = { ...xor, decryptString: () => { throw new Error('keychain locked'); } };
  expect(loadTokenKey(dir, locked, (m) => logs.push(m))).toBeUndefined();
  expect(logs[0]).toMatch(/keychain locked/);
  expect(loadTokenKey(dir, xor)).toBe(key);
});

it('the key travels in the start message (never argv or the environment), as base64 text', async () => {
  const { parseToServer } = await import('./protocol.ts');
  const config = { dataDir: '/d', apiKey: 'k', demo: false, tokenKey: Buffer.alloc(32, 1).toString('base64') };
  expect(parseToServer({ type: 'start', config })).toEqual({ type: 'start', config });
  expect(parseToServer({ type: 'start', config: { ...config, tokenKey: 5 } })).toBeUndefined();
});
