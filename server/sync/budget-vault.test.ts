import { describe, expect, it } from 'vitest';
import { MICROS } from '../time.ts';
import { RateBudget } from './rate-budget.ts';
import { checkBaseUrl, remoteMessage, retryAfterMs } from './remote.ts';
import { ManualClock } from './timers.ts';
import { keyedVault, plainVault, tokenHint } from './vault.ts';

describe('RateBudget: one sliding minute for the whole app', () => {
  it('takes up to the limit, then says how long until the oldest call leaves the minute', () => {
    const clock = new ManualClock(1_000 * MICROS.second);
    const b = new RateBudget(clock, 3);
    expect([b.take('a'), b.take('b')]).toEqual([0, 0]);
    clock.us += 10 * MICROS.second;
    expect(b.take('a')).toBe(0);
    expect(b.take('b')).toBe(50_000);
    expect(b.callsLastMinute()).toBe(3);
    expect(b.callsLastMinute('a')).toBe(2);
    clock.us += 50 * MICROS.second;
    expect(b.take('b')).toBe(0);
    expect(b.callsLastMinute('a')).toBe(1);
  });

  it('a restart counts the calls of the last minute it was given, none older and none after now', () => {
    const now = 1_000 * MICROS.second;
    const b = new RateBudget(new ManualClock(now), 3);
    b.restore([
      { at: now - 61 * MICROS.second, who: 'old' },
      { at: now - 30 * MICROS.second, who: 'a' },
      { at: now - 10 * MICROS.second, who: 'a' },
      { at: now + 5 * MICROS.second, who: 'ahead' },
    ]);
    expect(b.recent()).toEqual([
      { at: now - 30 * MICROS.second, who: 'a' },
      { at: now - 10 * MICROS.second, who: 'a' },
    ]);
    expect(b.take('b')).toBe(0);
    // Full: the oldest leaves the minute 30 s from now.
    expect(b.take('b')).toBe(30_000);
  });
});

describe('token vaults', () => {
  const key = Buffer.alloc(32, 7);

  it('browser mode keeps the token as it is; it cannot open a desktop-sealed token and says why', () => {
    expect(plainVault.open(plainVault.seal('sbp_0123456789abcdef', 'c1'), 'c1')).toEqual({ token: 'sbp_0123456789abcdef' });
    const sealed = keyedVault(key).seal('sbp_0123456789abcdef', 'c1');
    expect(plainVault.open(sealed, 'c1')).toEqual({ problem: expect.stringContaining('desktop app') });
  });

  it('desktop mode: AES-256-GCM, no clear text at rest, bound to the connection id and the key', () => {
    const v = keyedVault(key);
    const sealed = v.seal('sbp_0123456789abcdef', 'c1');
    expect(JSON.stringify(sealed)).not.toContain('sbp_');
    expect(v.open(sealed, 'c1')).toEqual({ token: 'sbp_0123456789abcdef' });
    // Another connection's id, another key, a flipped byte: refused.
    expect(v.open(sealed, 'c2')).toEqual({ problem: expect.stringContaining('does not decrypt') });
    expect(keyedVault(Buffer.alloc(32, 8)).open(sealed, 'c1')).toEqual({ problem: expect.stringContaining('does not decrypt') });
    const bytes = Buffer.from((sealed as { aes256gcm: string }).aes256gcm, 'base64');
    bytes[bytes.length - 1]! ^= 1;
    expect(v.open({ aes256gcm: bytes.toString('base64') }, 'c1')).toEqual({ problem: expect.stringContaining('does not decrypt') });
    // A token saved in browser mode opens (and is sealed at the next write).
    expect(v.open({ plain: 'sbp_x' }, 'c1')).toEqual({ token: 'sbp_x' });
    expect(() => keyedVault(Buffer.alloc(16))).toThrow(/32 bytes/);
  });

  it('answers show the last four characters of a token, and none of a short one', () => {
    expect(tokenHint('sbp_0123456789abcdef')).toBe('…cdef');
    expect(tokenHint('short')).toBe('…');
  });
});

describe('remote edges', () => {
  it('base URLs: https, or http to loopback only; no credentials, query or fragment', () => {
    expect(checkBaseUrl('https://api.supabase.com/')).toEqual({ url: 'https://api.supabase.com' });
    expect(checkBaseUrl('https://logs.example.com/base/')).toEqual({ url: 'https://logs.example.com/base' });
    expect(checkBaseUrl('http://127.0.0.1:4000')).toEqual({ url: 'http://127.0.0.1:4000' });
    expect(checkBaseUrl('http://localhost:4000')).toEqual({ url: 'http://localhost:4000' });
    expect(checkBaseUrl('http://[::1]:4000')).toEqual({ url: 'http://[::1]:4000' });
    for (const bad of ['http://api.supabase.com', 'http://10.0.0.1', 'ftp://x', 'https://u:p@x.com', 'https://x.com/?a=1', 'https://x.com/#k', 'not a url']) {
      expect(checkBaseUrl(bad), bad).toHaveProperty('problem');
    }
  });

  it("the remote's message: error text, error.message, message, else the text", () => {
    expect(remoteMessage({ error: 'Unauthorized' }, '', 401)).toBe('Unauthorized');
    expect(remoteMessage({ result: [], error: { code: 400, errors: [], message: 'Syntax error', status: 'INVALID_ARGUMENT' } }, '', 400)).toBe('Syntax error');
    expect(remoteMessage({ message: 'ThrottlerException: Too Many Requests' }, '', 429)).toBe('ThrottlerException: Too Many Requests');
    expect(remoteMessage({ message: ['a', 'b'] }, '', 400)).toBe('a; b');
    expect(remoteMessage(undefined, 'Bad Gateway', 502)).toBe('Bad Gateway');
    expect(remoteMessage(undefined, '<html>oops</html>', 502)).toBe('HTTP 502');
  });

  it('Retry-After in seconds or as a date', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1) * 1000);
    expect(retryAfterMs('120', clock)).toBe(120_000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', clock)).toBe(30_000);
    expect(retryAfterMs(null, clock)).toBeNull();
    expect(retryAfterMs('soon', clock)).toBeNull();
  });
});
