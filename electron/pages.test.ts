import { describe, expect, it } from 'vitest';
import type { EndpointListing } from '../server/api-types.ts';
import { ACTION_URLS } from './guards.ts';
import { apiDocsHtml, curlExample, dataUrl, errorPageHtml, escapeHtml } from './pages.ts';

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
