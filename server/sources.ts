/**
 * The nine log sources (docs/ARCHITECTURE.md, "Sources") as the server stores them: their names,
 * aliases and labels are the shared ones (contract/sources.ts); this adds each one's code on
 * disk, its hot table layout and where its records keep the project reference.
 */
import {
  findSourceName,
  findSourceNameExact,
  SOURCE_LABELS,
  sourceNameInFileName,
  type SourceLabel,
  type SourceName,
} from '../contract/sources.ts';

export { SOURCE_NAMES, type SourceName } from '../contract/sources.ts';

/** Where the project reference of a record sits: the top-level field or a metadata key. */
export type ProjectLocation = { in: 'record' } | { in: 'metadata'; key: 'project_ref' | 'project' };

/** Which hot table layout a source uses (what its endpoints filter and aggregate on). */
export type HotKind = 'edge' | 'function_edge' | 'function_event' | 'plain';

export interface SourceInfo extends SourceLabel {
  /** Small stable number used in table names and on disk. */
  code: number;
  project: ProjectLocation;
  hot: HotKind;
}

const STORED: Readonly<Record<SourceName, Pick<SourceInfo, 'code' | 'project' | 'hot'>>> = {
  'cloudflare.logs.prod': { code: 1, project: { in: 'record' }, hot: 'edge' },
  'postgres.logs': { code: 2, project: { in: 'record' }, hot: 'plain' },
  'deno-relay-logs': { code: 3, project: { in: 'metadata', key: 'project_ref' }, hot: 'function_edge' },
  'deno-subhosting-events': { code: 4, project: { in: 'metadata', key: 'project_ref' }, hot: 'function_event' },
  'gotrue.logs.prod': { code: 5, project: { in: 'record' }, hot: 'plain' },
  'realtime.logs.prod': { code: 6, project: { in: 'metadata', key: 'project' }, hot: 'plain' },
  'storage.logs.prod.2': { code: 7, project: { in: 'metadata', key: 'project' }, hot: 'plain' },
  'postgREST.logs.prod': { code: 8, project: { in: 'record' }, hot: 'plain' },
  'pgbouncer.logs.prod': { code: 9, project: { in: 'record' }, hot: 'plain' },
};

export const SOURCES: readonly SourceInfo[] = SOURCE_LABELS.map((s) => ({ ...s, ...STORED[s.name] }));

const byName = new Map<string, SourceInfo>(SOURCES.map((s) => [s.name, s]));
const infoOf = (name: SourceName | undefined) => (name === undefined ? undefined : byName.get(name));

/** Resolves a source by its Logflare name or its alias, case-insensitively. */
export function findSource(nameOrAlias: string): SourceInfo | undefined {
  return infoOf(findSourceName(nameOrAlias));
}

/**
 * Resolves a source by its exact name or alias (no trimming, no case folding): for deletes,
 * where a near-miss name must not reach a source.
 */
export function findSourceExact(nameOrAlias: string): SourceInfo | undefined {
  return infoOf(findSourceNameExact(nameOrAlias));
}

export function sourceInfo(name: SourceName): SourceInfo {
  const s = infoOf(findSourceName(name));
  if (!s) throw new Error(`unknown source ${name}`);
  return s;
}

/** Recognizes a source from a file name (the longest source name or alias it contains). */
export function sourceFromFileName(fileName: string): SourceInfo | undefined {
  return infoOf(sourceNameInFileName(fileName));
}
