/** blockSearch against a plain lower-case `includes`, over texts that take either way. */
import { describe, expect, it } from 'vitest';
import { adaptiveTextFinder, blockSearch, denseTextFinder, textFinder } from './block-search.ts';

/** A finder's visit that keeps every place in `into` and never stops it. */
const collect = (into: number[]) => (at: number) => {
  into.push(at);
  return false;
};

/** The reference: ASCII letters folded, nothing else. */
const plain = (block: Buffer, lower: string) => block.toString('latin1').replace(/[A-Z]/g, (c) => c.toLowerCase()).includes(lower);

describe('blockSearch', () => {
  const texts = ['zq-no-such-text-xj', 'wp-login.php', 'timeout', 'error', '/rest/v1/', 'a', '-', '500', 'x.y', 'status=5'];
  const block = Buffer.from(
    [
      '{"event_message":"GET /WP-Login.PHP 404","id":"1"}',
      '{"event_message":"upstream TimeOut","id":"2"}',
      '{"msg":"caf\u00e9 ERROR-\u00ff","path":"/Rest/V1/todos","status=500"}',
    ].join('\n'),
    'utf8',
  );

  it('agrees with a case-folding includes on texts with and without a letter-poor part', () => {
    for (const t of texts) expect(blockSearch(t)(block), t).toBe(plain(block, t));
  });

  it('finds a text at the very start and end of a block and across every case spelling, and never past the end', () => {
    for (const t of ['wp-login.php', 'timeout']) {
      const spellings = [t, t.toUpperCase(), t.replace(/./g, (c, i: number) => (i % 2 ? c.toUpperCase() : c))];
      for (const s of spellings) {
        expect(blockSearch(t)(Buffer.from(s)), s).toBe(true);
        expect(blockSearch(t)(Buffer.from(`xx${s}`)), s).toBe(true);
        expect(blockSearch(t)(Buffer.from(`${s}yy`)), s).toBe(true);
      }
      expect(blockSearch(t)(Buffer.from(t.slice(0, -1)))).toBe(false);
    }
  });

  it('does not fold non-ASCII letters into ASCII ones', () => {
    // U+212A KELVIN SIGN and U+017F LONG S fold to k and s in Unicode, not here.
    expect(blockSearch('kelvin')(Buffer.from('\u212aelvin', 'utf8'))).toBe(false);
    expect(blockSearch('-ss-')(Buffer.from('-\u017fs-', 'utf8'))).toBe(false);
  });

  it('matches random blocks exactly as the reference does', () => {
    let seed = 11;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), Math.floor(seed / 65536) % n);
    const alphabet = 'abAB-._/ 0';
    for (let round = 0; round < 300; round++) {
      const block = Buffer.from(Array.from({ length: 200 }, () => alphabet[rnd(alphabet.length)]).join(''), 'latin1');
      const needle = Array.from({ length: 1 + rnd(5) }, () => alphabet[rnd(alphabet.length)]!.toLowerCase()).join('');
      expect(blockSearch(needle)(block), `${needle} in ${block.toString('latin1')}`).toBe(plain(block, needle));
    }
  });
});

