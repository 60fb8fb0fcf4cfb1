// The tables of a PostgreSQL store and their forward-only migrations.
// Over 300 lines: the migrations (only ever appended) and the DDL of each journal's tables, which they must match.
//
// One schema per store (`?schema=`, default `crux`). Each journal is a table `journal_<name>` (the journal's
// file name without `.jsonl`): one row per record, its line kept byte for byte in `body`, with the columns the
// database indexes (seq, entity key). `schema_version` has one row per migration applied; `keys` holds key
// items; `history` the records compaction dropped; `journal_stats` what automatic compaction decides by.
import { CruxError } from '../../shared/errors';
import type { Sql } from './client';
import { MIGRATION_BOUND_MS, withMigrationBound } from './migration-bound';
import {
  GUARD_TRIGGERS,
  guardDdl,
  JOURNAL_FUNCTION,
  JOURNAL_FUNCTION_BODY,
  JOURNAL_TRIGGERS,
  journalFunctionDdl,
  journalGuardDdl,
  TRUST_FUNCTION,
  TRUST_FUNCTION_BODY,
  trustFunctionDdl,
} from './pg-trust';

/** The layout this crux reads and writes. A store at a higher version is refused, never downgraded. */
export const SCHEMA_VERSION = 8;

type Query = Sql;

/** The first half of every crux advisory lock key ('crux'); the second is the schema name's hash. */
export const LOCK_CLASS = 0x63727578;
/** The writers' lock of the store in `schema` as SQL: `fn` is pg_advisory_xact_lock or pg_try_advisory_xact_lock. */
export const lockCall = (fn: string, schema: string): string => `${fn}(${LOCK_CLASS}, hashtext(${quoteLiteral(schema)}))`;

/** A journal's table name, from its file name (`sessions.jsonl` → `journal_sessions`). */
export function journalTable(file: string): string {
  const base = file.replace(/\.jsonl$/, '');
  if (!/^[a-z][a-z0-9_]{0,40}$/.test(base)) throw new Error(`journal file name ${file} has no table name`);
  return `journal_${base}`;
}

/** The journal file name a table holds (the inverse of journalTable), or undefined for other tables. */
export const journalFileOf = (table: string): string | undefined =>
  table.startsWith('journal_') && !/_(index|terms|counts)$/.test(table) ? `${table.slice(8)}.jsonl` : undefined;

