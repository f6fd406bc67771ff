/** The nine log sources as the import form offers them (docs/ARCHITECTURE.md, "Sources"). */
export interface SourceOption {
  name: string;
  alias: string;
  label: string;
}

export const SOURCE_OPTIONS: readonly SourceOption[] = [
  { name: 'cloudflare.logs.prod', alias: 'edge_logs', label: 'Edge requests' },
  { name: 'postgres.logs', alias: 'postgres_logs', label: 'Postgres' },
  { name: 'deno-relay-logs', alias: 'function_edge_logs', label: 'Function invocations' },
  { name: 'deno-subhosting-events', alias: 'function_logs', label: 'Function runtime' },
  { name: 'gotrue.logs.prod', alias: 'auth_logs', label: 'Auth' },
  { name: 'realtime.logs.prod', alias: 'realtime_logs', label: 'Realtime' },
  { name: 'storage.logs.prod.2', alias: 'storage_logs', label: 'Storage' },
  { name: 'postgREST.logs.prod', alias: 'postgrest_logs', label: 'PostgREST' },
  { name: 'pgbouncer.logs.prod', alias: 'pgbouncer_logs', label: 'PgBouncer' },
];

export function sourceLabel(name: string): string {
  return SOURCE_OPTIONS.find((s) => s.name === name)?.label ?? name;
}
