import { defineConfig } from 'vitest/config';

/**
 * The slow hardening suite: a 2 GB import, kill -9 loops and 30 s load runs.
 * `npm run test:faults`; the fast cases live in server/hardening/*.test.ts (`npm test`).
 */
export default defineConfig({
  test: {
    include: ['server/hardening/*.faults.ts'],
    testTimeout: 20 * 60_000,
    hookTimeout: 5 * 60_000,
    pool: 'forks',
    // One file at a time: each measures time, memory or load and must not share the machine.
    fileParallelism: false,
  },
});
