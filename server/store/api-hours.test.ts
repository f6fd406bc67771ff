/** The per-hour API counts: a window reads only its own hours, and still sees every batch merged, saved or not. */
import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../demo/random.ts';
import { MICROS } from '../time.ts';
import { addToApiBatch, ApiHours, forEachTriple, packHour, unpackHour, type ApiHourBatch } from './api-hours.ts';
import { prepareCatalog } from './catalog.ts';
import { loadEngine, openDbSync } from './db.ts';

beforeAll(() => loadEngine());

const H0 = Date.UTC(2026, 10, 1) * 1000;
const HOURS = 240;

/** hour -> "url:families" -> count, from triples (or hours packed as stored, as `since` gives them). */
function asCounts(entries: Iterable<[number, Int32Array | Uint8Array]>): Map<number, Map<string, number>> {
  const out = new Map<number, Map<string, number>>();
  for (const [hour, packedOrNot] of entries) {
    const t = packedOrNot instanceof Uint8Array ? unpackHour(packedOrNot) : packedOrNot;
    const m = new Map<string, number>();
    for (let i = 0; i < t.length; i += 3) m.set(`${t[i]}:${t[i + 1]}`, t[i + 2]!);
    if (m.size) out.set(hour, m);
  }
  return out;
}

describe('ApiHours', () => {
  it('since(hour) gives every hour from there on, merged batches included, whatever was decoded, written as settled or saved before', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const r = new Rng(seed);
      const db = openDbSync();
      prepareCatalog(db);
      let hours = new ApiHours(() => db);
      const expected = new Map<number, Map<string, number>>();
      for (let step = 0; step < 60; step++) {
        const u = r.next();
        if (u < 0.5) {
          const batch: ApiHourBatch = new Map();
          for (let k = Math.floor(r.next() * 50); k > 0; k--) {
            const hour = H0 + Math.floor(r.next() * HOURS) * MICROS.hour;
            const url = 1 + Math.floor(r.next() * 30);
            const fam = Math.floor(r.next() * 16);
            addToApiBatch(batch, hour, url, fam);
            const m = expected.get(hour) ?? new Map<string, number>();
            expected.set(hour, m);
            m.set(`${url}:${fam}`, (m.get(`${url}:${fam}`) ?? 0) + 1);
          }
          hours.merge(batch);
          // As an import does after each batch: hours left behind are written, within a budget.
          if (r.next() < 0.6) hours.flushSettled(r.next() < 0.5 ? 0 : Infinity);
        } else if (u < 0.65) {
          hours.flush();
          // Now and then read back by a new reader, as after a restart.
          if (r.next() < 0.5) hours = new ApiHours(() => db);
        } else {
          const from = H0 + Math.floor(r.next() * (HOURS + 10) - 5) * MICROS.hour;
          const want = new Map([...expected].filter(([h]) => h >= from));
          expect(asCounts(hours.since(from)), `seed ${seed} step ${step}`).toEqual(want);
        }
      }
      db.close();
    }
  });

  it('writes only the hours no batch added to in the last two, and a saved catalog holds every hour', () => {
    const db = openDbSync();
    prepareCatalog(db);
    const hours = new ApiHours(() => db);
    const stored = () => new Map(db.rows('SELECT hour, counts FROM api_hours').map(([h, c]) => [h as number, unpackHour(c as Uint8Array)]));
    const batchOf = (...hs: number[]) => {
      const b: ApiHourBatch = new Map();
      for (const h of hs) addToApiBatch(b, H0 + h * MICROS.hour, 7, 1);
      return b;
    };
    hours.merge(batchOf(0, 1));
    hours.flushSettled(Infinity);
    expect([...stored().keys()]).toEqual([]);
    hours.merge(batchOf(1, 2));
    hours.merge(batchOf(2));
    hours.flushSettled(Infinity);
    // Hour 0 was last added to two batches ago; 1 one batch ago; 2 just now.
    expect([...stored().keys()]).toEqual([H0]);
    hours.merge(batchOf(0));
    hours.flush();
    expect(asCounts(stored())).toEqual(
      new Map([
        [H0, new Map([['7:1', 2]])],
        [H0 + MICROS.hour, new Map([['7:1', 2]])],
        [H0 + 2 * MICROS.hour, new Map([['7:1', 2]])],
      ]),
    );
    db.close();
  });

  it('keeps, once written, only the hours a window asked for, packed as stored', () => {
    const db = openDbSync();
    prepareCatalog(db);
    const hours = new ApiHours(() => db);
    // A window over the last 24 of 240 hours, then an import adding one URL to every hour.
    const from = H0 + (HOURS - 24) * MICROS.hour;
    expect([...hours.since(from)]).toEqual([]);
    const batch: ApiHourBatch = new Map();
    for (let h = 0; h < HOURS; h++) addToApiBatch(batch, H0 + h * MICROS.hour, 3, 2);
    hours.merge(batch);
    // Open hours are held until written, packed: 4 bytes that mark the form, then URL 3 and
    // 1 x 16 + families 2 as a byte each (12 bytes decoded: a triple of int32).
    const hourBytes = 4 + 1 + 1;
    expect(asCounts(hours.since(from)).size).toBe(24);
    expect(hours.heldBytes()).toBe(HOURS * hourBytes);
    hours.flush();
    expect(hours.heldBytes()).toBe(24 * hourBytes);
    // The older hours are still counted, read back from the catalog when a window reaches them.
    const all = asCounts(hours.since(H0));
    expect(all.size).toBe(HOURS);
    expect(all.get(H0)).toEqual(new Map([['3:2', 1]]));
    expect(hours.heldBytes()).toBe(HOURS * hourBytes);
    db.close();
  });
});

