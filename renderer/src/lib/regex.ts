/** Escapes text so an RE2 pattern matches it literally (the api-counts `project` parameter). */
export function escapeRe2(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
