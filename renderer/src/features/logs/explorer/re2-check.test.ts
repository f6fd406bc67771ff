import { describe, expect, it } from 'vitest';
import { re2Problem } from './re2-check.ts';

describe('re2Problem', () => {
  it('takes what RE2 takes, case-insensitive flags and all', async () => {
    expect(await re2Problem('token|/user$')).toBeNull();
    expect(await re2Problem('(?s)a.b')).toBeNull();
    expect(await re2Problem('5\\d\\d')).toBeNull();
  });
  // Regression: `(unclosed` went to the server three times and came back 400 three times.
  it('names what RE2 refuses: unbalanced groups, backreferences, lookarounds, an oversized pattern', async () => {
    expect(await re2Problem('(unclosed')).toMatch(/missing closing \)/i);
    expect(await re2Problem('(a)\\1')).not.toBeNull();
    expect(await re2Problem('a(?=b)')).not.toBeNull();
    expect(await re2Problem('a'.repeat(2049))).toMatch(/longer than 2048/);
    expect(await re2Problem('a'.repeat(2048))).toBeNull();
  });
});
