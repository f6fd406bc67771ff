import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EndpointListing } from '../contract/api-types.ts';
import { ACTION_URLS } from './guards.ts';
import type { DataLockInfo } from '../server/store/data-lock.ts';
import { apiDocsHtml, busyPageHtml, curlExample, dataUrl, errorPageHtml, escapeHtml, folderInUseHtml, holderLabel } from './pages.ts';

const ENDPOINT: EndpointListing = {
  name: 'logs.all',
  id: '15930e07-5833-4bd5-8c05-3e02145fb068',
  description: 'newest edge logs',
  parameters: [
    { name: 'project', required: true, kind: 'string', description: 'project ref' },
    { name: 'project_tier', required: true, kind: 'string', description: 'tier', allowed: ['FREE', 'PRO'] },
    { name: 'iso_timestamp_start', required: false, kind: 'string', description: 'start' },
  ],
  maxRows: 100,
  cacheSeconds: 0,
  warmSeconds: 0,
  sandboxable: false,
} as unknown as EndpointListing;

describe('escapeHtml', () => {
  it('escapes the five HTML specials', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});

describe('errorPageHtml', () => {
  const html = errorPageHtml({ title: 'The server stopped', message: 'killed <by> SIGKILL', lastLines: ['ok', '<script>alert(1)</script>', 'imported "x" & more'], dataDir: '/home/u/.config/Log Explorer' });

  it('shows the log lines, escaped, and a Restart link the shell intercepts', () => {
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>');
    expect(html).toContain('imported &quot;x&quot; &amp; more');
    expect(html).toContain('killed &lt;by&gt; SIGKILL');
    expect(html).toContain(`href="${ACTION_URLS.restart}"`);
    expect(html).toContain('>Restart</a>');
    expect(html).toContain('/home/u/.config/Log Explorer');
  });

  it('forbids scripts through its own CSP', () => {
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src 'none';/);
  });

  it('says so when there is no log', () => {
    expect(errorPageHtml({ title: 't', message: 'm', lastLines: [], dataDir: '/d' })).toContain('(the server process logged nothing)');
  });

  it('round-trips through a data: URL', () => {
    const url = dataUrl(html);
    expect(url.startsWith('data:text/html;charset=utf-8,')).toBe(true);
    expect(decodeURIComponent(url.slice('data:text/html;charset=utf-8,'.length))).toBe(html);
  });
});

describe('apiDocsHtml', () => {
  it('lists each endpoint with its UUID and parameters, and a curl example with the key', () => {
    const html = apiDocsHtml({ url: 'http://127.0.0.1:4321', apiKey: 'k3y_-', endpoints: [ENDPOINT] });
    expect(html).toContain('<code>logs.all</code>');
    expect(html).toContain('<code>15930e07-5833-4bd5-8c05-3e02145fb068</code>');
    expect(html).toContain('<code>project_tier</code> (required): <code>FREE</code> <code>PRO</code>');
    expect(html).toContain(escapeHtml(curlExample('http://127.0.0.1:4321', 'k3y_-', ENDPOINT)));
  });

  it('builds a runnable curl line from the required parameters', () => {
    expect(curlExample('http://127.0.0.1:4321', 'k3y_-', ENDPOINT)).toBe(
      "curl -H 'X-API-KEY: k3y_-' 'http://127.0.0.1:4321/api/endpoints/query/15930e07-5833-4bd5-8c05-3e02145fb068?project=PROJECT_REF&project_tier=FREE'",
    );
  });

  it('escapes what the server sends', () => {
    const html = apiDocsHtml({ url: 'http://127.0.0.1:1', apiKey: 'k', endpoints: [{ ...ENDPOINT, description: '<img src=x onerror=alert(1)>' }] });
    expect(html).not.toContain('<img');
  });
});

describe('folderInUseHtml', () => {
  const holder: DataLockInfo = {
    pid: 4242,
    hostname: 'here',
    kind: 'serve',
    startedAt: '2026-05-01T10:00:00.000Z',
    command: 'node dist/server/main.mjs --port 4100 <x>',
    token: 'tok',
    url: 'http://127.0.0.1:4100',
    apiKey: 'secret-key-never-shown',
  };
  const dataDir = '/home/ada/.local/share/log-explorer';

  it('names the process (pid, what it is, its command, its start and its URL), escaped, and never its key', () => {
    const html = folderInUseHtml({ dataDir, holder, remote: false, canOpen: true });
    expect(html).toContain('data-testid="folder-in-use"');
    expect(html).toContain('pid 4242: npm run serve');
    expect(html).toContain('node dist/server/main.mjs --port 4100 &lt;x&gt;');
    expect(html).toContain('2026-05-01T10:00:00.000Z');
    expect(html).toContain('<code>http://127.0.0.1:4100</code>');
    expect(html).toContain(`<code>${dataDir}</code>`);
    expect(html).not.toContain('secret-key-never-shown');
    expect(html).not.toContain('<script');
  });

  it('offers to open the running server here, to import through it from a terminal, and to try again', () => {
    const html = folderInUseHtml({ dataDir, holder, remote: false, canOpen: true });
    expect(html).toContain(`href="${ACTION_URLS.openRunning}"`);
    expect(html).toContain(`href="${ACTION_URLS.restart}"`);
    expect(html).toContain(`npm run import -- --data-dir &quot;${dataDir}&quot; FILE...`);
  });

  it('offers no Open button when the holder does not answer, and only waiting for an import', () => {
    const silent = folderInUseHtml({ dataDir, holder, remote: false, canOpen: false });
    expect(silent).not.toContain(ACTION_URLS.openRunning);
    expect(silent).toContain('does not answer');
    const importing = folderInUseHtml({ dataDir, holder: { ...holder, kind: 'import', url: undefined }, remote: false, canOpen: false });
    expect(importing).toContain('pid 4242: npm run import');
    expect(importing).toContain('An import into this folder is running');
    expect(importing).not.toContain(ACTION_URLS.openRunning);
    expect(importing).toContain(`href="${ACTION_URLS.restart}"`);
  });

  it('for a lock of another host, names the host and the lock file to delete once that process is gone', () => {
    const html = folderInUseHtml({ dataDir, holder: { ...holder, hostname: 'other-box' }, remote: true, canOpen: false });
    expect(html).toContain('pid 4242 on host <code>other-box</code>');
    expect(html).toContain(path.join(dataDir, 'LOCK'));
    expect(html).not.toContain(ACTION_URLS.openRunning);
  });

  it('labels each kind of holder as the user started it', () => {
    expect(holderLabel({ kind: 'serve', command: '/usr/bin/node /repo/node_modules/tsx/dist/cli.mjs scripts/start.ts --browser' })).toBe('npm start');
    expect(holderLabel({ kind: 'serve', command: 'node scripts/run-server.mjs serve' })).toBe('npm run serve');
    expect(holderLabel({ kind: 'desktop', command: '' })).toBe('the desktop app');
    expect(holderLabel({ kind: 'store', command: 'x' })).toBe('a Log Explorer process');
  });
});

describe('busyPageHtml', () => {
  it('is a titled page without scripts', () => {
    const html = busyPageHtml('Restarting <the> server…');
    expect(html).toContain('<h1 data-testid="busy">Restarting &lt;the&gt; server…</h1>');
    expect(html).not.toContain('<script');
  });
});
