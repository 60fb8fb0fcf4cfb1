import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A throwaway PostgreSQL cluster for the suites that run over a shared store (or CRUX_TEST_PG_URL's server).
    globalSetup: ['test/helpers/pg-cluster.ts'],
  },
});
