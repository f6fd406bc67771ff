/**
 * The nine log sources as the API and the page name them: Logflare's names, the table names
 * Supabase's log explorer uses as aliases, and the label the page shows. How the server stores
 * each one (its code, hot table, where the project sits) is the server's (server/sources.ts).
 */

export const SOURCE_NAMES = [
  'cloudflare.logs.prod',
  'postgres.logs',
  'deno-relay-logs',
  'deno-subhosting-events',
  'gotrue.logs.prod',
  'realtime.logs.prod',
  'storage.logs.prod.2',
  'postgREST.logs.prod',
  'pgbouncer.logs.prod',
] as const;

export type SourceName = (typeof SOURCE_NAMES)[number];

/** The edge requests: what logs.all lists and usage.api-counts counts. */
export const EDGE_SOURCE = 'cloudflare.logs.prod' satisfies SourceName;
/** The edge-function invocations functions.invocation-stats reads. */
export const FUNCTION_SOURCE = 'deno-relay-logs' satisfies SourceName;

export interface SourceLabel {
  name: SourceName;
  alias: string;
  /** What the page calls it. */
  label: string;
}

export const SOURCE_LABELS: readonly SourceLabel[] = [
  { name: 'cloudflare.logs.prod', alias: 'edge_logs', label: 'Edge requests' },
  { name: 'postgres.logs', alias: 'postgres_logs', label: 'Postgres' },
  { name: 'deno-relay-logs', alias: 'function_edge_logs', label: 'Function invocations' },
  { name: 'deno-subhosting-events', alias: 'function_logs', label: 'Function runtime' },
  { name: 'gotrue.logs.prod', alias: 'auth_logs', label: 'Auth' },
  { name: 'realtime.logs.prod', alias: 'realtime_logs', label: 'Realtime' },
  { name: 'storage.logs.prod.2', alias: 'storage_logs', label: 'Storage' },
  { name: 'postgREST.logs.prod', alias: 'postgrest_logs', label: 'PostgREST' },
  // Supavisor replaced PgBouncer; both pools' records land in this source.
  { name: 'pgbouncer.logs.prod', alias: 'pgbouncer_logs', label: 'Pooler (PgBouncer)' },
];

const byKey = new Map<string, SourceLabel>();
for (const s of SOURCE_LABELS) {
  byKey.set(s.name.toLowerCase(), s);
  byKey.set(s.alias.toLowerCase(), s);
}

/** The source a Logflare name or an alias names, case-insensitively, around blanks. */
export function findSourceName(nameOrAlias: string): SourceName | undefined {
  return byKey.get(nameOrAlias.trim().toLowerCase())?.name;
}

/**
 * The source an exact name or alias names (no trimming, no case folding): for deletes, where a
 * near-miss name must not reach a source.
 */
export function findSourceNameExact(nameOrAlias: string): SourceName | undefined {
  return SOURCE_LABELS.find((s) => s.name === nameOrAlias || s.alias === nameOrAlias)?.name;
}

/**
 * The source a file name names: the longest source name or alias it contains (longest first, so
 * `storage.logs.prod.2` wins over shorter overlaps).
 */
export function sourceNameInFileName(fileName: string): SourceName | undefined {
  const base = fileName.replace(/^.*[\\/]/, '').toLowerCase();
  const keys = [...byKey.keys()].sort((a, b) => b.length - a.length);
  for (const k of keys) if (base.includes(k)) return byKey.get(k)!.name;
  return undefined;
}

/** The page's label of a source named by its name or alias; the text itself when it names none. */
export function sourceLabel(nameOrAlias: string): string {
  const name = findSourceName(nameOrAlias);
  return SOURCE_LABELS.find((s) => s.name === name)?.label ?? nameOrAlias;
}

/** A source's alias, by its name or alias; the text itself when it names none. */
export function sourceAlias(nameOrAlias: string): string {
  const name = findSourceName(nameOrAlias);
  return SOURCE_LABELS.find((s) => s.name === name)?.alias ?? nameOrAlias;
}
