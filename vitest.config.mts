import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One directory for what the tests make, removed at the end; a throwaway PostgreSQL cluster for the suites
    // that run over a shared store (or CRUX_TEST_PG_URL's server); one line naming the system tools that are missing.
    globalSetup: ['test/helpers/temp-root.ts', 'test/helpers/pg-cluster.ts', 'test/helpers/tools-setup.ts'],
  },
});
