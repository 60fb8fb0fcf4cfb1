// Doctor's word on replication (SPEC §11, "Acknowledged means replicated"): whether a commit the server acknowledges
// is on a standby too. PostgreSQL acknowledges a commit once a synchronous standby has it when
// synchronous_standby_names names one that is connected and synchronous_commit is on, remote_write or remote_apply;
// otherwise an acknowledged write lives on the primary alone until a standby streams it, and a standby promoted after
// the primary crashed may lack the last ones.
import type { ReplicationFacts } from '../core/store-boundary';
import type { Sql } from './client';

interface Row {
  standby: boolean;
  addr: string;
  sync_commit: string;
  sync_names: string;
  lag: number | null;
}

const WAITS = new Set(['on', 'remote_write', 'remote_apply']);

export async function replicationFacts(sql: Sql): Promise<ReplicationFacts> {
  const [row] = await sql.unsafe<Row[]>(
    `select pg_is_in_recovery() as standby,
       coalesce(host(inet_server_addr()), 'socket') || ':' || coalesce(inet_server_port()::text, '') as addr,
       current_setting('synchronous_commit') as sync_commit, current_setting('synchronous_standby_names') as sync_names,
       extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as lag`,
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
