/** How the saved-views menu names pages and describes a view's state, its time and a failure. */
import { ApiError } from '../../api/client.ts';
import { formatDateTime } from '../../lib/time.ts';
import { encodeView, type AppView, type PageId } from '../../lib/url-state.ts';

export const PAGE_LABELS: Record<PageId, string> = {
  functions: 'Functions',
  logs: 'Logs',
  usage: 'API usage',
  data: 'Data',
  settings: 'Settings & API',
};

/** The current view as the server stores it: the page and its URL query string. */
export function currentState(view: AppView): { page: PageId; state: string } {
  const url = encodeView(view);
  const q = url.indexOf('?');
  return { page: view.page, state: q < 0 ? '' : url.slice(q + 1) };
}

/** `interval daily · project abc`: a state's parameters, readable; the project (long, often the same) last. */
export function describeState(state: string): string {
  const entries = [...new URLSearchParams(state)];
  const ordered = [...entries.filter(([k]) => k !== 'project'), ...entries.filter(([k]) => k === 'project')];
  const parts = ordered.map(([k, v]) => (v ? `${k} ${v}` : k));
  return parts.length ? parts.join(' · ') : 'defaults';
}

/** `Logs · interval daily`: a stored view's page and state, as its items and the save form show them. */
export function describeView(page: PageId, state: string): string {
  return `${PAGE_LABELS[page]} · ${describeState(state)}`;
}

export function suggestName(view: AppView): string {
  const label = PAGE_LABELS[view.page];
  return view.project && view.page !== 'data' && view.page !== 'settings' ? `${label} · ${view.project}` : label;
}

export function errorText(err: unknown): string {
  return err instanceof ApiError || err instanceof Error ? err.message : String(err);
}

export function whenSaved(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? '' : formatDateTime(ms * 1000, 'minute');
}
