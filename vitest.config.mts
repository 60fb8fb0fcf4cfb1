import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Test files at once: one more than the cores (vitest's own default is one fewer, a single worker on two cores).
// Most files wait on the crux processes they start, so a worker's core is rarely all its own; CRUX_TEST_WORKERS
// overrides (docs/testing.md).
const workers = Number(process.env.CRUX_TEST_WORKERS) || Math.max(2, availableParallelism() + 1);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: workers,
    // One directory for what the tests make, removed at the end; a throwaway PostgreSQL cluster for the suites
    // that run over a shared store (or CRUX_TEST_PG_URL's server).
    globalSetup: ['test/helpers/temp-root.ts', 'test/helpers/pg-cluster.ts'],
  },
});
