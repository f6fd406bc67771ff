/**
 * The Logs page: the explorer over every imported source (search, filters, histogram, facets),
 * or the exact logs.all view of edge requests (tier retention, 100 newest per request). The
 * URL's `mode` says which (see url-state.ts); the tabs beside the title switch.
 */
import { useView } from '../../app-state.tsx';
import { logsMode } from '../../lib/url-state.ts';
import { ExactView } from './exact/exact-view.tsx';
import { ExplorerView } from './explorer/explorer-view.tsx';
import './logs.css';

export function LogsPage() {
  const { view } = useView();
  return logsMode(view.logs) === 'exact' ? <ExactView /> : <ExplorerView />;
}