/** Migration i takes the schema from version i to i+1. Released migrations are never edited, only appended. */
const MIGRATIONS: readonly ((s: string) => string)[] = [
  (s) => `
    create table ${s}.schema_version (
      version integer primary key,
      applied_at timestamptz not null default now(),
      crux_version text not null
    );
    create table ${s}.keys (
      name text primary key,
      bytes bytea not null,
      created_at timestamptz not null default now()
    );
    create table ${s}.history (
      journal text not null,
      generation integer not null,
      compacted_at timestamptz not null,
      line bigint not null,
      seq bigint not null,
      body text not null,
      primary key (journal, generation, line)
    );
    create table ${s}.snapshots (
      journal text primary key,
      codec integer not null,
      line bigint not null,
      seq bigint not null,
      h text not null,
      bytes bytea not null
    );
    create table ${s}.secondary_indexes (
      journal text primary key,
      version integer not null,
      names text not null
    );
    create table ${s}.quarantine (
      journal text not null,
      at timestamptz not null,
      name text not null,
      bytes bytea not null,
      primary key (journal, at, name)
    );`,
  // 2: derived rows bound to their journal's head and verified before they are trusted (pg-index.ts,
  // pg-fold.ts). Rows written before carry no binding: they are not trusted, and the next write rebuilds them.
  (s) => `
    alter table ${s}.secondary_indexes
      add column line bigint not null default 0,
      add column h text not null default '',
      add column rows bigint not null default 0,
      add column sum numeric not null default 0;
    alter table ${s}.snapshots add column digest text not null default '';`,
  // 3: derived rows trusted by a flag that the tables' triggers clear on any write crux did not make (pg-trust.ts),
  // instead of a count and sum over every row; each live entity's terms as a row (pg-terms.ts). Rows written
  // before are not trusted: the next write rebuilds them, and adds the tables and triggers a journal lacks.
  (s) => `
    alter table ${s}.secondary_indexes
      add column trusted boolean not null default false,
      drop column rows,
      drop column sum;
    create table ${s}.term_indexes (
      journal text primary key,
      version integer not null,
      line bigint not null,
      h text not null,
      trusted boolean not null default false
    );
    ${trustFunctionDdl(s)}`,
  // 4: what automatic compaction decides by (pg-autocompact.ts): each journal's bytes and live estimate, bound to
  // its head. A journal without a row is counted by its next write.
  (s) => `
    create table ${s}.journal_stats (
      journal text primary key,
      line bigint not null,
      h text not null,
      bytes bigint not null,
      live bigint not null
    );`,
  // 5: the term rows answer ordered pages by index (a b-tree over each of their first six facts, the first five
  // followed by the sixth, which orders their ties: termsDdl) and counts
  // from a table kept with them (countsDdl, made with a journal's next write or `store init`, its rows untrusted
  // until that write rebuilds them). A crux before this version, which would not keep the counts, refuses the store.
  (s) => `
    do $crux$ declare t text; begin
      for t in select c.relname from pg_catalog.pg_class c
        where c.relnamespace = '${s.replace(/'/g, "''")}'::regnamespace and c.relkind = 'r' and c.relname like 'journal\\_%\\_terms' loop
        for i in 1..6 loop
          execute format('create index if not exists %I on %s.%I ((split_part(facts, '' '', %s)::float8)%s)', t || '_f' || i,
            '${s.replace(/'/g, "''")}', t, i, case when i < 6 then ', (split_part(facts, '' '', 6)::float8)' else '' end);
        end loop;
      end loop;
    end $crux$;`,
  // 6: history rows keyed as their journal's rows (pg-history-keys.ts): a read of one key reads its rows of each
  // generation. Rows moved there before have none (null): their generation is read whole.
  (s) => `
    alter table ${s}.history add column if not exists key text;
    create index if not exists history_key on ${s}.history (journal, key, generation, line) where key is not null;`,
  // 7: a page ordered by one of the first five facts ascending, its ties by the sixth descending (a case list
  // `--sort reward|reused|created`, ties newest first) reads its rows too: a b-tree over each, the sixth descending
  // (factIndexes), where migration 5's served only the descending order and an ascending page sorted every tie
  // (`--sort reused` at 100k cases: 287 ms of server time, every case reused 0 alike).
  (s) => `
    do $crux$ declare t text; begin
      for t in select c.relname from pg_catalog.pg_class c
        where c.relnamespace = '${s.replace(/'/g, "''")}'::regnamespace and c.relkind = 'r' and c.relname like 'journal\\_%\\_terms' loop
        for i in 1..5 loop
          execute format('create index if not exists %I on %s.%I ((split_part(facts, '' '', %s)::float8), (split_part(facts, '' '', 6)::float8) desc)',
            t || '_f' || i || 'd', '${s.replace(/'/g, "''")}', t, i);
        end loop;
      end loop;
    end $crux$;`,
  // 8: a newest-first page read in order (indexDdl), no tie group sorted whole as by the (name, num_value) b-tree it replaces.
  (s) => `
    do $crux$ declare t text; i text; begin
      for t in select c.relname from pg_catalog.pg_class c
        where c.relnamespace = '${s.replace(/'/g, "''")}'::regnamespace and c.relkind = 'r' and c.relname like 'journal\\_%\\_index' loop
        execute format('create index if not exists %I on %s.%I (name, num_value desc, key collate "C") where num_value is not null',
          t || '_newest', '${s.replace(/'/g, "''")}', t);
        for i in select x.indexname from pg_catalog.pg_indexes x where quote_ident(x.schemaname)::regnamespace = '${s.replace(/'/g, "''")}'::regnamespace
          and x.tablename = t and x.indexdef like '%(name, num_value) WHERE (num_value IS NOT NULL)' loop
          execute format('drop index %s.%I', '${s.replace(/'/g, "''")}', i);
        end loop;
      end loop;
    end $crux$;`,
];

