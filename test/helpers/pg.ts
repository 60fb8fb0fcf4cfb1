// The PostgreSQL server of the test run (see pg-cluster.ts): a fresh schema per test is a fresh, empty store.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Sql } from '../../src/journal/pg/client';
import type { PgStore } from '../../src/journal/pg/pg-store';

const CLUSTER = resolve(__dirname, '../../.ci/pg-cluster');

/** Why the PostgreSQL suites are skipped in this run, or undefined when a server is at hand. */
export const pgSkipReason = (): string | undefined =>
  process.env.CRUX_TEST_PG_URL ? undefined : (process.env.CRUX_TEST_PG_SKIP ?? 'no PostgreSQL server for the tests');

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

// psql's environment: the server's notices (`drop trigger if exists` of a trigger not there yet, …) stay out of the
// test log; warnings and errors still show.
const psqlEnv = (): NodeJS.ProcessEnv => ({ ...process.env, PGOPTIONS: '-c client_min_messages=warning' });

/** Runs SQL on the server through psql (for fixtures: tampering with a row, reading tables). */
export function psql(sql: string, url = pgServerUrl()): string {
  const u = new URL(url);
  u.searchParams.delete('schema');
  return execFileSync('psql', [u.href, '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-c', sql], { encoding: 'utf8', env: psqlEnv() });
}

/** Runs a psql script (SQL and backslash commands, e.g. \\gexec) from standard input. */
export function psqlScript(script: string, url = pgServerUrl()): string {
  const u = new URL(url);
  u.searchParams.delete('schema');
  return execFileSync('psql', [u.href, '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-f', '-'], { encoding: 'utf8', input: script, env: psqlEnv() });
}

/**
 * A PostgreSQL cluster of the calling suite's own (`.ci/pg-cluster`): for tests that restart, stop or freeze a
 * server, which must never be the run's shared one.
 */
export class OwnCluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'crux-pg-own-'));
  url = '';

  start(): string {
    this.url = execFileSync(CLUSTER, ['start', this.dir], { encoding: 'utf8' }).trim();
    return this.url;
  }

  /** A store URL on this cluster naming a schema no test has used. */
  freshStore(prefix = 'o'): string {
    const url = new URL(this.url);
    url.searchParams.set('schema', `${prefix}_${randomBytes(6).toString('hex')}`);
    return url.href;
  }

  /** `pg_ctl restart -m fast`: in-flight connections are cut. */
  restart(): void {
    execFileSync(CLUSTER, ['restart', this.dir], { stdio: 'ignore' });
  }

  stop(): void {
    execFileSync(CLUSTER, ['stop', this.dir], { stdio: 'ignore' });
  }

  /** The postmaster and every process it started (the server's processes), by pid. */
  private pids(): number[] {
    const postmaster = Number(readFileSync(join(this.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' })
      .split('\n')
      .map(Number)
      .filter((n) => n > 0);
    return [postmaster, ...children];
  }

  /** SIGSTOP every server process: the server accepts connections (the kernel does) and answers nothing. */
  freeze(): void {
    this.signal('SIGSTOP');
  }

  thaw(): void {
    this.signal('SIGCONT');
  }

  /** A backend may end between `ps` and the signal (a connection closing): that one is passed over. */
  private signal(signal: NodeJS.Signals): void {
    for (const pid of this.pids()) {
      try {
        process.kill(pid, signal);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    }
  }
}

/**
 * Calls `tap` with each statement `store`'s reader runs from now on (its `unsafe` text and parameters), and `rows`
 * with what each answered when given; its reads unchanged otherwise: a test counts what a read asked the server for.
 */
export function tapReader(store: PgStore, tap: (text: string, params: unknown[]) => void, rows?: (answer: unknown) => void): void {
  let proto: object | null = store;
  let getter: (() => Sql) | undefined;
  while (getter === undefined && proto !== null) {
    getter = Object.getOwnPropertyDescriptor(proto, 'reader')?.get as (() => Sql) | undefined;
    proto = Object.getPrototypeOf(proto);
  }
  Object.defineProperty(store, 'reader', {
    get: () =>
      new Proxy(getter!.call(store), {
        get: (target, p, receiver) =>
          p === 'unsafe'
            ? (text: string, params: unknown[] = [], ...rest: unknown[]) => {
                tap(text, params);
                const query = (target.unsafe as (...a: unknown[]) => Promise<unknown>)(text, params, ...rest);
                return rows === undefined ? query : query.then((answer) => (rows(answer), answer));
              }
            : Reflect.get(target, p, receiver),
      }),
  });
}

/** The statements `store` reads with from now on (each `unsafe` text of its reader). */
export function recording(store: PgStore): string[] {
  const seen: string[] = [];
  tapReader(store, (text) => seen.push(text));
  return seen;
}
