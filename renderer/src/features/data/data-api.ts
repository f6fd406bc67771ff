/**
 * The Data page's own API calls: the imports (polled while any runs), deleting a source and
 * loading the demo data. A delete or a demo load invalidates every endpoint result and summary
 * (`invalidateData`), as an import does.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ImportReport, ImportRun } from '../../../../contract/api-types.ts';
import { api } from '../../api/client.ts';
import { invalidateData } from '../../api/hooks.ts';

/** Running and finished imports; polled while `poll` is true. */
export function useImports(poll: boolean) {
  return useQuery({
    queryKey: ['imports'],
    queryFn: ({ signal }) => api<ImportRun[]>('imports', { signal }),
    refetchInterval: poll ? 400 : false,
    staleTime: 0,
  });
}

export function useDeleteSource() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (source: string) => api<{ source: string; deleted: number }>(`sources/${encodeURIComponent(source)}`, { method: 'DELETE' }),
    onSettled: () => invalidateData(qc),
  });
}

export function useLoadDemo() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => api<ImportReport[]>('demo', { method: 'POST' }),
    onSettled: () => invalidateData(qc),
  });
}
