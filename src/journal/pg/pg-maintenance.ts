// The PostgreSQL store's upkeep beside the whole-journal operations (which are core/'s, over pg-lines.ts):
// `crux store init` (the schema created or migrated ahead of the first write, every journal's table with it, for a
// DBA, who may grant crux's user only what it needs afterwards; `--print` shows that SQL instead), and
// `journal copy` in and out: a journal's raw lines read page by page, or through cursors inside the one consistent
// read of every journal; a restore into an empty store, the history as pieces. Memory stays flat in a journal's size.
// And doctor's facts of a store (JournalStore.survey): the lock and its holder, the server's and the schema's
// versions, each journal verified and folded, table sizes and the last compaction; nothing changed.
import { crashPoint } from '../../shared/crash-point';
import { CruxError } from '../../shared/errors';
import { testHook } from '../../shared/test-hooks';
import { decodeOwn, decodeRecord, VERIFY_ALL } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import type { HistoryPiece, InitReport, JournalFacts, StoreFacts, StoreView } from '../core/store-boundary';
import { surveyJournal } from '../core/check';
import { entityOf } from '../core/policy';
import { DEFAULT_HISTORY_RETENTION, historyName } from '../core/history';
import type { Sql } from './client';
import { FETCH_ROWS, pages } from './pg-pages';
import type { PgHost } from './pg-host';
import { reindexByKey } from './pg-rebuild';
import { countAfterRewrite } from './pg-autocompact';
import { PgLines } from './pg-lines';
import { quarantineItems } from './pg-rewrite-set';
import { replicationFacts } from './pg-server';
import {
  arrayLiteral,
  journalFileOf,
  journalTable,
  journalTableSql,
  LOCK_CLASS,
  lockCall,
  migrationSql,
  readCatalog,
  SCHEMA_VERSION,
  type Catalog,
} from './schema';

/**
 * Rows restored per statement. Small on purpose: a statement's parameters (the rows as array literals, then as the
 * wire's bytes) outlive its await and are collected only by a full GC, so 5,000-row statements let the heap grow to
 * ~200 MB during a copy where 1,000-row ones keep the peak near 150 MB (measured at 100k sessions), no slower.
 */
const RESTORE_ROWS = 1000;
/** RESTORE_ROWS, or fewer with CRUX_TEST_FETCH_ROWS (a test's copy spans several statements with a few dozen rows). */
const restoreRows = (): number => Math.min(RESTORE_ROWS, Number(testHook('CRUX_TEST_FETCH_ROWS')) || RESTORE_ROWS);

/** A line of a source journal as a row's body: a record that verifies, byte for byte (a row never holds a fragment). */
function rowBody(bytes: Uint8Array, n: number, where: string): string {
  const body = Buffer.from(bytes).toString('utf8');
  if (!Buffer.from(body).equals(Buffer.from(bytes)) || !decodeRecord(body, VERIFY_ALL).ok) {
    throw new CruxError('journal_damaged', `line ${n} of ${where} is not a record that verifies`, 'run `crux journal check --repair` on the source first');
  }
  return body;
}

/** A source's lines as row bodies (rowBody), RESTORE_ROWS at a time, each chunk with the line before its first. */
async function* chunks(lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, where: string): AsyncIterable<{ bodies: string[]; after: number }> {
  let bodies: string[] = [];
  let n = 0;
  const size = restoreRows();
  for await (const bytes of lines) {
    n += 1;
    bodies.push(rowBody(bytes, n, where));
    if (bodies.length < size) continue;
    yield { bodies, after: n - bodies.length };
    bodies = [];
  }
  if (bodies.length > 0) yield { bodies, after: n - bodies.length };
}

/**
 * Stores `lines` as journal `file` of an empty store, byte for byte, and `history` as its history rows, in one
 * transaction; the lines stream in (RESTORE_ROWS at a time), so memory stays flat in the journal's size.
 */
export async function restoreJournal(
  store: PgHost,
  spec: StoreSpec<unknown>,
  lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  history: readonly HistoryPiece[] = [],
): Promise<void> {
  await store.locked(async (sql, catalog) => {
    const table = journalTable(spec.file);
    if (catalog.tables.has(table)) {
      const [row] = await sql.unsafe(`select 1 from ${store.ident(table)} limit 1`);
      if (row !== undefined) throw new CruxError('conflict', `${store.location} ${table} already has records`, 'copy into an empty store');
    }
    let current: Catalog | undefined;
    let bytes = 0;
    for await (const { bodies, after } of chunks(lines, spec.file)) {
      current ??= await store.prepare(sql, catalog, spec.file);
      await store.insertLines(sql, spec, bodies, after);
      for (const body of bodies) bytes += Buffer.byteLength(body) + 1;
    }
    if (current === undefined) return;
    await restoreHistory(store, sql, spec, history);
    // Entity by entity (pg-rebuild.ts); the copy verified every line, so no verifying pass.
    const live = await reindexByKey(store, sql, current, spec, { verified: true });
    // The statistics row from what was written and folded (one statement over every row would outlast the client's
    // bound on a statement at a million rows); a journal without derived rows is counted by the server.
    await countAfterRewrite(store, sql, current, spec, live === undefined ? {} : { known: { bytes, live } });
    crashPoint('pg-restore:before-commit'); // the journal's rows and derived rows written, COMMIT not yet sent
  });
}

