/**
 * Checks a search pattern the way the server compiles it (RE2, case-insensitive, at most 2048
 * characters) before anything is sent: an invalid pattern used to go out as three requests that
 * all came back 400. re2js is the engine the server runs; it is loaded on first use,
 * so the page does not carry it until someone searches with a pattern.
 */

import { MAX_PATTERN_LENGTH } from '../../../../../contract/registry.ts';

let engine: Promise<typeof import('re2js')> | null = null;

/** Why the server would refuse `pattern` as an RE2 search, in its words; null when it would take it. */
export async function re2Problem(pattern: string): Promise<string | null> {
  if (pattern.length > MAX_PATTERN_LENGTH) return `the pattern is longer than ${MAX_PATTERN_LENGTH} characters`;
  const { RE2JS } = await (engine ??= import('re2js'));
  try {
    RE2JS.compile(`(?i)${pattern}`);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
