/** Runs one registry entry against the store with validated parameters and the clock. */
import type { EndpointDefinition } from '../../queries/registry.ts';
import type { LogStore } from '../store/log-store.ts';
import type { ValidParams } from './params.ts';

export type ResultRow = Record<string, unknown>;

export function runEndpoint(store: LogStore, def: EndpointDefinition, params: ValidParams, now: number): ResultRow[] {
  const rows = store.db.query(def.sql, { ...params.bind, now });
  const out = rows.length > def.maxRows ? rows.slice(0, def.maxRows) : rows;
  if (!def.jsonColumns?.length) return out;
  return out.map((row) => {
    const copy: ResultRow = { ...row };
    for (const c of def.jsonColumns ?? []) {
      const v = row[c];
      copy[c] = typeof v === 'string' ? JSON.parse(v) : v;
    }
    return copy;
  });
}
