/** The API key's one trip in the URL fragment (`#key=...`), read apart from the rest of the page's state. */

/**
 * Takes the API key out of a URL fragment (`#key=...`). Returns the key, if any, and the
 * fragment with it removed (other fragment parts are kept). Parsed by hand: a `+` in a key
 * is a plus, not a space as URLSearchParams would read it.
 */
export function extractKeyFromHash(hash: string): { key: string | null; rest: string } {
  const raw = hash.startsWith('#') ? hash.slice(1) : hash;
  if (!raw) return { key: null, rest: '' };
  let key: string | null = null;
  const kept: string[] = [];
  for (const part of raw.split('&')) {
    if (part.startsWith('key=')) {
      try {
        key = decodeURIComponent(part.slice(4));
      } catch {
        key = part.slice(4);
      }
    } else if (part) {
      kept.push(part);
    }
  }
  return { key: key || null, rest: kept.length ? `#${kept.join('&')}` : '' };
}
