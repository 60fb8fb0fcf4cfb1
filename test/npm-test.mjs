// `npm test`: the build, then vitest; the checks (tsc, tsc -p web, biome ci --error-on-warnings, one after another)
// and the run's PostgreSQL cluster start beside the build instead of before vitest and in its global setup, on the
// cores the build leaves idle. The checks' output is held and printed after vitest's, and a failed check fails the
// run (exit 1) as when they ran first. Arguments go to vitest.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'node_modules', '.bin');
const env = { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}` };

/** Runs a command to its end: its exit code (1 for a signal), and what it printed when `held` (stdout apart). */
function run(command, args, held, extra = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...env, ...extra }, stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    const out = [];
    const stdout = [];
    child.stdout?.on('data', (chunk) => {
      out.push(chunk);
      stdout.push(chunk);
    });
    child.stderr?.on('data', (chunk) => out.push(chunk));
    const end = (code) => resolve({ code: code ?? 1, output: Buffer.concat(out).toString(), stdout: Buffer.concat(stdout).toString() });
    // A command that cannot start (not installed) fails as one that exits 1.
    child.on('error', (error) => {
      out.push(Buffer.from(`${command}: ${error.message}\n`));
      end(1);
    });
    child.on('close', end);
  });
}

const CHECKS = [
  ['tsc', ['--noEmit']],
  ['tsc', ['-p', 'web']],
  ['biome', ['ci', '--error-on-warnings']],
];

/** The checks one after another, stopping at the first that fails (as `a && b && c`): the failed one, if any. */
async function checks() {
  for (const [command, args] of CHECKS) {
    const result = await run(command, args, true);
    if (result.code !== 0) return { name: [command, ...args].join(' '), ...result };
  }
  return undefined;
}

const CLUSTER = join(ROOT, '.ci', 'pg-cluster');
let clusterDir;
const stopCluster = () => {
  const dir = clusterDir;
  clusterDir = undefined;
  if (dir !== undefined) execFileSync(CLUSTER, ['stop', dir], { stdio: 'ignore' });
};
/**
 * The run's throwaway cluster, as test/helpers/pg-cluster.ts starts it when CRUX_TEST_PG_URL names none: its URL and
 * directory handed to vitest. Where it cannot start, nothing is handed on, and pg-cluster.ts tries and says why.
 */
async function cluster() {
  if (process.env.CRUX_TEST_PG_URL) return {};
  const dir = mkdtempSync(join(tmpdir(), 'crux-pg-'));
  clusterDir = dir;
  // Its fresh data directory copied for the clusters the suites start of their own (pg-cluster.ts does the same).
  const template = join(dir, 'template');
  const started = await run(CLUSTER, ['start', dir], true, { PG_CLUSTER_FSYNC: 'off', PG_CLUSTER_MAKE_TEMPLATE: template });
  if (started.code !== 0) {
    stopCluster();
    return {};
  }
  return { CRUX_TEST_PG_URL: started.stdout.trim(), CRUX_TEST_PG_DIR: dir, PG_CLUSTER_TEMPLATE: template };
}
// A run cut short (Ctrl-C, a timeout's SIGTERM): the cluster must not outlive it.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    stopCluster();
    process.kill(process.pid, signal);
  });
}

try {
  const checked = checks();
  const server = cluster();
  const built = await run(process.execPath, ['build.mjs'], false);
  const serverEnv = await server;
  const tested = built.code === 0 ? await run('vitest', ['run', ...process.argv.slice(2)], false, serverEnv) : built;
  const failed = await checked;
  if (failed !== undefined) {
    process.stderr.write(`${failed.output}\nnpm test: ${failed.name} failed (exit ${failed.code})\n`);
    process.exitCode = 1;
  } else if (tested.code !== 0) process.exitCode = tested.code;
} finally {
  stopCluster();
}
