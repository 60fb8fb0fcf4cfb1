import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const stress = (process.env.CRUX_STRESS ?? '') !== '' && process.env.CRUX_STRESS !== '0';
// CI's run (.ci/run): the default run's cases over both engines, and the real agent clients (test/helpers/cli.ts FULL).
const full = stress || ((process.env.CRUX_TEST_FULL ?? '') !== '' && process.env.CRUX_TEST_FULL !== '0');
// Test files at once: one more than the cores in the default run (vitest's own default is one fewer, a single worker
// on two cores), since most files wait on the crux processes they start; vitest's default under CRUX_STRESS, whose
// wall-clock bounds hold only on a quiet machine. CRUX_TEST_WORKERS overrides (docs/testing.md).
const workers = Number(process.env.CRUX_TEST_WORKERS) || (stress ? Math.max(1, availableParallelism() - 1) : Math.max(2, availableParallelism() + 1));
// Whole files of CI's run and `npm run test:stress` only: the real agent clients, each a large program installed from
// the npm registry on first use (docs/testing.md).
const STRESS_FILES = ['test/e2e/clients.test.ts'];
// The files that run in one module graph a worker (isolate: false): none sets process.env or changes directory but
// for a command's run (run-cli.ts restores both, and resets the record cipher a command configured), stubs or mocks a module, reads an environment variable at import,
// or leaves a server, connection or timer open at its end; a file that does belongs elsewhere.
const SHARED_GRAPH = [
  ...['shared', 'case', 'session', 'output', 'cli', 'transcript'].map((folder) => `test/unit/${folder}/**/*.test.ts`),
  ...['cipher', 'store-key', 'architecture', 'docs', 'helpers-temp-root'].map((file) => `test/unit/${file}.test.ts`),
  ...['bundle', 'checks', 'package', 'stores'].map((file) => `test/unit/handoff/${file}.test.ts`),
  ...['arguments', 'call-order', 'tool-terms', 'top-level-id'].map((file) => `test/unit/mcp/${file}.test.ts`),
  ...[
    ...['checksum', 'record', 'scan', 'pg-url', 'append-rollback', 'caches', 'check-secrets', 'history', 'index-behind'],
    ...['conformance', 'conformance-core', 'conformance-refusals', 'pg-probe', 'pg-replica-rules', 'pg-store', 'quick-read'],
    ...['redact-quarantined', 'rewrite-lineage', 'snapshot-delta', 'store-boundary'],
  ].map((file) => `test/unit/journal/${file}.test.ts`),
  ...['pg-history-by-key', 'pg-history-pieces-by-key', 'history-by-key', 'history-pieces-by-key'].map((file) => `test/unit/journal/${file}.test.ts`),
  ...['conformance-sealed', 'line-stream', 'lock-probe-reset', 'pg-reader', 'pg-tally'].map((file) => `test/unit/journal/${file}.test.ts`),
  'test/unit/doctor-folds.test.ts',
  // The e2e files: each command's environment, directory and streams are set and restored by the call that runs it
  // (test/helpers/run-cli.ts, execa), and every server, browser and store a file opens it closes; what the program
  // keeps for a process's life is checked on spawned processes (docs/testing.md).
  'test/e2e/**/*.test.ts',
];

// The files that wait most (on their own PostgreSQL servers, on chromium, on processes they kill or time out), longest
// first: started before the others, their waits overlap the CPU-bound files instead of ending the run alone (a fresh
// clone has no timings, and vitest then starts the largest files first). Quiet two-core wall times in docs/testing.md.
const WAITING_FIRST = [
  'test/reliability/pg-failover.test.ts',
  'test/reliability/pg-derived.test.ts',
  'test/reliability/pg-faults.test.ts',
  'test/reliability/pg-store.test.ts',
  'test/e2e/ui-browser.test.ts',
  'test/reliability/environment.test.ts',
  'test/reliability/lock.test.ts',
];

/**
 * vitest's order (failed, then longest, by the last run's timings; else largest), WAITING_FIRST before it, then the
 * isolated files, then SHARED_GRAPH's together: vitest keeps a shared worker (its forks' module graph) only while the
 * next file queued is one of the same project, and ends it when an isolated file comes next.
 */
class WaitingFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = WAITING_FIRST.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return i >= 0 ? i : WAITING_FIRST.length + (spec.project.config.isolate === false ? 1 : 0);
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    // A bound for a test that hangs, not a measure: a file's long loops of processes run beside two others here, on a
    // machine that may be busy with more.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: workers,
    sequence: { sequencer: WaitingFirst },
    // Each file a fresh fork with its own module graph (process.env, the derived layer's test sizes, run-cli's
    // streams and the program's state are the process's), but for SHARED_GRAPH: pure unit files that set no
    // environment, stub nothing and start nothing, whose forks import src/ once for all of them (a quarter of their
    // CPU; docs/testing.md).
    projects: [
      {
        extends: true,
        test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...SHARED_GRAPH, ...(full ? [] : STRESS_FILES)] },
      },
      {
        extends: true,
        test: { name: 'shared-graph', include: SHARED_GRAPH, exclude: [...configDefaults.exclude, ...(full ? [] : STRESS_FILES)], isolate: false },
      },
    ],
    // One directory for what the tests make, removed at the end; a throwaway PostgreSQL cluster for the suites
    // that run over a shared store (or CRUX_TEST_PG_URL's server); one line naming the system tools that are missing.
    globalSetup: ['test/helpers/temp-root.ts', 'test/helpers/pg-cluster.ts', 'test/helpers/tools-setup.ts'],
  },
});
