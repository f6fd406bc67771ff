/** The per-hour API counts: a window decodes only its own hours, and still sees every batch merged, saved or not. */
import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../demo/random.ts';
import { MICROS } from '../time.ts';
import { addToApiBatch, ApiHours, type ApiHourBatch } from './api-hours.ts';
import { prepareCatalog } from './catalog.ts';
import { loadEngine, openDbSync } from './db.ts';

beforeAll(() => loadEngine());

const H0 = Date.UTC(2026, 10, 1) * 1000;
const HOURS = 240;

/** hour -> "url:families" -> count, from triples. */
function asCounts(entries: Iterable<[number, Int32Array]>): Map<number, Map<string, number>> {
  const out = new Map<number, Map<string, number>>();
  for (const [hour, t] of entries) {
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
    const stored = () => new Map(db.rows('SELECT hour, counts FROM api_hours').map(([h, c]) => [h as number, new Int32Array(Uint8Array.from(c as Uint8Array).buffer)]));
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

  it('keeps decoded, once written, only the hours a window asked for', () => {
    const db = openDbSync();
    prepareCatalog(db);
    const hours = new ApiHours(() => db);
    // A window over the last 24 of 240 hours, then an import adding one URL to every hour.
    const from = H0 + (HOURS - 24) * MICROS.hour;
    expect([...hours.since(from)]).toEqual([]);
    const batch: ApiHourBatch = new Map();
    for (let h = 0; h < HOURS; h++) addToApiBatch(batch, H0 + h * MICROS.hour, 3, 2);
    hours.merge(batch);
    // Open hours are held until written (12 bytes a triple, one triple an hour).
    expect(asCounts(hours.since(from)).size).toBe(24);
    expect(hours.heldBytes()).toBe(HOURS * 12);
    hours.flush();
    expect(hours.heldBytes()).toBe(24 * 12);
    // The older hours are still counted, read back from the catalog when a window reaches them.
    const all = asCounts(hours.since(H0));
    expect(all.size).toBe(HOURS);
    expect(all.get(H0)).toEqual(new Map([['3:2', 1]]));
    expect(hours.heldBytes()).toBe(HOURS * 12);
    db.close();
  });
});
