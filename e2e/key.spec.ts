import { BUSY } from './support/fixture-data.ts';
import { API_KEY } from './support/server.ts';
import { expect, test } from './support/fixtures.ts';

test.describe('API key handling', () => {
  test('the key moves from the fragment to session storage and leaves the address bar at once', async ({ page, server }) => {
    await page.goto(`${server.url}/logs?project=${BUSY}#key=${API_KEY}`);
    await expect(page.getByTestId('log-row').first()).toBeVisible();
    expect(page.url()).toBe(`${server.url}/logs?project=${BUSY}&source=edge_logs&range=1h`);
    // about:blank, then this page: replaceState added no entry that could hold the key.
    expect(await page.evaluate<number>('history.length')).toBe(2);
    expect(await page.evaluate<string | null>("sessionStorage.getItem('log-explorer.api-key')")).toBe(API_KEY);
    await page.reload();
    await expect(page.getByTestId('log-row').first()).toBeVisible();
  });

  test('without a key the app asks for one; a wrong key is asked for again', async ({ page, server }) => {
    await page.goto(`${server.url}/functions#key=wrong`);
    await expect(page.getByTestId('key-prompt')).toBeVisible();
    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page.getByTestId('stat-invocations-value')).toBeVisible();
  });
});

// Regression: a link opened in a new tab asked for the key again.
test.describe('the key in a new tab', () => {
  test('a link opened in another tab works without the key, which stays out of the URL and of localStorage', async ({ page, server, context }) => {
    await page.goto(`${server.url}/functions?project=${BUSY}&interval=1day#key=${API_KEY}`);
    await expect(page.getByTestId('stat-invocations-value')).toBeVisible();
    // As a middle-click on a Logs link does: a new tab of the same browser, the link's URL, no key.
    const href = await page.getByTestId('function-row').first().getByTestId('function-logs').getAttribute('href');
    const tab = await context.newPage();
    await tab.goto(`${server.url}${href}`);
    await expect(tab.getByTestId('log-row').first()).toBeVisible();
    await expect(tab.getByTestId('key-prompt')).toHaveCount(0);
    expect(tab.url()).not.toContain('key');
    expect(tab.url()).not.toContain(API_KEY);
    // Kept for that tab (a reload works), never where it outlives the run.
    expect(await tab.evaluate<string | null>("sessionStorage.getItem('log-explorer.api-key')")).toBe(API_KEY);
    expect(await tab.evaluate<number>('localStorage.length')).toBe(0);
    expect(await page.evaluate<number>('localStorage.length')).toBe(0);
    await tab.reload();
    await expect(tab.getByTestId('log-row').first()).toBeVisible();
  });

  test('with no tab holding the key, the new tab asks for it', async ({ page, server }) => {
    await page.goto(`${server.url}/logs?project=${BUSY}`);
    await expect(page.getByTestId('key-prompt')).toBeVisible();
  });

  test('a stale key from another tab (an earlier run on the same port) fails cleanly back to the prompt', async ({ page, server, context }) => {
    // A tab of this origin that answers with a key this run does not take.
    await page.goto(`${server.url}/functions`);
    await expect(page.getByTestId('key-prompt')).toBeVisible();
    await page.evaluate(() => {
      const ch = new BroadcastChannel('log-explorer.key');
      ch.onmessage = (e: { data: { type: string; id: string } }) => {
        if (e.data.type === 'ask') ch.postMessage({ type: 'key', id: e.data.id, key: 'stale-key-from-an-earlier-run' });
      };
      (globalThis as unknown as { keep: unknown }).keep = ch;
    });
    const tab = await context.newPage();
    const unauthorized = tab.waitForResponse((r) => r.url().includes('/api/') && r.status() === 401);
    await tab.goto(`${server.url}/functions?project=${BUSY}&interval=1day`);
    await unauthorized;
    await expect(tab.getByTestId('key-prompt')).toBeVisible();
    expect(await tab.evaluate<string | null>("sessionStorage.getItem('log-explorer.api-key')")).toBeNull();
    // The right key then works as usual.
    await tab.getByLabel('API key').fill(API_KEY);
    await tab.getByRole('button', { name: 'Continue' }).click();
    await expect(tab.getByTestId('stat-invocations-value')).toBeVisible();
  });
});
