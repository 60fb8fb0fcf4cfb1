// `crux store init` on PostgreSQL: the schema created or migrated ahead of the first write, every journal's table
// with it (for a DBA, who may grant crux's user only what it needs afterwards); `--print` shows that SQL instead.
import type { StoreSpec } from '../codec/store-spec';
import type { InitReport } from '../core/store-boundary';
import type { PgHost } from './pg-host';
import { journalTableSql, migrationSql, quoteLiteral, readCatalog, SCHEMA_VERSION, type Catalog } from './schema';

/** The steps that bring the store at `catalog` to this crux's schema, with every journal's table. */
function steps(store: PgHost, catalog: Catalog, specs: readonly StoreSpec<unknown>[], cruxVersion: string): { what: string; sql: string }[] {
  const out = migrationSql(store.url.schema, catalog, cruxVersion);
  for (const file of new Set(specs.map((s) => s.file))) {
    const table = journalTableSql(store.url.schema, catalog, file);
    if (table !== undefined) out.push(table);
  }
  return out;
}

/**
 * Creates or migrates the schema under the writers' lock (one transaction: all of it or nothing), or with `print`
 * reads the catalog and returns the SQL instead, changing nothing. The printed script takes the same lock, so a
 * DBA may run it while crux writes.
 */
export async function initSchema(store: PgHost, specs: readonly StoreSpec<unknown>[], cruxVersion: string, print: boolean): Promise<InitReport> {
  const base = { store: store.location, kind: 'postgres' as const, printed: print };
  if (print) {
    const catalog = await store.guard(() => readCatalog(store.reader, store.url.schema));
    const todo = steps(store, catalog, specs, cruxVersion);
    const head = `-- crux ${cruxVersion}: the schema ${store.url.schema} of ${store.location} at version ${SCHEMA_VERSION}`;
    const sql =
      todo.length === 0
        ? `${head}: nothing to do (it is at version ${catalog.version} with every journal's table)\n`
        : [
            `${head} (it is at version ${catalog.version}): run as the schema's owner, e.g. psql -v ON_ERROR_STOP=1 -f`,
            'begin;',
            `select pg_advisory_xact_lock(${LOCK_CLASS_SQL}, hashtext(${quoteLiteral(store.url.schema)}));`,
            ...todo.map((t) => `-- ${t.what}\n${t.sql}`),
            'commit;',
            '',
          ].join('\n');
    return { ...base, created: todo.map((t) => t.what), schema_version: catalog.version, sql };
  }
  return store.locked(async (sql, catalog) => {
    const todo = steps(store, catalog, specs, cruxVersion);
    for (const step of todo) await sql.unsafe(step.sql);
    return { ...base, created: todo.map((t) => t.what), schema_version: todo.length === 0 ? catalog.version : SCHEMA_VERSION };
  });
}

/** The advisory lock's first key (pg-connection.ts LOCK_CLASS), as SQL. */
const LOCK_CLASS_SQL = 0x63727578;