/**
 * The fact that orders a term row among its ties (for a case: the line of its record, newest first), and the facts
 * before it: each has a b-tree index, those before it followed by it, so that a page ordered by one of them (ties by
 * the last) reads only its rows. Another spec's facts are indexed the same, used or not (the answers never depend on it).
 */
const TIE_FACT = 6;

/** Fact `n` (from 1) of a term row as a number: the expression both the indexes and the queries use. */
export const factNumber = (facts: string, n: number): string => `(split_part(${facts}, ' ', ${Math.trunc(n)})::float8)`;

/**
 * The DDL of a term table's fact indexes (as migrations 5 and 7 make them for the tables made before them): each fact
 * before the tie's followed by it ascending (a page in either direction of both, read forwards or backwards) and
 * descending (the fact ascending, its ties descending: a case list from the least, ties newest first).
 */
const factIndexes = (s: string, table: string): string =>
  Array.from({ length: TIE_FACT }, (_, i) => {
    const fact = factNumber('facts', i + 1);
    if (i + 1 === TIE_FACT) return `create index ${table}_f${i + 1} on ${s}.${table} (${fact});`;
    const tie = factNumber('facts', TIE_FACT);
    return `create index ${table}_f${i + 1} on ${s}.${table} (${fact}, ${tie});\n  create index ${table}_f${i + 1}d on ${s}.${table} (${fact}, ${tie} desc);`;
  }).join('\n  ');

/** The DDL of one journal's table (created with the first record a journal gets). */
const journalDdl = (s: string, table: string): string => `
  create table ${s}.${table} (
    line bigint primary key,
    seq bigint not null unique,
    h text not null,
    body text not null,
    key text,
    resets boolean not null default false
  );
  create index on ${s}.${table} (key, line) where key is not null;`;

/** The DDL of a journal's table of secondary keys (pg-index.ts), guarded (pg-trust.ts); `_newest`: a newest-first page's b-tree. */
const indexDdl = (s: string, table: string): string => `
  create table ${s}.${indexTable(table)} (
    key text not null,
    name text not null,
    text_value text,
    num_value bigint,
    primary key (key, name)
  );
  create index on ${s}.${indexTable(table)} (name, text_value) where text_value is not null;
  create index ${indexTable(table)}_newest on ${s}.${indexTable(table)} (name, num_value desc, key collate "C") where num_value is not null;`;

/** The DDL of a journal's table of terms (pg-terms.ts): one row per live entity, a GIN index over its terms. */
const termsDdl = (s: string, table: string): string => `
  create table ${s}.${termsTable(table)} (
    key text primary key,
    terms text[] not null,
    facts text not null
  );
  create index on ${s}.${termsTable(table)} using gin (terms);
  ${factIndexes(s, termsTable(table))}`;

/**
 * The DDL of a journal's table of counts over its term rows (pg-term-counts.ts, TermKeys.counted): how many
 * entities, by the text of the counted fact, hold each counted term (`term`), and in all (' all') and holding none
 * (' without'), which no term can read (terms hold no space).
 */
const countsDdl = (s: string, table: string): string => `
  create table ${s}.${countsTable(table)} (
    term text not null,
    value text not null,
    n bigint not null,
    primary key (term, value)
  );`;

/** The table of a journal's secondary keys (StoreSpec.secondary): one row per entity and name with a value. */
export const indexTable = (table: string): string => `${table}_index`;
/** The table of a journal's terms (StoreSpec.terms): one row per live entity. */
export const termsTable = (table: string): string => `${table}_terms`;
/** The table of the counts over a journal's term rows (TermKeys.counted), kept with them and trusted with them. */
export const countsTable = (table: string): string => `${table}_counts`;

/** The derived tables of a journal and the binding table each one's trust is kept in. */
const derivedTables = (table: string): { table: string; binding: string }[] => [
  { table: indexTable(table), binding: 'secondary_indexes' },
  { table: termsTable(table), binding: 'term_indexes' },
  { table: countsTable(table), binding: 'term_indexes' },
];

