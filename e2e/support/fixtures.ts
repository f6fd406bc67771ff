/**
 * Test fixtures: `server` is one real server per worker, seeded with the demo exports and
 * only read by tests; `freshServer` is a server of the test's own (empty data folder) for
 * tests that import, delete or move the clock.
 */
import { test as base, expect, type Page } from '@playwright/test';
import path from 'node:path';
import { NOW_ISO, writeDemoExports } from './fixture-data.ts';
import { API_KEY, startServer, type RunningServer } from './server.ts';

export { expect };
export type { RunningServer };

export interface Fixtures {
  freshServer: RunningServer;
  /** Opens a path of the app with the key in the fragment, as the server's printed link does. */
  open: (path: string, server?: RunningServer) => Promise<void>;
}

export const test = base.extend<Fixtures, { server: RunningServer }>({
  server: [
    async ({}, use, workerInfo) => {
      const dir = path.join(workerInfo.project.outputDir, `fixtures-${workerInfo.workerIndex}`);
      const files = await writeDemoExports(dir);
      const server = await startServer({ now: NOW_ISO, imports: files });
      await use(server);
      await server.stop();
    },
    { scope: 'worker', timeout: 90_000 },
  ],
  freshServer: async ({}, use) => {
    const server = await startServer({ now: NOW_ISO });
    await use(server);
    await server.stop();
  },
  open: async ({ page, server }, use) => {
    await use(async (p: string, s?: RunningServer) => {
      await page.goto(`${(s ?? server).url}${p}#key=${API_KEY}`);
    });
  },
});

/** Waits for the next request to an endpoint whose query matches all given params. */
export function waitForEndpoint(page: Page, name: string, params: Record<string, string | RegExp> = {}) {
  return page.waitForRequest((req) => {
    const u = new URL(req.url());
    if (u.pathname !== `/api/endpoints/${name}`) return false;
    return Object.entries(params).every(([k, v]) => {
      const got = u.searchParams.get(k);
      return got !== null && (typeof v === 'string' ? got === v : v.test(got));
    });
  });
}

/** Parses a number as the UI shows it (`12,345`). */
export function num(text: string | null): number {
  return Number((text ?? '').replace(/[^\d.-]/g, ''));
}

/** The looks every screenshot is taken in: light and dark, at 1440×900 and 1024×700. */
export const LOOKS = (['light', 'dark'] as const).flatMap((scheme) =>
  ([
    [1440, 900],
    [1024, 700],
  ] as const).map(([w, h]) => ({ scheme, w, h })),
);

/** Runs `shoot` once per look, with the page set to it (colour scheme, no motion, viewport). */
export async function inEachLook(page: Page, shoot: (look: (typeof LOOKS)[number]) => Promise<void>): Promise<void> {
  for (const look of LOOKS) {
    await page.emulateMedia({ colorScheme: look.scheme, reducedMotion: 'reduce' });
    await page.setViewportSize({ width: look.w, height: look.h });
    await shoot(look);
  }
}
