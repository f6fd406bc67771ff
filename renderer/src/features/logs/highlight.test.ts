import { describe, expect, it } from 'vitest';
import { backtracksBadly, browserRegExp, canHighlight, HIGHLIGHT_SCAN_CHARS, highlightParts, type TextPart } from './highlight.ts';

const marked = (parts: TextPart[]) => parts.map((p) => (p.match ? `[${p.text}]` : p.text)).join('');

describe('highlightParts', () => {
  it('plain text: every occurrence, case-insensitive, nothing lost', () => {
    const text = 'POST /auth/v1/Token | token refresh TOKEN';
    const parts = highlightParts(text, 'token', false);
    expect(marked(parts)).toBe('POST /auth/v1/[Token] | [token] refresh [TOKEN]');
    expect(parts.map((p) => p.text).join('')).toBe(text);
  });
  it('no search, or no match, is one plain part', () => {
    expect(highlightParts('abc', '', false)).toEqual([{ text: 'abc', match: false }]);
    expect(highlightParts('abc', 'x', false)).toEqual([{ text: 'abc', match: false }]);
  });
  it('regex: the pattern’s matches, case-insensitive like the server’s (?i)', () => {
    expect(marked(highlightParts('GET | 503 | x | 504 | 200', '5\\d\\d', true))).toBe('GET | [503] | x | [504] | 200');
    expect(marked(highlightParts('Timeout and TIMEOUT', 'time(out)?', true))).toBe('[Timeout] and [TIMEOUT]');
  });
  it('regex: empty matches highlight nothing and do not loop', () => {
    expect(marked(highlightParts('abc', 'x*', true))).toBe('abc');
    expect(marked(highlightParts('abc', '^', true))).toBe('abc');
  });
  it('an invalid pattern (for the browser) highlights nothing instead of failing', () => {
    expect(highlightParts('a(b', '(', true)).toEqual([{ text: 'a(b', match: false }]);
    expect(canHighlight('(', true)).toBe(false);
    expect(canHighlight('(', false)).toBe(true);
  });
  it('only the head of a long text is scanned, and the rest is kept', () => {
    const text = `${'x'.repeat(HIGHLIGHT_SCAN_CHARS)}needle`;
    const parts = highlightParts(text, 'needle', false);
    expect(parts.some((p) => p.match)).toBe(false);
    expect(parts.map((p) => p.text).join('')).toBe(text);
  });
});

describe('browserRegExp', () => {
  it('turns a leading RE2 flag group into flags', () => {
    expect(browserRegExp('(?s)a.b')?.flags).toBe('gis');
    expect(browserRegExp('(?U)a+')).toBeNull();
  });
  it('refuses patterns that backtrack exponentially in the browser (the server runs RE2, which does not)', () => {
    expect(backtracksBadly('(a+)+$')).toBe(true);
    expect(backtracksBadly('(\\w*)*x')).toBe(true);
    expect(backtracksBadly('(a|aa)+b')).toBe(true);
    expect(backtracksBadly('timeout|5\\d\\d')).toBe(false);
    expect(backtracksBadly('(GET|POST) /rest')).toBe(false);
    expect(browserRegExp('(a+)+$')).toBeNull();
  });
});
