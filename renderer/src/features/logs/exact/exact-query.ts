/**
 * logs.all for the exact view, newest first, paged backwards by `fetchOlder` so that each
 * "Load older" adds exactly one answer's worth of rows (the registry's `rows`, 100): the
 * endpoint's end bound is inclusive, so asking from the oldest row's instant alone answers that
 * row again and added 99.
 */
import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import type { LogRow } from '../../../../../contract/api-types.ts';
import { runEndpoint } from '../../../api/client.ts';
import { fetchOlder, olderCursor, type OlderCursor } from './logs-all-rows.ts';
import { formatIsoMicros } from '../../../../../contract/instants.ts';

export interface ExactPage {
  rows: LogRow[];
  /** Whether older rows may remain in the range. */
  more: boolean;
  /** Instants with more records than one answer holds (see OlderPage.crowded). */
  crowded: number[];
}

/**
 * `params` are logs.all's (project, tier, range); `size` is the endpoint's row cut from the
 * listing. Keyed like every endpoint query (`['endpoint', name, params]`), so imports, deletes
 * and clock changes refresh it.
 */
export function useExactLogs(params: Record<string, string> | null, size: number | undefined) {
  const name = 'logs.all';
  const p = params ?? {};
  return useInfiniteQuery({
    queryKey: ['endpoint', name, p],
    initialPageParam: null as OlderCursor | null,
    queryFn: async ({ pageParam, signal }): Promise<ExactPage> => {
      if (pageParam === null) {
        const rows = await runEndpoint<LogRow[]>(name, p, signal);
        return { rows, more: rows.length >= size!, crowded: [] };
      }
      return fetchOlder((end) => runEndpoint<LogRow[]>(name, { ...p, iso_timestamp_end: formatIsoMicros(end) }, signal), pageParam, size!);
    },
    getNextPageParam: (last, all): OlderCursor | null | undefined => (last.more ? (olderCursor(all.flatMap((pg) => pg.rows)) ?? undefined) : undefined),
    enabled: params !== null && size !== undefined,
    staleTime: Infinity,
    // The previous rows stay (dimmed) while a new range loads, instead of a blank table.
    placeholderData: keepPreviousData,
  });
}
