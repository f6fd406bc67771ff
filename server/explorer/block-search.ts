/**
 * Whether a block of raw records holds a text, ASCII case-insensitively, as fast as the block
 * can be read: a search over the whole store reads every block. Two ways, chosen per text:
 * - a part of the text with at most two letters (`-no-`, `.php`, `/v1/`): Buffer.indexOf (native,
 *   several GB/s) for each of its case spellings (at most four), each hit checked in place;
 * - otherwise (all letters, like `timeout`): V8's regular expression engine on the block read as
 *   latin1, a literal with the `i` flag (no backtracking: the pattern is plain text).
 * Only ASCII letters fold, in both: a latin1 character never folds to an ASCII one in a JS
 * regular expression without the `u` flag.
 */

const isLower = (c: number) => c >= 0x61 && c <= 0x7a;
/** Letters an anchor may hold: 2 letters = 4 spellings to look for. */
const MAX_ANCHOR_LETTERS = 2;
const ANCHOR_BYTES = 4;

/**
 * The test of a block for `lower`, a lower-case printable ASCII text.
 */
export function blockSearch(lower: string): (block: Buffer) => boolean {
  const needle = Buffer.from(lower, 'latin1');
  if (needle.length === 0) return () => true;
  const k = Math.min(ANCHOR_BYTES, needle.length);
  let at = 0;
  let letters = Infinity;
  for (let s = 0; s + k <= needle.length; s++) {
    let l = 0;
    for (let j = 0; j < k; j++) if (isLower(needle[s + j]!)) l++;
    if (l < letters) {
      letters = l;
      at = s;
    }
  }
  if (letters > MAX_ANCHOR_LETTERS) {
    const re = new RegExp(lower.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'i');
    return (block) => re.test(block.toString('latin1'));
  }
  // Every spelling of the anchor: each letter lower or upper case.
  const spellings: Buffer[] = [];
  for (let mask = 0; mask < 1 << letters; mask++) {
    const a = Buffer.from(needle.subarray(at, at + k));
    let bit = 0;
    for (let j = 0; j < k; j++) {
      if (!isLower(a[j]!)) continue;
      if (mask & (1 << bit)) a[j]! -= 32;
      bit++;
    }
    spellings.push(a);
  }
  const matchesAt = (block: Buffer, start: number) => {
    if (start < 0 || start + needle.length > block.length) return false;
    for (let j = 0; j < needle.length; j++) {
      let h = block[start + j]!;
      if (h >= 0x41 && h <= 0x5a) h += 32;
      if (h !== needle[j]) return false;
    }
    return true;
  };
  return (block) => {
    for (const a of spellings) {
      for (let pos = block.indexOf(a); pos >= 0; pos = block.indexOf(a, pos + 1)) if (matchesAt(block, pos - at)) return true;
    }
    return false;
  };
}
