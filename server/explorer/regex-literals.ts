/**
 * Texts every match of an RE2 pattern must contain, so a regex search can use the block index
 * (store/block-grams.ts) like a plain one. Conservative: a pattern with a top-level `|`, or one
 * this reader does not follow, yields none (every block is searched); inside groups, classes
 * and after optional atoms nothing is taken. Only runs of plain printable ASCII count (they are
 * written as they are in a record's JSON bytes).
 */

import { ESCAPED_LITERAL, RE2_META as META } from '../endpoints/re2.ts';

/** The literal runs (at least `min` characters) every match of `pattern` holds; [] when none is known. */
export function requiredLiterals(pattern: string, min = 3): string[] {
  const runs: string[] = [];
  let run = '';
  const cut = () => {
    if (run.length >= min) runs.push(run);
    run = '';
  };
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (depth > 0) {
      // Inside a group: only its end matters (a `|` inside does not make the outer text optional).
      if (c === '\\') i++;
      else if (c === '[') i = skipClass(pattern, i);
      else if (c === '(') depth++;
      else if (c === ')') {
        depth--;
        if (depth === 0) i = skipQuantifier(pattern, i);
      }
      continue;
    }
    if (c === '|') return [];
    let literal: string | null = null;
    if (c === '\\') {
      const e = pattern[i + 1];
      i++;
      if (e !== undefined && ESCAPED_LITERAL.test(e)) literal = e;
    } else if (c === '(') {
      cut();
      depth = 1;
      continue;
    } else if (c === '[') {
      cut();
      i = skipQuantifier(pattern, skipClass(pattern, i));
      continue;
    } else if (!META.has(c)) literal = c;
    if (literal === null || !/^[\x20-\x7e]$/.test(literal) || literal === '"') {
      cut();
      i = skipQuantifier(pattern, i);
      continue;
    }
    // A quantifier after the character: `?`, `*` and `{0` make it optional; `+` and `{n` keep one.
    const q = pattern[i + 1];
    if (q === '?' || q === '*' || (q === '{' && /^\{0[,}]/.test(pattern.slice(i + 1)))) {
      cut();
      i = skipQuantifier(pattern, i);
      continue;
    }
    if (q === '+' || q === '{') {
      run += literal;
      cut();
      i = skipQuantifier(pattern, i);
      continue;
    }
    run += literal;
  }
  if (depth > 0) return [];
  cut();
  return runs;
}

/** The index of the `]` closing the class that opens at `i` (a `]` first in the class is a member). */
function skipClass(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === '^') j++;
  if (p[j] === ']') j++;
  for (; j < p.length; j++) {
    if (p[j] === '\\') j++;
    else if (p[j] === '[' && p[j + 1] === ':') j = p.indexOf(':]', j + 2) + 1 || p.length;
    else if (p[j] === ']') return j;
  }
  return p.length;
}

/** Past a quantifier (and its `?` for laziness) that follows the atom ending at `i`. */
function skipQuantifier(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === '*' || p[j] === '+' || p[j] === '?') j++;
  else if (p[j] === '{') {
    const end = p.indexOf('}', j);
    if (end > 0 && /^\{\d*(,\d*)?\}$/.test(p.slice(j, end + 1))) j = end + 1;
  }
  if (j > i + 1 && p[j] === '?') j++;
  return j - 1;
}
