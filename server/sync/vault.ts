/**
 * How a connection's token is kept at rest in `connections.json` (README, "What protects a token").
 *
 * - Browser mode (`npm start`, `npm run serve`): the token is stored as it is, in the data folder's
 *   owner-only `connections.json` (0600, in a 0700 folder): what protects it is the operating
 *   system's file permissions, as for the rest of the store. Anyone who can read the user's files
 *   can read it.
 * - Desktop app: Electron's main process keeps a random 32-byte key, encrypted at rest with
 *   `safeStorage` (the OS keychain: Keychain on macOS, DPAPI on Windows, libsecret/kwallet on
 *   Linux), and hands it to the server process in its start message (never argv or the
 *   environment). The server encrypts each token with AES-256-GCM under that key, with the
 *   connection's id as associated data (a sealed token copied onto another connection does not
 *   open). The file then holds only ciphertext; the key is never written by the server.
 *
 * The data folder is shared by both modes: a desktop app opening a plain token seals it at the
 * next write; a browser-mode server cannot open a sealed one and says so (the connection fails
 * with that message until its token is entered again).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export type SealedToken = { plain: string } | { aes256gcm: string };

export interface TokenVault {
  /** What protects a stored token, in words (shown in the README and the connection's state). */
  readonly protection: 'owner-only file' | 'os keychain key';
  seal(token: string, connectionId: string): SealedToken;
  /** The token, or why it cannot be read here. */
  open(sealed: SealedToken, connectionId: string): { token: string } | { problem: string };
}

const SEALED_ELSEWHERE =
  'this token was saved by the desktop app, encrypted with a key kept in the system keychain; open the connection in the desktop app, or enter the token again here';

/** Browser mode: tokens are kept as they are in the owner-only file. */
export const plainVault: TokenVault = {
  protection: 'owner-only file',
  seal: (token) => ({ plain: token }),
  open: (sealed) => ('plain' in sealed ? { token: sealed.plain } : { problem: SEALED_ELSEWHERE }),
};

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Desktop mode: AES-256-GCM under a key the desktop shell protects with safeStorage. */
export function keyedVault(key: Buffer): TokenVault {
  if (key.length !== 32) throw new RangeError(`the token key must be 32 bytes, not ${key.length}`);
  const k = Buffer.from(key);
  return {
    protection: 'os keychain key',
    seal(token, connectionId) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', k, iv);
      cipher.setAAD(Buffer.from(connectionId, 'utf8'));
      const data = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
      return { aes256gcm: Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64') };
    },
    open(sealed, connectionId) {
      // A token saved in browser mode: readable, and sealed at the next write.
      if ('plain' in sealed) return { token: sealed.plain };
      const bytes = Buffer.from(sealed.aes256gcm, 'base64');
      if (bytes.length < IV_BYTES + TAG_BYTES) return { problem: 'the stored token is damaged; enter it again' };
      try {
        const decipher = createDecipheriv('aes-256-gcm', k, bytes.subarray(0, IV_BYTES));
        decipher.setAAD(Buffer.from(connectionId, 'utf8'));
        decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return { token: Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8') };
      } catch {
        return { problem: "the stored token does not decrypt with this desktop app's key (saved under another user account or machine?); enter it again" };
      }
    },
  };
}

/** A token as answers show it: its last four characters only, and none of a short one. */
export function tokenHint(token: string): string {
  return token.length >= 12 ? `…${token.slice(-4)}` : '…';
}
