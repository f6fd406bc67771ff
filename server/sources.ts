/**
 * The nine log sources (docs/ARCHITECTURE.md, "Sources"): Logflare's names, the aliases Supabase's log explorer
 * uses, and where each record's project reference lives.
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

/** Where the project reference of a record sits: the top-level field or a metadata key. */
export type ProjectLocation = { in: 'record' } | { in: 'metadata'; key: 'project_ref' | 'project' };

/** Which hot table layout a source uses (what its endpoints filter and aggregate on). */
export type HotKind = 'edge' | 'function_edge' | 'function_event' | 'plain';

export interface SourceInfo {
  name: SourceName;
  alias: string;
  /** Small stable number used in table names and on disk. */
  code: number;
  project: ProjectLocation;
  hot: HotKind;
}

export const SOURCES: readonly SourceInfo[] = [
  { name: 'cloudflare.logs.prod', alias: 'edge_logs', code: 1, project: { in: 'record' }, hot: 'edge' },
  { name: 'postgres.logs', alias: 'postgres_logs', code: 2, project: { in: 'record' }, hot: 'plain' },
  {
    name: 'deno-relay-logs',
    alias: 'function_edge_logs',
    code: 3,
    project: { in: 'metadata', key: 'project_ref' },
    hot: 'function_edge',
  },
  {
    name: 'deno-subhosting-events',
    alias: 'function_logs',
    code: 4,
    project: { in: 'metadata', key: 'project_ref' },
    hot: 'function_event',
  },
  { name: 'gotrue.logs.prod', alias: 'auth_logs', code: 5, project: { in: 'record' }, hot: 'plain' },
  { name: 'realtime.logs.prod', alias: 'realtime_logs', code: 6, project: { in: 'metadata', key: 'project' }, hot: 'plain' },
  { name: 'storage.logs.prod.2', alias: 'storage_logs', code: 7, project: { in: 'metadata', key: 'project' }, hot: 'plain' },
  { name: 'postgREST.logs.prod', alias: 'postgrest_logs', code: 8, project: { in: 'record' }, hot: 'plain' },
  { name: 'pgbouncer.logs.prod', alias: 'pgbouncer_logs', code: 9, project: { in: 'record' }, hot: 'plain' },
];

const byKey = new Map<string, SourceInfo>();
for (const s of SOURCES) {
  byKey.set(s.name.toLowerCase(), s);
  byKey.set(s.alias.toLowerCase(), s);
}

/** Resolves a source by its Logflare name or its alias, case-insensitively. */
export function findSource(nameOrAlias: string): SourceInfo | undefined {
  return byKey.get(nameOrAlias.trim().toLowerCase());
}

/**
 * Resolves a source by its exact name or alias (no trimming, no case folding): for deletes,
 * where a near-miss name must not reach a source.
 */
export function findSourceExact(nameOrAlias: string): SourceInfo | undefined {
  return SOURCES.find((s) => s.name === nameOrAlias || s.alias === nameOrAlias);
}

export function sourceInfo(name: SourceName): SourceInfo {
  const s = byKey.get(name.toLowerCase());
  if (!s) throw new Error(`unknown source ${name}`);
  return s;
}

/**
 * Recognizes a source from a file name: the longest source name or alias it contains
 * (longest first, so `storage.logs.prod.2` wins over shorter overlaps).
 */
export function sourceFromFileName(fileName: string): SourceInfo | undefined {
  const base = fileName.replace(/^.*[\\/]/, '').toLowerCase();
  const keys = [...byKey.keys()].sort((a, b) => b.length - a.length);
  for (const k of keys) if (base.includes(k)) return byKey.get(k);
  return undefined;
}
