/**
 * Results cache as Logflare keeps it (docs/ARCHITECTURE.md, "Results cache"): one entry per (endpoint, declared
 * parameter values), living `cacheSeconds` from its first computation, recomputed in the
 * background every `warmSeconds` while it lives; identical concurrent requests share one
 * computation; errors are never kept; a data or clock change drops everything.
 */
import type { EndpointDefinition } from '../../queries/registry.ts';
import type { ResultRow } from './run.ts';

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
}

export interface CacheResult extends Computed {
  hit: boolean;
  /** Seconds the entry has left, for hits. */
  ttl?: number;
}

export class ResultsCache {
  private entries = new Map<string, Entry>();
  /** Bumped by clear(); a computation started before a clear never lands. */
  private generation = 0;

  /** @param monotonicMs elapsed-time source (not the "as of" clock); injectable for tests. */
  constructor(private monotonicMs: () => number = () => performance.now()) {}

  async get(def: EndpointDefinition, paramsKey: string, compute: () => Computed | Promise<Computed>): Promise<CacheResult> {
    if (def.cacheSeconds <= 0) return { ...(await compute()), hit: false };
    const key = `${def.name}\u0000${paramsKey}`;
    const now = this.monotonicMs();
    const entry = this.entries.get(key);
    if (entry && now - entry.createdAt >= def.cacheSeconds * 1000) this.entries.delete(key);
    else if (entry?.value) {
      return { ...entry.value, hit: true, ttl: Math.max(0, Math.round(def.cacheSeconds - (now - entry.createdAt) / 1000)) };
    } else if (entry?.pending) {
      return { ...(await entry.pending), hit: true };
    }
    const fresh: Entry = { def, compute, createdAt: now, computedAt: now };
    this.entries.set(key, fresh);
    try {
      return { ...(await this.run(key, fresh)), hit: false };
    } catch (err) {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
      throw err;
    }
  }

  private run(key: string, entry: Entry): Promise<Computed> {
    const generation = this.generation;
    const pending = Promise.resolve().then(() => entry.compute());
    entry.pending = pending;
    return pending.then(
      (value) => {
        entry.pending = undefined;
        if (generation === this.generation && this.entries.get(key) === entry) {
          entry.value = value;
          entry.computedAt = this.monotonicMs();
        }
        return value;
      },
      (err: unknown) => {
        entry.pending = undefined;
        throw err;
      },
    );
  }

  /** Expires old entries and recomputes those due for warming; call it on a timer. */
  async tick(): Promise<void> {
    const now = this.monotonicMs();
    const work: Promise<unknown>[] = [];
    for (const [key, entry] of this.entries) {
      if (now - entry.createdAt >= entry.def.cacheSeconds * 1000) {
        this.entries.delete(key);
        continue;
      }
      const warm = entry.def.warmSeconds * 1000;
      if (warm > 0 && !entry.pending && entry.value && now - entry.computedAt >= warm) {
        // A failed refresh drops the entry: the next request recomputes and sees the error.
        work.push(this.run(key, entry).catch(() => this.entries.delete(key)));
      }
    }
    await Promise.all(work);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
