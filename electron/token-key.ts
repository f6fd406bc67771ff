/**
 * The desktop app's token key (server/sync/vault.ts): 32 random bytes the server process seals
 * connection tokens with (AES-256-GCM). Main keeps it in the shell's own folder, encrypted by
 * Electron's safeStorage (the OS keychain), and hands it to the server in its start message.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const TOKEN_KEY_FILE = 'token-key.bin';

/** What main uses of Electron's safeStorage. */
export interface KeyProtector {
  isEncryptionAvailable(): boolean;
  encryptString(text: string): Buffer;
  decryptString(data: Buffer): string;
}

/**
 * The key as base64, created on first use; undefined when safeStorage cannot encrypt (no keychain
 * on this Linux desktop) or the stored key does not decrypt (kept, not replaced: the keychain may
 * be locked). Tokens are then kept as in browser mode, in the owner-only connections file.
 */
export function loadTokenKey(dir: string, protector: KeyProtector | undefined, log: (message: string) => void = console.error): string | undefined {
  try {
    if (!protector?.isEncryptionAvailable()) return undefined;
    const file = path.join(dir, TOKEN_KEY_FILE);
    if (fs.existsSync(file)) {
      const key = protector.decryptString(fs.readFileSync(file));
      return Buffer.from(key, 'base64').length === 32 ? key : (log(`${file} does not hold a token key; connection tokens stay in the owner-only connections file`), undefined);
    }
    const key = randomBytes(32).toString('base64');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, protector.encryptString(key), { mode: 0o600 });
    fs.renameSync(tmp, file);
    return key;
  } catch (err) {
    log(`cannot use the system keychain for connection tokens (${(err as Error).message}); they stay in the owner-only connections file`);
    return undefined;
  }
}
