/**
 * A small, fast, seeded PRNG (sfc32) and the draws the demo generator needs. Everything in the
 * demo data comes from here, so one seed reproduces every byte; Math.random is never used.
 */

const HEX1 = '0123456789abcdef';
/** Two hex digits for every byte: one table lookup per byte instead of toString(16) + padStart. */
const HEX2: readonly string[] = Array.from({ length: 256 }, (_, i) => HEX1[i >> 4]! + HEX1[i & 15]!);

function hex2(b: number): string {
  return HEX2[b & 255]!;
}

/** Eight hex digits of a 32-bit value. */
export function hex8(v: number): string {
  return hex2(v >>> 24) + hex2(v >>> 16) + hex2(v >>> 8) + hex2(v);
}

/** murmur3's finalizer: spreads any 32-bit input over all bits (for seeding). */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** sfc32 (Chris Doty-Humphrey's Small Fast Counting generator): 128-bit state, passes PractRand. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal: number | undefined;

  /**
   * `seed` is any integer (reduced to 64 bits of seed material); `stream` separates independent
   * sequences under one seed (one per source), so adding a draw in one source never shifts another.
   */
  constructor(seed: number, stream = 0) {
    const lo = seed | 0;
    const hi = Math.floor(seed / 4294967296) | 0;
    this.a = mix32(lo ^ 0x9e3779b9);
    this.b = mix32(hi ^ 0x243f6a88 ^ Math.imul(stream, 0x27d4eb2f));
    this.c = mix32((lo + Math.imul(stream + 1, 0x165667b1)) | 0);
    this.d = 1;
    for (let i = 0; i < 15; i++) this.u32();
  }

  /** A uniform 32-bit unsigned integer. */
  u32(): number {
    const t0 = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    const c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    const t = (t0 + this.d) | 0;
    this.c = (c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Skewed towards the front of the list (a few heavy hitters, a long tail of rare ones). */
  pickSkewed<T>(items: readonly T[]): T {
    const r = this.next();
    return items[Math.floor(r * r * items.length)]!;
  }

  /** Standard normal (Box-Muller; the second value of each pair is kept for the next call). */
  normal(): number {
    const spare = this.spareNormal;
    if (spare !== undefined) {
      this.spareNormal = undefined;
      return spare;
    }
    const u = 1 - this.next(); // (0, 1]: log(0) would be -Infinity
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Log-normal with the given median; `sigma` is the standard deviation of the log. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** A random version-4 UUID string (lowercase, 8-4-4-4-12). */
  uuid(): string {
    const a = this.u32();
    const b = this.u32();
    const c = this.u32();
    const d = this.u32();
    return (
      hex8(a) +
      '-' +
      hex2(b >>> 24) +
      hex2(b >>> 16) +
      '-4' +
      HEX1[(b >>> 8) & 15]! +
      hex2(b) +
      '-' +
      HEX1[8 | ((c >>> 28) & 3)]! +
      HEX1[(c >>> 24) & 15]! +
      hex2(c >>> 16) +
      '-' +
      hex2(c >>> 8) +
      hex2(c) +
      hex8(d)
    );
  }

  /** `n` random lowercase hex digits. */
  hex(n: number): string {
    let s = '';
    while (s.length + 8 <= n) s += hex8(this.u32());
    if (s.length < n) s += hex8(this.u32()).slice(0, n - s.length);
    return s;
  }

  /** `n` random characters from `alphabet`. */
  chars(n: number, alphabet: string): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.next() * alphabet.length)]!;
    return s;
  }
}

/** A fixed discrete distribution: pick() is a linear scan, fastest for the short lists used here. */
export class Weighted<T> {
  readonly items: readonly T[];
  private readonly cumulative: Float64Array;

  constructor(entries: ReadonlyArray<readonly [T, number]>) {
    if (entries.length === 0) throw new Error('Weighted needs at least one entry');
    this.items = entries.map((e) => e[0]);
    this.cumulative = new Float64Array(entries.length);
    let total = 0;
    entries.forEach(([, w], i) => {
      total += w;
      this.cumulative[i] = total;
    });
    for (let i = 0; i < entries.length; i++) this.cumulative[i] = this.cumulative[i]! / total;
  }

  pick(rng: Rng): T {
    const r = rng.next();
    const cum = this.cumulative;
    const last = cum.length - 1;
    for (let i = 0; i < last; i++) if (r < cum[i]!) return this.items[i]!;
    return this.items[last]!;
  }
}

/** Deep-freezes a value built once and shared by many records (read-only by contract). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** A seeded uniform [0, 1) source as a plain function (for tests that replay a random case by its seed). */
export function seededUniform(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next();
}
