import { describe, expect, it } from 'vitest';
import { throughEscapes, unescapedText } from './json-escapes.ts';

const text = (s: string) => unescapedText(Buffer.from(s))?.toString('utf8') ?? null;

describe('unescapedText', () => {
  it('writes \\/ and \\u escapes as what they stand for, and is null without them', () => {
    // By hand: each escape and its character.
    expect(text('{"u":"https:\\/\\/x.supabase.co\\/rest\\/v1"}')).toBe('{"u":"https://x.supabase.co/rest/v1"}');
    expect(text('"a\\u0026b \\u00e9t\\u00C9"')).toBe('"a&b étÉ"');
    // A surrogate pair is one character (U+1F600, 4 bytes of UTF-8).
    expect(text('"\\ud83d\\ude00!"')).toBe('"😀!"');
    expect(text('{"plain":"no escapes","q":"say \\"hi\\" \\\\ \\n"}')).toBeNull();
  });

  it('keeps quotes, backslashes, control characters and lone surrogates escaped, and an escaped backslash before / or u', () => {
    expect(text('"\\u0022 \\u005c \\u0001 \\/"')).toBe('"\\u0022 \\u005c \\u0001 /"');
    expect(text('"\\ud83d alone \\/"')).toBe('"\\ud83d alone /"');
    // `\\/` is an escaped backslash then a plain slash; `\\u0041` an escaped backslash then "u0041".
    expect(text('"a\\\\/b \\\\u0041"')).toBeNull();
    expect(text('"a\\\\\\/b"')).toBe('"a\\\\/b"');
    // A cut or bad escape at the end stays as it is.
    expect(text('"\\u00e" \\/')).toBe('"\\u00e" /');
  });

  it('makes a raw-bytes test see the text behind escapes', () => {
    const has = throughEscapes((raw) => raw.includes('/rest/v1'));
    expect(has(Buffer.from('"GET https:\\/\\/p.supabase.co\\/rest\\/v1\\/todos"'))).toBe(true);
    expect(has(Buffer.from('"GET https:\\/\\/p.supabase.co\\/auth\\/v1"'))).toBe(false);
  });
});
