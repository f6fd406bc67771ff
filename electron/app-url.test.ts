import { describe, expect, it } from 'vitest';
import { appEntryUrl, reloadPlan, runningServerOf, viewOf } from './app-url.ts';

const APP = 'http://127.0.0.1:51234';
const server = { url: APP, apiKey: 'k_ey-1' };

describe('appEntryUrl', () => {
  it('opens the app at / with the key in the fragment', () => {
    expect(appEntryUrl(server)).toBe('http://127.0.0.1:51234/#key=k_ey-1');
  });

  it('keeps a view (path and query) of the page shown before', () => {
    expect(appEntryUrl(server, '/logs?source=edge_logs&q=a%20b')).toBe('http://127.0.0.1:51234/logs?source=edge_logs&q=a%20b#key=k_ey-1');
  });

  it('never leaves the server for a view that is not a path of it', () => {
    for (const view of ['//evil.com/x', 'https://evil.com/', 'logs', 'javascript:alert(1)']) expect(appEntryUrl(server, view), view).toBe('http://127.0.0.1:51234/#key=k_ey-1');
  });
});

describe('viewOf', () => {
  it('is the path and query of an app URL, without the fragment', () => {
    expect(viewOf(`${APP}/usage?interval=hourly#key=x`, APP)).toBe('/usage?interval=hourly');
    expect(viewOf(`${APP}/`, APP)).toBe('/');
  });

  it('is nothing for a shell page or another origin', () => {
    expect(viewOf('data:text/html,x', APP)).toBeUndefined();
    expect(viewOf('http://127.0.0.1:1/logs', APP)).toBeUndefined();
    expect(viewOf(`${APP}/logs`, undefined)).toBeUndefined();
  });
});

describe('reloadPlan (View → Reload)', () => {
  it('reloads the app page in place, so the view stays', () => {
    expect(reloadPlan(`${APP}/logs?q=x`, APP)).toBe('reload');
  });

  it('replaces a shell page by the app when a server is up, else does nothing', () => {
    expect(reloadPlan('data:text/html,error', APP)).toBe('load-app');
    expect(reloadPlan('data:text/html,error', undefined)).toBe('none');
    expect(reloadPlan('', APP)).toBe('load-app');
  });
});

describe('runningServerOf (the holder of the data folder, shown in the window)', () => {
  const holder = { hostname: 'here', url: 'http://127.0.0.1:4100', apiKey: 'k' };

  it('is the loopback server the lock names, with its key', () => {
    expect(runningServerOf(holder, 'here')).toEqual({ url: 'http://127.0.0.1:4100', apiKey: 'k', origin: 'http://127.0.0.1:4100' });
  });

  it('follows nothing else a lock file might say', () => {
    expect(runningServerOf(holder, 'elsewhere')).toBeUndefined();
    expect(runningServerOf({ ...holder, apiKey: undefined }, 'here')).toBeUndefined();
    expect(runningServerOf({ ...holder, url: undefined }, 'here')).toBeUndefined();
    for (const url of ['https://127.0.0.1:4100', 'http://evil.com:4100', 'http://127.0.0.1:4100/x', 'http://127.0.0.1:4100@evil.com', 'http://localhost:4100', 'http://127.0.0.1', 'file:///etc/passwd']) {
      expect(runningServerOf({ ...holder, url }, 'here'), url).toBeUndefined();
    }
  });
});
