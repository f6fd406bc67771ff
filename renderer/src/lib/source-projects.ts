/** The stored sources as the pages use them: the projects of a source and the default project choice. */
import { useMemo } from 'react';
import type { SourceListing } from '../../../contract/api-types.ts';
import { useSources } from '../api/hooks.ts';

export { EDGE_SOURCE, FUNCTION_SOURCE } from '../../../contract/sources.ts';

/** A project of a source and its all-time record count, as the project pickers list it. */
export interface ProjectOption {
  ref: string;
  count: number;
}

export function sourceOf(sources: readonly SourceListing[] | undefined, name: string): SourceListing | undefined {
  return sources?.find((s) => s.source === name);
}

/** Projects of one source, busiest first. */
export function useSourceProjects(name: string): { source: SourceListing | undefined; projects: ProjectOption[]; loading: boolean; hasData: boolean } {
  const sources = useSources();
  return useMemo(() => {
    const source = sourceOf(sources.data, name);
    const projects = [...(source?.projects ?? [])].sort((a, b) => b.count - a.count || a.ref.localeCompare(b.ref));
    return { source, projects, loading: sources.isPending, hasData: (source?.count ?? 0) > 0 };
  }, [sources.data, sources.isPending, name]);
}

/** The default project: the one with the most records across every source. */
export function busiestProject(sources: readonly SourceListing[] | undefined): string | null {
  const totals = new Map<string, number>();
  for (const s of sources ?? []) for (const p of s.projects) totals.set(p.ref, (totals.get(p.ref) ?? 0) + p.count);
  let best: string | null = null;
  let bestCount = -1;
  for (const [ref, count] of totals) {
    if (count > bestCount || (count === bestCount && best !== null && ref < best)) {
      best = ref;
      bestCount = count;
    }
  }
  return best;
}
