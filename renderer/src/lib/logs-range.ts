/** The Logs page's time ranges: the presets, resolved against the server's now, and custom bounds. */
import { MICROS } from '../../../contract/instants.ts';

export const RANGE_PRESETS = ['15m', '1h', '3h', '24h', '7d'] as const;
export type RangePreset = (typeof RANGE_PRESETS)[number];
export type RangeChoice = RangePreset | 'custom';

export const PRESET_SPAN: Record<RangePreset, number> = {
  '15m': 15 * MICROS.minute,
  '1h': MICROS.hour,
  '3h': 3 * MICROS.hour,
  '24h': MICROS.day,
  '7d': 7 * MICROS.day,
};


export interface LogsRange {
  /** Exclusive lower bound, µs; undefined = none. */
  start?: number;
  /** Inclusive upper bound, µs; undefined = none. */
  end?: number;
}

/** A preset ends at the server's now and starts one span earlier. */
export function resolveRange(choice: RangeChoice, now: number, custom: LogsRange = {}): LogsRange {
  if (choice === 'custom') return { ...custom };
  return { start: now - PRESET_SPAN[choice], end: now };
}
