// The PostgreSQL server of the test run (see pg-cluster.ts): a fresh schema per test is a fresh, empty store.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';

/** Why the PostgreSQL suites are skipped in this run, or undefined when a server is at hand. */
export const pgSkipReason = (): string | undefined =>
  process.env.CRUX_TEST_PG_URL ? undefined : process.env.CRUX_TEST_PG_SKIP ?? 'no PostgreSQL server for the tests';

export const pgAvailable = (): boolean => pgSkipReason() === undefined;

/** The server's URL (with its password), without a schema. */
export const pgServerUrl = (): string => process.env.CRUX_TEST_PG_URL!;

/** A store URL naming a schema no test has used: an empty store. */
export function freshStoreUrl(prefix = 't'): string {
  const url = new URL(pgServerUrl());
  url.searchParams.set('schema', `${prefix}_${randomBytes(6).toString('hex')}`);
  return url.href;
}

/** The password in the server URL: messages must never contain it. */
export const pgPassword = (): string => decodeURIComponent(new URL(pgServerUrl()).password);

/** Restarts the server (`pg_ctl restart -m fast`): in-flight connections are cut. */
export function restartPg(): void {
  const dir = process.env.CRUX_TEST_PG_DIR;
  if (!dir) throw new Error('CRUX_TEST_PG_DIR is not set: this run does not own the server');
  execFileSync(resolve(__dirname, '../../.ci/pg-cluster'), ['restart', dir], { stdio: 'ignore' });
}

/** Runs SQL on the server through psql (for fixtures: tampering with a row, reading tables). */
export function psql(sql: string, url = pgServerUrl()): string {
  const u = new URL(url);
  u.searchParams.delete('schema');
  return execFileSync('psql', [u.href, '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-c', sql], { encoding: 'utf8' });
}

/** Runs a psql script (SQL and backslash commands, e.g. \\gexec) from standard input. */
export function psqlScript(script: string, url = pgServerUrl()): string {
  const u = new URL(url);
  u.searchParams.delete('schema');
  return execFileSync('psql', [u.href, '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-f', '-'], { encoding: 'utf8', input: script });
}