describe('denseTextFinder', () => {
  /** Where a reference finds `lower` (ASCII letters folded), each start after the last one's end. */
  const places = (bytes: Buffer, lower: string) => {
    const text = bytes.toString('latin1').replace(/[A-Z]/g, (c) => c.toLowerCase());
    const out: number[] = [];
    for (let at = text.indexOf(lower); at >= 0; at = text.indexOf(lower, at + lower.length)) out.push(at);
    return out;
  };
  const found = (bytes: Buffer, lower: string, stopAfter = Infinity) => {
    const out: number[] = [];
    denseTextFinder(lower)(bytes, (at) => out.push(at) >= stopAfter);
    return out;
  };

  it('finds every place textFinder finds a text, and stops when told', () => {
    let seed = 5;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), Math.floor(seed / 65536) % n);
    const alphabet = ['a', 'b', 'A', 'B', '-', '.', '/', '\\', '(', '[', '*', '?', '$', '^', '|', '0', '\u00e9', '\u00c9', '\u00ff'];
    for (let round = 0; round < 400; round++) {
      const bytes = Buffer.from(Array.from({ length: 300 }, () => alphabet[rnd(alphabet.length)]).join(''), 'latin1');
      const lower = Array.from({ length: 1 + rnd(3) }, () => alphabet[rnd(16)]!.toLowerCase()).join('');
      const expected = places(bytes, lower);
      expect(found(bytes, lower), `${lower} in ${bytes.toString('latin1')}`).toEqual(expected);
      const starts: number[] = [];
      textFinder(lower)(bytes, collect(starts));
      // textFinder finds overlapping places too: every place found here is one of them.
      for (const at of expected) expect(starts).toContain(at);
      if (expected.length > 1) expect(found(bytes, lower, 1)).toEqual(expected.slice(0, 1));
    }
  });

  it('finds the same places across the windows it reads a long text in (64 KiB each), overlapping runs included', () => {
    let seed = 11;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), Math.floor(seed / 65536) % n);
    for (const lower of ['aa', 'aba', '/rest/v1/', 'x']) {
      // Runs of the text about every window's edge, where a place starts on one side and ends on the other.
      const chars = Array.from({ length: 3 * 65536 + 700 }, () => ' aAbB/restRESTv1'[rnd(16)]!);
      for (const edge of [65536, 131072, 196608]) {
        const run = lower.repeat(4).toUpperCase();
        // The run's second place starts a character before the edge (a space before the run keeps the places where they are).
        const start = edge - 2 * lower.length + 1;
        chars[start - 1] = ' ';
        for (let j = 0; j < run.length; j++) chars[start + j] = run[j]!;
      }
      const bytes = Buffer.from(chars.join(''), 'latin1');
      const expected = places(bytes, lower);
      expect(expected.some((at) => at < 65536 && at + lower.length > 65536) || lower.length === 1, lower).toBe(true);
      expect(found(bytes, lower), lower).toEqual(expected);
      expect(found(bytes, lower, 3), lower).toEqual(expected.slice(0, 3));
    }
  });

  it('folds ASCII letters only, in UTF-8 bytes read as latin1', () => {
    expect(found(Buffer.from('x/REST/v1/y /rest/V1/', 'utf8'), '/rest/v1/')).toEqual([1, 12]);
    expect(found(Buffer.from('\u212aelvin \u00e9t\u00e9 \u00c9T\u00c9', 'utf8'), 'kelvin')).toEqual([]);
  });
});

describe('adaptiveTextFinder', () => {
  it('finds what textFinder finds, step after step, before and after a step dense with its anchor', () => {
    const steps = [
      Buffer.from('"https://x.co/auth/v1/token"\n"https://x.co/REST/v1/t?a=1"\n'),
      // The anchor `/v1/` every few bytes: later steps take the regular expression.
      Buffer.from('/v1/'.repeat(500) + '/rest/v1/' + '/v1/'.repeat(500)),
      Buffer.from('"https://x.co/rest/V1/a"\n"/Rest/v1/"\n"/rest/v2/"\n'),
      Buffer.from('no match here'),
    ];
    const adaptive = adaptiveTextFinder('/rest/v1/');
    for (const bytes of steps) {
      const expected: number[] = [];
      textFinder('/rest/v1/')(bytes, collect(expected));
      const got: number[] = [];
      adaptive(bytes, collect(got));
      // Once dense, places do not overlap; none of these can.
      expect(got.sort((a, b) => a - b), bytes.toString('latin1').slice(0, 60)).toEqual(expected.sort((a, b) => a - b));
    }
  });

  it('keeps textFinder while the anchor is rare and takes the regular expression after a dense step (told by overlapping places, which only textFinder gives)', () => {
    const adaptive = adaptiveTextFinder('aa');
    const places = (bytes: string) => {
      const out: number[] = [];
      adaptive(Buffer.from(bytes), collect(out));
      return out.sort((a, b) => a - b);
    };
    expect(places(`aaa${' '.repeat(2000)}`)).toEqual([0, 1]);
    expect(places(`aaa${' '.repeat(2000)}`)).toEqual([0, 1]);
    places('a'.repeat(2000));
    expect(places('aaa')).toEqual([0]);
  });
});
