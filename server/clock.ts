/**
 * The "as of" clock every endpoint window is computed from (docs/ARCHITECTURE.md, "Flow"): the system clock,
 * a fixed instant (`--now` or the app API), or pinned to the newest stored record so an old
 * export can be explored as if it were live.
 */
import type { ClockMode } from '../contract/api-types.ts';
import type { Clock } from './time.ts';
import { INSTANT_RANGE, inRange, RECORD_RANGE, systemClock } from './time.ts';

export type { ClockMode };

export interface ClockState {
  mode: ClockMode;
  /** The instant endpoints use right now, µs. */
  now: number;
  /** The fixed instant, in mode 'fixed'. */
  fixed?: number;
}

export class AppClock implements Clock {
  private mode: ClockMode = 'system';
  private fixed = 0;

  constructor(
    private newestRecord: () => number | null,
    private system: Clock = systemClock,
  ) {}

  now(): number {
    if (this.mode === 'fixed') return this.fixed;
    if (this.mode === 'latest') {
      // Imports refuse records outside RECORD_RANGE, but a store written by an older version
      // may hold one (a 9999-12-31 placeholder): it is not a "latest" to explore from.
      const newest = this.newestRecord();
      return newest !== null && inRange(newest, RECORD_RANGE) ? newest : this.system.now();
    }
    return this.system.now();
  }

  set(mode: ClockMode, fixed?: number): void {
    if (mode === 'fixed') {
      if (fixed === undefined) throw new Error('a fixed clock needs an instant');
      // Callers parse with parseIsoMicros, which already refuses these; this guards the rest.
      if (!inRange(fixed, INSTANT_RANGE)) throw new RangeError(`a fixed clock must be within ${INSTANT_RANGE.text}`);
      this.fixed = fixed;
    }
    this.mode = mode;
  }

  state(): ClockState {
    return { mode: this.mode, now: this.now(), ...(this.mode === 'fixed' ? { fixed: this.fixed } : {}) };
  }
}
