import { describe, expect, it } from 'vitest';
import { ACTION_URLS, APP_CSP, checkSender, decideNavigation, externalLink, isAppOrigin, originOf, webPreferencesFor, withCsp } from './guards.ts';

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

describe('externalLink', () => {
  it.each([
    ['https://supabase.com/docs/guides/platform/logs', 'https://supabase.com/docs/guides/platform/logs'],
    ['HTTPS://Example.COM/a b', 'https://example.com/a%20b'],
    ['https://8.8.8.8/', 'https://8.8.8.8/'],
    ['https://[2606:4700::1111]/', 'https://[2606:4700::1111]/'],
  ])('opens https to a public host directly: %s as %s', (url, expected) => {
    expect(externalLink(url)).toEqual({ kind: 'open', url: expected });
  });

  it.each([
    ['http://example.com', 'http://example.com/'],
    ['http://supabase.com/docs', 'http://supabase.com/docs'],
  ])('asks before opening plain http: %s', (url, expected) => {
    expect(externalLink(url)).toEqual({ kind: 'ask', url: expected, reason: 'http' });
  });

  it.each([
    'https://192.168.1.1/',
    'http://192.168.1.1/admin',
    'https://10.0.0.5:8443/',
    'https://172.16.0.1/',
    'https://172.31.255.254/',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/',
    'https://224.0.0.1/',
    // The URL parser turns these into dotted private addresses.
    'https://3232235777/',
    'https://0xC0.0xA8.1.1/',
    'https://[fd00::1]/',
    'https://[fe80::1]/',
    'https://[::ffff:192.168.1.1]/',
    'https://nas/',
    'https://router.:8080/',
    'https://printer.local/',
    'https://git.corp/',
    'https://build.internal/',
    'https://box.home.arpa/',
    'https://box.lan/',
  ])('asks before opening a host of the local network: %s', (url) => {
    expect(externalLink(url)).toMatchObject({ kind: 'ask', reason: 'local-network' });
  });

  it('keeps public look-alikes of private ranges public', () => {
    for (const url of ['https://172.32.0.1/', 'https://192.169.0.1/', 'https://11.0.0.1/', 'https://local.example.com/', 'https://localhost.example.com/']) {
      expect(externalLink(url).kind, url).toBe('open');
    }
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
    'https://localhost./',
    'http://app.localhost/',
    'http://127.1.2.3/',
    'https://0.0.0.0:9000/',
    'https://0/',
    'http://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'http://',
    'https://',
    'not a url',
    '',
  ])('refuses %s', (url) => {
    expect(externalLink(url)).toEqual({ kind: 'deny' });
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
    expect(decideNavigation(`${APP}/sources`, APP, [])).toEqual({ kind: 'allow' });
  });

  it('never lets the window itself show anything but the app', () => {
    for (const url of HOSTILE) expect(decideNavigation(url, APP, ['restart', 'openRunning']).kind, url).not.toBe('allow');
  });

  it('denies every scheme but http(s), and http(s) links with credentials or to this machine', () => {
    for (const url of HOSTILE.filter((u) => !/^https?:/i.test(u))) expect(decideNavigation(url, APP, []).kind, url).toBe('deny');
    for (const url of [`http://127.0.0.1:${PORT}@evil.com/`, `http://user:pass@evil.com/#http://127.0.0.1:${PORT}`, `http://127.0.0.1:${PORT + 1}/`, `http://localhost:${PORT}/`, `http://[::1]:${PORT}/`]) {
      expect(decideNavigation(url, APP, []).kind, url).toBe('deny');
    }
  });

  it('hands https links to public hosts (look-alikes included) to the system browser, never to the window', () => {
    expect(decideNavigation('https://supabase.com/', APP, [])).toEqual({ kind: 'external', url: 'https://supabase.com/' });
    expect(decideNavigation('https://127.0.0.1.evil.com', APP, [])).toEqual({ kind: 'external', url: 'https://127.0.0.1.evil.com/' });
  });

  it('asks the user before plain http or a local-network host', () => {
    expect(decideNavigation('http://example.com/x', APP, [])).toEqual({ kind: 'ask', url: 'http://example.com/x', reason: 'http' });
    expect(decideNavigation('https://192.168.0.10/', APP, [])).toEqual({ kind: 'ask', url: 'https://192.168.0.10/', reason: 'local-network' });
  });

  it('honours an action only while the page showing offers it', () => {
    expect(decideNavigation(ACTION_URLS.restart, undefined, ['restart'])).toEqual({ kind: 'action', action: 'restart' });
    expect(decideNavigation(ACTION_URLS.openRunning, undefined, ['restart', 'openRunning'])).toEqual({ kind: 'action', action: 'openRunning' });
    expect(decideNavigation(ACTION_URLS.restart, APP, [])).toEqual({ kind: 'deny' });
    expect(decideNavigation(ACTION_URLS.openRunning, undefined, ['restart'])).toEqual({ kind: 'deny' });
    expect(decideNavigation('log-explorer-action://format-disk', undefined, ['restart', 'openRunning'])).toEqual({ kind: 'deny' });
  });
});

describe('webPreferencesFor', () => {
  it('isolates and sandboxes every window, with no Node and no webview', () => {
    expect(webPreferencesFor('/app/dist/electron/preload.cjs', { packaged: false })).toEqual({
      preload: '/app/dist/electron/preload.cjs',
      devTools: true,
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

  it('has no developer tools at all in a packaged app', () => {
    expect(webPreferencesFor('/app/preload.cjs', { packaged: true }).devTools).toBe(false);
    expect(webPreferencesFor(undefined, { packaged: true }).devTools).toBe(false);
    expect(webPreferencesFor(undefined, { packaged: false }).devTools).toBe(true);
  });

  it('gives secondary windows no preload at all', () => {
    const prefs = webPreferencesFor(undefined, { packaged: false });
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
