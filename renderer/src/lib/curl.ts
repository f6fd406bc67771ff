/** "Copy as curl": the API request behind the current view, runnable in a shell. */

/** Quotes for POSIX shells: single quotes, with embedded ones closed and escaped. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export function endpointUrl(origin: string, name: string, params: Record<string, string>): string {
  const qs = new URLSearchParams(params).toString();
  return `${origin}/api/endpoints/${name}${qs ? `?${qs}` : ''}`;
}

/** `curl -sS -H 'X-API-KEY: …' 'http://127.0.0.1:4100/api/logs?source=…'` */
export function curlOf(url: string, apiKey: string): string {
  return `curl -sS -H ${shellQuote(`X-API-KEY: ${apiKey}`)} ${shellQuote(url)}`;
}

/** `curl -sS -H 'X-API-KEY: …' 'http://127.0.0.1:4100/api/endpoints/logs.all?project=…'` */
export function curlCommand(origin: string, name: string, params: Record<string, string>, apiKey: string): string {
  return curlOf(endpointUrl(origin, name, params), apiKey);
}
