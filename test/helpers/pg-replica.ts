// A primary with a streaming standby, of the calling suite's own (`.ci/pg-cluster start`, then `standby`): for the
// failover tests (SPEC §11, "Several hosts", "Acknowledged means replicated"). The primary is killed as by a crash
// (`pg_ctl -m immediate`), the standby promoted, and a new standby made of the promoted server for the next round.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { psql } from './pg';

const CLUSTER = resolve(__dirname, '../../.ci/pg-cluster');

export type ReplicationMode = 'sync' | 'async';

interface Server {
  readonly dir: string;
  readonly url: string;
  readonly port: number;
}

/**
 * Why the failover suites cannot run here (no PostgreSQL binaries: initdb, pg_ctl, pg_basebackup), or undefined;
 * with CRUX_REQUIRE_PG=1 (CI) the suites run anyway and fail.
 */
export function replicaSkipReason(): string | undefined {
  if (process.env.CRUX_REQUIRE_PG === '1') return undefined;
  try {
    execFileSync('sh', ['-c', 'ls /usr/lib/postgresql/*/bin/pg_basebackup || command -v pg_basebackup'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return "no PostgreSQL binaries (initdb, pg_ctl, pg_basebackup): install Debian's postgresql to run them";
  }
}

export class ReplicaSet {
  /** Made by start(): a suite skipped or filtered out leaves nothing behind. */
  private root = '';
  /** Every server made, dead, promoted, standing by or replaced by a newer standby: stop() stops them all. */
  private readonly made: Server[] = [];
  primary!: Server;
  standby!: Server;
  /** Servers killed so far: their URLs stay in the store URL (they refuse connections), as a dead host would. */
  readonly dead: Server[] = [];

  constructor(readonly mode: ReplicationMode) {}

  /** A new primary and its standby. */
  start(): void {
    this.root = mkdtempSync(join(tmpdir(), 'crux-pg-replica-'));
    // The servers' directories are made inside, as the `postgres` user when run as root: it must pass through.
    chmodSync(this.root, 0o711);
    this.primary = this.make((dir) => execFileSync(CLUSTER, ['start', dir], { encoding: 'utf8' }));
    this.addStandby();
  }

  /**
   * A new standby of the primary (after a promotion: of the server promoted), synchronous or not as `mode` says (the
   * set's own by default); a standby it replaces keeps streaming, named in no store URL.
   */
  addStandby(mode: ReplicationMode = this.mode): void {
    this.standby = this.make((dir) => execFileSync(CLUSTER, ['standby', this.primary.dir, dir, mode], { encoding: 'utf8' }));
  }

  private make(run: (dir: string) => string): Server {
    const dir = join(this.root, `s${this.made.length}`);
    const url = run(dir).trim();
    const server = { dir, url, port: Number(new URL(url).port) };
    this.made.push(server);
    return server;
  }

  /**
   * The store URL naming every server made so far that may answer (the dead, the primary, the standby), each as
   * `127.0.0.1:port`, with a schema and target_session_attrs.
   */
  storeUrl(schema: string, attrs = 'read-write', servers: Server[] = [...this.dead, this.primary, this.standby]): string {
    const hosts = servers.map((s) => `127.0.0.1:${s.port}`).join(',');
    return `postgres://postgres:${this.password}@${hosts}/postgres?schema=${schema}&target_session_attrs=${attrs}`;
  }

  /** A URL naming one server (for psql, or a standby named alone). */
  single(server: Server, schema: string): string {
    return `${server.url}?schema=${schema}`;
  }

  get password(): string {
    return decodeURIComponent(new URL(this.primary.url).password);
  }

  /** The primary stopped as by a crash: connections cut, nothing flushed that was not. */
  killPrimary(): void {
    execFileSync(CLUSTER, ['kill', this.primary.dir], { stdio: 'ignore' });
    this.dead.push(this.primary);
  }

  /** The standby promoted: it is the primary from now on (and has no standby until addStandby). */
  promote(): void {
    execFileSync(CLUSTER, ['promote', this.standby.dir], { stdio: 'ignore' });
    this.primary = this.standby;
  }

  /**
   * The standby stops receiving the primary's WAL (primary_conninfo emptied): what the primary commits from then on
   * is acknowledged without the standby having it, as an asynchronous standby that fell behind.
   */
  detachStandby(): void {
    psql("alter system set primary_conninfo = ''", this.standby.url);
    psql('select pg_reload_conf()', this.standby.url);
    for (let i = 0; i < 200; i += 1) {
      if (psql('select count(*) from pg_stat_wal_receiver', this.standby.url).trim() === '0') return;
      execFileSync('sleep', ['0.05']);
    }
    throw new Error('the standby still receives WAL');
  }

  /** Waits until the standby has replayed everything the primary has written. */
  caughtUp(): void {
    const target = psql('select pg_current_wal_lsn()', this.primary.url).trim();
    for (let i = 0; i < 200; i += 1) {
      if (psql(`select pg_last_wal_replay_lsn() >= '${target}'::pg_lsn`, this.standby.url).trim() === 't') return;
      execFileSync('sleep', ['0.05']);
    }
    throw new Error('the standby did not catch up');
  }

  stop(): void {
    for (const server of this.made) execFileSync(CLUSTER, ['stop', server.dir], { stdio: 'ignore' });
    if (this.root !== '') rmSync(this.root, { recursive: true, force: true });
  }
}
