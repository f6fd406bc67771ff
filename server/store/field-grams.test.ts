/**
 * The block index's field bits (field-grams.ts, block-grams.ts) against the records read here
 * with JSON.parse: random metadata written compact, with spaces, with every character it can
 * escaped (`\uXXXX`, `\/`), and as JSON held in a string; every block holding a record whose
 * value at a path equals or starts with a condition's value has that condition's bits (no
 * block that can match is ruled out), and conditions no record meets rule out nearly every block.
 */
import { describe, expect, it } from 'vitest';
import { blockBits, fieldBits, mayHold } from './block-grams.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function lcg(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return Math.floor(s / 65536) % n;
  };
}

const HEX = '0123456789abcdef';
const KEYS = ['cf_ray', 'city', 'user_name', 'code', 'x', 'naïve_key', 'with space', 'q"uote', 'back\\slash', 'Ünï'];
const TEXTS = ['fb5fda31f6a1f0ed', 'DE', 'Zürich', 'café au lait', 'a"b"c', 'back\\slash', 'http://x/y', '', 'abc', 'abcd', 'true', 'null', '1e3', '12.5', ' 7 ', '東京タワー', 'tab\there', 'MixedCase'];

/** Random metadata: nested objects, one-element arrays, numbers, booleans, nulls, hex rays. */
function metadata(r: (n: number) => number, depth = 0): { [k: string]: Json } {
  const out: { [k: string]: Json } = {};
  const n = 2 + r(4);
  for (let i = 0; i < n; i++) {
    const key = KEYS[r(KEYS.length)]!;
    const kind = r(10);
    let v: Json;
    if (kind < 3) v = Array.from({ length: 16 }, () => HEX[r(16)]).join('');
    else if (kind < 6) v = TEXTS[r(TEXTS.length)]!;
    else if (kind === 6) v = [1, -2.5, 1e21, 0, true, false, null][r(7)]!;
    else if (kind === 7 && depth < 3) v = metadata(r, depth + 1);
    else if (kind === 8) v = [r(2) ? TEXTS[r(TEXTS.length)]! : metadata(r, depth + 1)];
    else v = [TEXTS[r(TEXTS.length)]!, 'second'];
    out[key] = v;
  }
  return out;
}

/** JSON with a space after every `:` and `,` and inside brackets (strings left alone). */
function spaced(v: Json): string {
  if (Array.isArray(v)) return `[ ${v.map(spaced).join(' , ')} ]`;
  if (v !== null && typeof v === 'object') return `{ ${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)} :  ${spaced(x)}`).join(', ')} }`;
  return JSON.stringify(v);
}

/** JSON with every character of its strings but ASCII letters and digits written `\uXXXX`, and `/` as `\/`. */
function escaped(v: Json): string {
  const str = (s: string) => `"${[...s].map((ch) => (/^[a-z0-9]$/i.test(ch) ? ch : ch === '/' ? '\\/' : ch.split('').map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''))).join('')}"`;
  if (Array.isArray(v)) return `[${v.map(escaped).join(',')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${str(k)}:${escaped(x)}`).join(',')}}`;
  return typeof v === 'string' ? str(v) : JSON.stringify(v);
}

/** A record's line, its metadata written one of four ways. */
function line(m: { [k: string]: Json }, how: number, i: number): string {
  const head = `{"id":"r${i}","timestamp":${1_700_000_000_000_000 + i},"event_message":"GET | 200 | x: y"`;
  if (how === 0) return `${head},"metadata":${JSON.stringify(m)}}`;
  if (how === 1) return `${head}, "metadata" : ${spaced(m)} }`;
  if (how === 2) return `${head},"metadata":${escaped(m)}}`;
  return `${head},"metadata":${JSON.stringify(JSON.stringify(m))}}`;
}

/** Every (last key, text) a path of the metadata leads to, one-element arrays looked through, read here. */
function leaves(m: Json, out: Array<{ key: string; text: string }> = [], key: string | null = null): Array<{ key: string; text: string }> {
  let v = m;
  while (Array.isArray(v) && v.length === 1) v = v[0]!;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v)) leaves(x, out, k);
  } else if (key !== null && v !== null) out.push({ key, text: typeof v === 'string' ? v : Array.isArray(v) ? JSON.stringify(v) : String(v) });
  return out;
}

describe('field bits', () => {
  const r = lcg(20261129);
  const blocks: Array<{ bits: Buffer; pairs: Array<{ key: string; text: string }> }> = [];
  for (let b = 0, i = 0; b < 60; b++) {
    const lines: string[] = [];
    const pairs: Array<{ key: string; text: string }> = [];
    for (let k = 0; k < 20; k++, i++) {
      const m = metadata(r);
      lines.push(line(m, r(4), i));
      leaves(m, pairs);
    }
    const bits = blockBits(Buffer.from(lines.join('\n') + '\n'));
    blocks.push({ bits: Buffer.from(bits.buffer, bits.byteOffset, bits.byteLength), pairs });
  }

  it('never rules out a block holding a record that meets the condition', () => {
    let checked = 0;
    for (const { bits, pairs } of blocks) {
      for (const { key, text } of pairs) {
        for (const [value, prefix] of [
          [text, false],
          [text.slice(0, 4), true],
          [text.slice(0, 9), true],
        ] as const) {
          const need = fieldBits(key, value, prefix);
          if (!need) continue;
          checked++;
          expect(mayHold(bits, 0, need), `${key}: ${value}${prefix ? '*' : ''}`).toBe(true);
        }
      }
    }
    expect(checked).toBeGreaterThan(2000);
  });

  it('rules out nearly every block for a value no record holds', () => {
    const r2 = lcg(7);
    let held = 0;
    let asked = 0;
    for (let t = 0; t < 200; t++) {
      const ray = 'z' + Array.from({ length: 5 }, () => HEX[r2(16)]).join('');
      const need = fieldBits('cf_ray', ray.slice(0, 4 + r2(3)), true)!;
      for (const { bits } of blocks) {
        asked++;
        if (mayHold(bits, 0, need)) held++;
      }
    }
    expect(held / asked).toBeLessThan(0.02);
  });

  it('tells nothing of a prefix under four characters, a value not in printable ASCII, or a long key', () => {
    expect(fieldBits('cf_ray', 'fb5', true)).toBeNull();
    expect(fieldBits('city', 'Zü', false)).toBeNull();
    expect(fieldBits('city', 'a"bc', false)).toBeNull();
    expect(fieldBits('k'.repeat(41), 'abcd', false)).toBeNull();
    expect(fieldBits('city', 'DE', false)).not.toBeNull(); // a whole short value
    expect(fieldBits('cf_ray', 'fb5f', true)).not.toBeNull();
  });
});
