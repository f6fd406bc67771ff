import { BUSY } from './support/fixture-data.ts';
import { expect, test } from './support/fixtures.ts';

test.describe('App shell', () => {
  test('the theme follows the OS until chosen; the choice survives a reload', async ({ page, open }) => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await open(`/functions?project=${BUSY}`);
    const html = page.locator('html');
    await expect(html).toHaveAttribute('data-theme', 'dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await expect(html).toHaveAttribute('data-theme', 'light');
    await page.getByTestId('theme-switch').getByRole('radio', { name: 'Dark' }).click();
    await expect(html).toHaveAttribute('data-theme', 'dark');
    await page.reload();
    await expect(html).toHaveAttribute('data-theme', 'dark');
    await page.getByTestId('theme-switch').getByRole('radio', { name: 'Auto' }).click();
    await expect(html).toHaveAttribute('data-theme', 'light');
  });

  test('pages keep the project; back and forward restore each view', async ({ page, open }) => {
    await open(`/functions?project=${BUSY}&interval=7day`);
    await expect(page.getByTestId('stat-invocations-value')).toBeVisible();
    await page.getByTestId('nav-logs').click();
    await expect(page).toHaveURL(new RegExp(`/logs\\?project=${BUSY}&`));
    await page.getByTestId('nav-usage').click();
    await expect(page.getByTestId('usage-page')).toBeVisible();
    await page.goBack();
    await expect(page.getByTestId('logs-page')).toBeVisible();
    await page.goBack();
    await expect(page.getByTestId('functions-page')).toBeVisible();
    await expect(page.getByTestId('interval').getByRole('radio', { name: '7 days' })).toHaveAttribute('aria-checked', 'true');
    await page.goForward();
    await expect(page.getByTestId('logs-page')).toBeVisible();
  });

  test('the sidebar shows the server’s “as of” clock, not the browser’s', async ({ page, open }) => {
    await open('/data');
    await expect(page.getByTestId('clock-chip')).toContainText('Fixed');
    await expect(page.getByTestId('clock-chip')).toContainText('2026-03-14 16:09');
  });
});
