// Which of a URL's servers crux uses, and what it knows of the one it uses (SPEC §11, "Several hosts"): the hosts
// are tried in order, as libpq tries them, and the first that answers as target_session_attrs asks is kept. Each
// connection starts with one query that says whether the server is a standby or read-only, which server it is
// (its system identifier, timeline and address: a different answer means the store moved to another server, and
// what a long-lived process saw on the old one is verified again: pg-seen-heads.ts), and on a standby how far behind it is.
// And doctor's word on replication (replicationFacts).
import { CruxError } from '../../shared/errors';
import { failureReason, openClient, storeError, type Client, type ClientOptions, type Sql } from './client';
import type { ReplicationFacts } from '../core/store-boundary';
import type { ServerAddress, SessionAttrs, StoreUrl } from './url';

export interface ServerFacts {
  readonly address: ServerAddress;
  /** In recovery: a standby (hot standby). */
  readonly standby: boolean;
  /** transaction_read_only: a standby, or default_transaction_read_only on. */
  readonly readOnly: boolean;
  /** Which server this is: system identifier, timeline, role and address; another value means another server. */
  readonly identity: string;
  /** On a standby: seconds since the primary committed the last transaction it replayed (null: none yet). */
  readonly lagSeconds: number | null;
}

// The server's address, and on a standby how long since the primary committed the last transaction it replayed.
const ADDR = `coalesce(host(inet_server_addr()), 'socket') || ':' || coalesce(inet_server_port()::text, '') as addr`;
const LAG = 'extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as lag';
// The timeline of a primary is its WAL's (the checkpoint's lags a promotion); a standby's, its last restartpoint's.
const IDENTITY = `(select system_identifier::text from pg_control_system()) as system,
  case when pg_is_in_recovery() then (select timeline_id from pg_control_checkpoint())::text
       else (('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int)::text end as timeline`;
/** `control`: false where a DBA revoked the control functions from PUBLIC (the server's address and role alone). */
const factsSql = (control: boolean) =>
  `select pg_is_in_recovery() as standby, current_setting('transaction_read_only') as read_only,
  ${control ? IDENTITY : "'' as system, '' as timeline"}, ${ADDR}, ${LAG}`;

interface FactsRow {
  standby: boolean;
  read_only: string;
  system: string;
  timeline: string;
  addr: string;
  lag: number | null;
}

async function readFacts(sql: Sql, address: ServerAddress): Promise<ServerFacts> {
  let rows: FactsRow[];
  try {
    rows = await sql.unsafe<FactsRow[]>(factsSql(true));
  } catch (error) {
    if ((error as { code?: unknown }).code !== '42501') throw error;
    rows = await sql.unsafe<FactsRow[]>(factsSql(false));
  }
  const row = rows[0]!;
  return {
    address,
    standby: row.standby,
    readOnly: row.read_only === 'on',
    identity: `${row.system}/${row.timeline}/${row.standby ? 'standby' : 'primary'}/${row.addr}`,
    lagSeconds: row.lag === null ? null : Number(row.lag),
  };
}

/** Whether a server answers as target_session_attrs asks (libpq's rules; prefer-standby settles later). */
export function fits(attrs: SessionAttrs, facts: Pick<ServerFacts, 'standby' | 'readOnly'>): boolean {
  switch (attrs) {
    case 'any':
      return true;
    case 'read-write':
      return !facts.readOnly;
    case 'read-only':
      return facts.readOnly;
    case 'primary':
      return !facts.standby;
    case 'standby':
    case 'prefer-standby':
      return facts.standby;
  }
}

/** Why a server was passed over, for the message naming every host. */
const passedOver = (facts: ServerFacts): string =>
  facts.standby ? 'a standby (read-only)' : facts.readOnly ? 'read-only (default_transaction_read_only)' : 'a primary (read-write)';

/**
 * Connects to the first of the URL's servers that answers as target_session_attrs asks, and reads its facts. Every
 * server that fails or does not fit is named in the error (exit 75; 5 when every one refused for good, as a
 * wrong password does).
 */
export async function openServer(url: StoreUrl, opts: Omit<ClientOptions, 'address'>): Promise<{ client: Client; facts: ServerFacts }> {
  const tried: string[] = [];
  let refused: CruxError | undefined;
  let failed = 0;
  let passed = 0;
  let fallback: { client: Client; facts: ServerFacts } | undefined;
  for (const address of url.hosts) {
    const client = openClient(url, { ...opts, address });
    let facts: ServerFacts;
    try {
      facts = await readFacts(client.sql, address);
    } catch (error) {
      await client.end(0).catch(() => {});
      // One server: its failure as it always read (the message names the server and its user).
      if (url.hosts.length === 1) throw error;
      const mapped = storeError(error, url, opts.lockTimeoutMs);
      if (mapped === undefined) throw error;
      if (mapped.exitCode === 5) refused ??= mapped;
      else failed += 1;
      tried.push(`${address.name}: ${failureReason(error)}`);
      continue;
    }
    if (fits(url.targetSessionAttrs, facts)) {
      await fallback?.client.end(0).catch(() => {});
      return { client, facts };
    }
    if (url.targetSessionAttrs === 'prefer-standby' && fallback === undefined) {
      fallback = { client, facts };
      continue;
    }
    passed += 1;
    tried.push(`${address.name}: ${passedOver(facts)}`);
    await client.end(0).catch(() => {});
  }
  if (fallback !== undefined) return fallback;
  if (refused !== undefined && failed === 0 && passed === 0) throw refused;
  const asked = url.targetSessionAttrs === 'any' ? '' : ` as target_session_attrs=${url.targetSessionAttrs} asks`;
  throw new CruxError(
    'store_unavailable',
    `cannot use the PostgreSQL store ${url.server}: no server answered${asked} (${tried.join('; ')})`,
    'nothing was changed; safe to retry: a standby being promoted takes a few seconds',
  );
}

