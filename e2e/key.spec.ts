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
