/**
 * The field index built from records (field-columns.ts) against values read here by hand:
 * ids and dictionaries, one-element arrays looked through, numbers and booleans as text,
 * objects and longer arrays as JSON, records that are not JSON, counts per project, the id
 * width, the cap on distinct values; and the section's round trip through bytes, with each
 * part checked when read.
 */
import { describe, expect, it } from 'vitest';
import { ABSENT, buildFieldIndex, buildFieldIndexInSteps, FieldIndex, FIRST_TEXT, MAX_FIELD_TEXTS, UNREADABLE, type FieldRows } from './field-columns.ts';
import { valueNeed } from './value-bits.ts';

/** Records packed into blocks of `perBlock` lines, as a record file holds them, and the rows that address them. */
function pack(lines: string[], projects: number[], perBlock = 3): { rows: FieldRows; block: (blk: number) => Buffer | null } {
  const blocks = new Map<number, Buffer>();
  const n = lines.length;
  const rows = { n, blk: new Float64Array(n), boff: new Int32Array(n), len: new Int32Array(n), project: Int32Array.from(projects) };
  for (let b = 0; b * perBlock < n; b++) {
    let at = 0;
    const parts: Buffer[] = [];
    for (let i = b * perBlock; i < Math.min(n, (b + 1) * perBlock); i++) {
      const bytes = Buffer.from(lines[i]!, 'utf8');
      // Rows in an order unrelated to the blocks: the builder groups them itself.
      rows.blk[i] = b * 1000;
      rows.boff[i] = at;
      rows.len[i] = bytes.length;
      parts.push(bytes, Buffer.from('\n'));
      at += bytes.length + 1;
    }
    blocks.set(b * 1000, Buffer.concat(parts));
  }
  return { rows, block: (blk) => blocks.get(blk) ?? null };
}

const rec = (metadata: unknown) => JSON.stringify({ id: 'x', timestamp: 1, event_message: 'm', metadata });

