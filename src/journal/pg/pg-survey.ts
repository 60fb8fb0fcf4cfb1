// Doctor's facts of a PostgreSQL store (JournalStore.survey): the lock and its holder, the server's and the
// schema's versions, each journal verified and folded, table sizes and the last compaction; nothing changed.
import type { StoreSpec } from '../codec/store-spec';
import type { JournalFacts, StoreFacts } from '../core/store-boundary';
import { surveyJournal } from '../core/check';
import { DEFAULT_HISTORY_RETENTION } from '../core/history';
import type { Sql } from './client';
import type { PgHost } from './pg-host';
import { PgLines } from './pg-lines';
import { quarantineItems } from './pg-rewrite-set';
import { replicationFacts } from './pg-server';
import { journalFileOf, journalTable, LOCK_CLASS, lockCall, readCatalog, SCHEMA_VERSION } from './schema';

/** Tables of the schema that are not journals. */
const OWN_TABLES = new Set(['schema_version', 'keys', 'history', 'quarantine', 'secondary_indexes', 'term_indexes', 'snapshots']);

export async function surveyPg(store: PgHost, specs: readonly StoreSpec<unknown>[]): Promise<StoreFacts> {
  return store.transaction(async (sql) => {
    const [got] = await sql.unsafe<{ ok: boolean }[]>(`select ${lockCall('pg_try_advisory_xact_lock', store.url.schema)} as ok`);
    const held = got?.ok !== true;
    const holder = held ? await lockHolder(sql, store.url.schema) : null;
    const [info] = await sql<{ v: string }[]>`select current_setting('server_version') as v`;
    const catalog = await readCatalog(sql, store.url.schema);
    const exists = catalog.tables.size > 0;
    const usable = exists && catalog.version <= SCHEMA_VERSION;
    const journals: JournalFacts<any>[] = [];
    if (usable) {
      const lines = new PgLines(store, sql, catalog, DEFAULT_HISTORY_RETENTION);
      for (const spec of specs) journals.push(await surveyJournal(lines.journal(spec.file), spec, () => lines.quarantined(spec.file)));
    }
    const quarantine = usable && catalog.tables.has('quarantine') ? (await quarantineItems(store, sql)).map((q) => `${q.at.toISOString()} ${q.row}`) : [];
    const known = new Set(specs.map((s) => journalTable(s.file)));
    const other = [...catalog.tables].filter((t) => !OWN_TABLES.has(t) && !known.has(t) && !known.has(t.replace(/_(index|terms|counts)$/, ''))).sort();
    return {
      location: { path: store.location, exists, usable, mode: null },
      lock: {
        held,
        name: lockCall('pg_advisory_xact_lock', store.url.schema),
        holder,
        // The server frees a transaction's advisory lock when the transaction or its connection ends: never stale.
        stale: false,
        mechanism: 'advisory lock of a transaction, freed by the server when its holder goes',
      },
      journals,
      quarantine,
      other_files: other.map((t) => journalFileOf(t) ?? t),
      server: {
        version: info?.v ?? 'unknown',
        schema: store.url.schema,
        schema_version: catalog.version,
        crux_schema_version: SCHEMA_VERSION,
        tables: await tableSizes(sql, store.url.schema),
        last_compaction:
          journals
            .map((j) => j.compacted_at ?? null)
            .filter((t): t is string => t !== null)
            .sort()
            .at(-1) ?? null,
        replication: await replicationFacts(sql),
      },
    };
  });
}

/** Every table of the schema with its size on disk (indexes and TOAST included) and the planner's row estimate. */
async function tableSizes(sql: Sql, schema: string): Promise<{ name: string; bytes: number; rows: number }[]> {
  const rows = await sql<{ name: string; bytes: string; rows: number }[]>`
    select c.relname::text as name, pg_total_relation_size(c.oid) as bytes, greatest(c.reltuples, 0)::bigint as rows
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind in ('r', 'p') order by c.relname`;
  return rows.map((r) => ({ name: r.name, bytes: Number(r.bytes), rows: Number(r.rows) }));
}

async function lockHolder(sql: Sql, schema: string): Promise<{ pid: number; command: string } | null> {
  const [row] = await sql<{ pid: number; app: string | null; addr: string | null }[]>`
    select a.pid, a.application_name as app, host(a.client_addr) as addr from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.classid = ${LOCK_CLASS}::oid and l.objid = hashtext(${schema})::oid limit 1`;
  return row === undefined ? null : { pid: row.pid, command: `${row.app || 'a client'} from ${row.addr ?? 'a local socket'} (server pid)` };
}
