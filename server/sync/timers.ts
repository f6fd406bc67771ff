/**
 * Timers the sync waits on, injected with the clock so tests run hours of polls, back-offs and
 * rate-limit pauses in virtual time (ManualTimers) and the app uses Node's (systemTimers).
 */
import type { Clock } from '../time.ts';

export interface Timers {
  /** Calls `fn` once after `ms` milliseconds; returns a handle for `clear`. */
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** Node's timers, unref'd: a pending poll never keeps the process alive. */
export const systemTimers: Timers = {
  set(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return t;
  },
  clear(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** A clock tests move by hand (µs). */
export class ManualClock implements Clock {
  constructor(public us: number) {}
  now(): number {
    return this.us;
  }
}

interface Pending {
  due: number;
  seq: number;
  fn: () => void;
}

/**
 * Timers on a ManualClock: nothing fires until `fireNext` moves the clock to the earliest
 * due timer and runs it (and any other due at that instant).
 */
export class ManualTimers implements Timers {
  private pending = new Map<number, Pending>();
  private seq = 0;

  constructor(private readonly clock: ManualClock) {}

  set(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { due: this.clock.us + Math.max(0, Math.ceil(ms)) * 1000, seq: id, fn });
    return id;
  }

  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** The instant (µs) of the next timer, if any. */
  nextDue(): number | undefined {
    let min: number | undefined;
    for (const p of this.pending.values()) if (min === undefined || p.due < min) min = p.due;
    return min;
  }

  get size(): number {
    return this.pending.size;
  }

  /** Moves the clock to the next timer (never back) and fires every timer due by then; false when none is pending. */
  fireNext(): boolean {
    const due = this.nextDue();
    if (due === undefined) return false;
    this.clock.us = Math.max(this.clock.us, due);
    const ready = [...this.pending.values()].filter((p) => p.due <= this.clock.us).sort((a, b) => a.due - b.due || a.seq - b.seq);
    for (const p of ready) this.pending.delete(p.seq);
    for (const p of ready) p.fn();
    return true;
  }
}
