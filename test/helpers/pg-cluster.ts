// vitest global setup: a PostgreSQL server for the suites that run over a shared store.
//
// CRUX_TEST_PG_URL (and CRUX_TEST_PG_DIR, the cluster's directory, for restarts) name a running server, as
// .ci/run provides. Otherwise, when PostgreSQL's binaries are installed, a throwaway cluster is started under a
// temp dir for this run and stopped at the end. Without either, the PostgreSQL suites are skipped with a message,
// unless CRUX_REQUIRE_PG=1 (CI), where that is an error. The throwaway cluster runs without fsync
// (PG_CLUSTER_FSYNC=off: a server killed or restarted loses nothing that reached the kernel, and no test cuts the
// machine's power); the suites that restart or freeze a server start one of their own, with fsync (pg.ts: OwnCluster).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SCRIPT = resolve(__dirname, '../../.ci/pg-cluster');

export default function setup(): (() => void) | undefined {
  if (process.env.CRUX_TEST_PG_URL) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'crux-pg-'));
  let url: string;
  try {
    url = execFileSync(SCRIPT, ['start', dir], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PG_CLUSTER_FSYNC: 'off', PG_CLUSTER_MAKE_TEMPLATE: join(dir, 'template') },
    }).trim();
  } catch (error) {
    const why = String((error as { stderr?: unknown }).stderr ?? error)
      .trim()
      .split('\n')
      .at(-1);
    if (process.env.CRUX_REQUIRE_PG === '1') throw new Error(`no PostgreSQL server for the tests: ${why}`);
    process.env.CRUX_TEST_PG_SKIP = `no PostgreSQL server (${why}): the PostgreSQL suites are skipped; install Debian's postgresql to run them`;
    console.warn(`crux tests: ${process.env.CRUX_TEST_PG_SKIP}`);
    execFileSync(SCRIPT, ['stop', dir], { stdio: 'ignore' });
    return undefined;
  }
  process.env.CRUX_TEST_PG_URL = url;
  process.env.CRUX_TEST_PG_DIR = dir;
  // The clusters a suite starts of its own (pg.ts: OwnCluster, pg-replica.ts) copy this run's fresh data directory
  // instead of running initdb (.ci/pg-cluster); removed with the shared cluster's directory.
  process.env.PG_CLUSTER_TEMPLATE = join(dir, 'template');
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    execFileSync(SCRIPT, ['stop', dir], { stdio: 'ignore' });
  };
  // A run cut short (Ctrl-C, a timeout's SIGTERM) skips the teardown: the cluster must not outlive it.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      stop();
      process.kill(process.pid, signal);
    });
  }
  process.once('exit', stop);
  return stop;
}