describe('the field index', () => {
  const lines = [
    rec({ request: { headers: { cf_ipcountry: 'DE' } } }),
    rec([{ request: [{ headers: [{ cf_ipcountry: 'FR' }] }] }]),
    rec({ request: { headers: { cf_ipcountry: 49 } } }),
    rec({ request: { headers: { cf_ipcountry: true } } }),
    rec({ request: { headers: { cf_ipcountry: null } } }),
    rec({ request: { headers: {} } }),
    '{"id": "broken", "metadata": {"request"',
    rec({ request: { headers: { cf_ipcountry: ['DE'] } } }),
    rec({ request: { headers: { cf_ipcountry: ['DE', 'FR'] } } }),
    rec({ request: { headers: { cf_ipcountry: { a: 'é' } } } }),
    rec({ request: { headers: { cf_ipcountry: 'Ünïcødé 日本' } } }),
    rec({ request: { headers: { cf_ipcountry: 'DE' } }, parsed: { user_name: 'ana' } }),
  ];
  const projects = [1, 1, 2, 2, 1, 1, 1, 2, 2, 1, 1, 2];
  // Each record's value, read by hand from the lines above.
  const want: Array<string | null | 'unreadable'> = ['DE', 'FR', '49', 'true', null, null, 'unreadable', 'DE', '["DE","FR"]', '{"a":"é"}', 'Ünïcødé 日本', 'DE'];
  const users: Array<string | null | 'unreadable'> = [null, null, null, null, null, null, 'unreadable', null, null, null, null, 'ana'];
  const paths = ['request.headers.cf_ipcountry', 'parsed.user_name'];

  function valuesOf(fx: FieldIndex, path: string): Array<string | null | 'unreadable'> {
    const ids = fx.ids(path)!;
    const texts = fx.texts(path)!;
    return Array.from(ids, (id) => (id === ABSENT ? null : id === UNREADABLE ? 'unreadable' : texts[id - FIRST_TEXT]!));
  }

  it('gives each row the value the record walk reads, as text, in a dictionary of distinct texts, and counts them per project', () => {
    const { rows, block } = pack(lines, projects);
    const fx = buildFieldIndex(rows, block);
    expect(valuesOf(fx, paths[0]!)).toEqual(want);
    expect(valuesOf(fx, paths[1]!)).toEqual(users);
    expect(new Set(fx.texts(paths[0]!)).size).toBe(fx.texts(paths[0]!)!.length);
    expect(fx.ids(paths[0]!)).toBeInstanceOf(Uint8Array);
    // Counts per (project, text), by hand: project 1 holds DE, FR, {"a":"é"}, Ünïcødé; project 2 holds 49, true, DE twice, ["DE","FR"].
    const c = fx.counts(paths[0]!)!;
    const texts = fx.texts(paths[0]!)!;
    const got = new Map<string, number>();
    for (let j = 0; j < c.k; j++) got.set(`${c.project[j]} ${texts[c.id[j]! - FIRST_TEXT]}`, c.count[j]!);
    expect(got).toEqual(
      new Map([
        ['1 DE', 1],
        ['1 FR', 1],
        ['1 {"a":"é"}', 1],
        ['1 Ünïcødé 日本', 1],
        ['2 49', 1],
        ['2 true', 1],
        ['2 DE', 2],
        ['2 ["DE","FR"]', 1],
      ]),
    );
  });

  it('is the same built in steps, and after a round trip through its bytes; a part that fails its check is not used', async () => {
    const { rows, block } = pack(lines, projects, 1);
    let turns = 0;
    const stepped = await buildFieldIndexInSteps(rows, block, async () => (++turns, true));
    expect(stepped).not.toBeNull();
    const bytes = stepped!.encode();
    const file = Buffer.concat([Buffer.from('prefix--'), bytes]);
    const read = (at: number, n: number) => file.subarray(at, at + n);
    const back = FieldIndex.open(read, 8, bytes.length, rows.n)!;
    for (const p of paths) expect(valuesOf(back, p)).toEqual(valuesOf(stepped!, p));
    expect(back.counts(paths[0]!)!.count).toEqual(stepped!.counts(paths[0]!)!.count);
    expect(back.paths).toEqual(stepped!.paths);
    // Another row count, a section of another length: not this file's.
    expect(FieldIndex.open(read, 8, bytes.length, rows.n + 1)).toBeNull();
    expect(FieldIndex.open(read, 8, bytes.length - 1, rows.n)).toBeNull();
    // A flipped byte in the last path's part (the last kept path's counts, in path order; the
    // value bits come after them): that path is not used, once, and says so.
    const last = back.kept.at(-1)!;
    expect(last).toBe('request.headers.cf_ipcountry.a');
    const descriptor = JSON.parse(bytes.subarray(8, 8 + bytes.readUInt32LE(0)).toString('utf8')) as { values: { bytes: number } };
    const flipped = Buffer.from(file);
    flipped[flipped.length - descriptor.values.bytes - 1]! ^= 0xff;
    const damaged = FieldIndex.open((at, n) => flipped.subarray(at, at + n), 8, bytes.length, rows.n)!;
    let told = 0;
    damaged.damaged = () => told++;
    expect(damaged.has(last)).toBe(true);
    expect(damaged.counts(last)).toBeNull();
    expect(damaged.has(last)).toBe(false);
    expect(damaged.ids(last)).toBeNull();
    expect(told).toBe(1);
    expect(valuesOf(damaged, paths[0]!)).toEqual(want);
    // A flipped byte in the descriptor: the section is not used at all.
    const head = Buffer.from(file);
    head[8 + 12]! ^= 0x01;
    expect(FieldIndex.open((at, n) => head.subarray(at, at + n), 8, bytes.length, rows.n)).toBeNull();
  });

  it('is the same when its steps end inside blocks, one record a step', async () => {
    // Three records a block: every step but a block's last ends inside it.
    const { rows, block } = pack(lines, projects, 3);
    let turns = 0;
    const stepped = await buildFieldIndexInSteps(rows, block, async () => (++turns, true), 0);
    const whole = buildFieldIndex(rows, block);
    expect(valuesOf(stepped!, paths[0]!)).toEqual(want);
    expect(valuesOf(stepped!, paths[1]!)).toEqual(users);
    // Value bits per block included: a block resumed after a turn keeps adding to its own bits.
    expect(stepped!.encode().equals(whole.encode())).toBe(true);
    // A turn after every record but the last, then one between each path's entry.
    expect(turns).toBe(lines.length - 1 + stepped!.paths.length - 1);
  });

  it('discovers every path: the paths of the records in path order, a path first met as an object left out, and one no record holds known absent', () => {
    const objectFirst = [rec({ a: { b: 1 }, k: [1, 2] }), rec({ a: 'x', n: null, 'd.ot': 5 }), rec({ a: { b: 2, c: [{ d: true }] } })];
    const { rows, block } = pack(objectFirst, [1, 1, 1]);
    const fx = buildFieldIndex(rows, block);
    // By hand: a.b and a.c.d are values, k is an array of two (a value, as JSON); a is an object before it is a value; n is null; d.ot cannot be named.
    expect(fx.paths).toEqual(['a', 'a.b', 'a.c.d', 'k']);
    expect(fx.kept).toEqual(['a.b', 'a.c.d', 'k']);
    expect(fx.capped('a')).toBe(true);
    expect(valuesOf(fx, 'a.b')).toEqual(['1', null, '2']);
    expect(valuesOf(fx, 'a.c.d')).toEqual([null, null, 'true']);
    expect(valuesOf(fx, 'k')).toEqual(['[1,2]', null, null]);
    // Held by no record: absent from every row, without a read; an object path is not that.
    for (const p of ['n', 'nope', 'a.b.deeper', 'd.ot']) {
      expect(fx.has(p), p).toBe(true);
      expect(valuesOf(fx, p), p).toEqual([null, null, null]);
      expect(fx.counts(p)!.k, p).toBe(0);
    }
    expect(fx.has('a.c')).toBe(false);
    // Kept through the bytes.
    const bytes = fx.encode();
    const back = FieldIndex.open((at, n) => bytes.subarray(at, at + n), 0, bytes.length, rows.n)!;
    expect(back.has('nope')).toBe(true);
    expect(back.has('a.c')).toBe(false);
    expect(valuesOf(back, 'a.c.d')).toEqual([null, null, 'true']);
    // A record that is not JSON: a path the index lacks is no longer known absent (that record passes no condition).
    const broken = pack([...objectFirst, '{"metadata": '], [1, 1, 1, 1]);
    const withBroken = buildFieldIndex(broken.rows, broken.block);
    expect(withBroken.has('nope')).toBe(false);
    expect(valuesOf(withBroken, 'a.b')).toEqual(['1', null, '2', 'unreadable']);
  });

  it('leaves out a path whose values change with most records: more than an eighth of the rows (and 256)', () => {
    // 3,000 rows: an eighth is 375.
    const lines = Array.from({ length: 3000 }, (_, i) => rec({ few: `f${i % 370}`, many: `m${i % 376}`, small: `s${i % 3}` }));
    const { rows, block } = pack(lines, lines.map(() => 1), 500);
    const fx = buildFieldIndex(rows, block);
    expect(fx.kept).toEqual(['few', 'small']);
    expect(fx.capped('many')).toBe(true);
    // Below 256 values a path is kept whatever the rows.
    const quiet = pack(lines.slice(0, 250), lines.slice(0, 250).map(() => 1), 100);
    expect(buildFieldIndex(quiet.rows, quiet.block).kept).toEqual(['few', 'many', 'small']);
  });

  it('widens ids past 254 texts, and leaves out a path with more than MAX_FIELD_TEXTS distinct values in the partition', () => {
    const many = Array.from({ length: MAX_FIELD_TEXTS + 1 }, (_, i) => rec({ a: `v${i % 300}`, b: `u${i}` }));
    const { rows, block } = pack(many, many.map(() => 1), 500);
    const fx = buildFieldIndex(rows, block);
    expect(fx.ids('a')).toBeInstanceOf(Uint16Array);
    expect(fx.texts('a')).toHaveLength(300);
    expect(fx.ids('a')![299]).toBe(FIRST_TEXT + 299);
    expect(fx.has('b')).toBe(false);
    expect(fx.capped('b')).toBe(true);
    expect(fx.ids('b')).toBeNull();
    const bytes = fx.encode();
    const back = FieldIndex.open((at, n) => bytes.subarray(at, at + n), 0, bytes.length, rows.n)!;
    expect(back.capped('b')).toBe(true);
    expect(back.ids('a')).toEqual(fx.ids('a'));
  });

  describe('value bits', () => {
    /** A small deterministic generator (no library: the test must not depend on the code's). */
    let seed = 20261129;
    const r = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n;
    };
    const hex = () => Array.from({ length: 4 }, () => r(65536).toString(16).padStart(4, '0')).join('');
    const SCALARS: unknown[] = ['DE', 'Zürich', '東京タワー', '', 'abc', 'abcd', 1, -2.5, 1e21, 0, 1.5, true, false, null, ['x', 'y'], ['one'], [[7]]];
    type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
    function metadata(depth = 0): { [k: string]: Json } {
      const out: { [k: string]: Json } = { ray: hex() };
      for (let k = 0; k < 2 + r(3); k++) {
        const key = ['city', 'code', 'user', 'x', 'nested'][r(5)]!;
        out[key] = key === 'nested' && depth < 2 ? (r(2) ? [metadata(depth + 1)] : metadata(depth + 1)) : (SCALARS[r(SCALARS.length)] as Json);
      }
      return out;
    }
    /** Every (path, text) a record holds, read here: one-element arrays looked through, scalars as text, longer arrays as JSON. */
    function leaves(v: Json, path: string, out: Array<{ path: string; text: string }>): Array<{ path: string; text: string }> {
      while (Array.isArray(v) && v.length === 1) v = v[0]!;
      if (v === null) return out;
      if (typeof v === 'object' && !Array.isArray(v)) {
        for (const [k, x] of Object.entries(v)) leaves(x, path ? `${path}.${k}` : k, out);
      } else if (path) out.push({ path, text: typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v) });
      return out;
    }
    const metas = Array.from({ length: 3000 }, () => metadata());
    // A tenth with their metadata as JSON text, as some exports give it.
    const built = pack(
      metas.map((m, i) => rec(i % 10 === 3 ? JSON.stringify(m) : m)),
      metas.map(() => 1),
      20,
    );
    const fx = buildFieldIndex(built.rows, built.block);
    /** Whether the index's value bits let the block at `blk` hold a value with `need` at `path` (null: they cannot tell). */
    const mayHold = (index: FieldIndex, path: string, blk: number, need: Int32Array) => index.blocksMayHold([{ path, need }])?.has(blk) ?? true;

    it('never rule out the block of a record holding the value, capped paths too', () => {
      expect(fx.capped('ray')).toBe(true);
      let checked = 0;
      metas.forEach((m, i) => {
        for (const { path, text } of leaves(m, '', [])) {
          for (const [value, prefix] of [
            [text, false],
            [text.slice(0, 4), true],
            [text.slice(0, 7), true],
          ] as const) {
            const need = valueNeed(path, value, prefix);
            if (!need) continue;
            checked++;
            expect(mayHold(fx, path, built.rows.blk[i]!, need), `${path}: ${value}${prefix ? '*' : ''}`).toBe(true);
          }
        }
      });
      expect(checked).toBeGreaterThan(20_000);
    });

    it('list the blocks that may hold every needed value: none for a value no record holds, so the partition is skipped', () => {
      const small = pack(metas.slice(0, 60).map((m) => rec(m)), metas.slice(0, 60).map(() => 1), 20);
      const index = buildFieldIndex(small.rows, small.block);
      const need = (path: string, value: string, prefix = false) => ({ path, need: valueNeed(path, value, prefix)! });
      expect(index.blocksMayHold([need('ray', 'zzzz', true)])).toEqual(new Set());
      expect(index.blocksMayHold([need('ray', metas[41]!.ray as string)])).toEqual(new Set([2000]));
      expect(index.blocksMayHold([need('ray', (metas[7]!.ray as string).slice(0, 5), true), need('user', 'zzzz')])).toEqual(new Set()); // both must hold
      expect(index.blocksMayHold([need('no.such.path', 'zzzz')])).toBeNull(); // a path it does not list: cannot tell
    });

    it('rule out nearly every block for a value no record holds; after a round trip the same; damaged, they rule out nothing', () => {
      const blocks = [...new Set(built.rows.blk)];
      const absent = Array.from({ length: 100 }, () => valueNeed('ray', `z${hex().slice(0, 3 + r(4))}`, true)!);
      const held = (index: FieldIndex) => absent.reduce((n, need) => n + blocks.filter((b) => mayHold(index, 'ray', b, need)).length, 0);
      expect(held(fx) / (absent.length * blocks.length)).toBeLessThan(0.02);
      // A path it does not list: the bits cannot tell.
      expect(fx.blocksMayHold([{ path: 'no.such.path', need: absent[0]! }])).toBeNull();
      const bytes = fx.encode();
      const back = FieldIndex.open((at, n) => bytes.subarray(at, at + n), 0, bytes.length, built.rows.n)!;
      expect(held(back)).toBe(held(fx));
      const flipped = Buffer.from(bytes);
      flipped[flipped.length - 1]! ^= 0xff;
      const damaged = FieldIndex.open((at, n) => flipped.subarray(at, at + n), 0, bytes.length, built.rows.n)!;
      let told = 0;
      damaged.damaged = () => told++;
      expect(held(damaged)).toBe(absent.length * blocks.length);
      expect(told).toBe(1);
      expect(damaged.has('city')).toBe(true);
    });
  });
});
