/**
 * The shell's own pages (server error, API documentation) as self-contained HTML for data:
 * URLs. No scripts: their CSP forbids any, every interpolated value is escaped, and the
 * error page's Restart is a link the main process intercepts (guards.ACTION_URLS).
 */
import type { EndpointListing } from '../server/api-types.ts';
import { ACTION_URLS } from './guards.ts';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A data: URL for a page (Chromium allows a browser-initiated load of one; pages cannot navigate to it). */
export function dataUrl(html: string): string {
  return `data:text/html;charset=utf-8,${encodeURIComponent(html)}`;
}

const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'";

const STYLE = `
  :root { color-scheme: light dark; font: 14px/1.5 system-ui, sans-serif; }
  body { margin: 0; padding: 32px 40px; max-width: 960px; }
  h1 { font-size: 20px; margin: 0 0 8px; }
  h2 { font-size: 16px; margin: 24px 0 8px; }
  pre { background: rgba(127,127,127,.12); padding: 12px; overflow: auto; border-radius: 6px; font: 12px/1.45 ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }
  code { font: 12px ui-monospace, monospace; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid rgba(127,127,127,.3); vertical-align: top; }
  .action { display: inline-block; margin: 16px 0; padding: 8px 18px; border-radius: 6px; background: #2563eb; color: #fff; text-decoration: none; font-weight: 600; }
  .muted { opacity: .75; }
`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${PAGE_CSP}"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

export interface ErrorPageInput {
  title: string;
  message: string;
  /** The last lines the server process logged, oldest first. */
  lastLines: readonly string[];
  dataDir: string;
}

export function errorPageHtml(input: ErrorPageInput): string {
  const log = input.lastLines.length ? input.lastLines.join('\n') : '(the server process logged nothing)';
  return page(
    input.title,
    `<h1 data-testid="server-error">${escapeHtml(input.title)}</h1>
<p>${escapeHtml(input.message)}</p>
<a class="action" id="restart" href="${ACTION_URLS.restart}">Restart</a>
<p class="muted">Your imported data stays in <code>${escapeHtml(input.dataDir)}</code>; it was saved after every import.</p>
<h2>Last lines of the server log</h2>
<pre>${escapeHtml(log)}</pre>`,
  );
}

export interface ApiDocsInput {
  url: string;
  apiKey: string;
  endpoints: readonly EndpointListing[];
}

/** Example values for a curl line: the first allowed value, else the default, else a placeholder. */
function exampleQuery(e: EndpointListing): string {
  const params = e.parameters
    .filter((p) => p.required)
    .map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(p.allowed?.[0] ?? p.default ?? (p.name === 'project' ? 'PROJECT_REF' : p.name.toUpperCase()))}`);
  return params.length ? `?${params.join('&')}` : '';
}

export function curlExample(url: string, apiKey: string, e: EndpointListing): string {
  return `curl -H 'X-API-KEY: ${apiKey}' '${url}/api/endpoints/query/${e.id}${exampleQuery(e)}'`;
}

export function apiDocsHtml(input: ApiDocsInput): string {
  const rows = input.endpoints
    .map((e) => {
      const params = e.parameters
        .map((p) => `<code>${escapeHtml(p.name)}</code>${p.required ? ' (required)' : ''}${p.allowed ? `: ${p.allowed.map((a) => `<code>${escapeHtml(a)}</code>`).join(' ')}` : ''}`)
        .join('<br>');
      return `<tr><td><code>${escapeHtml(e.name)}</code><br><span class="muted">${escapeHtml(e.description)}</span></td><td><code>${escapeHtml(e.id)}</code></td><td>${params}</td></tr>`;
    })
    .join('');
  const first = input.endpoints[0];
  return page(
    'API documentation',
    `<h1>Log Explorer API</h1>
<p>The app answers Logflare's endpoint API at <code>${escapeHtml(input.url)}</code> (this machine only). Every request needs the header
<code>X-API-KEY</code>. This key is made fresh each time the app starts:</p>
<pre data-testid="api-key">${escapeHtml(input.apiKey)}</pre>
<h2>Endpoints</h2>
<table><thead><tr><th>name</th><th>UUID</th><th>parameters</th></tr></thead><tbody>${rows}</tbody></table>
<p class="muted">Each runs at <code>GET|POST /api/endpoints/query/&lt;uuid&gt;</code>, <code>/api/endpoints/query/&lt;name&gt;</code> or <code>/api/endpoints/&lt;name&gt;</code>;
parameters go in the query string or a JSON body. Answers are <code>{"result": [rows]}</code>, errors <code>{"error": {...}}</code>; timestamps are integer microseconds (UTC).</p>
${first ? `<h2>Example</h2><pre>${escapeHtml(curlExample(input.url, input.apiKey, first))}</pre>` : ''}`,
  );
}
