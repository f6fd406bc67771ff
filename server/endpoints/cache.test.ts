import { describe, expect, it } from 'vitest';
import { ENDPOINTS, type EndpointDefinition } from '../../queries/registry.ts';
import { MAX_CACHE_BYTES, MAX_CACHE_ENTRIES, REFRESH_BUDGET_MS, ResultsCache, type CacheLimits, type Computed } from './cache.ts';

// Cache settings spelled out here, so the tests do not follow changes to the registry.
const DEF: EndpointDefinition = { ...ENDPOINTS.find((e) => e.name === 'usage.api-counts')!, cacheSeconds: 900, warmSeconds: 300 };

/** A cache over a clock the test moves, and computes that count themselves per key. */
function setup(limits: Partial<CacheLimits> = {}) {
  const clock = { ms: 0 };
  const cache = new ResultsCache(() => clock.ms, limits);
  const runs = new Map<string, number>();
  const order: string[] = [];
  /** Replaces a key's computation from now on; `normal` is what it would have done. */
  const override = new Map<string, (normal: () => Computed) => Computed | Promise<Computed>>();
  /** Rows whose JSON is `[{"k":"<key>","n":<run>,"pad":"<pad>"}]`. */
  const compute = (key: string, pad = 0, cost = 0) => {
    const normal = (): Computed => {
      const n = (runs.get(key) ?? 0) + 1;
      runs.set(key, n);
      order.push(key);
      clock.ms += cost;
      return { rows: [{ k: key, n, pad: 'x'.repeat(pad) }], now: n };
    };
    return (): Computed | Promise<Computed> => override.get(key)?.(normal) ?? normal();
  };
  const get = (key: string, pad = 0, cost = 0) => cache.get(DEF, key, compute(key, pad, cost));
  const runsOf = (key: string) => runs.get(key) ?? 0;
  return { clock, cache, get, compute, runsOf, order, override };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('results cache bounds', () => {
  it('defaults: 500 entries, 64 MiB, a 100 ms refresh budget', () => {
    expect(MAX_CACHE_ENTRIES).toBe(500);
    expect(MAX_CACHE_BYTES).toBe(67_108_864);
    expect(REFRESH_BUDGET_MS).toBe(100);
  });

  it('past the entry bound, the least recently used entry goes', async () => {
    const { cache, get, runsOf } = setup({ maxEntries: 3 });
    await get('a');
    await get('b');
    await get('c');
    expect((await get('a')).hit).toBe(true); // a is now the most recent; b the least
    await get('d');
    expect(cache.size).toBe(3);
    for (const k of ['a', 'c', 'd']) expect((await get(k)).hit).toBe(true);
    expect(runsOf('a') + runsOf('c') + runsOf('d')).toBe(3);
    const b = await get('b');
    expect(b.hit).toBe(false);
    expect(runsOf('b')).toBe(2);
  });

  it('past the byte bound, least recently used entries go until it holds', async () => {
    // `[{"k":"a","n":1,"pad":""}]` is 26 characters; a pad of 74 makes each entry 100.
    const { cache, get, runsOf } = setup({ maxBytes: 250 });
    await get('a', 74);
    await get('b', 74);
    expect(cache.bytes).toBe(200);
    await get('a', 74); // touch a: b is now the least recently used
    await get('c', 74);
    expect(cache.size).toBe(2);
    expect(cache.bytes).toBe(200);
    expect((await get('a', 74)).hit).toBe(true);
    expect((await get('c', 74)).hit).toBe(true);
    expect((await get('b', 74)).hit).toBe(false);
    expect(runsOf('b')).toBe(2);
    // One 230-character entry needs both others gone.
    await get('big', 202);
    expect(cache.size).toBe(1);
    expect(cache.bytes).toBe(230);
  });

  it('an entry larger than the whole byte bound is answered but not kept, and evicts nothing', async () => {
    const { cache, get, runsOf } = setup({ maxBytes: 100 });
    await get('small'); // 30 characters
    const big = await get('big', 200);
    expect(big.hit).toBe(false);
    expect(big.rows).toEqual([{ k: 'big', n: 1, pad: 'x'.repeat(200) }]);
    expect(cache.size).toBe(1);
    expect(cache.bytes).toBe(30);
    expect((await get('big', 200)).hit).toBe(false);
    expect(runsOf('big')).toBe(2);
    expect((await get('small')).hit).toBe(true);
  });
});

describe('results cache refresh', () => {
  it('a tick refreshes only entries asked for since their last computation; the others age out', async () => {
    const { clock, cache, get, runsOf } = setup();
    await get('asked');
    await get('idle');
    clock.ms = 10_000;
    expect((await get('asked')).hit).toBe(true);
    clock.ms = 300_000;
    await cache.tick();
    expect(runsOf('asked')).toBe(2);
    expect(runsOf('idle')).toBe(1);
    // Not asked for since that refresh: no further one.
    clock.ms = 600_000;
    await cache.tick();
    expect(runsOf('asked')).toBe(2);
    // The idle entry is still answered until 900 s from its first computation.
    const idle = await get('idle');
    expect(idle).toMatchObject({ hit: true, ttl: 300, rows: [{ k: 'idle', n: 1 }] });
    clock.ms = 900_000;
    await cache.tick();
    expect(cache.size).toBe(0);
    expect(runsOf('idle')).toBe(1);
  });

  it('a refresh is served to later requests, and warming waits warmSeconds from the last computation', async () => {
    const { clock, cache, get, runsOf } = setup();
    await get('k');
    clock.ms = 100_000;
    await get('k');
    clock.ms = 299_999;
    await cache.tick();
    expect(runsOf('k')).toBe(1);
    clock.ms = 300_000;
    await cache.tick();
    expect(runsOf('k')).toBe(2);
    const after = await get('k');
    expect(after).toMatchObject({ hit: true, now: 2, ttl: 600 });
    clock.ms = 599_999; // asked for again, but only 299.999 s since the refresh
    await cache.tick();
    expect(runsOf('k')).toBe(2);
  });

  it('a tick stops once it has spent the budget; the rest waits for the next tick, oldest first', async () => {
    // Each refresh takes 40 ms of the injected clock: with a 100 ms budget a tick starts
    // refreshes at 0, 40 and 80 ms spent, and none at 120.
    const { clock, cache, compute, order } = setup({ refreshBudgetMs: 100 });
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6'];
    for (const [i, k] of keys.entries()) {
      clock.ms = i; // k0 computed first, so it is the most overdue
      await cache.get(DEF, k, compute(k, 0, 40));
    }
    clock.ms = 1_000;
    // Ask in reverse order: refresh order must follow the age of the values, not the requests.
    for (const k of [...keys].reverse()) await cache.get(DEF, k, compute(k));
    order.length = 0;
    clock.ms = 301_000;
    await cache.tick();
    expect(order).toEqual(['k0', 'k1', 'k2']);
    await cache.tick();
    expect(order).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5']);
    await cache.tick();
    expect(order).toEqual(keys);
    await cache.tick();
    expect(order).toEqual(keys);
  });

  it('a tick runs one computation at a time and yields to the event loop between two', async () => {
    const { clock, cache } = setup();
    let running = 0;
    let most = 0;
    let runs = 0;
    const slow = (): Promise<Computed> => {
      runs++;
      running++;
      most = Math.max(most, running);
      return nextTurn().then(() => {
        running--;
        return { rows: [], now: runs };
      });
    };
    const n = 5;
    for (let i = 0; i < n; i++) await cache.get(DEF, `k${i}`, slow);
    for (let i = 0; i < n; i++) await cache.get(DEF, `k${i}`, slow);
    expect(runs).toBe(n);
    clock.ms = 300_000;
    await cache.tick();
    expect(runs).toBe(2 * n);
    expect(most).toBe(1);

    // With synchronous computations: other callbacks run between two of them.
    let sync = 0;
    const quick = (): Computed => ({ rows: [], now: ++sync });
    for (let i = 0; i < n; i++) await cache.get(DEF, `q${i}`, quick);
    clock.ms = 600_000;
    for (let i = 0; i < n; i++) await cache.get(DEF, `q${i}`, quick);
    sync = 0;
    const seen: number[] = [];
    const tick = cache.tick();
    const probe = () => {
      seen.push(sync);
      if (sync < n) setImmediate(probe);
    };
    setImmediate(probe);
    await tick;
    expect(sync).toBe(n);
    // The probe ran between refreshes, seeing each count from 1 to n in turn.
    expect(seen.filter((s) => s > 0 && s < n)).toEqual([1, 2, 3, 4]);
  });

  it('a request arriving during a refresh waits for that one computation only', async () => {
    const { clock, cache, get, compute, order, override } = setup();
    for (const k of ['r0', 'r1', 'r2']) await get(k);
    clock.ms = 1_000;
    for (const k of ['r0', 'r1', 'r2']) await get(k);
    order.length = 0;
    clock.ms = 301_000;
    let answered: Promise<unknown> | undefined;
    // r0's refresh is running when the request's bytes arrive (an I/O callback, modelled by setImmediate).
    override.set('r0', (normal) => {
      setImmediate(() => {
        answered = cache.get(DEF, 'request', compute('request'));
      });
      return normal();
    });
    await cache.tick();
    await answered;
    expect(order).toEqual(['r0', 'request', 'r1', 'r2']);
  });

  it('overlapping ticks share one batch', async () => {
    const { clock, cache, get, runsOf } = setup();
    await get('k');
    await get('k');
    clock.ms = 300_000;
    const a = cache.tick();
    const b = cache.tick();
    expect(b).toBe(a);
    await Promise.all([a, b]);
    expect(runsOf('k')).toBe(2);
  });

  it('clear() during a refresh: that result never lands and the batch stops', async () => {
    const { clock, cache, get, runsOf, override } = setup();
    await get('a');
    await get('b');
    await get('a');
    await get('b');
    clock.ms = 300_000;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    override.set('a', async () => {
      await gate;
      return { rows: [{ stale: true }], now: -1 };
    });
    const tick = cache.tick();
    await nextTurn();
    cache.clear();
    release();
    await tick;
    override.delete('a');
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
    expect(runsOf('b')).toBe(1); // the batch stopped at the clear
    const after = await get('a');
    expect(after).toMatchObject({ hit: false, rows: [{ k: 'a', n: 2 }] });
  });

  it('a failed refresh drops the entry; the next request recomputes', async () => {
    const { clock, cache, get, runsOf, override } = setup();
    await get('k');
    await get('k');
    clock.ms = 300_000;
    override.set('k', () => {
      throw new Error('boom');
    });
    await cache.tick();
    override.delete('k');
    expect(cache.size).toBe(0);
    expect(await get('k')).toMatchObject({ hit: false, rows: [{ k: 'k', n: 2 }] });
    expect(runsOf('k')).toBe(2);
  });
});

describe('results cache sharing', () => {
  it('identical concurrent requests share one computation; errors are never kept; ttl counts down', async () => {
    const { clock, cache, get, runsOf } = setup();
    const [a, b] = await Promise.all([get('k'), get('k')]);
    expect(runsOf('k')).toBe(1);
    expect(a.rows).toBe(b.rows);
    expect(a.hit).toBe(false);
    expect(b.hit).toBe(true);
    clock.ms = 250_400;
    expect((await get('k')).ttl).toBe(650); // 900 - 250.4, rounded
    let fails = 0;
    const failing = () => {
      fails++;
      throw new Error('boom');
    };
    await expect(cache.get(DEF, 'e', failing)).rejects.toThrow('boom');
    await expect(cache.get(DEF, 'e', failing)).rejects.toThrow('boom');
    expect(fails).toBe(2);
    expect(cache.size).toBe(1);
  });

  it('endpoints with cacheSeconds 0 are never kept', async () => {
    const { cache } = setup();
    const bypass: EndpointDefinition = { ...DEF, cacheSeconds: 0, warmSeconds: 0 };
    let n = 0;
    const r1 = await cache.get(bypass, 'k', () => ({ rows: [], now: ++n }));
    const r2 = await cache.get(bypass, 'k', () => ({ rows: [], now: ++n }));
    expect([r1.hit, r2.hit, r2.now, cache.size]).toEqual([false, false, 2, 0]);
  });
});
