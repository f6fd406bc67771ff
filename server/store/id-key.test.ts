import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { idKey } from './partition.ts';

/** The 16 bytes of a lowercase UUID, by Node's hex decoder. */
const bytesOf = (uuid: string) => new Uint8Array(Buffer.from(uuid.split('-').join(''), 'hex'));

describe('idKey', () => {
  it('keys a lowercase UUID as its 16 bytes', () => {
    for (let i = 0; i < 500; i++) {
      const id = randomUUID();
      expect(idKey(id)).toEqual(bytesOf(id));
    }
    expect(idKey('00000000-0000-0000-0000-000000000000')).toEqual(new Uint8Array(16));
    expect(idKey('ffffffff-ffff-ffff-ffff-ffffffffffff')).toEqual(new Uint8Array(16).fill(255));
  });

  it('keys anything else as its text: upper case, other lengths, dashes elsewhere, non-hex, non-ASCII', () => {
    const id = randomUUID();
    for (const other of [
      id.toUpperCase(),
      id.slice(0, 35),
      `${id}0`,
      id.split('-').join(''),
      `${id.slice(0, 8)}x${id.slice(9)}`,
      `${id.slice(0, 7)}-${id.slice(8)}`.slice(0, 36),
      `${id.slice(0, 35)}g`,
      `${id.slice(0, 35)}é`,
      `${id.slice(0, 35)}\u0660`,
      'fn-000001',
      '',
    ]) {
      expect(idKey(other)).toBe(other);
    }
  });
});
