/**
 * One budget of remote calls for the whole app (README, "Sync a live project"): the platform allows
 * 60 Management API calls a minute per user, across all their tokens, and refuses every call
 * for a minute past that; the app keeps under it (50 by default) with a sliding minute, so
 * syncs, tests of a connection and several connections share it.
 */
import type { Clock } from '../time.ts';
import { MICROS } from '../time.ts';

export const DEFAULT_CALLS_PER_MINUTE = 50;

/** One call the budget counts: when (µs) and for whom (a connection's id, or 'test'). */
export interface BudgetCall {
  at: number;
  who: string;
}

export class RateBudget {
  /** Instants (µs) of the calls in the last minute, oldest first, with who made them. */
  private calls: BudgetCall[] = [];

  constructor(
    private readonly clock: Clock,
    readonly perMinute = DEFAULT_CALLS_PER_MINUTE,
  ) {
    if (!Number.isInteger(perMinute) || perMinute < 1) throw new RangeError(`a budget needs at least one call a minute, not ${perMinute}`);
  }

  private prune(now: number): void {
    while (this.calls.length && this.calls[0]!.at <= now - MICROS.minute) this.calls.shift();
  }

  /**
   * Takes one call for `who` if the minute has room: 0. Otherwise nothing is taken and the
   * answer is how long (ms) until the oldest call of the minute leaves it.
   */
  take(who: string): number {
    const now = this.clock.now();
    this.prune(now);
    if (this.calls.length < this.perMinute) {
      this.calls.push({ at: now, who });
      return 0;
    }
    return Math.max(1, Math.ceil((this.calls[0]!.at + MICROS.minute - now) / 1000));
  }

  /** The calls of the last minute, oldest first: a restart takes them up (state.ts), since the platform counts them still. */
  recent(): BudgetCall[] {
    this.prune(this.clock.now());
    return this.calls.map((c) => ({ ...c }));
  }

  /** Counts calls made before (a restart), with any made since; none "after now" (a clock set back would hold them for good). */
  restore(calls: readonly BudgetCall[]): void {
    const now = this.clock.now();
    this.calls = [...calls.filter((c) => c.at <= now).map((c) => ({ ...c })), ...this.calls].sort((a, b) => a.at - b.at);
    this.prune(now);
  }

  /** Calls in the last minute, all of them or `who`'s. */
  callsLastMinute(who?: string): number {
    this.prune(this.clock.now());
    return who === undefined ? this.calls.length : this.calls.filter((c) => c.who === who).length;
  }
}
