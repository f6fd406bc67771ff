/**
 * Highlighting search matches in table cells. The server matches in RE2 (linear time); this
 * only marks what to show, with the browser's RegExp, and gives up quietly whenever that
 * engine cannot follow the pattern or could take exponential time on it.
 */

export interface TextPart {
  text: string;
  match: boolean;
}

/** A compiled highlighter: splits text into matching and other parts. */
export type Highlighter = (text: string) => TextPart[];

const NONE: Highlighter = (text) => [{ text, match: false }];

/** At most this many characters of a cell are scanned (cells are one line and cut off anyway). */
export const HIGHLIGHT_SCAN_CHARS = 2000;
const MAX_MATCHES = 200;

/**
 * A group that is itself repeated and contains a repetition (`(a+)+`, `(\w*)*`, `(a|a?)+`) makes
 * a backtracking engine exponential on some inputs; RE2 does not care, the browser does.
 */
export function backtracksBadly(pattern: string): boolean {
  return /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)[+*{]/.test(pattern) || /\((?:[^()\\]|\\.)*\|(?:[^()\\]|\\.)*\)[+*{]/.test(pattern);
}

/**
 * Compiles an RE2 pattern for the browser, case-insensitive as the server runs it (`(?i)` is
 * prefixed there); a leading flag group (`(?s)`, `(?m)`) becomes RegExp flags. Null when the
 * browser cannot compile it or should not run it.
 */
export function browserRegExp(pattern: string): RegExp | null {
  let source = pattern;
  let flags = 'gi';
  const lead = /^\(\?([imsU]+)\)/.exec(source);
  if (lead) {
    if (lead[1]!.includes('U')) return null; // ungreedy has no RegExp counterpart
    for (const f of lead[1]!) if (!flags.includes(f)) flags += f;
    source = source.slice(lead[0].length);
  }
  if (!source || backtracksBadly(source)) return null;
  try {
    return new RegExp(source, flags);
  } catch {
    return null;
  }
}

function split(text: string, ranges: Array<[number, number]>): TextPart[] {
  if (ranges.length === 0) return [{ text, match: false }];
  const out: TextPart[] = [];
  let at = 0;
  for (const [s, e] of ranges) {
    if (s > at) out.push({ text: text.slice(at, s), match: false });
    out.push({ text: text.slice(s, e), match: true });
    at = e;
  }
  if (at < text.length) out.push({ text: text.slice(at), match: false });
  return out;
}

/** Case-insensitive occurrences of plain text. */
function plainRanges(text: string, needle: string): Array<[number, number]> {
  const hay = text.toLowerCase();
  const n = needle.toLowerCase();
  const out: Array<[number, number]> = [];
  // Lower-casing can change lengths (rare letters); then positions would not line up: skip.
  if (!n || hay.length !== text.length) return out;
  let i = hay.indexOf(n);
  while (i >= 0 && out.length < MAX_MATCHES) {
    out.push([i, i + n.length]);
    i = hay.indexOf(n, i + n.length);
  }
  return out;
}

function regexRanges(text: string, re: RegExp): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (out.length < MAX_MATCHES && (m = re.exec(text)) !== null) {
    if (m[0].length === 0) {
      re.lastIndex += 1; // an empty match highlights nothing; step past it
      continue;
    }
    out.push([m.index, m.index + m[0].length]);
  }
  return out;
}

/** Splits `text` by the search's matches (only the first HIGHLIGHT_SCAN_CHARS are looked at). */
export function highlightParts(text: string, q: string, regex: boolean): TextPart[] {
  return makeHighlighter(q, regex)(text);
}

export function makeHighlighter(q: string, regex: boolean): Highlighter {
  if (!q) return NONE;
  const re = regex ? browserRegExp(q) : null;
  if (regex && !re) return NONE;
  return (text) => {
    const head = text.length > HIGHLIGHT_SCAN_CHARS ? text.slice(0, HIGHLIGHT_SCAN_CHARS) : text;
    const parts = split(head, re ? regexRanges(head, re) : plainRanges(head, q));
    if (head.length < text.length) parts.push({ text: text.slice(HIGHLIGHT_SCAN_CHARS), match: false });
    return parts;
  };
}

/** Whether the browser could highlight this search (shown as a hint when it cannot). */
export function canHighlight(q: string, regex: boolean): boolean {
  return !q || !regex || browserRegExp(q) !== null;
}
