// When derived rows (index rows, term rows, the snapshot) may be believed without reading them all (SPEC §3, §11).
//
// Each derived table has a binding row (`secondary_indexes`, `term_indexes`): the journal's head the rows follow
// (line and hash of its last row) and a `trusted` flag. Crux writes journal rows and derived rows only under the
// writers' lock, in a transaction that sets `crux.writer` (set_config(…, true): for that transaction alone). Two
// statement-level triggers on every derived table — after insert, update or delete, and after truncate — clear
// the flag when any other transaction writes the table; two on every journal table clear the flag of each of the
// journal's bindings and delete its snapshot row when any other transaction writes the journal's rows. A read
// believes the rows when, in one indexed look-up, the binding names the head the journal has now and says
// trusted, and the catalog (read by every operation anyway) shows the triggers on the derived table and on its
// journal, enabled always, calling the functions whose source is the one below: O(1) per call, whatever the
// tables hold. Otherwise it folds the journal (the same answer as a replay, and the same damage told, slower)
// until a write or `journal check --repair` rebuilds the rows and sets the flag again.
//
// What this catches, and how:
// - a derived row deleted, added or edited, or the table truncated, by anything but crux: the trigger clears the
//   flag, in the same transaction as the change, so the change cannot commit without it;
// - a journal row edited, deleted or inserted anywhere (the middle too, where the head still matches), or the
//   journal truncated, by anything but crux: the journal's trigger clears its bindings' flags and deletes its
//   snapshot row, in the same transaction; reads by key (which trust the journal's `key` and `resets` columns)
//   fold the whole journal too while the flag is cleared;
// - a trigger dropped or disabled (`alter table … disable trigger`), a function replaced or dropped: the catalog
//   no longer shows the guard, so nothing is trusted (the next write makes the guard again and rebuilds);
// - `session_replication_role = replica` (which silences ordinary triggers): the triggers are ENABLE ALWAYS;
// - rows changed while the flag was cleared and then changed back: still untrusted until rebuilt;
// - the journal's own rows appended or removed at the end: the head no longer matches the binding (and the
//   journal's trigger cleared the flag anyway).
// What it does not catch: someone who writes the rows and sets `crux.writer` himself, or sets the flag again by
// hand, forges crux's own write, as one could rewrite a cache file and its checksum; `journal check` still
// verifies every journal row and compares every derived row with a replay, and reports the disagreement (9).
import type { Sql } from './client';

/** The trigger function's name; its body is checked by the catalog query (schema.ts readCatalog). */
export const TRUST_FUNCTION = 'crux_derived_changed';
/** The two triggers every derived table carries. */
export const GUARD_TRIGGERS = ['crux_derived_rows', 'crux_derived_truncate'] as const;
/** The setting crux's own writing transactions carry (transaction-local). */
const WRITER_SETTING = 'crux.writer';
/** The function of the journal tables' triggers; its body is checked by the catalog query too. */
export const JOURNAL_FUNCTION = 'crux_journal_changed';
/** The two triggers every journal table carries. */
export const JOURNAL_TRIGGERS = ['crux_journal_rows', 'crux_journal_truncate'] as const;

/** A trigger function's body: `statements` run unless the transaction writing is crux's. */
const unlessCrux = (statements: string): string =>
  ` begin if coalesce(current_setting('${WRITER_SETTING}', true), '') <> 'on' then${statements} end if; return null; end `;

/**
 * tg_argv[0]: the binding table; tg_argv[1]: the journal (its file name), whose binding loses its trust. One line:
 * the catalog compares the function's source with this text, and the DDL around it is re-indented when printed.
 */
export const TRUST_FUNCTION_BODY = unlessCrux(
  ` execute format('update %I.%I set trusted = false where journal = $1', tg_table_schema, tg_argv[0]) using tg_argv[1];`,
);

/**
 * tg_argv[0]: the journal (its file name). Every binding of the journal loses its trust, and its snapshot row goes
 * (it names a row by line and hash, which an edit of an earlier row leaves as they were). One line, as above.
 */
export const JOURNAL_FUNCTION_BODY = unlessCrux(
  ` execute format('update %I.secondary_indexes set trusted = false where journal = $1', tg_table_schema) using tg_argv[0];` +
    ` execute format('update %I.term_indexes set trusted = false where journal = $1', tg_table_schema) using tg_argv[0];` +
    ` execute format('delete from %I.snapshots where journal = $1', tg_table_schema) using tg_argv[0];`,
);

/** A trigger function (made again with a guard, should it be missing, dropped or replaced). */
const functionDdl = (s: string, name: string, body: string): string =>
  `create or replace function ${s}.${name}() returns trigger language plpgsql as $crux$${body}$crux$;`;
/** The derived tables' function (schema version 3). */
export const trustFunctionDdl = (s: string): string => functionDdl(s, TRUST_FUNCTION, TRUST_FUNCTION_BODY);
/** The journal tables' function (made with a journal's guard). */
export const journalFunctionDdl = (s: string): string => functionDdl(s, JOURNAL_FUNCTION, JOURNAL_FUNCTION_BODY);

/** A table's two triggers (replacing any of their names), enabled always, calling `fn` with `args`. */
const triggersDdl = (s: string, table: string, names: readonly [string, string], fn: string, args: string): string => `
  drop trigger if exists ${names[0]} on ${s}.${table};
  drop trigger if exists ${names[1]} on ${s}.${table};
  create trigger ${names[0]} after insert or update or delete on ${s}.${table}
    for each statement execute function ${s}.${fn}(${args});
  create trigger ${names[1]} after truncate on ${s}.${table}
    for each statement execute function ${s}.${fn}(${args});
  alter table ${s}.${table} enable always trigger ${names[0]};
  alter table ${s}.${table} enable always trigger ${names[1]};`;

const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * The two triggers on a derived table; the rows they guard are untrusted from then on until rebuilt (they may have
 * been written while the table was unguarded).
 */
export const guardDdl = (s: string, table: string, binding: string, file: string): string =>
  `${triggersDdl(s, table, GUARD_TRIGGERS, TRUST_FUNCTION, `'${binding}', ${literal(file)}`)}
  update ${s}.${binding} set trusted = false where journal = ${literal(file)};`;

/**
 * The two triggers on a journal table; the journal's derived rows are untrusted from then on until rebuilt, and its
 * snapshot row goes (its rows may have been written while the table was unguarded).
 */
export const journalGuardDdl = (s: string, table: string, file: string): string =>
  `${triggersDdl(s, table, JOURNAL_TRIGGERS, JOURNAL_FUNCTION, literal(file))}
  update ${s}.secondary_indexes set trusted = false where journal = ${literal(file)};
  update ${s}.term_indexes set trusted = false where journal = ${literal(file)};
  delete from ${s}.snapshots where journal = ${literal(file)};`;

/** Marks the running transaction as crux's writer, so that its derived writes keep their trust. */
export async function markWriter(sql: Sql): Promise<void> {
  await sql`select set_config(${WRITER_SETTING}, 'on', true)`;
}