export interface Catalog {
  /** The schema's version, 0 when the schema does not exist (or holds no crux tables yet). */
  readonly version: number;
  /** The version of the crux that brought the schema to `version` (its schema_version row), when there is one. */
  readonly writtenBy?: string;
  readonly tables: ReadonlySet<string>;
  /**
   * The derived and journal tables whose writes crux's triggers watch, enabled always, calling the function as crux
   * wrote it (pg-trust.ts).
   */
  readonly guarded: ReadonlySet<string>;
}

/**
 * What exists in the store's schema: one catalog query, then the version when there is a version table. A table is
 * guarded when it carries its two triggers (a derived table's or a journal table's, pg-trust.ts), enabled always,
 * calling the function whose source is crux's.
 */
export async function readCatalog(q: Query, schema: string): Promise<Catalog> {
  const rows = await q<{ relname: string; guards: number; journal_guards: number }[]>`
    select c.relname::text as relname,
      (select count(*) from pg_catalog.pg_trigger t
        where t.tgrelid = c.oid and t.tgfoid = f.oid and t.tgenabled = 'A' and t.tgname in (${GUARD_TRIGGERS[0]}, ${GUARD_TRIGGERS[1]}))::int as guards,
      (select count(*) from pg_catalog.pg_trigger t
        where t.tgrelid = c.oid and t.tgfoid = g.oid and t.tgenabled = 'A' and t.tgname in (${JOURNAL_TRIGGERS[0]}, ${JOURNAL_TRIGGERS[1]}))::int as journal_guards
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      left join pg_catalog.pg_proc f on f.pronamespace = n.oid and f.proname = ${TRUST_FUNCTION} and f.prosrc = ${TRUST_FUNCTION_BODY}
      left join pg_catalog.pg_proc g on g.pronamespace = n.oid and g.proname = ${JOURNAL_FUNCTION} and g.prosrc = ${JOURNAL_FUNCTION_BODY}
    where n.nspname = ${schema} and c.relkind in ('r', 'p')`;
  const tables = new Set(rows.map((r) => r.relname));
  const guarded = new Set(
    rows
      .filter((r) => (journalFileOf(r.relname) === undefined ? r.guards === GUARD_TRIGGERS.length : r.journal_guards === JOURNAL_TRIGGERS.length))
      .map((r) => r.relname),
  );
  if (!tables.has('schema_version')) return { version: 0, tables, guarded };
  const [row] = await q<{ version: number; crux_version: string }[]>`
    select version, crux_version from ${q(schema)}.schema_version order by version desc limit 1`;
  return row === undefined ? { version: 0, tables, guarded } : { version: row.version, writtenBy: row.crux_version, tables, guarded };
}

/**
 * Refuses a store whose schema a newer crux wrote: for good (5, SPEC §1), whatever the command, since no retry of
 * this crux can read it; the message names the crux that wrote it, which (or a newer one) reads it.
 */
export function refuseNewer(catalog: Catalog, label: string): void {
  if (catalog.version > SCHEMA_VERSION) {
    const by = catalog.writtenBy === undefined ? 'a newer crux' : `crux ${catalog.writtenBy}`;
    throw new CruxError(
      'invalid_input',
      `the store ${label} has schema version ${catalog.version}, newer than this crux understands (${SCHEMA_VERSION}); ${by} wrote it and reads it`,
      `run ${by} or a newer one here; nothing was changed`,
    );
  }
}

/** What `migrate` runs to bring a schema at `catalog` to SCHEMA_VERSION: one SQL text per step (for `store init --print` too). */
export function migrationSql(schema: string, catalog: Catalog, cruxVersion: string): { what: string; sql: string }[] {
  refuseNewer(catalog, schema);
  const s = quoteIdent(schema);
  const steps: { what: string; sql: string }[] = [];
  if (catalog.version === 0) steps.push({ what: `schema ${schema}`, sql: `create schema if not exists ${s};` });
  for (let v = catalog.version; v < SCHEMA_VERSION; v++) {
    steps.push({
      what: `schema version ${v + 1}`,
      sql: `${MIGRATIONS[v]!(s)
        .trim()
        .replace(/\n {4}/g, '\n')}\ninsert into ${s}.schema_version (version, crux_version) values (${v + 1}, ${quoteLiteral(cruxVersion)});`,
    });
  }
  return steps;
}

