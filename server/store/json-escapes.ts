/**
 * JSON may spell any character as an escape (`\/`, `\u00e9`, Go writes `&` as `\u0026`), and
 * records are stored as their JSON came. A test of a record's raw bytes for a plain text (the
 * block index, the whole-block and whole-record tests of a search) must also look at the text
 * those escapes stand for, or it rules out records that hold a match.
 */

const BACKSLASH = 0x5c;
const SLASH_ESCAPE = Buffer.from('\\/');
const UNICODE_ESCAPE = Buffer.from('\\u');

const hexValue = (c: number) => (c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1);

function hex4(raw: Uint8Array, at: number): number {
  if (at + 4 > raw.length) return -1;
  let v = 0;
  for (let j = 0; j < 4; j++) {
    const h = hexValue(raw[at + j]!);
    if (h < 0) return -1;
    v = (v << 4) | h;
  }
  return v;
}

/**
 * `raw` with its `\/` and `\uXXXX` escapes written as the UTF-8 of what they stand for (a
 * surrogate pair as one character), or null when it holds none (the common case: two native
 * searches). Escapes of quotes, backslashes and control characters are kept: a search text that
 * the raw tests take holds none of those. Byte offsets differ from `raw`'s: for tests only.
 */
export function unescapedText(raw: Buffer): Buffer | null {
  if (raw.indexOf(SLASH_ESCAPE) < 0 && raw.indexOf(UNICODE_ESCAPE) < 0) return null;
  const out = Buffer.allocUnsafe(raw.length);
  let n = 0;
  let changed = false;
  for (let i = 0; i < raw.length; ) {
    const c = raw[i]!;
    if (c !== BACKSLASH || i + 1 >= raw.length) {
      out[n++] = c;
      i++;
      continue;
    }
    const e = raw[i + 1]!;
    if (e === 0x2f) {
      out[n++] = 0x2f;
      i += 2;
      changed = true;
      continue;
    }
    if (e === 0x75) {
      let cp = hex4(raw, i + 2);
      let width = 6;
      if (cp >= 0xd800 && cp <= 0xdbff && raw[i + 6] === BACKSLASH && raw[i + 7] === 0x75) {
        const low = hex4(raw, i + 8);
        if (low >= 0xdc00 && low <= 0xdfff) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          width = 12;
        }
      }
      // Quotes, backslashes, control characters and lone surrogates stay escaped.
      if (cp >= 0x20 && cp !== 0x22 && cp !== 0x5c && (cp < 0xd800 || cp > 0xdfff)) {
        n += out.write(String.fromCodePoint(cp), n, 'utf8');
        i += width;
        changed = true;
        continue;
      }
    }
    // Any other escape (`\\`, `\"`, `\n`, ...) as it is, both bytes: the second never starts one.
    out[n++] = c;
    out[n++] = e;
    i += 2;
  }
  return changed ? out.subarray(0, n) : null;
}

/** A test of raw record bytes that also holds when the text their escapes stand for passes it. */
export function throughEscapes(test: (raw: Buffer) => boolean): (raw: Buffer) => boolean {
  return (raw) => {
    if (test(raw)) return true;
    const text = unescapedText(raw);
    return text !== null && test(text);
  };
}
