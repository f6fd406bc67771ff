/**
 * Whether a block of raw records holds a text, ASCII case-insensitively, as fast as the block
 * can be read: a search over the whole store reads every block. Two ways, chosen per text:
 * - a part of the text with at most two letters (`-no-`, `.php`, `/v1/`): Buffer.indexOf (native,
 *   several GB/s) for each of its case spellings (at most four), each hit checked in place;
 * - otherwise (all letters, like `timeout`): the same with a two-letter anchor, the pair of its
 *   rarest letters (by their frequency in English text), so hits to check stay few. Reading
 *   the block as a latin1 string for a regular expression cost more than the search (a copy
 *   of every block), measured: 0.4-1 ms a block against 0.01-0.3 ms.
 * Only ASCII letters fold.
 */

/** Letters from the most to the least common in English text: a rarer pair makes fewer hits to check. */
const BY_FREQUENCY = 'etaoinsrhldcumfpgwybvkxjqz';
const commonness = (c: number) => {
  const i = BY_FREQUENCY.indexOf(String.fromCharCode(c));
  return i < 0 ? 0 : BY_FREQUENCY.length - i;
};

const isLower = (c: number) => c >= 0x61 && c <= 0x7a;
/** Letters an anchor may hold: 2 letters = 4 spellings to look for. */
const MAX_ANCHOR_LETTERS = 2;
const ANCHOR_BYTES = 4;

/**
 * The test of a block for `lower`, a lower-case printable ASCII text.
 */
export function blockSearch(lower: string): (block: Buffer) => boolean {
  const find = textFinder(lower);
  return (block) => {
    let found = false;
    find(block, () => (found = true));
    return found;
  };
}

/**
 * Every place `lower` (a lower-case printable ASCII text) starts in a block, ASCII letters
 * folded: `visit` gets each start (not in order: one spelling of the anchor after another) and
 * returns true to stop. An empty text starts at 0.
 */
export function textFinder(lower: string, onCheck?: () => void): (block: Buffer, visit: (at: number) => boolean) => void {
  const needle = Buffer.from(lower, 'latin1');
  if (needle.length === 0) return (_, visit) => void visit(0);
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
  let width = k;
  if (letters > MAX_ANCHOR_LETTERS) {
    // Every window of four holds three letters or more: the rarest pair of neighbours instead.
    width = Math.min(2, needle.length);
    let best = Infinity;
    for (let s = 0; s + width <= needle.length; s++) {
      let c = 0;
      for (let j = 0; j < width; j++) c += commonness(needle[s + j]!);
      if (c < best) {
        best = c;
        at = s;
      }
    }
    letters = 0;
    for (let j = 0; j < width; j++) if (isLower(needle[at + j]!)) letters++;
  }
  // Every spelling of the anchor: each letter lower or upper case.
  const spellings: Buffer[] = [];
  for (let mask = 0; mask < 1 << letters; mask++) {
    const a = Buffer.from(needle.subarray(at, at + width));
    let bit = 0;
    for (let j = 0; j < width; j++) {
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
  return (block, visit) => {
    for (const a of spellings) {
      for (let pos = block.indexOf(a); pos >= 0; pos = block.indexOf(a, pos + 1)) {
        onCheck?.();
        if (matchesAt(block, pos - at) && visit(pos - at)) return;
      }
    }
  };
}

/** Bytes per place the anchor is found in past which denseTextFinder is the faster (a native call and a check each: about 350 ns against 1.5 ns a byte). */
const DENSE_BYTES_PER_CHECK = 256;

/**
 * A finder for bytes searched a step at a time (urls.log, 50,000 lines a step): textFinder,
 * whose anchor's places are counted; once a step met one every DENSE_BYTES_PER_CHECK bytes or
 * more (`/v1/` of `/rest/v1/` is in every URL), denseTextFinder for the steps after it. A rare
 * text keeps textFinder (0.11 s against 0.16 s over urls.log at 10M edge records).
 */
export function adaptiveTextFinder(lower: string): (bytes: Buffer, visit: (at: number) => boolean) => void {
  let checks = 0;
  const sparse = textFinder(lower, () => checks++);
  let dense: ReturnType<typeof denseTextFinder> | null = null;
  return (bytes, visit) => {
    if (dense) return dense(bytes, visit);
    checks = 0;
    sparse(bytes, visit);
    if (checks * DENSE_BYTES_PER_CHECK > bytes.length) dense = denseTextFinder(lower);
  };
}

/** Bytes of a window denseTextFinder reads as one string: below V8's large-object size, so each is made in the young generation (5 MB strings went to fresh pages each time: two thirds of the search's time in a just-started server). */
const DENSE_WINDOW = 64 * 1024;

/**
 * textFinder for a text expected on most lines of what is searched (a week's distinct URLs and
 * `/rest/v1/`): one case-insensitive regular expression over the bytes read as latin1, a window
 * at a time (each window reaches a text's length into the next, and a search goes on from the
 * end of the last place found, so places are those one pass over the whole would give).
 * textFinder calls Buffer.indexOf again for each hit, and a native call per hit cost more than
 * the copy (urls.log at 10M edge records: 0.27 s against 0.59 s for `/rest/v1/`; 0.16 s against
 * 0.11 s for a rare text). `test` rather than `exec`: no match object per place (a place ends
 * where the expression stopped, as a text of ASCII matches as many characters as it has). Read as
 * latin1, only ASCII letters fold with ASCII ones (the case-insensitive flag never folds a
 * character of 128 or more into one below), as in textFinder. Places found do not overlap (each
 * starts after the last one's end).
 */
export function denseTextFinder(lower: string): (bytes: Buffer, visit: (at: number) => boolean) => void {
  if (lower === '') return (_, visit) => void visit(0);
  const re = new RegExp(lower.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'), 'gi');
  const n = lower.length;
  return (bytes, visit) => {
    // Where the next place may start (the end of the last one).
    let from = 0;
    for (let x = 0; x + n <= bytes.length; x += DENSE_WINDOW) {
      const text = bytes.toString('latin1', x, Math.min(bytes.length, x + DENSE_WINDOW + n - 1));
      re.lastIndex = Math.max(0, from - x);
      while (re.test(text)) {
        const at = x + re.lastIndex - n;
        // Starts in the next window: found there.
        if (at >= x + DENSE_WINDOW) break;
        from = at + n;
        if (visit(at)) return;
      }
    }
  };
}

