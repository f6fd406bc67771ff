/**
 * The shell's own pages (server error, data folder in use, API documentation) as self-contained
 * HTML for data: URLs. No scripts: their CSP forbids any, every interpolated value is escaped,
 * and their buttons are links the main process intercepts (guards.ACTION_URLS).
 */
import path from 'node:path';
import type { EndpointListing } from '../contract/api-types.ts';
import type { DataLockInfo } from '../server/store/data-lock.ts';
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
  .action { display: inline-block; margin: 16px 12px 16px 0; padding: 8px 18px; border-radius: 6px; background: #2563eb; color: #fff; text-decoration: none; font-weight: 600; }
  .action.secondary { background: rgba(127,127,127,.2); color: inherit; }
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

/** What the in-use page shows of the holder's lock: never its key. */
export type FolderHolder = Pick<DataLockInfo, 'pid' | 'hostname' | 'kind' | 'startedAt' | 'command' | 'url'>;

export interface FolderInUseInput {
  dataDir: string;
  holder: FolderHolder;
  /** The lock was written on another host (a shared folder): its process cannot be reached from here. */
  remote: boolean;
  /** The holder serves its UI and answered with its key: the window can show it. */
  canOpen: boolean;
}

/** What kind of process holds the folder, as the user started it. */
export function holderLabel(h: Pick<DataLockInfo, 'kind' | 'command'>): string {
  if (h.kind === 'serve') return /scripts[\\/]start\.ts\b/.test(h.command) ? 'npm start' : 'npm run serve';
  if (h.kind === 'import') return 'npm run import';
  if (h.kind === 'desktop') return 'the desktop app';
  return 'a Log Explorer process';
}

/**
 * The data folder is held by another process (its LOCK is live): who, and what to do: open that
 * process's own page here (it serves the same UI on the same data), import through it from a
 * terminal, or stop it and try again.
 */
export function folderInUseHtml(input: FolderInUseInput): string {
  const h = input.holder;
  const rows: Array<[string, string]> = [
    ['Data folder', `<code>${escapeHtml(input.dataDir)}</code>`],
    ['Process', `pid ${h.pid}${input.remote ? ` on host <code>${escapeHtml(h.hostname)}</code>` : ''}: ${escapeHtml(holderLabel(h))}`],
    ...(h.command ? [['Command', `<code>${escapeHtml(h.command)}</code>`] as [string, string]] : []),
    ['Started', escapeHtml(h.startedAt)],
    ...(h.url ? [['Serving at', `<code>${escapeHtml(h.url)}</code>`] as [string, string]] : []),
  ];
  const table = `<table data-testid="holder">${rows.map(([k, v]) => `<tr><th>${k}</th><td>${v}</td></tr>`).join('')}</table>`;
  const importCommand = `npm run import -- --data-dir "${input.dataDir}" FILE...`;
  let advice: string;
  if (input.remote) {
    advice = `<p>The folder is locked by a process on another computer, which this app cannot reach. If that process no longer runs, delete <code>${escapeHtml(path.join(input.dataDir, 'LOCK'))}</code> and try again.</p>`;
  } else if (h.kind === 'import') {
    advice = '<p>An import into this folder is running. Try again once it has finished.</p>';
  } else {
    advice =
      (input.canOpen
        ? `<p>It serves the same pages on the same data: open them here, and import as usual (File → Import Logs… goes through it) while it runs.</p><a class="action" id="open-running" href="${ACTION_URLS.openRunning}">Open It Here</a>`
        : `<p>It does not answer at its address now${h.url ? '' : ' (it names none)'}; once it serves, or once it is stopped, try again.</p>`) +
      `<h2>Import from a terminal</h2><p>Imports go through the running server:</p><pre>${escapeHtml(importCommand)}</pre>`;
  }
  return page(
    'Data folder in use',
    `<h1 data-testid="folder-in-use">The data folder is open in another Log Explorer process</h1>
<p>Only one process at a time may use a data folder (each keeps the catalog in memory and would overwrite the other's imports).</p>
${table}
${advice}
<p class="muted">To use this app's own server, stop that process (Ctrl+C in its terminal, or quit it), then:</p>
<a class="action secondary" id="restart" href="${ACTION_URLS.restart}">Try Again</a>`,
  );
}

/** A page shown while the shell works (a server restarting): also makes the next load of the app a new document, so the page reads its new key. */
export function busyPageHtml(title: string): string {
  return page(title, `<h1 data-testid="busy">${escapeHtml(title)}</h1>`);
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
