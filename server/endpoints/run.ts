/** Runs one registry entry against the store with validated parameters and the clock. */
import type { EndpointDefinition } from '../../queries/registry.ts';
import { AppError } from '../errors.ts';
import { QueryTimeout, withDeadline } from '../store/db.ts';
import type { LogStore } from '../store/log-store.ts';
import { withFlatView } from './flat-view.ts';
import type { ValidParams } from './params.ts';
import { helpersOf, SPEED_PATHS } from './speed-paths.ts';
import { endpointSql } from './sql-files.ts';

export type { ResultRow } from './row-json.ts';
import type { ResultRow } from './row-json.ts';
export { serializeResult } from './row-json.ts';


/** Answers the endpoint the way requests are answered: by the speed path its entry names. */
export function runEndpoint(store: LogStore, def: EndpointDefinition, params: ValidParams, now: number): ResultRow[] {
  if (!def.speedPath) throw new Error(`${def.name} names no speed path; only its SQL can answer it (runEndpointSql)`);
  return SPEED_PATHS[def.speedPath](store, params, now).slice(0, def.maxRows);
}

/**
 * Runs the endpoint's SQL, its definition, over the flat view of the store (tests compare).
 * `params.bind` carries the declared values and the entry's rules (window, retention, row cut,
 * error rule), so the SQL states none of them.
 */
export function runEndpointSql(store: LogStore, def: EndpointDefinition, params: ValidParams, now: number): Promise<ResultRow[]> {
  const sql = endpointSql(def);
  return withFlatView(store, (db) => {
    const rows = db.query(sql, { ...params.bind, now });
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
  });
}

/** Default longest run of one endpoint computation, ms. */
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;

/** Computations share an event-loop turn until they have used this long, ms. */
const TURN_MS = 5;
let turns: Promise<void> = Promise.resolve();
let turnStarted = -Infinity;

/**
 * Resolves when this caller may compute: computations queue here in arrival order and share an
 * event-loop turn only until it has lasted TURN_MS. A burst of requests would otherwise all
 * compute in the turn their bytes arrived, and Node 20 (libuv 1.46, seen with strace) accepts
 * one new connection per turn: with 100 busy connections, a new client waited up to 10 s.
 */
function nextTurn(): Promise<void> {
  const mine = turns.then(() => {
    if (performance.now() - turnStarted < TURN_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        turnStarted = performance.now();
        resolve();
      }),
    );
  });
  turns = mine;
  return mine;
}

/**
 * Runs the endpoint as a request does: in its own event-loop turn (see nextTurn), RE2 patterns
 * first matched against the URL dictionary in slices that yield (other requests go on
 * meanwhile), then the query with a deadline; past `timeoutMs` it is stopped (a 503).
 */
export async function runEndpointWithin(store: LogStore, def: EndpointDefinition, params: ValidParams, now: number, timeoutMs: number): Promise<ResultRow[]> {
  await nextTurn();
  const deadline = performance.now() + timeoutMs;
  try {
    for (const p of def.params) {
      const pattern = params.bind[p.bindAs ?? p.name];
      if (p.kind === 're2' && typeof pattern === 'string') await helpersOf(store).urlMatches.prepare(pattern, deadline);
    }
    return withDeadline(deadline, () => runEndpoint(store, def, params, now));
  } catch (err) {
    if (!(err instanceof QueryTimeout)) throw err;
    throw new AppError('unavailable', `${def.name} ran longer than the ${timeoutMs / 1000} s limit and was stopped; try a shorter interval or a narrower pattern`);
  }
}
