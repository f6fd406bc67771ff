/**
 * Fields inside the records: `/api/logs/field-paths` (the fields the newest 2,000
 * records of a query carry, for the field picker) and `/api/logs/facets` for chosen field paths.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { FieldPath, FieldPathsAnswer } from '../../../../../contract/api-types.ts';
import { getLogsJson, whileSearching, type FacetValue, type LogsParams, type ScanProgress } from '../../../api/logs.ts';

export type { FieldPath, FieldPathsAnswer };

export interface FieldFacetsAnswer {
  result: Record<string, FacetValue[]>;
  others: Record<string, number>;
  scanned?: ScanProgress;
}

/**
 * The fields of a source's records in a window (`params`: source, project, start, end). Asked
 * when the picker opens; the same window answers from the cache afterwards.
 */
export function useFieldPaths(params: LogsParams | null) {
  const p = params ?? {};
  return useQuery({
    queryKey: ['endpoint', 'logs.field-paths', p],
    queryFn: ({ signal }) => getLogsJson<FieldPathsAnswer>('/field-paths', p, signal),
    enabled: params !== null,
    staleTime: Infinity,
    placeholderData: keepPreviousData,
  });
}

/** Top values of fields inside the records under the current query; asked again while its walk runs. */
export function useFieldFacets(params: LogsParams | null, paths: readonly string[]) {
  const p = { ...(params ?? {}), fields: paths.join(',') };
  return useQuery({
    queryKey: ['endpoint', 'logs.field-facets', p],
    queryFn: ({ signal }) => getLogsJson<FieldFacetsAnswer>('/facets', p, signal),
    enabled: params !== null && paths.length > 0,
    staleTime: Infinity,
    placeholderData: keepPreviousData,
    refetchInterval: whileSearching(p),
  });
}
