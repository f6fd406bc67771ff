/**
 * The "as of" clock every endpoint window is computed from (docs/ARCHITECTURE.md, "Flow"): the system clock,
 * a fixed instant (`--now` or the app API), or pinned to the newest stored record so an old
 * export can be explored as if it were live.
 */
import type { Clock } from './time.ts';
import { systemClock } from './time.ts';

export type ClockMode = 'system' | 'fixed' | 'latest';

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
    if (this.mode === 'latest') return this.newestRecord() ?? this.system.now();
    return this.system.now();
  }

  set(mode: ClockMode, fixed?: number): void {
    if (mode === 'fixed') {
      if (fixed === undefined) throw new Error('a fixed clock needs an instant');
      this.fixed = fixed;
    }
    this.mode = mode;
  }

  state(): ClockState {
    return { mode: this.mode, now: this.now(), ...(this.mode === 'fixed' ? { fixed: this.fixed } : {}) };
  }
}