/**
 * History pieces as generations 1, 2, … of the history table, streamed in (RESTORE_ROWS at a time), each dated by its
 * newest record (as retention reads a file).
 */
async function restoreHistory(store: PgHost, sql: Sql, spec: StoreSpec<unknown>, pieces: readonly HistoryPiece[]): Promise<void> {
  const history = store.ident('history');
  for (const [g, piece] of pieces.entries()) {
    let newest = new Date(0).toISOString();
    for await (const { bodies, after } of chunks(piece.lines, piece.name)) {
      const records = bodies.map(decodeOwn);
      for (const record of records) if (record.ts > newest) newest = record.ts;
      const keys = records.map((r) => entityOf(spec, r) ?? '');
      await sql.unsafe(
        `insert into ${history} (journal, generation, compacted_at, line, seq, body, key)
         select $1, $2, $3, * from unnest($4::bigint[], $5::bigint[], $6::text[], $7::text[])`,
        [
          spec.file,
          g + 1,
          newest,
          arrayLiteral(bodies.map((_, k) => after + k + 1)),
          arrayLiteral(records.map((r) => r.seq)),
          arrayLiteral(bodies),
          arrayLiteral(keys),
        ],
      );
    }
    // The generation's date is its newest record's, known once every row is in.
    await sql.unsafe(`update ${history} set compacted_at = $3 where journal = $1 and generation = $2`, [spec.file, g + 1, newest]);
  }
}

/**
 * `journal copy`'s source inside the transaction `sql` is running: each journal's lines, and its history rows as
 * pieces, oldest first, each named as its history/ file would be (by its last seq); each read through a cursor as it
 * is iterated.
 */
export function consistentView(store: PgHost, sql: Sql, catalog: Catalog): StoreView {
  const history = store.ident('history');
  return {
    lines: (file) =>
      cursorBodies(sql, catalog.tables.has(journalTable(file)) ? `select body from ${store.ident(journalTable(file))} order by line` : undefined),
    history: async (file) => {
      if (!catalog.tables.has('history')) return [];
      const generations = await sql.unsafe<{ generation: number; last: string }[]>(
        `select generation, (array_agg(seq order by line desc))[1] as last from ${history} where journal = $1 group by generation order by generation`,
        [file],
      );
      return generations.map(({ generation, last }) => ({
        name: historyName(file, { seq: Number(last) }),
        lines: cursorBodies(sql, `select body from ${history} where journal = $1 and generation = $2 order by line`, [file, generation]),
      }));
    },
  };
}

/**
 * The bodies `query` selects (none: undefined), in order, read as they are iterated a page at a time (pg-fold.ts
 * pages: each FETCH its own statement, in the copy's one repeatable-read transaction).
 */
async function* cursorBodies(sql: Sql, query: string | undefined, params: unknown[] = []): AsyncIterable<Uint8Array> {
  if (query === undefined) return;
  for await (const rows of pages(sql, query, params, true)) {
    for (const [body] of rows as [string][]) yield Buffer.from(body);
  }
}

/** A journal's lines in order, each page its own short operation (a long-lived reader never holds a transaction). */
export async function* pagedLines(store: PgHost, file: string): AsyncIterable<Uint8Array> {
  const catalog = await store.guard(() => store.readCatalog());
  const table = journalTable(file);
  if (!catalog.tables.has(table)) return;
  for (let after = 0; ; ) {
    const select = `select line, body from ${store.ident(table)} where line > $1 order by line limit ${FETCH_ROWS}`;
    const rows = await store.guard(() => store.reader.unsafe<{ line: string; body: string }[]>(select, [after]));
    for (const row of rows) yield Buffer.from(row.body);
    if (rows.length < FETCH_ROWS) return;
    after = Number(rows.at(-1)!.line);
  }
}

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
            `select ${lockCall('pg_advisory_xact_lock', store.url.schema)};`,
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

/** Tables of the schema that are not journals (every one schema.ts's migrations create). */
const OWN_TABLES = new Set(['schema_version', 'keys', 'history', 'quarantine', 'secondary_indexes', 'term_indexes', 'snapshots', 'journal_stats']);

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
