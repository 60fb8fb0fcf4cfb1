// Which of a URL's servers crux uses, and what it knows of the one it uses (SPEC §11, "Several hosts"): the hosts
// are tried in order, as libpq tries them, and the first that answers as target_session_attrs asks is kept. Each
// connection starts with one query that says whether the server is a standby or read-only, which server it is
// (its system identifier, timeline and address: a different answer means the store moved to another server, and
// what a long-lived process saw on the old one is verified again), and on a standby how far behind it is.
import { CruxError } from '../../shared/errors';
import { failureReason, openClient, storeError, type Client, type ClientOptions, type Sql } from './client';
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

// The timeline of a primary is its WAL's (the checkpoint's lags a promotion); a standby's, its last restartpoint's.
const FACTS = `select pg_is_in_recovery() as standby, current_setting('transaction_read_only') as read_only,
  (select system_identifier::text from pg_control_system()) as system,
  case when pg_is_in_recovery() then (select timeline_id from pg_control_checkpoint())::text
       else (('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int)::text end as timeline,
  coalesce(host(inet_server_addr()), 'socket') || ':' || coalesce(inet_server_port()::text, '') as addr,
  extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as lag`;
/** Where a DBA revoked the control functions from PUBLIC: the server's address and role alone. */
const FACTS_PLAIN = `select pg_is_in_recovery() as standby, current_setting('transaction_read_only') as read_only,
  '' as system, '' as timeline,
  coalesce(host(inet_server_addr()), 'socket') || ':' || coalesce(inet_server_port()::text, '') as addr,
  extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as lag`;

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
    rows = await sql.unsafe<FactsRow[]>(FACTS);
  } catch (error) {
    if ((error as { code?: unknown }).code !== '42501') throw error;
    rows = await sql.unsafe<FactsRow[]>(FACTS_PLAIN);
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
