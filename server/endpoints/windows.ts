/**
 * The windows and buckets of the three endpoints, as their .sql files state them, for the
 * speed paths that answer without the SQL (the property tests hold both to one reference).
 */
import { MICROS } from '../time.ts';

export interface Window {
  /** How far back the window reaches from now, µs. */
  span: number;
  /** Bucket width, µs. */
  unit: number;
}

/** functions.invocation-stats; any other interval behaves as 1day. */
export const STATS_INTERVALS: Readonly<Record<string, Window>> = {
  '5min': { span: 5 * MICROS.minute, unit: MICROS.second },
  '15min': { span: 15 * MICROS.minute, unit: MICROS.minute },
  '1hr': { span: MICROS.hour, unit: MICROS.minute },
  '1day': { span: MICROS.day, unit: MICROS.hour },
  '7day': { span: 7 * MICROS.day, unit: MICROS.day },
};

/** usage.api-counts. */
export const API_INTERVALS: Readonly<Record<string, Window>> = {
  hourly: { span: MICROS.hour, unit: MICROS.hour },
  daily: { span: 7 * MICROS.day, unit: MICROS.day },
  minutely: { span: MICROS.hour, unit: MICROS.minute },
};

/** logs.all retention per tier; any other tier is FREE. */
export const TIER_RETENTION: Readonly<Record<string, number>> = {
  FREE: MICROS.day,
  PRO: 7 * MICROS.day,
  PAYG: 90 * MICROS.day,
  ENTERPRISE: 90 * MICROS.day,
};

/** logs.all returns at most this many rows. */
export const LOGS_ALL_ROWS = 100;
