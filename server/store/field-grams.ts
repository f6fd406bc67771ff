/**
 * The block index's field bits (block-grams.ts): per record block, a Bloom filter of "key and
 * the first four characters of its value" for every scalar value in the block, so a field
 * condition on a path the field index leaves out (`request.headers.cf_ray:fb5f*`) reads only
 * the blocks that may hold it. The trigram bits cannot do that for short or common texts: the
 * four hex digits of a ray prefix are among nearly every block's trigrams.
 *
 * Read from the raw bytes without parsing them: at each `:` after a quoted key, the value (one
 * element arrays looked through, as field paths are) gives a gram of the key, as it decodes, and
 * up to four characters of the value, as they decode; a value that ends within four characters
 * gives a gram marked short. Records whose metadata is JSON held in a string (`\"key\":\"v\"`)
 * are read again from the block with one level of escapes decoded. Spurious grams (a `":` inside
 * a text) only set a few more bits; a gram is never missed for a key and value a record holds.
 *
 * A condition uses the bits only when its first four characters are printable ASCII without a
 * quote or backslash, and its key is at most MAX_KEY_BYTES of UTF-8. A number's value is its
 * text as the records' bytes spell it, so the caller leaves out values a number's text
 * (`String(n)`) may match: `1e3` in the bytes is 1000.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const BRACKET = 0x5b;
const BRACE = 0x7b;
/** Characters of a value a gram holds. */
export const GRAM_CHARS = 4;
/** Keys longer than this (decoded, UTF-8) get no gram; a raw key is looked at up to six times as long (`\uXXXX`). */
export const MAX_KEY_BYTES = 40;
const MAX_RAW_KEY = MAX_KEY_BYTES * 6 + 2;
/** Bits set per gram. */
const PROBES = 3;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Whether the byte at `at` is escaped (an odd run of backslashes before it). */
function escaped(b: Uint8Array, at: number): boolean {
  let n = 0;
  for (let i = at - 1; i >= 0 && b[i] === BACKSLASH; i--) n++;
  return (n & 1) === 1;
}

const FNV_START = 0x811c9dc5;
const fnv = (h: number, byte: number) => Math.imul(h ^ byte, 0x01000193);
const KEY_END = 0x100;
const SHORT = 0x101;

function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Sets the PROBES bits of a gram whose hash is `h` in `bits`, from bit `from` on, `count` bits (a power of two). */
function setProbes(h: number, bits: Int32Array, from: number, count: number): void {
  let x = mix(h);
  for (let i = 0; i < PROBES; i++) {
    const at = from + (x & (count - 1));
    bits[at >>> 5]! |= 1 << (at & 31);
    x = mix((x + 0x9e3779b9) | 0);
  }
}

/** The hash of a key's UTF-8 bytes, before its value's characters. */
function keyHash(bytes: Uint8Array, from: number, to: number): number {
  let h = FNV_START;
  for (let i = from; i < to; i++) h = fnv(h, bytes[i]!);
  return fnv(h, KEY_END);
}

/** Set false by stringGram when the value gets no gram. */
let gramOk = true;

/**
 * `h` followed by up to GRAM_CHARS characters of the JSON string whose first character is at
 * `at` (after its quote), as they decode, then SHORT when the string ends within them; `gramOk`
 * false when one of them is not ASCII (no condition asks for it) or the bytes end first.
 */
function stringGram(b: Uint8Array, at: number, h: number): number {
  let i = at;
  for (let chars = 0; chars < GRAM_CHARS; chars++) {
    if (i >= b.length) return (gramOk = false), h;
    let c = b[i]!;
    if (c === QUOTE) return fnv(h, SHORT);
    if (c === BACKSLASH) {
      if (i + 1 >= b.length) return (gramOk = false), h;
      const e = b[i + 1]!;
      if (e === 0x75) {
        c = hex4(b, i + 2);
        i += 6;
      } else {
        c = e === 0x62 ? 8 : e === 0x66 ? 12 : e === 0x6e ? 10 : e === 0x72 ? 13 : e === 0x74 ? 9 : e;
        i += 2;
      }
    } else i++;
    if (c < 0 || c >= 0x80) return (gramOk = false), h;
    h = fnv(h, c);
  }
  return h;
}

/** The value of four hex digits at `at`, or -1. */
function hex4(b: Uint8Array, at: number): number {
  let v = 0;
  for (let i = at; i < at + 4; i++) {
    const c = b[i];
    const d = c === undefined ? -1 : c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (d < 0) return -1;
    v = (v << 4) | d;
  }
  return v;
}

const endsLiteral = (c: number | undefined) => c === undefined || c === 0x2c || c === 0x7d || c === 0x5d || isSpace(c);

