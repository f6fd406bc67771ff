import { describe, expect, it } from 'vitest';
import { curlCommand, shellQuote } from './curl.ts';
import { formatBytes, formatCompact, formatInt, formatMs, formatPercent } from './format.ts';
import { escapeRe2 } from './regex.ts';

describe('number formatting', () => {
  it('groups thousands', () => {
    expect(formatInt(1234567)).toBe('1,234,567');
    expect(formatInt(0)).toBe('0');
  });
  it('gives ms decimals that fit their size', () => {
    expect(formatMs(0.4234)).toBe('0.42 ms');
    expect(formatMs(8.256)).toBe('8.26 ms');
    expect(formatMs(42.46)).toBe('42.5 ms');
    expect(formatMs(1234.4)).toBe('1,234 ms');
    expect(formatMs(0)).toBe('0 ms');
    expect(formatMs(null)).toBe('—');
  });
  it('percent and bytes', () => {
    expect(formatPercent(0.0417)).toBe('4.17 %');
    expect(formatPercent(0.125)).toBe('12.5 %');
    expect(formatPercent(null)).toBe('—');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(5 * 1024 * 1024)).toBe('5.0 MB');
  });
  it('compact axis ticks', () => {
    expect(formatCompact(950)).toBe('950');
    expect(formatCompact(12_500)).toBe('12.5k');
    expect(formatCompact(3_000_000)).toBe('3M');
  });
});

describe('escapeRe2', () => {
  it('escapes every metacharacter', () => {
    expect(escapeRe2('abc.supabase.co')).toBe('abc\\.supabase\\.co');
    expect(escapeRe2('a+b*(c)[d]{e}|f^$?\\')).toBe('a\\+b\\*\\(c\\)\\[d\\]\\{e\\}\\|f\\^\\$\\?\\\\');
    expect(escapeRe2('ouwmmbchcsjxvtfobujc')).toBe('ouwmmbchcsjxvtfobujc');
  });
});

describe('curl', () => {
  it('quotes for the shell and encodes the query', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(curlCommand('http://127.0.0.1:4100', 'usage.api-counts', { project: 'a\\.b', interval: 'daily' }, 'k')).toBe(
      `curl -sS -H 'X-API-KEY: k' 'http://127.0.0.1:4100/api/endpoints/usage.api-counts?project=a%5C.b&interval=daily'`,
    );
  });
});

import { formatAxisMs } from './format.ts';

describe('formatAxisMs', () => {
  it('keeps log-axis ticks short', () => {
    expect([0.01, 0.1, 1, 10, 100, 1000, 10000, 100000].map(formatAxisMs)).toEqual(['0.01', '0.1', '1', '10', '100', '1k', '10k', '100k']);
    expect(formatAxisMs(2500)).toBe('2.5k');
    expect(formatAxisMs(8500)).toBe('8.5k');
  });
});
