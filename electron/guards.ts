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

/** Links on the shell's own error page that ask it to act; never a real destination. */
export const ACTION_URLS = { restart: 'log-explorer-action://restart' } as const;

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

const LOOPBACK_HOSTS = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|\[::\]|0\.0\.0\.0|\[::ffff:127(?:\.\d{1,3}){3}\]|\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\])$/i;

/**
 * The normalized URL to hand to the system browser, or undefined to refuse: only parseable
 * http(s) URLs with a host, no embedded credentials, and nothing on this machine (a link in
 * an imported log must not reach local services through the browser).
 */
export function safeExternalUrl(url: string): string | undefined {
  const u = parse(url);
  if (!u) return undefined;
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  if (u.username !== '' || u.password !== '') return undefined;
  if (u.hostname === '' || LOOPBACK_HOSTS.test(u.hostname) || u.hostname.endsWith('.localhost')) return undefined;
  return u.href;
}

/** IPC is answered only for frames showing the app itself (not the error page, not about:blank). */
export function checkSender(frameUrl: string | null | undefined, appOrigin: string | undefined): boolean {
  return typeof frameUrl === 'string' && frameUrl !== '' && isAppOrigin(frameUrl, appOrigin);
}

export type NavigationDecision = { kind: 'allow' } | { kind: 'restart' } | { kind: 'external'; url: string } | { kind: 'deny' };

/**
 * What a navigation of a window may do: stay within the app, run the error page's restart
 * action (only while the server is down), or leave for the system browser; the window itself
 * never goes anywhere else.
 */
export function decideNavigation(url: string, appOrigin: string | undefined, serverDown: boolean): NavigationDecision {
  if (isAppOrigin(url, appOrigin)) return { kind: 'allow' };
  if (url === ACTION_URLS.restart) return serverDown ? { kind: 'restart' } : { kind: 'deny' };
  const external = safeExternalUrl(url);
  return external ? { kind: 'external', url: external } : { kind: 'deny' };
}

/** Web preferences of every window; `preload` only for the app window. */
export function webPreferencesFor(preloadPath?: string): WebPreferences {
  return {
    ...(preloadPath ? { preload: preloadPath } : {}),
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
