import { describe, expect, it } from 'vitest';
import { ACTION_URLS, APP_CSP, checkSender, decideNavigation, isAppOrigin, originOf, safeExternalUrl, webPreferencesFor, withCsp } from './guards.ts';

const PORT = 51234;
const APP = `http://127.0.0.1:${PORT}`;

/** URLs that must never count as the app: look-alikes, other schemes, other ports. */
const HOSTILE = [
  'https://127.0.0.1.evil.com',
  `http://127.0.0.1.evil.com:${PORT}/`,
  `http://127.0.0.1:${PORT}.evil.com/`,
  `http://127.0.0.1:${PORT}@evil.com/`,
  `http://user:pass@evil.com/#http://127.0.0.1:${PORT}`,
  `http://evil.com/?u=http://127.0.0.1:${PORT}`,
  `http://evil.com/http://127.0.0.1:${PORT}/`,
  'file:///etc/passwd',
  `file://127.0.0.1:${PORT}/etc/passwd`,
  'javascript:alert(1)',
  `javascript://127.0.0.1:${PORT}/%0aalert(1)`,
  'data:text/html,<script>alert(1)</script>',
  `data:text/html;base64,${Buffer.from(APP).toString('base64')}`,
  'about:blank',
  `https://127.0.0.1:${PORT}/`,
  `http://127.0.0.1:${PORT + 1}/`,
  'http://127.0.0.1/',
  `http://localhost:${PORT}/`,
  `http://[::1]:${PORT}/`,
  `ws://127.0.0.1:${PORT}/`,
  `blob:http://evil.com/${PORT}`,
  `view-source:http://127.0.0.1:${PORT}/`,
  `chrome://settings`,
  `devtools://devtools/bundled/inspector.html`,
  '',
  'not a url',
];

describe('isAppOrigin', () => {
  it.each([`${APP}`, `${APP}/`, `${APP}/#key=abc`, `${APP}/functions?project=x`, `HTTP://127.0.0.1:${PORT}/x`, `blob:${APP}/6f1c7a9e-0000-4000-8000-000000000000`])('accepts the app origin: %s', (url) => {
    expect(isAppOrigin(url, APP)).toBe(true);
  });

  it('parses like Chromium: a backslash ends the authority in http(s), so this is the app itself', () => {
    expect(new URL(`http://127.0.0.1:${PORT}\\@evil.com/`).pathname).toBe('/@evil.com/');
    expect(isAppOrigin(`http://127.0.0.1:${PORT}\\@evil.com/`, APP)).toBe(true);
  });

  it.each(HOSTILE)('rejects %s', (url) => {
    expect(isAppOrigin(url, APP)).toBe(false);
  });

  it('treats nothing as the app while the server is down or the origin is not http(s)', () => {
    expect(isAppOrigin(`${APP}/`, undefined)).toBe(false);
    expect(isAppOrigin(`${APP}/`, '')).toBe(false);
    expect(isAppOrigin('data:text/html,x', 'null')).toBe(false);
    expect(isAppOrigin('file:///etc/passwd', 'file:///')).toBe(false);
  });

  it('compares the normalized origin, so a trailing path on the configured origin is harmless', () => {
    expect(isAppOrigin(`${APP}/x`, `${APP}/`)).toBe(true);
    expect(originOf(`${APP}/path?q#f`)).toBe(APP);
    expect(originOf('file:///x')).toBeUndefined();
  });
});

describe('safeExternalUrl', () => {
  it.each([
    ['https://supabase.com/docs/guides/platform/logs', 'https://supabase.com/docs/guides/platform/logs'],
    ['http://example.com', 'http://example.com/'],
    ['HTTPS://Example.COM/a b', 'https://example.com/a%20b'],
  ])('opens %s as %s', (url, expected) => {
    expect(safeExternalUrl(url)).toBe(expected);
  });

  it.each([
    'javascript:alert(1)',
    'file:///etc/passwd',
    'data:text/html,x',
    'mailto:a@b.c',
    'smb://evil.com/share',
    'ms-settings:',
    'vbscript:msgbox',
    'https://user:pass@example.com/',
    `http://127.0.0.1:${PORT}@evil.com/`,
    `${APP}/#key=secret`,
    'http://localhost:8080/admin',
    'http://app.localhost/',
    'http://127.1.2.3/',
    'http://[::1]/',
    'http://0.0.0.0:9000/',
    'http://',
    'https://',
    'not a url',
    '',
  ])('refuses %s', (url) => {
    expect(safeExternalUrl(url)).toBeUndefined();
  });
});