describe('a stored hour', () => {
  /** url * 16 + families -> count, as ApiHours keeps an open hour. */
  const countsOf = (entries: Array<[number, number, number]>) => new Map(entries.map(([u, f, n]) => [u * 16 + f, n]));
  /** Triples as "url:families" -> count: the order they come in is free. */
  const asMap = (t: Int32Array) => {
    const m = new Map<string, number>();
    for (let i = 0; i < t.length; i += 3) m.set(`${t[i]}:${t[i + 1]}`, t[i + 2]!);
    return m;
  };

  it('unpacks to the triples it was packed from, at the limits of each value too', () => {
    const r = new Rng(17);
    for (let round = 0; round < 50; round++) {
      const entries = new Map<string, [number, number, number]>();
      const n = r.int(400);
      for (let i = 0; i < n; i++) {
        const u = r.next() < 0.1 ? 0x7fffffff - r.int(3) : r.next() < 0.5 ? r.int(300) : r.int(3_000_000);
        const f = r.int(16);
        const c = r.next() < 0.1 ? 0x7fffffff : r.range(1, 1000);
        entries.set(`${u}:${f}`, [u, f, c]);
      }
      const want = new Map([...entries.values()].map(([u, f, c]) => [`${u}:${f}`, c]));
      const got = unpackHour(packHour(countsOf([...entries.values()])));
      expect(got.length).toBe(want.size * 3);
      expect(asMap(got), `round ${round}`).toEqual(want);
    }
  });

  it('takes 2 to 3 bytes a triple for an hour of new URLs seen once, where int32 triples took 12', () => {
    // 3,000 URLs with ids that follow each other (added by this hour), a few common ones seen often.
    const entries: Array<[number, number, number]> = Array.from({ length: 3000 }, (_, i) => [1_500_000 + i, 1 << (i % 4), 1]);
    for (let u = 0; u < 20; u++) entries.push([u * 7, 1, 40 + u]);
    const packed = packHour(countsOf(entries));
    expect(packed.length).toBeLessThanOrEqual(4 + 3 * entries.length);
    expect(asMap(unpackHour(packed))).toEqual(new Map(entries.map(([u, f, n]) => [`${u}:${f}`, n])));
  });

  it('an hour stored as plain int32 triples (before packing) is still read, in windows too', () => {
    const plain = Int32Array.from([5, 1, 3, 9, 2, 1]);
    expect([...unpackHour(new Uint8Array(plain.buffer))]).toEqual([5, 1, 3, 9, 2, 1]);
    // Visited triple by triple as a window sums a pattern, plain or packed alike.
    const visited = (blob: Uint8Array) => {
      const out: number[][] = [];
      forEachTriple(blob, (u, f, n) => out.push([u, f, n]));
      return out.sort((a, b) => a[0]! - b[0]!);
    };
    expect(visited(new Uint8Array(plain.buffer))).toEqual([[5, 1, 3], [9, 2, 1]]);
    expect(visited(packHour(countsOf([[9, 2, 1], [5, 1, 3]])))).toEqual([[5, 1, 3], [9, 2, 1]]);
    expect(visited(packHour(new Map()))).toEqual([]);
    const db = openDbSync();
    prepareCatalog(db);
    db.run('INSERT INTO api_hours (hour, counts) VALUES (?, ?)', [H0, new Uint8Array(plain.buffer)]);
    const hours = new ApiHours(() => db);
    expect(asCounts(hours.since(H0))).toEqual(new Map([[H0, new Map([['5:1', 3], ['9:2', 1]])]]));
    // Added to and written again, it is stored packed and reads the same plus the new count.
    const b: ApiHourBatch = new Map();
    addToApiBatch(b, H0, 9, 2);
    hours.merge(b);
    hours.flush();
    const blob = db.rows('SELECT counts FROM api_hours WHERE hour = ?', [H0])[0]![0] as Uint8Array;
    expect([...blob.subarray(0, 4)]).toEqual([0, 0, 0, 0x80]);
    expect(asMap(unpackHour(blob))).toEqual(new Map([['5:1', 3], ['9:2', 2]]));
    db.close();
  });
});