/** What a read from a standby says: how far behind the primary it may be. */
export function standbyNote(location: string, facts: ServerFacts): string {
  const behind =
    facts.lagSeconds === null
      ? 'it has replayed no transaction since it started, so how far behind it is is unknown'
      : `the last transaction it replayed was committed on the primary ${formatLag(facts.lagSeconds)} ago (replay lag; on a primary that writes nothing it only grows)`;
  return `${location}: reading from a standby, ${facts.address.name}: what it shows may be behind the primary; ${behind}`;
}

const formatLag = (seconds: number): string => (seconds < 10 ? `${Math.max(0, seconds).toFixed(1)} s` : `${Math.round(seconds)} s`);

/** A write refused before it begins: the server crux is connected to is read-only (exit 75, nothing written). */
export function readOnlyRefusal(location: string, facts: ServerFacts): CruxError {
  return new CruxError(
    'store_unavailable',
    `the PostgreSQL store ${location} is read-only on ${facts.address.name} (${facts.standby ? 'a standby' : 'default_transaction_read_only is on'}): it takes no writes; nothing was written`,
    'name the primary, or every host with ?target_session_attrs=read-write; retry once a standby has been promoted',
  );
}

// Doctor's word on replication (SPEC §11, "Acknowledged means replicated"): whether a commit the server acknowledges
// is on a standby too. PostgreSQL acknowledges a commit once a synchronous standby has it when
// synchronous_standby_names names one that is connected and synchronous_commit is on, remote_write or remote_apply;
// otherwise an acknowledged write lives on the primary alone until a standby streams it, and a standby promoted after
// the primary crashed may lack the last ones.
interface ReplicationRow {
  standby: boolean;
  addr: string;
  sync_commit: string;
  sync_names: string;
  lag: number | null;
}

const WAITS = new Set(['on', 'remote_write', 'remote_apply']);

export async function replicationFacts(sql: Sql): Promise<ReplicationFacts> {
  const [row] = await sql.unsafe<ReplicationRow[]>(
    `select pg_is_in_recovery() as standby, ${ADDR}, current_setting('synchronous_commit') as sync_commit,
       current_setting('synchronous_standby_names') as sync_names, ${LAG}`,
  );
  const standbys = await sql.unsafe<{ name: string; state: string | null; sync_state: string | null }[]>(
    'select application_name as name, state, sync_state from pg_stat_replication order by application_name',
  );
  const base = {
    server: row!.addr,
    role: row!.standby ? ('standby' as const) : ('primary' as const),
    synchronous_commit: row!.sync_commit,
    synchronous_standby_names: row!.sync_names,
    standbys,
    // A promoted server keeps its last replay's time: only a standby's lag means anything.
    replay_lag_seconds: row!.standby && row!.lag !== null ? Number(row!.lag) : null,
  };
  return { ...base, ...verdict(base) };
}

/** Whether an acknowledged write is replicated, and why, in words. */
export function verdict(f: Omit<ReplicationFacts, 'replicated' | 'summary'>): Pick<ReplicationFacts, 'replicated' | 'summary'> {
  if (f.role === 'standby') {
    const lag =
      f.replay_lag_seconds === null
        ? 'no transaction replayed yet'
        : `its last replayed commit was made ${f.replay_lag_seconds.toFixed(1)} s ago on the primary`;
    return { replicated: null, summary: `a standby, read-only (${lag}): writes go to the primary` };
  }
  const sync = f.standbys.filter((s) => s.sync_state === 'sync' || s.sync_state === 'quorum');
  const hidden = f.standbys.length > 0 && f.standbys.every((s) => s.sync_state === null);
  const names = f.synchronous_standby_names.trim();
  if (names === '') {
    const streaming = f.standbys.length === 0 ? 'no standby streams from it' : `${f.standbys.length} asynchronous standby(s) stream from it`;
    return {
      replicated: false,
      summary: `acknowledged writes are not replicated: synchronous_standby_names is empty (${streaming}); a standby promoted after a crash may lack the last writes`,
    };
  }
  if (!WAITS.has(f.synchronous_commit)) {
    return {
      replicated: false,
      summary: `acknowledged writes are not replicated: synchronous_commit is ${f.synchronous_commit}, so a commit does not wait for the standby (${names})`,
    };
  }
  if (hidden) {
    return { replicated: null, summary: `synchronous_standby_names is ${names}, but this user cannot see which standbys are synchronous (grant pg_monitor)` };
  }
  if (sync.length === 0) {
    return {
      replicated: false,
      summary: `synchronous_standby_names is ${names} but no synchronous standby is connected: commits wait for one (writes stall, then exit 75)`,
    };
  }
  return {
    replicated: true,
    summary: `acknowledged writes are replicated: synchronous_commit ${f.synchronous_commit}, synchronous standby(s) ${sync.map((s) => s.name).join(', ')}`,
  };
}
