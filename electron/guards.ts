/**
 * Security decisions of the desktop shell, as pure functions (Electron's security checklist):
 * which URLs count as the app, which may open in the system browser, which IPC senders are
 * trusted, and the web preferences of every window. main.ts only wires them to Electron.
 *
 * Origins are compared exactly, after the WHATWG URL parser has done its work: prefix or
 * substring checks are what `http://127.0.0.1:PORT.evil.com` and `...@evil.com` defeat.
 */
import type { WebPreferences } from 'electron';

/** Same policy the server sends on the renderer's responses; set again by the shell (defense in depth). */
export const APP_CSP =
  "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Links on the shell's own pages that ask it to act; never a real destination. */
export const ACTION_URLS = {
  /** Start (or start again) the app's own server. */
  restart: 'log-explorer-action://restart',
  /** Show the UI of the server that holds the data folder (another process) in this window. */
  openRunning: 'log-explorer-action://open-running',
} as const;

export type ShellAction = keyof typeof ACTION_URLS;

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/** The origin of an http(s) URL, or undefined for anything else (opaque origins included). */
export function originOf(url: string): string | undefined {
  const u = parse(url);
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) return undefined;
  return u.origin;
}

/**
 * True when `url` belongs to the app's origin (scheme, host and port equal). A `blob:` URL
 * the app created has the app's origin too. With no app origin (server not up), nothing is.
 */
export function isAppOrigin(url: string, appOrigin: string | undefined): boolean {
  if (!appOrigin) return false;
  const expected = originOf(appOrigin);
  if (!expected) return false;
  const u = parse(url);
  // new URL('data:...').origin and file: origins are "null": never equal to an http origin.
  return u !== undefined && u.origin === expected;
}

const LOOPBACK_HOSTS = /^(localhost|127(?:\.\d{1,3}){3}|0(?:\.\d{1,3}){3}|\[::1\]|\[::\]|\[::ffff:127(?:\.\d{1,3}){3}\]|\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\])$/i;

/** Names that only resolve inside a network: one label (`nas`, `router`) or a private-use suffix. */
const LOCAL_NAME = /(?:^[^.]+|\.(?:local|lan|home|internal|intranet|corp|private|localdomain|home\.arpa))$/;

/** IPv4 ranges that are not the public internet: private, shared (CGNAT), link-local, benchmark, multicast and reserved. */
function localIPv4(host: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.\d{1,3}\.\d{1,3}$/.exec(host);
  if (!m) return false;
  const [a, b] = [Number(m[1]), Number(m[2])];
  return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127) || (a === 198 && (b === 18 || b === 19)) || a >= 224;
}

/** IPv6 (bracketed, as the URL parser writes it): unique local fc00::/7, link- and site-local fe80::/9, and IPv4-mapped addresses. */
function localIPv6(host: string): boolean {
  return /^\[(?:f[cd][0-9a-f]{0,2}:|fe[89a-f][0-9a-f]:|::ffff:)/i.test(host);
}

/**
 * Where a link from the page may go outside the window. The page shows imported logs, so any
 * URL may appear in it, and a script in it must not reach this machine or its network through
 * the system browser unasked:
 * - `open`: https to a public host, handed to the system browser;
 * - `ask`: plain http, or a host of the local network (a private address, a one-label or
 *   private-suffix name): only after the user says so;
 * - `deny`: anything else: other schemes, embedded credentials, this machine.
 */
export type ExternalLink = { kind: 'open'; url: string } | { kind: 'ask'; url: string; reason: 'http' | 'local-network' } | { kind: 'deny' };

export function externalLink(url: string): ExternalLink {
  const u = parse(url);
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:')) return { kind: 'deny' };
  if (u.username !== '' || u.password !== '') return { kind: 'deny' };
  // A trailing dot names the same host (`localhost.`).
  const host = u.hostname.replace(/\.+$/, '');
  if (host === '' || LOOPBACK_HOSTS.test(host) || host.endsWith('.localhost')) return { kind: 'deny' };
  if (localIPv4(host) || localIPv6(host) || (!host.startsWith('[') && !/^[\d.]+$/.test(host) && LOCAL_NAME.test(host))) return { kind: 'ask', url: u.href, reason: 'local-network' };
  if (u.protocol === 'http:') return { kind: 'ask', url: u.href, reason: 'http' };
  return { kind: 'open', url: u.href };
}

/** IPC is answered only for frames showing the app itself (not the error page, not about:blank). */
export function checkSender(frameUrl: string | null | undefined, appOrigin: string | undefined): boolean {
  return typeof frameUrl === 'string' && frameUrl !== '' && isAppOrigin(frameUrl, appOrigin);
}

export type NavigationDecision =
  | { kind: 'allow' }
  | { kind: 'action'; action: ShellAction }
  | { kind: 'external'; url: string }
  | { kind: 'ask'; url: string; reason: 'http' | 'local-network' }
  | { kind: 'deny' };

/**
 * What a navigation of a window may do: stay within the app, run one of the shell page's
 * actions (only those `actions` lists: the page showing now offers them), or leave for the
 * system browser (`externalLink`); the window itself never goes anywhere else.
 */
export function decideNavigation(url: string, appOrigin: string | undefined, actions: readonly ShellAction[]): NavigationDecision {
  if (isAppOrigin(url, appOrigin)) return { kind: 'allow' };
  const action = (Object.keys(ACTION_URLS) as ShellAction[]).find((a) => ACTION_URLS[a] === url);
  if (action) return actions.includes(action) ? { kind: 'action', action } : { kind: 'deny' };
  const external = externalLink(url);
  if (external.kind === 'open') return { kind: 'external', url: external.url };
  return external;
}

/**
 * Web preferences of every window; `preload` only for the app window. A packaged app has no
 * developer tools at all (hiding the menu item would leave the shortcut and the API).
 */
export function webPreferencesFor(preloadPath: string | undefined, opts: { packaged: boolean }): WebPreferences {
  return {
    ...(preloadPath ? { preload: preloadPath } : {}),
    devTools: !opts.packaged,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webviewTag: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    navigateOnDragDrop: false,
    safeDialogs: true,
    spellcheck: false,
  };
}

/**
 * Response headers with the app's CSP added. An existing policy is kept (a browser enforces
 * every policy it gets, so adding can only tighten), under whatever casing the server used.
 */
export function withCsp(headers: Record<string, string[] | string> | undefined, csp: string = APP_CSP): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let key = 'Content-Security-Policy';
  for (const [k, v] of Object.entries(headers ?? {})) {
    out[k] = Array.isArray(v) ? [...v] : [v];
    if (k.toLowerCase() === 'content-security-policy') key = k;
  }
  const existing = out[key] ?? [];
  if (!existing.includes(csp)) out[key] = [...existing, csp];
  return out;
}
