/** RE2 (linear-time) patterns, as BigQuery's REGEXP_CONTAINS runs them. */
import { RE2JS } from 're2js';

const compiled = new Map<string, RE2JS>();

/** Compiles (and remembers, for the most recent patterns) an RE2 pattern. */
export function compileRe2(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern);
    if (compiled.size >= 256) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}

/** True when the pattern matches anywhere in the text. */
export function re2Contains(pattern: string, text: string): boolean {
  return compileRe2(pattern).test(text);
}