describe('checkSender (every IPC handler)', () => {
  it('accepts a frame showing the app', () => {
    expect(checkSender(`${APP}/#/functions`, APP)).toBe(true);
  });

  it.each([null, undefined, '', 'about:blank', 'data:text/html,x', `http://127.0.0.1:${PORT}.evil.com/`, `http://127.0.0.1:${PORT}@evil.com/`, 'https://evil.com/', `http://127.0.0.1:${PORT + 1}/`])('rejects a frame at %s', (url) => {
    expect(checkSender(url, APP)).toBe(false);
  });

  it('rejects everything while the server is down', () => {
    expect(checkSender(`${APP}/`, undefined)).toBe(false);
  });
});

describe('decideNavigation', () => {
  it('lets the window move within the app', () => {
    expect(decideNavigation(`${APP}/sources`, APP, false)).toEqual({ kind: 'allow' });
  });

  it('never lets the window itself show anything but the app', () => {
    for (const url of HOSTILE) expect(decideNavigation(url, APP, false).kind, url).not.toBe('allow');
  });

  it('denies every scheme but http(s), and http(s) links with credentials or to this machine', () => {
    for (const url of HOSTILE.filter((u) => !/^https?:/i.test(u))) expect(decideNavigation(url, APP, false).kind, url).toBe('deny');
    for (const url of [`http://127.0.0.1:${PORT}@evil.com/`, `http://user:pass@evil.com/#http://127.0.0.1:${PORT}`, `http://127.0.0.1:${PORT + 1}/`, `http://localhost:${PORT}/`, `http://[::1]:${PORT}/`]) {
      expect(decideNavigation(url, APP, false).kind, url).toBe('deny');
    }
  });

  it('hands plain remote links (look-alikes included) to the system browser, never to the window', () => {
    expect(decideNavigation('https://supabase.com/', APP, false)).toEqual({ kind: 'external', url: 'https://supabase.com/' });
    expect(decideNavigation('https://127.0.0.1.evil.com', APP, false)).toEqual({ kind: 'external', url: 'https://127.0.0.1.evil.com/' });
  });

  it('honours the restart action only while the server is down', () => {
    expect(decideNavigation(ACTION_URLS.restart, undefined, true)).toEqual({ kind: 'restart' });
    expect(decideNavigation(ACTION_URLS.restart, APP, false)).toEqual({ kind: 'deny' });
  });
});

describe('webPreferencesFor', () => {
  it('isolates and sandboxes every window, with no Node and no webview', () => {
    expect(webPreferencesFor('/app/dist/electron/preload.cjs')).toEqual({
      preload: '/app/dist/electron/preload.cjs',
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
    });
  });

  it('gives secondary windows no preload at all', () => {
    const prefs = webPreferencesFor();
    expect('preload' in prefs).toBe(false);
    expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webviewTag: false });
  });
});

describe('withCsp', () => {
  it('adds the policy when the response has none', () => {
    expect(withCsp({ 'content-type': ['text/html'] })).toEqual({ 'content-type': ['text/html'], 'Content-Security-Policy': [APP_CSP] });
    expect(withCsp(undefined)).toEqual({ 'Content-Security-Policy': [APP_CSP] });
  });

  it("keeps the server's own policy (both are enforced) under its casing, without duplicating ours", () => {
    const server = "default-src 'self'";
    expect(withCsp({ 'content-security-policy': [server] })).toEqual({ 'content-security-policy': [server, APP_CSP] });
    expect(withCsp({ 'Content-Security-Policy': APP_CSP })).toEqual({ 'Content-Security-Policy': [APP_CSP] });
  });

  it('is as strict as the server: self only, no inline script, no framing', () => {
    expect(APP_CSP).toContain("default-src 'self'");
    expect(APP_CSP).toContain("connect-src 'self'");
    expect(APP_CSP).toContain("frame-ancestors 'none'");
    expect(APP_CSP).not.toMatch(/script-src[^;]*unsafe/);
  });
});
