/**
 * The literal fast path of RE2 patterns: which patterns are plain texts, and that testing them
 * with `includes` agrees with the RE2 engine on every pattern and text tried.
 */
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { literalOf, re2Tester } from './re2.ts';

describe('literalOf', () => {
  it('reads plain texts, escaped metas included', () => {
    expect(literalOf('ouwmmbchcsjxvtfobujc')).toBe('ouwmmbchcsjxvtfobujc');
    expect(literalOf('abc\\.supabase\\.co')).toBe('abc.supabase.co');
    expect(literalOf('/rest/v1/')).toBe('/rest/v1/');
    expect(literalOf('a\\-b\\(c\\)')).toBe('a-b(c)');
    expect(literalOf('')).toBe('');
  });

  it('is null for anything with a meaning beyond its characters', () => {
    for (const p of ['a.b', '^abc', 'abc$', 'a|b', 'ab*', 'a+', 'a?', '(ab)', '[ab]', 'a{2}', '\\d', '\\w+', '\\bword', '(?i)abc', 'café', 'a\\', 'tab\there']) {
      expect(literalOf(p), p).toBeNull();
    }
  });
});

describe('re2Tester', () => {
  it('agrees with the RE2 engine on literal and other patterns', () => {
    const texts = [
      'https://ouwmmbchcsjxvtfobujc.supabase.co/rest/v1/profiles?select=*',
      'https://abc.supabase.co/auth/v1/token',
      'https://ABC.supabase.co/storage/v1/object/a-b(c)',
      '',
      'abcabc',
      'a.b a-b(c)',
      'Zürich café',
    ];
    const patterns = ['ouwmmbchcsjxvtfobujc', 'abc', 'ABC', 'abc\\.supabase\\.co', 'a\\-b\\(c\\)', '/rest/v1/', 'a.b', '^https', 'co$', 'rest|auth', 'café', '(?i)abc', '', 'supabase\\.co/(rest|auth)'];
    for (const p of patterns) {
      const re = RE2JS.compile(p);
      const test = re2Tester(p);
      for (const t of texts) expect(test(t), `${p} on ${t}`).toBe(re.matcher(t).find());
    }
  });
});
