/** Runs one registry entry against the store with validated parameters and the clock. */
import type { EndpointDefinition } from '../../queries/registry.ts';
import type { LogStore } from '../store/log-store.ts';
import { ACCELERATORS } from './accelerators.ts';
import type { ValidParams } from './params.ts';

export type ResultRow = Record<string, unknown>;

/** Runs the endpoint; `sqlOnly` skips its accelerator (tests compare the two). */
export function runEndpoint(store: LogStore, def: EndpointDefinition, params: ValidParams, now: number, sqlOnly = false): ResultRow[] {
  const accelerator = sqlOnly ? undefined : ACCELERATORS[def.name];
  if (accelerator) return accelerator(store, params, now).slice(0, def.maxRows);
  const rows = store.db.query(def.sql, { ...params.bind, now });
  const out = rows.length > def.maxRows ? rows.slice(0, def.maxRows) : rows;
  const { jsonColumns = [], recordColumn } = def;
  if (!jsonColumns.length && !recordColumn) return out;
  return out.map((row) => {
    const copy: ResultRow = { ...row };
    for (const c of jsonColumns) {
      const v = row[c];
      copy[c] = typeof v === 'string' ? JSON.parse(v) : v;
    }
    if (!recordColumn) return copy;
    const text = row[recordColumn.column];
    const record = (typeof text === 'string' ? JSON.parse(text) : {}) as Record<string, unknown>;
    const shaped: ResultRow = {};
    for (const f of recordColumn.fields) shaped[f] = f in row && f !== recordColumn.column ? row[f] : record[f];
    return shaped;
  });
}
