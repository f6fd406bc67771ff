/**
 * Results cache as Logflare keeps it (docs/ARCHITECTURE.md, "Results cache"): one entry per (endpoint, declared
 * parameter values), living `cacheSeconds` from its first computation; identical concurrent
 * requests share one computation; errors are never kept; a data or clock change drops everything.
 *
 * Bounded: at most MAX_CACHE_ENTRIES entries and MAX_CACHE_BYTES of rows, least recently used
 * out first. Background refresh is Logflare's proactive re-query, made cheap: every `warmSeconds`
 * an entry is recomputed only if it was asked for since its last computation, one computation
 * at a time with a yield to the event loop between two, and a tick stops once it has spent
 * REFRESH_BUDGET_MS (the rest waits for the next tick). Computations block the event loop, so
 * this is what keeps a refresh from holding up answers by more than one computation.
 */
import type { EndpointDefinition } from '../../queries/registry.ts';
import type { ResultRow } from './run.ts';
import { turnForRequests } from '../turns.ts';

/** Most entries kept; past it the least recently used entry goes. */
export const MAX_CACHE_ENTRIES = 500;
/**
 * Most bytes of rows kept, counted as the rows' JSON length (measured once, when stored); an
 * entry larger than this on its own is answered but not kept.
 */
export const MAX_CACHE_BYTES = 64 * 1024 * 1024;
/** A tick starts no further refresh once it has run this long, ms. */
export const REFRESH_BUDGET_MS = 100;
/** How often the server calls tick(), ms: with the budget, refreshes take at most ~10% of the time. */
export const CACHE_TICK_MS = 1_000;

export interface CacheLimits {
  maxEntries: number;
  maxBytes: number;
  refreshBudgetMs: number;
}

export const DEFAULT_CACHE_LIMITS: Readonly<CacheLimits> = {
  maxEntries: MAX_CACHE_ENTRIES,
  maxBytes: MAX_CACHE_BYTES,
  refreshBudgetMs: REFRESH_BUDGET_MS,
};

/** Rows and the instant (µs) they were computed for. */
export interface Computed {
  rows: ResultRow[];
  now: number;
}

interface Entry {
  def: EndpointDefinition;
  compute: () => Computed | Promise<Computed>;
  value?: Computed;
  pending?: Promise<Computed>;
  createdAt: number;
  computedAt: number;
  /** Estimated size of `value`, counted in the cache's total. */
  bytes: number;
  /** Served from the cache since its last computation started: only such entries are refreshed. */
  asked: boolean;
}

export interface CacheResult extends Computed {
  hit: boolean;
  /** Seconds the entry has left, for hits. */
  ttl?: number;
}


export class ResultsCache {
  /** In least-recently-used order: a request moves its entry to the end. */
  private entries = new Map<string, Entry>();
  private totalBytes = 0;
  /** Bumped by clear(); a computation started before a clear never lands. */
  private generation = 0;
  private ticking: Promise<void> | undefined;
  private limits: CacheLimits;

  /**
   * @param monotonicMs elapsed-time source (not the "as of" clock); injectable for tests.
   * @param limits bounds and refresh budget; the exported constants by default.
   */
  constructor(
    private monotonicMs: () => number = () => performance.now(),
    limits: Partial<CacheLimits> = {},
  ) {
    this.limits = { ...DEFAULT_CACHE_LIMITS, ...limits };
  }

  async get(def: EndpointDefinition, paramsKey: string, compute: () => Computed | Promise<Computed>): Promise<CacheResult> {
    if (def.cacheSeconds <= 0) return { ...(await compute()), hit: false };
    const key = `${def.name}\u0000${paramsKey}`;
    const now = this.monotonicMs();
    const entry = this.entries.get(key);
    if (entry) {
      if (now - entry.createdAt < def.cacheSeconds * 1000 && (entry.value || entry.pending)) {
        this.entries.delete(key);
        this.entries.set(key, entry);
        if (entry.value) {
          entry.asked = true;
          return { ...entry.value, hit: true, ttl: Math.max(0, Math.round(def.cacheSeconds - (now - entry.createdAt) / 1000)) };
        }
        return { ...(await entry.pending!), hit: true };
      }
      this.remove(key, entry);
    }
    const fresh: Entry = { def, compute, createdAt: now, computedAt: now, bytes: 0, asked: false };
    this.entries.set(key, fresh);
    this.evict(key);
    try {
      return { ...(await this.run(key, fresh)), hit: false };
    } catch (err) {
      this.remove(key, fresh);
      throw err;
    }
  }

  private run(key: string, entry: Entry): Promise<Computed> {
    const generation = this.generation;
    entry.asked = false;
    const pending = Promise.resolve().then(() => entry.compute());
    entry.pending = pending;
    return pending.then(
      (value) => {
        entry.pending = undefined;
        if (generation === this.generation && this.entries.get(key) === entry) this.keep(key, entry, value);
        return value;
      },
      (err: unknown) => {
        entry.pending = undefined;
        throw err;
      },
    );
  }

  private keep(key: string, entry: Entry, value: Computed): void {
    const bytes = JSON.stringify(value.rows).length;
    if (bytes > this.limits.maxBytes) {
      // Keeping it would evict everything else and still break the bound.
      this.remove(key, entry);
      return;
    }
    this.totalBytes += bytes - entry.bytes;
    entry.value = value;
    entry.bytes = bytes;
    entry.computedAt = this.monotonicMs();
    this.evict(key);
  }

  /** Drops least recently used entries (never `keep`) until both bounds hold. */
  private evict(keep: string): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.totalBytes <= this.limits.maxBytes) return;
      if (key !== keep) this.remove(key, entry);
    }
  }

  private remove(key: string, entry: Entry): void {
    if (this.entries.get(key) !== entry) return;
    this.entries.delete(key);
    this.totalBytes -= entry.bytes;
  }

  private expired(entry: Entry, now: number): boolean {
    return now - entry.createdAt >= entry.def.cacheSeconds * 1000;
  }

  /**
   * Expires old entries and refreshes those due (see the top of this file); call it on a timer.
   * A call while a tick is still running returns that tick, so two batches never overlap.
   */
  tick(): Promise<void> {
    return (this.ticking ??= this.refresh().finally(() => {
      this.ticking = undefined;
    }));
  }

  private async refresh(): Promise<void> {
    const generation = this.generation;
    const started = this.monotonicMs();
    const due: Array<[string, Entry]> = [];
    for (const [key, entry] of this.entries) {
      if (this.expired(entry, started)) {
        this.remove(key, entry);
        continue;
      }
      const warm = entry.def.warmSeconds * 1000;
      if (warm > 0 && entry.asked && entry.value && !entry.pending && started - entry.computedAt >= warm) due.push([key, entry]);
    }
    // Most overdue first, so entries left over by the budget go first next tick.
    due.sort((a, b) => a[1].computedAt - b[1].computedAt);
    for (const [key, entry] of due) {
      const now = this.monotonicMs();
      if (generation !== this.generation || now - started >= this.limits.refreshBudgetMs) return;
      // Evicted, expired or recomputed by a request while earlier refreshes ran.
      if (this.entries.get(key) !== entry || entry.pending) continue;
      if (this.expired(entry, now)) {
        this.remove(key, entry);
        continue;
      }
      try {
        await this.run(key, entry);
      } catch {
        // A failed refresh drops the entry: the next request recomputes and sees the error.
        this.remove(key, entry);
      }
      // Requests that arrived during that computation go before the next one.
      await turnForRequests();
    }
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.totalBytes = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Estimated bytes of the kept rows (their JSON length). */
  get bytes(): number {
    return this.totalBytes;
  }
}
