import { defineConfig } from '@playwright/test';

/** E2E against the real server and the built renderer (`npm run test:e2e` builds first). */
export default defineConfig({
  testDir: 'e2e',
  testMatch: '*.spec.ts',
  outputDir: 'test-results',
  timeout: 30_000,
  expect: { timeout: 8_000 },
  // Each test starts its own server on its own data folder, so two run side by side.
  workers: 2,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  reporter: [['list']],
  use: {
    viewport: { width: 1440, height: 900 },
    // Local time differs from UTC, so the local/UTC distinction is visible and tested.
    timezoneId: 'Europe/Berlin',
    locale: 'en-US',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    },
  },
});
