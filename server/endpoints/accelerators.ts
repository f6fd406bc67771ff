/**
 * Faster paths for endpoints whose SQL cannot be quick in sql.js at a million records. Each
 * computes exactly what its .sql file defines (the property tests hold both to one plain
 * reference); `runEndpoint` prefers it unless asked for the SQL.
 */
import type { LogStore } from '../store/log-store.ts';
import { MICROS } from '../time.ts';
import { EdgeColumns } from './edge-columns.ts';
import type { ValidParams } from './params.ts';
import type { ResultRow } from './run.ts';
import { UrlMatches } from './url-matches.ts';

/** Per-store helpers shared by the SQL functions and the accelerators. */
export interface StoreHelpers {
  urlMatches: UrlMatches;
  edgeColumns: EdgeColumns;
}

const helpers = new WeakMap<LogStore, StoreHelpers>();

export function helpersOf(store: LogStore): StoreHelpers {
  let h = helpers.get(store);
  if (!h) {
    h = { urlMatches: new UrlMatches(store), edgeColumns: new EdgeColumns(store) };
    helpers.set(store, h);
  }
  return h;
}

export type Accelerator = (store: LogStore, params: ValidParams, now: number) => ResultRow[];

/** usage.api-counts windows and units, as usage.api-counts.sql states them. */
const API_COUNTS: Record<string, { span: number; unit: number }> = {
  hourly: { span: MICROS.hour, unit: MICROS.hour },
  daily: { span: 7 * MICROS.day, unit: MICROS.day },
  minutely: { span: MICROS.hour, unit: MICROS.minute },
};

export const ACCELERATORS: Readonly<Record<string, Accelerator>> = {
  'usage.api-counts': (store, params, now) => {
    const w = API_COUNTS[String(params.bind.interval)];
    if (!w) throw new Error(`no window for interval ${String(params.bind.interval)}`);
    const { urlMatches, edgeColumns } = helpersOf(store);
    return edgeColumns.apiCounts(urlMatches.bitmap(String(params.bind.project)), now - w.span, w.unit);
  },
};