/** To SCHEMA_VERSION in the caller's transaction (its lock held; killed, it leaves nothing), under a bound of its own (migration-bound.ts). */
export async function migrate(tx: Sql, schema: string, catalog: Catalog, cruxVersion: string): Promise<Catalog> {
  const steps = migrationSql(schema, catalog, cruxVersion);
  if (steps.length === 0) return catalog;
  const [was] = await tx.unsafe(`select current_setting('statement_timeout') as b, set_config('statement_timeout', '${MIGRATION_BOUND_MS}', true)`);
  await withMigrationBound(async () => {
    for (const step of steps) await tx.unsafe(step.sql);
  });
  await tx.unsafe(`select set_config('statement_timeout', $1, true)`, [was!.b]);
  return readCatalog(tx, schema);
}

/**
 * The DDL of what a journal lacks of its tables (for `store init`: every journal's ahead of its first record; for
 * a write: the journal it appends to): its own table, its derived tables, and their triggers and the journal's (a
 * trigger dropped or disabled by hand is made again, and the rows it guarded, untrusted meanwhile, are rebuilt by
 * that write).
 */
export function journalTableSql(schema: string, catalog: Catalog, file: string): { what: string; sql: string } | undefined {
  const table = journalTable(file);
  const s = quoteIdent(schema);
  const parts: string[] = [];
  if (!catalog.tables.has(table)) parts.push(journalDdl(s, table));
  if (!catalog.tables.has(indexTable(table))) parts.push(indexDdl(s, table));
  if (!catalog.tables.has(termsTable(table))) parts.push(termsDdl(s, table));
  if (!catalog.tables.has(countsTable(table))) parts.push(countsDdl(s, table));
  const unguarded = derivedTables(table).filter((derived) => !catalog.guarded.has(derived.table));
  if (unguarded.length > 0 && catalog.version >= 3) parts.push(trustFunctionDdl(s));
  for (const derived of unguarded) parts.push(guardDdl(s, derived.table, derived.binding, file));
  // The journal's own guard: made with the journal's table, and for a store made before there was one (its next
  // write, or `store init`), with no migration (the function is made with it).
  if (!catalog.guarded.has(table)) parts.push(journalFunctionDdl(s), journalGuardDdl(s, table, file));
  if (parts.length === 0) return undefined;
  return {
    what: !catalog.tables.has(table)
      ? `table ${table}`
      : unguarded.length > 0 || derivedTables(table).some((derived) => !catalog.tables.has(derived.table))
        ? `derived tables of ${table}`
        : `triggers of ${table}`,
    sql: parts
      .join('\n')
      .trim()
      .replace(/\n {2}/g, '\n'),
  };
}

/** Creates what a journal lacks of its tables and triggers (under the writers' lock). */
export async function ensureJournalTable(tx: Sql, schema: string, catalog: Catalog, file: string): Promise<void> {
  const missing = journalTableSql(schema, catalog, file);
  if (missing === undefined) return;
  await tx.unsafe(missing.sql);
  const table = journalTable(file);
  for (const t of [table, indexTable(table), termsTable(table), countsTable(table)]) (catalog.tables as Set<string>).add(t);
  for (const t of [table, ...derivedTables(table).map((derived) => derived.table)]) (catalog.guarded as Set<string>).add(t);
}

/** A schema name is a checked lower-case identifier (url.ts); quoting keeps it so anyway. */
const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const quoteLiteral = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** A PostgreSQL array literal for text or numbers (passed as one text parameter and cast, e.g. `::text[]`). */
export function arrayLiteral(values: readonly (string | number | boolean | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null) out += 'NULL';
    else if (typeof v !== 'string') out += String(v);
    else out += `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  }
  return `${out}}`;
}
