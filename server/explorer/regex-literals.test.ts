import { describe, expect, it } from 'vitest';
import { RE2JS } from 're2js';
import { requiredLiterals } from './regex-literals.ts';

describe('requiredLiterals', () => {
  it('takes the runs of plain text every match holds, worked out by hand', () => {
    expect(requiredLiterals('timeout')).toEqual(['timeout']);
    expect(requiredLiterals('upstream.*timeout')).toEqual(['upstream', 'timeout']);
    expect(requiredLiterals('/rest/v1/(todos|orders)\\?id=\\d+')).toEqual(['/rest/v1/', '?id=']);
    expect(requiredLiterals('colou?r error')).toEqual(['colo', 'r error']);
    expect(requiredLiterals('abc+def')).toEqual(['abc', 'def']);
    expect(requiredLiterals('x{0,2}yzw')).toEqual(['yzw']);
    expect(requiredLiterals('[a-z]+ing\\b')).toEqual(['ing']);
    expect(requiredLiterals('^GET \\| 50\\d')).toEqual(['GET | 50']);
    expect(requiredLiterals('(?i)Timeout')).toEqual(['Timeout']);
  });

  it('knows none when a top-level alternative, or a short text, makes every literal optional', () => {
    expect(requiredLiterals('timeout|refused')).toEqual([]);
    expect(requiredLiterals('ab')).toEqual([]);
    expect(requiredLiterals('a.b.c')).toEqual([]);
    expect(requiredLiterals('(unclosed')).toEqual([]);
    expect(requiredLiterals('caf\u00e9 time')).toEqual(['caf', ' time']);
    expect(requiredLiterals('say "hello"')).toEqual(['say ', 'hello']);
  });

  it('every literal it gives is in every text the pattern matches (random patterns over a small alphabet)', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const atoms = ['a', 'b', 'c', 'ab', '.', 'a?', 'b*', 'c+', '(a|b)', '[bc]', 'x{0,1}', '\\.', 'd{2}', '|'];
    const alphabet = 'abcdx.';
    let checked = 0;
    for (let i = 0; i < 400; i++) {
      const pattern = Array.from({ length: 1 + rnd(6) }, () => atoms[rnd(atoms.length)]).join('');
      let re: RE2JS;
      try {
        re = RE2JS.compile(pattern);
      } catch {
        continue;
      }
      const lits = requiredLiterals(pattern, 1);
      for (let j = 0; j < 200; j++) {
        const text = Array.from({ length: rnd(12) }, () => alphabet[rnd(alphabet.length)]).join('');
        if (!re.matcher(text).find()) continue;
        checked++;
        for (const l of lits) expect(text.includes(l), `${pattern} matched ${text} without ${l}`).toBe(true);
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });
});
