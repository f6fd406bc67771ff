/** The endpoint request behind each data page's current view (for queries, curl and Settings), and its errors in the page's words. */
import { ApiError } from '../api/client.ts';
import { resolveRange } from './logs-range.ts';
import { logsParams } from './retention.ts';
import { escapeRe2 } from './regex.ts';
import type { AppView } from './url-state.ts';

export interface EndpointRequest {
  name: string;
  params: Record<string, string>;
}

export function functionsRequest(view: AppView): EndpointRequest | null {
  if (!view.project) return null;
  const params: Record<string, string> = { project: view.project, interval: view.functions.interval };
  if (view.functions.fn) params.function_id = view.functions.fn;
  return { name: 'functions.invocation-stats', params };
}

/** Preset ranges resolve against the server's now (µs); null until both are known. */
export function logsRequest(view: AppView, now: number | undefined): EndpointRequest | null {
  if (!view.project || now === undefined) return null;
  const range = resolveRange(view.logs.range, now, { start: view.logs.start, end: view.logs.end });
  return { name: 'logs.all', params: logsParams(view.project, view.logs.tier, range) };
}

/** The regex follows the project (its ref, escaped) until the user types their own. */
export function usagePattern(view: AppView): string | null {
  // A cleared field is no pattern: it falls back to the project rather than asking for a 400.
  if (view.usage.regex !== null && view.usage.regex.trim() !== '') return view.usage.regex;
  return view.project ? escapeRe2(view.project) : null;
}

export function usageRequest(view: AppView): EndpointRequest | null {
  const pattern = usagePattern(view);
  if (pattern === null) return null;
  return { name: 'usage.api-counts', params: { project: pattern, interval: view.usage.interval } };
}

/**
 * An endpoint's error with each parameter it blames named as the page's field that sets it
 * (usage.api-counts' `project` is the page's URL pattern): "project is required" under a filled
 * project picker sends the user to the wrong field. The parameter's own name stays in the
 * detail's reason, for the curl and API view. Other errors pass through unchanged.
 */
export function fieldError(error: unknown, labels: Readonly<Record<string, string>>): unknown {
  if (!(error instanceof ApiError)) return error;
  const label = (param: string | undefined) => (param !== undefined && Object.hasOwn(labels, param) ? labels[param] : undefined);
  const named = (text: string, param: string | undefined) => {
    const l = label(param);
    return l !== undefined && param !== undefined && text.startsWith(`${param} `) ? `${l}${text.slice(param.length)}` : text;
  };
  const info = error.info;
  const first = info.errors[0]?.location;
  return new ApiError({
    ...info,
    message: named(info.message, first),
    errors: info.errors.map((d) => {
      const l = label(d.location);
      if (l === undefined) return d;
      return { ...d, location: l, message: named(d.message, d.location), reason: `${d.reason} (endpoint parameter ${d.location})` };
    }),
  });
}