/** `h` followed by up to GRAM_CHARS bytes of a bare literal (`true`, `12`) at `at`, then SHORT when it ends within them. */
function literalGram(b: Uint8Array, at: number, h: number): number {
  let i = at;
  for (; i < at + GRAM_CHARS; i++) {
    const c = b[i];
    if (endsLiteral(c)) return fnv(h, SHORT);
    h = fnv(h, c!);
  }
  return h;
}

/** The key's UTF-8 bytes when it holds escapes (rare), or null when it does not read as a JSON string. */
function decodedKey(b: Uint8Array, open: number, close: number): Uint8Array | null {
  try {
    const text: unknown = JSON.parse(Buffer.from(b.buffer, b.byteOffset + open, close + 1 - open).toString('utf8'));
    return typeof text === 'string' ? Buffer.from(text, 'utf8') : null;
  } catch {
    return null;
  }
}

/** Sets the grams of `b`'s key-value pairs in `bits`, from bit `from` on, `count` bits. */
function addPairs(b: Uint8Array, bits: Int32Array, from: number, count: number): void {
  const n = b.length;
  // A plain loop: Buffer.indexOf's call costs more than the few bytes between colons.
  for (let i = 0; i < n; i++) {
    if (b[i] !== COLON) continue;
    let close = i - 1;
    while (close >= 0 && isSpace(b[close]!)) close--;
    if (close < 1 || b[close] !== QUOTE || escaped(b, close)) continue;
    let open = close - 1;
    const stop = Math.max(0, close - MAX_RAW_KEY);
    let hasEscape = false;
    for (; open >= stop; open--) {
      const c = b[open]!;
      if (c === QUOTE && !escaped(b, open)) break;
      if (c === BACKSLASH) hasEscape = true;
    }
    if (open < stop) continue;
    let v = i + 1;
    while (v < n && (isSpace(b[v]!) || b[v] === BRACKET)) v++;
    if (v >= n || b[v] === BRACE) continue;
    let h: number;
    if (!hasEscape) h = keyHash(b, open + 1, close);
    else {
      const key = decodedKey(b, open, close);
      if (!key) continue;
      h = keyHash(key, 0, key.length);
    }
    gramOk = true;
    h = b[v] === QUOTE ? stringGram(b, v + 1, h) : literalGram(b, v, h);
    if (gramOk) setProbes(h, bits, from, count);
  }
}

/**
 * One level of JSON escapes decoded (`\"` too, unlike the trigrams' unescapedText), so JSON
 * held in a string reads as JSON; null when `raw` holds no escaped quote.
 */
function quotesUnescaped(raw: Buffer): Buffer | null {
  if (raw.indexOf('\\"') < 0) return null;
  const out = Buffer.allocUnsafe(raw.length);
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === BACKSLASH && i + 1 < raw.length) {
      const e = raw[i + 1]!;
      // `\uXXXX` and the letters stay: the key and value readers decode them; `\"`, `\\`, `\/` drop a level.
      if (e === QUOTE || e === BACKSLASH || e === 0x2f) {
        out[n++] = e;
        i++;
        continue;
      }
    }
    out[n++] = c;
  }
  return out.subarray(0, n);
}

/** Sets the field bits of a raw block: `bits` (an Int32Array) from bit `from` on, `count` bits. */
export function addFieldGrams(bits: Int32Array, from: number, count: number, raw: Buffer): void {
  addPairs(raw, bits, from, count);
  const inner = quotesUnescaped(raw);
  if (inner) addPairs(inner, bits, from, count);
}

/**
 * The bit positions (from `from`, `count` bits) every block holding a record whose value at a
 * path ending in `key`, as its bytes spell it, equals `value` (or starts with it, `prefix`) has,
 * or null when the field bits cannot tell (see the header).
 */
export function fieldGramBits(key: string, value: string, prefix: boolean, from: number, count: number): number[] | null {
  if (prefix && value.length < GRAM_CHARS) return null;
  const head = value.slice(0, GRAM_CHARS);
  if (!/^[\x20-\x7e]+$/.test(head) || /["\\]/.test(head)) return null;
  const keyBytes = Buffer.from(key, 'utf8');
  if (keyBytes.length > MAX_KEY_BYTES) return null;
  let h = keyHash(keyBytes, 0, keyBytes.length);
  for (let i = 0; i < head.length; i++) h = fnv(h, head.charCodeAt(i));
  if (value.length < GRAM_CHARS) h = fnv(h, SHORT);
  const bits = new Int32Array(Math.ceil((from + count) / 32));
  setProbes(h, bits, from, count);
  const out: number[] = [];
  for (let at = 0; at < from + count; at++) if (bits[at >>> 5]! & (1 << (at & 31))) out.push(at);
  return out;
}
